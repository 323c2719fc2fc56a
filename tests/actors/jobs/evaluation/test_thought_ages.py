"""The lockstep figures of a thought's real age (issue 51): from the step its prompt read, a carried answer's too."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from actors.common.actions import BUY, NO_ACTION
from actors.jobs.evaluation.lockstep_evidence import LockstepEvidence
from actors.jobs.evaluation.lockstep_report import lockstep_lines
from actors.jobs.evaluation.decision_sources import PairedDifference, Share, SourceScores
from actors.jobs.evaluation.thought_ages import ThoughtAges, ages_text
from bus.messages import FusionDecision, LlmThought


def thought(step_seen: int, step_built: int, query: str) -> LlmThought:
    return LlmThought(env_id=0, episode_id=0, step_seen=step_seen, step_built=step_built, query_id=query, action=BUY,
                      confidence=0.8, mode="single_shot", cached=step_built < step_seen)


def decision(step: int, age: int) -> FusionDecision:
    one = lambda value, dtype=np.int64: np.array([value], dtype=dtype)  # noqa: E731
    return FusionDecision(env_ids=[0], step=step, actions=one(BUY), method="rules", rules=["weighted"], rl_actions=one(BUY),
                          rl_confidences=one(0.5, np.float32), llm_actions=one(BUY if age >= 0 else NO_ACTION),
                          llm_confidences=one(0.8, np.float32), llm_staleness=one(age), llm_query_ids=["q" if age >= 0 else ""],
                          rl_trust=one(0.5, np.float32), llm_trust=one(0.5, np.float32))


def test_the_share_with_a_thought_its_real_age_and_the_carried_answers_age_are_measured():
    ages = ThoughtAges()
    # bar 0 thought about; bars 1..12 answered by carrying it (ages 1..12); K = 10 drops the last two
    messages = [thought(0, 0, "made"), *(thought(step, 0, f"c{step}") for step in range(1, 13))]
    messages += [decision(step, step if step <= 10 else -1) for step in range(0, 13)]
    messages.append(decision(12, -1))  # the same decision again (a peer restarted): counted once
    for msg in messages:
        ages.add(msg)

    figures = ages.figures(max_staleness_steps=10)

    assert figures["decisions"] == 13 and math.isclose(figures["with_thought_share"], 11 / 13)
    assert (figures["thought_age_mean"], figures["thought_age_p50"], figures["thought_age_max"]) == (5.0, 5.0, 10.0)
    assert figures["carried_answers"] == 12 and figures["carried_age_mean"] == 6.5 and figures["carried_age_max"] == 12
    assert math.isclose(figures["carried_too_stale_share"], 2 / 12)
    assert figures["carried_age_p90"] == np.percentile(np.arange(1, 13), 90)


def test_a_restamped_carried_answer_would_show_no_age():
    """The mutation issue 51 names: a carried answer stamped with the bar it answers is no carried answer at all."""
    ages = ThoughtAges()
    for step in range(1, 6):
        ages.add(thought(step, step, f"r{step}"))
    assert ages.figures(10)["carried_answers"] == 0


def test_the_report_and_metrics_carry_each_runs_thought_ages():
    n = 20
    scores = SourceScores(decisions=n, rl=Share(10, n), llm=Share(10, n), fused=Share(11, n), chose_right_source=Share(2, 4),
                          agreement=Share(10, n), fused_vs_rl=PairedDifference(1, 0, n))
    ages = ThoughtAges()
    for msg in (thought(0, 0, "made"), thought(14, 0, "c14"), decision(1, 1), decision(14, -1)):
        ages.add(msg)
    figures = {**ages.figures(10), "stale_thought_decisions": 1.0}
    evidence = LockstepEvidence(20, scores, thought_ages={"base": figures}, fold=0, test_start_day=5)

    saved = evidence.to_json()
    text = "\n".join(lockstep_lines(SimpleNamespace(lockstep=saved)))  # what it reads of the Summary

    assert saved["base"]["thought_ages"]["carried_age_max"] == 14.0 and saved["base"]["thought_ages"]["with_thought_share"] == 0.5
    assert "- base: 50.0% of 2 decisions had a thought" in text and "real age mean 14.0" in text
    assert "100.0% older than fusion.max_staleness_steps = 10" in text and "fusion: 1 decisions whose thought was too old" in text
    assert ages_text({"decisions": 0.0}) == "no decision"
