"""The news_drift overlay (a unit test of reading direction): its planted effect is on news_drift and not on its null
twin (same events, same words); the words vary and carry the surprise's sign at the set reliability; the events can
be written out for a user to read. The literature-sized ``news`` market: tests/actors/common/test_news_burst.py."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from actors.common import news_words
from actors.common.news_market import generate_news_market
from actors.common.news_releases import RELEASES
from actors.common.synthetic import BARS_PER_SESSION

DAYS = 120


@pytest.fixture(scope="module")
def twins():
    return generate_news_market(DAYS, seed=5, news="news_drift"), generate_news_market(DAYS, seed=5, news="news_drift_null")


def _signed_moves(market, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """Per event inside the data: the jump (previous close -> event bar close) and the drift (event bar close ->
    ``horizon`` bars later), both signed by the surprise's sign."""
    close = market.bars["close"].to_numpy()
    log_close = np.log(close)
    inside = (market.event_bar >= 1) & (market.event_bar + horizon < len(close))
    bars, sign = market.event_bar[inside], np.sign(market.surprise[inside])
    jump = (log_close[bars] - log_close[bars - 1]) * sign
    drift = (log_close[bars + horizon] - log_close[bars]) * sign
    return jump, drift


def test_the_planted_effect_is_on_news_and_not_on_its_null_twin(twins):
    news, null = twins
    news_jump, news_drift = _signed_moves(news, 30)
    null_jump, null_drift = _signed_moves(null, 30)
    n = len(news_jump)
    assert n > 200
    # On news the surprise's sign tells the jump and the drift (t-statistics well past 4).
    assert news_jump.mean() / (news_jump.std() / math.sqrt(n)) > 6
    assert news_drift.mean() / (news_drift.std() / math.sqrt(n)) > 4
    # On the null twin it tells nothing (|t| < 3, a 0.3 % false alarm).
    assert abs(null_jump.mean() / (null_jump.std() / math.sqrt(n))) < 3
    assert abs(null_drift.mean() / (null_drift.std() / math.sqrt(n))) < 3


def test_the_twins_share_every_event_and_word_and_move_by_the_same_amounts(twins):
    news, null = twins
    assert news.events == null.events
    np.testing.assert_array_equal(news.surprise, null.surprise)
    np.testing.assert_array_equal(news.text_sign, null.text_sign)
    assert np.mean(null.move_sign == np.sign(null.surprise)) == pytest.approx(0.5, abs=0.1)
    np.testing.assert_array_equal(news.move_sign, np.sign(news.surprise))


def test_words_vary_and_carry_the_sign_at_the_set_reliability(twins):
    news, _ = twins
    texts = [e.text for e in news.events]
    assert len(set(texts)) >= 0.9 * len(texts)
    agree = np.mean(news.text_sign == np.sign(news.surprise))
    assert agree == pytest.approx(0.8, abs=3 * math.sqrt(0.16 / len(texts)))
    hedged = [t for t in texts if " may " in t or "sources say" in t or " could " in t or "is said to" in t]
    assert len(hedged) > 0.1 * len(texts)


def test_each_text_reads_the_sign_it_was_given(twins):
    news, _ = twins
    bullish = {p for pairs in (news_words.COMPANY_BULLISH, news_words.POLICY_BULLISH) for pair in pairs for p in pair}
    bearish = {p for pairs in (news_words.COMPANY_BEARISH, news_words.POLICY_BEARISH) for pair in pairs for p in pair}
    for event, sign in zip(news.events, news.text_sign):
        if event.kind == "headline":
            assert any(p in event.text for p in (bullish if sign > 0 else bearish)), event.text
        elif event.name.startswith("FOMC"):
            assert event.text in (news_words.FOMC_BULLISH if sign > 0 else news_words.FOMC_BEARISH)
        else:  # the figure against consensus, read through the release's polarity
            assert np.sign(event.actual - event.consensus) * RELEASES[event.name].polarity == sign, event.text
            assert f"{event.consensus:.{RELEASES[event.name].decimals}f}" in event.text


def test_releases_come_at_their_real_times_and_0830_ones_land_on_the_open(twins):
    news, _ = twins
    times_et = {e.name: pd.Timestamp(e.time_ns, tz="UTC").tz_convert("America/New_York").strftime("%H:%M")
                for e in news.events if e.kind == "release"}
    assert times_et["CPI y/y"] == "08:30" and times_et["ISM Manufacturing PMI"] == "10:00" and times_et["FOMC rate decision"] == "14:00"
    for event, bar in zip(news.events, news.event_bar):
        if event.name in ("CPI y/y", "Nonfarm Payrolls", "Initial Jobless Claims"):
            assert bar % BARS_PER_SESSION == 0
        if event.name == "FOMC rate decision":
            assert bar % BARS_PER_SESSION == 14 * 60 - (9 * 60 + 30)
    fomc_a_year = sum(e.name == "FOMC rate decision" for e in news.events) * 252 / DAYS
    assert 6 <= fomc_a_year <= 10


def test_events_are_written_as_files_the_event_loader_reads_back(twins, tmp_path):
    from actors.common.event_files import load_events
    from actors.common.news_market import write_calendar_csv, write_headlines_jsonl

    news, _ = twins
    headlines = write_headlines_jsonl(news.events, tmp_path / "headlines.jsonl")
    releases = write_calendar_csv(news.events, tmp_path / "calendar.csv")
    assert headlines + releases == len(news.events) and releases > 0
    loaded = load_events(tmp_path / "headlines.jsonl") + load_events(tmp_path / "calendar.csv")
    by_text = {(e.time_ns, e.text): e for e in loaded}
    for event in news.events:
        back = by_text[(event.time_ns, event.text)]
        assert (back.kind, back.importance) == (event.kind, event.importance)
        if event.kind == "release" and not math.isnan(event.actual):
            assert back.actual == pytest.approx(event.actual) and back.consensus == pytest.approx(event.consensus)


def test_an_unknown_news_scenario_is_refused_by_name():
    with pytest.raises(ValueError, match="news_nul"):
        generate_news_market(5, news="news_nul")
