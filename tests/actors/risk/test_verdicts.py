import numpy as np

from actors.common.actions import BUY, HOLD, SELL
from actors.risk.config import RiskConfig
from actors.risk.rules import RiskRules
from actors.risk.verdicts import VerdictBook

from tests.actors.risk.risk_inputs import FLAT_MASK, NQ_LIMITS, context

MASKS = np.stack([FLAT_MASK, FLAT_MASK])


def book() -> VerdictBook:
    return VerdictBook(RiskRules(RiskConfig(), NQ_LIMITS), max_pending_steps=4)


def test_the_fusion_decision_becomes_the_verdict_with_its_query_ids():
    b = book()
    assert b.add_obs(7, [0, 1], MASKS, [context(), context(consecutive_losses=3)]) is None
    verdict = b.add_decision(7, [0, 1], np.array([BUY, SELL]), ["q1", ""])
    assert verdict.actions.tolist() == [BUY, HOLD]
    assert verdict.reasons == ["", "consecutive_losses"] and verdict.vetoed == [False, True]
    assert verdict.degraded == [False, False] and verdict.llm_query_ids == ["q1", ""]
    assert b.counts["veto_consecutive_losses"] == 1


def test_the_episode_trade_counts_reach_the_win_rate_rule():
    b = book()
    b.add_obs(4, [0, 1], MASKS, [context(win_rate=0.0), context(win_rate=0.0)], episode_trades=[1, 6])
    verdict = b.add_decision(4, [0, 1], np.array([BUY, BUY]), ["", ""])
    assert verdict.reasons == ["", "win_rate"]


def test_a_decision_that_arrives_before_its_obs_is_answered_when_the_obs_comes():
    b = book()
    assert b.add_decision(3, [0, 1], np.array([SELL, SELL]), ["a", "b"]) is None
    assert b.add_obs(3, [0, 1], MASKS, [context(), context()]).actions.tolist() == [SELL, SELL]


def test_past_the_deadline_risk_decides_from_the_rl_proposal_alone():
    b = book()
    b.add_obs(5, [0, 1], MASKS, [context(), context()])
    b.add_proposal(5, [0, 1], np.array([BUY, SELL]))
    verdict = b.deadline(5)
    assert verdict.actions.tolist() == [BUY, SELL] and verdict.degraded == [True, True]
    assert b.add_decision(5, [0, 1], np.array([HOLD, HOLD]), ["", ""]) is None
    assert b.counts["late_decisions"] == 1 and b.counts["degraded_verdicts"] == 1


def test_deadline_path_holds_when_everything_upstream_is_silent():
    b = book()
    b.add_obs(9, [0, 1], MASKS, [context(), context()])
    verdict = b.deadline(9)
    assert verdict.actions.tolist() == [HOLD, HOLD] and verdict.degraded == [True, True]
    assert b.counts["hold_without_input"] == 1 and verdict.source == "hold"
    assert b.deadline(9) is None  # answered once only


def test_every_step_is_answered_exactly_once():
    b = book()
    answers = []
    for step in range(20):
        b.add_obs(step, [0, 1], MASKS, [context(), context()])
        answers.append(b.add_decision(step, [0, 1], np.array([BUY, HOLD]), ["", ""]))
        assert b.deadline(step) is None
    assert [v.step for v in answers] == list(range(20))


def test_a_batch_for_other_envs_is_counted_and_not_used():
    b = book()
    b.add_obs(1, [0, 1], MASKS, [context(), context()])
    assert b.add_decision(1, [5, 6], np.array([BUY, BUY]), ["", ""]) is None
    assert b.counts["mismatched_batches"] == 1
    assert b.deadline(1).degraded == [True, True]


def test_waiting_steps_are_bounded():
    b = book()
    for step in range(10):
        b.add_decision(step, [0], np.array([BUY]), [""])
    assert b.counts["evicted_steps"] == 6
    assert b.add_obs(9, [0], FLAT_MASK[None, :], [context()]).actions.tolist() == [BUY]
