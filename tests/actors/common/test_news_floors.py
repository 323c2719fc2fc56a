"""The news market's floors: a keyword rule that reads the words, flat, and the oracle of the surprise's sign."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.common.news_floors import dollars, event_outcomes, keyword_actions, keyword_sign, news_floor_figures, oracle_actions
from actors.common.news_market import generate_news_market


@pytest.fixture(scope="module")
def twins():
    return generate_news_market(120, seed=9, news="news"), generate_news_market(120, seed=9, news="news_null")


def test_the_keyword_rule_counts_bullish_against_bearish_words_and_ties_without_either():
    assert keyword_sign("Nvidia beats earnings estimates, sources say") == 1
    assert keyword_sign("White House announces new tariffs") == -1
    assert keyword_sign("CPI y/y 3.4% vs 3.1% expected") == 0  # a figure against consensus: words alone cannot tell
    assert keyword_sign("Strong demand fears") == 0


def test_the_keyword_rule_reads_the_words_sign_where_it_takes_a_side_and_misses_bare_figures(twins):
    news, _ = twins
    figures = news_floor_figures(news.events, news.event_bar, news.surprise, news.text_sign, news.bars)
    assert figures["keyword_accuracy_on_words"] > 0.9
    # The words carry the surprise at reliability 0.8: the rule can be no better on the surprise than that.
    assert figures["keyword_accuracy_on_surprise"] == pytest.approx(0.8, abs=0.08)
    assert 0.4 < figures["keyword_sided_share"] < 0.95


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
