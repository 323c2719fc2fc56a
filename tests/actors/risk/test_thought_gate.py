"""The thought's risk gate (risk.thought_risk_gate): for the minutes an ELEVATED / EXTREME read names, entries are vetoed
(stand_aside) and a position is closed (flatten); a newer read replaces an older one; no read changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.risk.config import RiskConfig
from actors.risk.rules import RiskRules
from actors.risk.thought_gate import THOUGHT_FLAT, THOUGHT_RISK, ThoughtRiskGate
from bus.messages import OBS_DIM, EnvObs, LlmThought, RiskVerdict
from runtime.testing import actor_harness
from tests.actors.risk.risk_inputs import FLAT_MASK, LONG_MASK, NQ_LIMITS, context
from tests.actors.risk.test_actor import decision


def thought(step: int, level: int, minutes: int = 0, env_id: int = 0) -> LlmThought:
    return LlmThought(env_id=env_id, episode_id=0, step_seen=step, query_id=f"q{step}", action=HOLD, confidence=0.5,
                      mode="single_shot", risk_level=level, risk_minutes=minutes)


def test_a_read_at_or_above_the_level_holds_for_its_minutes_from_the_step_it_saw():
    gate = ThoughtRiskGate("stand_aside", "ELEVATED")
    assert gate.add(thought(10, 2, 5))
    assert gate.rule(0, 9, 0) == "" and gate.rule(0, 10, 0) == THOUGHT_RISK and gate.rule(0, 15, 0) == THOUGHT_RISK
    assert gate.rule(0, 16, 0) == "" and gate.rule(1, 12, 0) == ""  # its minutes are over; another env is not gated
    assert not gate.add(thought(8, 0))  # an older thought arriving late changes nothing
    assert gate.rule(0, 12, 0) == THOUGHT_RISK
    gate.add(thought(12, 0))  # a newer CALM read ends it
    assert gate.rule(0, 13, 0) == ""
    assert not gate.add(thought(14, -1)) and gate.rule(0, 14, 0) == ""  # no read: nothing
    extreme_only = ThoughtRiskGate("stand_aside", "EXTREME")
    assert not extreme_only.add(thought(10, 1, 30)) and extreme_only.rule(0, 11, 0) == ""


def test_a_carried_answer_does_not_renew_the_read_it_repeats():
    # think_on = news / events: quiet bars are answered by the latest thought again, stamped with their own step.
    gate = ThoughtRiskGate("stand_aside", "EXTREME")
    assert gate.add(thought(10, 2, 5))
    for bar in range(11, 30):
        carried = LlmThought(env_id=0, episode_id=0, step_seen=bar, step_built=10, query_id=f"c{bar}", action=HOLD, confidence=0.5,
                             mode="single_shot", cached=True, risk_level=2, risk_minutes=5)
        assert not gate.add(carried)
    assert gate.rule(0, 15, 0) == THOUGHT_RISK and gate.rule(0, 16, 0) == ""  # still the 5 minutes from bar 10


def test_flatten_closes_a_position_and_the_overlay_keeps_another_halt_for_a_flat_env():
    gate = ThoughtRiskGate("flatten", "EXTREME")
    gate.add(thought(5, 2, 10, env_id=0))
    gate.add(thought(5, 2, 10, env_id=1))
    assert gate.overlay(["", "win_rate", ""], [0, 1, 2], [1, 0, 0], 6) == [THOUGHT_FLAT, "win_rate", ""]
    rules = RiskRules(RiskConfig(), NQ_LIMITS)
    closed = rules.review(HOLD, LONG_MASK, context(position=1, contracts=1), halt=THOUGHT_FLAT)
    assert (closed.action, closed.reason) == (SELL, THOUGHT_FLAT)
    assert rules.review(BUY, FLAT_MASK, context(), halt=THOUGHT_RISK).reason == THOUGHT_RISK


@pytest.mark.parametrize(("key", "value"), [("thought_risk_gate", "panic"), ("thought_risk_min_level", "CALM")])
def test_a_bad_setting_is_refused_by_name(key, value):
    with pytest.raises(ValueError, match=f"risk.{key}"):
        RiskConfig(**{key: value})


def obs(step: int, position: int = 0) -> EnvObs:
    mask = LONG_MASK if position else FLAT_MASK
    return EnvObs(env_ids=[0], episode_ids=[0], step=step, obs=np.zeros((1, OBS_DIM), dtype=np.float32),
                  masks=mask[None, :].copy(), contexts=[context(position=position, contracts=abs(position), recent_net_pnl=0.0)])


async def decide(h, step: int, action: int, position: int = 0) -> RiskVerdict:
    await h.deliver(obs(step, position), decision(step, [action]))
    return await h.recv(RiskVerdict, where=lambda v: v.step == step)


async def test_the_risk_actor_stands_aside_for_the_read_and_counts_it():
    overrides = {"risk.thought_risk_gate": "flatten", "risk.thought_risk_min_level": "ELEVATED", "env.mode": "backtest",
                 "risk.veto_enabled": False}
    async with actor_harness("risk", overrides) as h:
        await h.deliver(thought(1, 1, 2))
        gated = await decide(h, 2, BUY)
        closed = await decide(h, 3, HOLD, position=1)
        after = await decide(h, 4, BUY)
        counters = dict(h.actor.counters)
    assert (gated.actions.tolist(), gated.reasons) == ([HOLD], [THOUGHT_RISK])
    assert (closed.actions.tolist(), closed.reasons) == ([SELL], [THOUGHT_FLAT])
    assert (after.actions.tolist(), after.reasons) == ([BUY], [""])
    assert counters["thought_risk_reads"] == 1 and counters["veto_thought_risk"] == 1


async def test_the_gate_is_off_by_default():
    async with actor_harness("risk", {"env.mode": "backtest", "risk.veto_enabled": False}) as h:
        await h.deliver(thought(1, 2, 30))
        verdict = await decide(h, 2, BUY)
    assert (verdict.actions.tolist(), verdict.reasons) == ([BUY], [""])
