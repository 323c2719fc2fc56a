"""The hindsight volatility label (the next 15 bars' range in ATR, bucketed by thresholds fitted on training days) and
the floors a risk read must beat: the words tell the level on ``news`` and not on ``news_null``."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.events import MarketEvent
from actors.common.news_market import generate_news_market
from actors.common.news_risk import (
    CALM, ELEVATED, EXTREME, LevelTable, bucket, calendar_key, fit_thresholds, forward_range_atr, keyword_key, risk_floor_figures,
)
from actors.common.synthetic import BARS_PER_SESSION


def test_the_range_is_the_next_bars_high_to_low_over_the_atr_before_the_bar():
    n = BARS_PER_SESSION
    closes = np.full(n, 100.0)
    highs, lows = closes + 0.5, closes - 0.5  # true range 1 on every bar
    highs[21:36] += np.linspace(0, 4, 15)  # the next 15 bars after bar 20 reach 4.5 above and 0.5 below
    ranges = forward_range_atr(highs, lows, closes, [20, 0, n - 10])
    assert ranges[0] == pytest.approx(5.0)
    assert np.isnan(ranges[1]) and np.isnan(ranges[2])  # no bar before it; the session ends inside the horizon


def test_levels_are_bucketed_by_fitted_thresholds_and_nan_is_no_label():
    thresholds = fit_thresholds(np.array([1.0, 2.0, 3.0, 4.0, np.nan]), (0.5, 0.9))
    assert thresholds[0] == pytest.approx(2.5)
    assert bucket(np.array([1.0, 3.0, 10.0, np.nan]), thresholds).tolist() == [CALM, ELEVATED, EXTREME, -1]
    with pytest.raises(ValueError, match="no finite range"):
        fit_thresholds(np.array([np.nan]))


def test_a_table_predicts_each_keys_commonest_level_and_the_overall_one_for_an_unseen_key():
    table = LevelTable(["a", "a", "a", "b", "b"], [1, 1, 0, 2, -1])
    assert table.predict(["a", "b", "c"]).tolist() == [1, 2, 1]
    with pytest.raises(ValueError, match="no labelled row"):
        LevelTable(["a"], [-1])


def test_the_calendar_knows_releases_tiers_and_never_a_headline():
    release = MarketEvent(time_ns=0, kind="release", importance="high", name="CPI y/y", actual=3.9, consensus=3.1)
    headline = MarketEvent(time_ns=0, kind="headline", importance="medium", text="SHOCK: Fed officials signals rate cuts ahead")
    assert calendar_key(release) == "high" and calendar_key(headline) == "unscheduled"
    assert keyword_key(release) == ("high", "shock")  # 0.8 points off consensus is four typical CPI surprises
    assert keyword_key(headline) == ("medium", "shock")


def test_the_words_tell_the_level_on_news_and_not_on_its_null_twin():
    def pooled(name: str) -> dict[str, float]:
        runs = [risk_floor_figures(generate_news_market(250, seed=seed, news=name)) for seed in (4, 5)]
        n = sum(r["test_events"] for r in runs)
        return {floor: sum(r[floor] * r["test_events"] for r in runs) / n
                for floor in ("keyword rule", "calendar rule", "always the commonest")} | {"n": n}

    news, null = pooled("news"), pooled("news_null")
    assert news["n"] > 450
    assert news["keyword rule"] > news["always the commonest"] + 0.04
    assert news["keyword rule"] > news["calendar rule"] + 0.03
    assert null["keyword rule"] < null["always the commonest"] + 0.03
