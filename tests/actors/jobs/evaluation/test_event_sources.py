"""The decisions right after an event read: found on the bus, joined to the event's truth, scored beside the floors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.common.events import MarketEvent
from actors.jobs.evaluation.event_sources import EventReads, EventSigns, event_scores, event_signs_by_id
from actors.jobs.evaluation.lockstep_evidence import LockstepEvidence, fused_against_floors, lockstep_rows
from actors.jobs.evaluation.decision_sources import PairedDifference, Share, SourceBook, SourceScores
from bus.messages import EnvHindsight, FusionDecision, LlmThought

FLAT = np.ones(6, dtype=bool)


def thought(env: int, step: int, query: str, news_ids: list[str], action: int = BUY, cached: bool = False) -> LlmThought:
    return LlmThought(env_id=env, episode_id=0, step_seen=step, query_id=query, action=action, confidence=0.8, mode="single_shot",
                      news_ids=news_ids, cached=cached)


def decision(step: int, query: str, llm: int, rl: int = HOLD, fused: int | None = None, env: int = 0) -> FusionDecision:
    one = lambda value, dtype=np.int64: np.array([value], dtype=dtype)  # noqa: E731
    return FusionDecision(env_ids=[env], step=step, actions=one(llm if fused is None else fused), method="rules", rules=["weighted"],
                          rl_actions=one(rl), rl_confidences=one(0.5, np.float32), llm_actions=one(llm),
                          llm_confidences=one(0.8, np.float32), llm_staleness=one(1), llm_query_ids=[query],
                          rl_trust=one(0.5, np.float32), llm_trust=one(0.5, np.float32))


def label(step: int, action: int, long_usd: float, short_usd: float, env: int = 0) -> EnvHindsight:
    return EnvHindsight(env_ids=[env], episode_ids=[0], steps=[step], actions=np.array([action], dtype=np.int64),
                        long_pnl_usd=np.array([long_usd]), short_pnl_usd=np.array([short_usd]), long_exits=["time"],
                        short_exits=["time"], long_bars=np.array([30]), short_bars=np.array([30]))


def play(messages) -> tuple[EventReads, SourceBook]:
    reads, book = EventReads(), SourceBook()
    for msg in messages:
        reads.add(msg)
        book.add(msg)
    for step in range(20):
        book.flat[(0, step)] = True
    return reads, book


def test_only_the_first_decision_using_a_thought_that_read_a_new_event_counts():
    reads, _ = play([
        thought(0, 0, "q0", []), decision(1, "q0", BUY),                 # no news: not counted
        thought(0, 1, "q1", ["e1"]), decision(2, "q1", BUY),             # first read of e1: counted
        decision(3, "q1", BUY),                                          # the same thought again: not counted twice
        thought(0, 3, "q2", ["e1"], cached=True), decision(4, "q2", SELL),  # a carried answer repeats e1: not new
        thought(0, 4, "q3", ["e2", "e1"]), decision(5, "q3", SELL),      # e2 is new (newest first)
        thought(1, 4, "q4", ["e2"]), decision(5, "q4", SELL, env=1),     # another env reads e2 for the first time
    ])
    assert reads.decision_event == {(0, 2): "e1", (0, 5): "e2", (1, 5): "e2"}


def test_a_cached_answer_carrying_the_thought_that_read_the_event_counts_when_the_decision_uses_it():
    # think_on = news: the model's thought about the event bar (q1) is still running when fusion decides that step with
    # the previous answer; the next quiet bar's cached answer (q2) carries it, and that is what the next decision uses.
    reads, _ = play([thought(0, 0, "q0", []), decision(1, "q0", HOLD), thought(0, 1, "q1", ["e1"]), decision(2, "q0", HOLD),
                     thought(0, 2, "q2", ["e1"], cached=True), decision(3, "q2", BUY), decision(4, "q2", BUY)])
    assert reads.decision_event == {(0, 3): "e1"}


def test_a_decision_heard_before_the_thought_it_used_still_counts():
    # The thought reaches fusion on a direct lane and the job through the broker: the job may hear the decision first.
    reads, _ = play([decision(2, "q1", BUY), thought(0, 1, "q1", ["e1"]), decision(3, "q1", BUY)])
    assert reads.decision_event == {(0, 2): "e1"}


def test_the_scores_set_the_llm_beside_the_keyword_rule_the_words_ceiling_and_one_side():
    signs = {"up": EventSigns(surprise=1, words=1, keyword=1), "down": EventSigns(surprise=-1, words=-1, keyword=0),
             "misled": EventSigns(surprise=1, words=-1, keyword=-1)}
    reads, book = play([
        thought(0, 0, "a", ["up"]), decision(1, "a", BUY), label(1, BUY, 100.0, -120.0),
        thought(0, 1, "b", ["down"]), decision(2, "b", SELL), label(2, SELL, -90.0, 80.0),
        thought(0, 2, "c", ["misled"]), decision(3, "c", SELL), label(3, BUY, 50.0, -70.0),
        thought(0, 3, "d", ["live-only"]), decision(4, "d", BUY), label(4, BUY, 10.0, -30.0),  # no truth: not scored
    ])

    scores = event_scores(reads, book, signs)

    assert (scores.decisions, scores.read, scores.unknown_events) == (3, 4, 1)
    assert (scores.llm_label.hits, scores.llm_label.n) == (2, 3)  # right on up and down, misled by the words
    assert scores.keyword_label.hits == 1  # it abstains (HOLD) on down and is misled too
    assert scores.words_label.hits == 2 and scores.buy_label.hits == 2
    assert scores.llm_surprise.hits == 2
    assert math.isclose(scores.usd["llm"].value, (100.0 + 80.0 - 70.0) / 3)
    assert math.isclose(scores.usd["keyword"].value, (100.0 + 0.0 - 70.0) / 3)
    assert math.isclose(scores.llm_vs_keyword_usd.value, 80.0 / 3)


def test_a_decision_in_a_position_or_without_a_label_is_not_scored():
    signs = {"up": EventSigns(1, 1, 1), "down": EventSigns(-1, -1, -1)}
    reads, book = play([thought(0, 0, "a", ["up"]), decision(1, "a", BUY),  # no label (the data ended)
                        thought(0, 1, "b", ["down"]), decision(2, "b", SELL), label(2, SELL, -5.0, 5.0)])
    book.flat[(0, 2)] = False
    assert event_scores(reads, book, signs).decisions == 0


def test_the_signs_come_from_the_datasets_event_truth_by_event_id():
    events = (MarketEvent(time_ns=1, kind="headline", importance="low", text="Stocks rally as chipmakers surge", event_id="h1"),
              MarketEvent(time_ns=2, kind="headline", importance="low", text="Quarterly numbers were released", event_id="h2"))
    signs = event_signs_by_id(events, {"event_bar": np.array([3, 9]), "surprise": np.array([0.7, -1.2]), "text_sign": np.array([1.0, 1.0])})
    assert signs["h1"] == EventSigns(1, 1, 1) and signs["h2"].surprise == -1 and signs["h2"].words == 1
    assert event_signs_by_id((), None) == {}
    with pytest.raises(ValueError, match="2 events but 1 surprises"):
        event_signs_by_id(events, {"event_bar": np.array([3]), "surprise": np.array([0.7]), "text_sign": np.array([1.0])})


def test_fused_against_its_floors_is_a_spa_test_per_floor():
    rng = np.random.default_rng(0)
    rl = rng.normal(0.0, 10.0, 400)
    better = {"fused": rl + 8.0 + rng.normal(0.0, 2.0, 400), "rl": rl, "trend": rng.normal(0.0, 10.0, 400), "llm": rl}
    same = {"fused": rl.copy(), "rl": rl, "trend": rl - 5.0, "llm": rl}

    winning, level = fused_against_floors(better, 20, reps=300), fused_against_floors(same, 20, reps=300)

    assert set(winning) == {"rl", "flat", "trend"}
    assert all(test["p_value_spa"] < 0.05 for test in winning.values())
    assert level["rl"]["p_value_spa"] == 1.0  # identical to RL: nothing to claim


def scores(n: int = 40) -> SourceScores:
    return SourceScores(decisions=n, rl=Share(20, n), llm=Share(20, n), fused=Share(21, n), chose_right_source=Share(5, 10),
                        agreement=Share(20, n), fused_vs_rl=PairedDifference(3, 2, n))


def test_the_rows_add_the_spa_verdict_and_the_llm_right_after_an_event():
    reads, book = play([thought(0, 0, "a", ["up"]), decision(1, "a", BUY), label(1, BUY, 100.0, -120.0)])
    events = {"base": event_scores(reads, book, {"up": EventSigns(1, 1, 1)})}
    spa = {"rl": {"p_value_spa": 0.01, "days": 50}, "flat": {"p_value_spa": 0.2, "days": 50}, "trend": {"p_value_spa": 0.03, "days": 50}}

    rows = {row.figure: row for row in lockstep_rows(LockstepEvidence(40, scores(), events=events, spa=spa))}

    snooping = rows["fused against its floors (SPA p, the largest)"]
    assert snooping.value == 0.2 and snooping.verdict == "not met" and "flat p 0.200" in snooping.note
    after_event = rows["LLM advice = hindsight label, right after an event"]
    assert after_event.value == 1.0 and after_event.note.startswith("base model, 1 flat decisions")
    assert "LLM minus the keyword rule, hindsight $ right after an event (paired)" in rows
    plain = {row.figure for row in lockstep_rows(LockstepEvidence(40, scores()))}
    assert not any("right after an event" in figure or "SPA" in figure for figure in plain)  # no events, no test: no rows
