"""The literature-sized ``news`` market: the jump in the event's bar, no drift after it, a volatility burst and extra
volume that scale with tier and size; the words carry tier and size; news_null keeps the events and words and puts
the bursts elsewhere; held-out templates are flagged."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actors.common.news_burst import burst_factor
from actors.common.news_market import generate_news_market
from actors.common.news_risk import forward_range_atr, keyword_key
from actors.common.news_sized_words import SIZE_NAMES, size_name
from actors.common.synthetic import BARS_PER_SESSION

DAYS = 160


@pytest.fixture(scope="module")
def twins():
    return generate_news_market(DAYS, seed=3, news="news"), generate_news_market(DAYS, seed=3, news="news_null")


def _inside(market) -> np.ndarray:
    """Events inside a session (not the open's 08:30 releases), with 30 bars after them in the session."""
    minute = market.event_bar % BARS_PER_SESSION
    return (minute >= 1) & (minute + 31 < BARS_PER_SESSION)


def _t(values: np.ndarray) -> float:
    return float(values.mean() / (values.std() / math.sqrt(len(values))))


def test_the_jump_is_in_the_event_bar_and_nothing_drifts_after_it(twins):
    news, null = twins
    log_close = np.log(news.bars["close"].to_numpy())
    inside = _inside(news)
    bars, sign = news.event_bar[inside], np.sign(news.surprise[inside])
    assert len(bars) > 250
    assert _t((log_close[bars] - log_close[bars - 1]) * sign) > 6
    assert abs(_t((log_close[bars + 30] - log_close[bars]) * sign)) < 3
    null_close = np.log(null.bars["close"].to_numpy())
    assert abs(_t((null_close[bars] - null_close[bars - 1]) * sign)) < 3


def test_the_burst_follows_the_event_on_news_and_not_on_its_null_twin(twins):
    news, null = twins
    inside = _inside(news)
    ranges = {}
    for name, market in (("news", news), ("null", null)):
        h, l, c = (market.bars[k].to_numpy() for k in ("high", "low", "close"))
        ranges[name] = forward_range_atr(h, l, c, market.event_bar[inside] - 1)  # from the event's bar on
    assert np.nanmedian(ranges["news"]) > 1.5 * np.nanmedian(ranges["null"])
    tiers = np.array([e.importance for e in news.events])[inside]
    big = np.abs(news.surprise[inside]) > 1.0
    assert np.nanmedian(ranges["news"][(tiers == "high") & big]) > np.nanmedian(ranges["news"][tiers == "low"])
    # On the null twin the bursts sit at bars drawn apart from the events.
    assert np.mean(np.isin(null.burst_bar, null.event_bar)) < 0.05
    np.testing.assert_array_equal(news.burst_bar, news.event_bar)


def test_the_burst_scales_with_tier_and_size_and_fades_in_about_fifteen_minutes():
    assert burst_factor("high", 2.0, np.array([0]))[0] > burst_factor("high", 0.0, np.array([0]))[0] > 1
    assert burst_factor("high", 1.0, np.array([0]))[0] > burst_factor("medium", 1.0, np.array([0]))[0] > burst_factor("low", 1.0, np.array([0]))[0]
    after = burst_factor("high", 1.0, np.array([0, 15, 45]))
    assert after[0] > 4 and after[1] < 2.5 and after[2] < 1.1


def test_event_bars_trade_more_volume(twins):
    news, null = twins
    bars = news.event_bar[_inside(news)]
    volume = news.bars["volume"].to_numpy()
    assert np.median(volume[bars] / volume[bars - 1]) > 1.5
    null_volume = null.bars["volume"].to_numpy()
    assert np.median(null_volume[bars] / null_volume[bars - 1]) < 1.3


def test_the_twins_share_every_event_and_word(twins):
    news, null = twins
    assert news.events == null.events
    np.testing.assert_array_equal(news.surprise, null.surprise)
    np.testing.assert_array_equal(news.template_held_out, null.template_held_out)


def test_the_words_carry_tier_and_size_and_the_keyword_lists_read_them(twins):
    news, _ = twins
    buckets = [size_name(z) for z in news.surprise]
    assert set(buckets) == set(SIZE_NAMES)
    figures = []
    for event, bucket, held in zip(news.events, buckets, news.template_held_out):
        tier, size = keyword_key(event)
        assert tier == event.importance, event.text  # a headline's subject says its tier, a release's name
        if math.isnan(event.actual) and not held:  # the lists were written from the training templates only
            assert size == bucket, event.text
        else:  # a figure rounded to the release's decimals may cross a bucket's edge
            figures.append(size == bucket)
    assert np.mean(figures) > 0.85


def test_some_templates_are_held_out_and_flagged(twins):
    news, _ = twins
    share = news.template_held_out.mean()
    assert 0.1 < share < 0.5
    held = [e.text for e, flag in zip(news.events, news.template_held_out) if flag]
    assert any(" prints " in text for text in held)
    assert not any(" prints " in e.text for e, flag in zip(news.events, news.template_held_out) if not flag)


def test_a_base_market_that_is_not_realistic_is_refused_by_name():
    from actors.common.news_market import news_scenario

    with pytest.raises(ValueError, match="realistic base"):
        generate_news_market(5, news=news_scenario("news", base="regimes"))
