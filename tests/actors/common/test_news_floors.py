"""The news market's floors: a keyword rule that reads the words, flat, and the oracle of the surprise's sign."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.common.news_floors import (
    dollars, event_outcomes, keyword_actions, keyword_event_sign, keyword_sign, news_floor_figures, oracle_actions,
)
from actors.common.news_market import generate_news_market


@pytest.fixture(scope="module")
def twins():
    return generate_news_market(120, seed=9, news="news_drift"), generate_news_market(120, seed=9, news="news_drift_null")


def test_the_keyword_rule_counts_bullish_against_bearish_words_and_ties_without_either():
    assert keyword_sign("Nvidia beats earnings estimates, sources say") == 1
    assert keyword_sign("White House announces new tariffs") == -1
    assert keyword_sign("CPI y/y 3.4% vs 3.1% expected") == 0  # a figure against consensus: words alone cannot tell
    assert keyword_sign("Strong demand fears") == 0


def test_the_keyword_rule_covers_every_template_and_reads_figures_against_their_consensus(twins):
    news, _ = twins
    figures = news_floor_figures(news.events, news.event_bar, news.surprise, news.text_sign, news.bars)
    assert figures["keyword_accuracy_on_words"] > 0.97
    # The words carry the surprise at reliability 0.8: the rule can be no better on the surprise than that.
    assert figures["keyword_accuracy_on_surprise"] == pytest.approx(0.8, abs=0.08)
    assert figures["keyword_sided_share"] > 0.97  # the lists cover the templates; figures are read, not abstained on


def test_the_keyword_rule_reads_the_literature_sized_markets_words_too():
    market = generate_news_market(120, seed=9, news="news")
    signs = np.array([keyword_event_sign(event) for event in market.events])
    sided = signs != 0
    # Abstaining only where a figure equals its consensus (an in-line release) or an in-line sentence says nothing.
    assert sided.mean() > 0.9
    assert np.mean(signs[sided] == market.text_sign[sided]) > 0.97


def test_a_release_is_read_by_its_figure_against_consensus_through_its_polarity():
    from actors.common.events import MarketEvent

    cpi = MarketEvent(time_ns=0, kind="release", importance="high", name="CPI y/y", text="CPI y/y 3.4% vs 3.1% expected",
                      actual=3.4, consensus=3.1)
    payrolls = MarketEvent(time_ns=0, kind="release", importance="high", name="Nonfarm Payrolls", text="NFP 250K vs 180K",
                           actual=250.0, consensus=180.0)
    unknown = MarketEvent(time_ns=0, kind="release", importance="high", name="Some Index", text="Index beats", actual=2.0,
                          consensus=1.0)
    assert keyword_event_sign(cpi) == -1 and keyword_event_sign(payrolls) == 1
    assert keyword_event_sign(unknown) == 1  # an unknown release falls back to its words
    assert keyword_sign("Fed holds, signals fewer cuts") == -1 and keyword_sign("Fed holds, signals cuts later this year") == 1
    assert keyword_sign("Nvidia cuts full-year guidance") == -1 and keyword_sign("Beijing walks away from trade talks") == -1


def test_the_oracle_earns_on_news_and_not_on_its_null_twin_and_flat_earns_nothing(twins):
    news, null = twins
    on_news = news_floor_figures(news.events, news.event_bar, news.surprise, news.text_sign, news.bars)
    long, short = event_outcomes(null.bars, null.event_bar)
    priced = ~np.isnan(long)
    null_oracle = dollars(oracle_actions(null.surprise)[priced], long[priced], short[priced])
    assert on_news["oracle_usd_per_event"] > 100
    assert abs(null_oracle.mean()) < 3 * null_oracle.std() / np.sqrt(len(null_oracle))
    assert on_news["flat_usd_per_event"] == 0.0


def test_actions_follow_the_signs():
    assert oracle_actions(np.array([0.7, -1.2])).tolist() == [BUY, SELL]
    assert keyword_actions([]).tolist() == []
    assert dollars(np.array([BUY, SELL, HOLD]), np.array([10.0, 10.0, 10.0]), np.array([-5.0, -5.0, -5.0])).tolist() == [10.0, -5.0, 0.0]
