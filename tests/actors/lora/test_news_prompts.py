"""Event-bar prompts of the news market joined to their events' truth (actors/lora/news_prompts.py): the bench's
reader figures (match with the label and with the surprise's sign, $ a prompt, the floors) rest on this join."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.common.events import MarketEvent
from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.lora import history_bars
from actors.env.factory import make_env
from actors.lora.experience import Experience
from actors.lora.news_prompts import (event_experiences, event_truth_by_bar, floor_answers, history_bar_index,
                                      label_agreement, score)


def event(minute: int, text: str) -> MarketEvent:
    return MarketEvent(time_ns=minute * 60_000_000_000, kind="headline", name="Headline", importance="medium", text=text)


def experience(bar: int, action: int, long_usd: float = 0.0, short_usd: float = 0.0) -> Experience:
    return Experience(f"hindsight:history:{bar}", [], (True, True, True), "BUY | 0.80 | x", action, 0.0, "hindsight",
                      {"long_pnl_usd": long_usd, "short_pnl_usd": short_usd})


EVENTS = (event(1, "Nvidia beats estimates, shares surge"), event(2, "Oil slumps on weak demand"),
          event(3, "Apple raises guidance"))
TRUTH = {"event_bar": np.array([10, 20, 20]), "surprise": np.array([0.9, -1.2, 0.7]), "text_sign": np.array([1, -1, 1])}


def test_a_bar_gets_the_newest_event_it_makes_public_with_the_keyword_reading_of_its_words():
    truth = event_truth_by_bar(EVENTS, TRUTH)
    assert set(truth) == {10, 20}
    assert truth[10].surprise_sign == 1 and truth[10].keyword_sign == 1
    assert truth[20].text == "Apple raises guidance"  # minute 3, not minute 2's oil headline
    assert truth[20].surprise_sign == 1


def test_a_market_without_news_has_no_event_bars_and_a_mismatched_truth_is_refused():
    assert event_truth_by_bar((), None) == {}
    with pytest.raises(ValueError, match="3 events but 2 event bars"):
        event_truth_by_bar(EVENTS, {**TRUTH, "event_bar": np.array([10, 20])})


def test_only_history_prompts_of_event_bars_are_kept():
    truth = event_truth_by_bar(EVENTS, TRUTH)
    kept = event_experiences([experience(10, BUY), experience(11, SELL), experience(20, HOLD)], truth)
    assert [history_bar_index(e) for e in kept] == [10, 20]
    other = Experience("trade:0:1:2:q", [], (True,) * 3, "", BUY, 0.0, "trade")
    assert history_bar_index(other) is None and event_experiences([other], truth) == []


def test_answers_are_scored_against_the_label_the_surprise_and_in_hindsight_dollars():
    truth = event_truth_by_bar(EVENTS, TRUTH)
    prompts = [experience(10, SELL, long_usd=50.0, short_usd=-60.0), experience(20, BUY, long_usd=30.0, short_usd=-40.0)]
    scored = score([BUY, HOLD], prompts, truth)
    assert scored.match_label == [False, False]
    assert scored.match_surprise == [True, False]  # HOLD is never the surprise's side
    assert scored.usd == [50.0, 0.0]
    floors = floor_answers(prompts, truth)
    assert floors["surprise sign (news oracle)"] == [BUY, BUY]
    assert floors["label (oracle)"] == [SELL, BUY]
    assert floors["keyword rule"] == [BUY, BUY]
    assert label_agreement(prompts, truth) == (0.5, 0.0)
    with pytest.raises(ValueError, match="1 answers for 2 prompts"):
        score([BUY], prompts, truth)


def test_on_a_real_news_history_every_event_bar_prompt_shows_its_event():
    config = configure(build_parser().parse_args(["lora"]), {"data.scenario": "news", "data.synthetic_days": 20,
                                                            "reasoner.mode": "single_shot"})
    dataset = make_env(config, "train", seed=config.run.seed).split.dataset
    truth = event_truth_by_bar(tuple(dataset.events), dataset.event_truth)
    rows = [row for row in history_bars(config, 80, held_out=30) if int(row.key) in truth]
    assert len(rows) >= 10
    for row in rows:  # the event the join names is the one the prompt's news line shows first
        assert truth[int(row.key)].text in row.context["news"].split("\n")[1]
