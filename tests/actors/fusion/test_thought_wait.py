"""Fusion waits for a thought the observation names (EnvObs.thought_steps): on direct lanes it may come after."""

import asyncio

import msgspec
import numpy as np

from actors.common.actions import BUY, HOLD, NO_ACTION, SELL
from bus.messages import EnvObs, EnvOutcome, FusionDecision, LlmThought, RiskVerdict
from runtime.testing import actor_harness
from tests.actors.risk.bus_inputs import env_obs, proposal

WAIT_LONG = {"fusion.max_thought_wait_ms": 60_000.0}
NETWORK = {"fusion.method": "network", "fusion.hidden_dims": [16], "fusion.min_experiences": 1000, "fusion.explore_rate": 0.0}
"""Longer than any test: a step decided under it was released by a thought, not by the bound."""


def obs_naming(step: int, thought_steps: list[int]) -> EnvObs:
    return msgspec.structs.replace(env_obs(step), thought_steps=thought_steps)


def thought(env_id: int, step_seen: int, action: int = SELL, fallback: bool = False) -> LlmThought:
    return LlmThought(env_id=env_id, episode_id=0, step_seen=step_seen, query_id=f"q{env_id}-{step_seen}", action=action,
                      confidence=0.0 if fallback else 0.95, mode="single_shot", fallback=fallback)


def decisions(h) -> list[FusionDecision]:
    return [record.msg for record in h.bus.records if isinstance(record.msg, FusionDecision)]


async def test_a_step_whose_named_thought_is_on_its_way_is_decided_when_it_arrives_with_it():
    async with actor_harness("fusion", WAIT_LONG) as h:
        await h.deliver(obs_naming(5, [4, 4]), proposal(5, [BUY, BUY]))
        await h.deliver(thought(0, 4))
        assert decisions(h) == []  # env 1's thought is still missing
        await h.deliver(thought(1, 4))
        decision = await h.recv(FusionDecision, where=lambda d: d.step == 5)
    assert decision.llm_query_ids == ["q0-4", "q1-4"] and decision.llm_staleness.tolist() == [1, 1]
    assert h.actor.counters["thought_waits"] == 1 and h.actor.counters["thought_waits_expired"] == 0


async def test_a_step_is_decided_anyway_once_the_wait_is_over_and_counted():
    async with actor_harness("fusion", {"fusion.max_thought_wait_ms": 20.0}) as h:
        await h.deliver(thought(0, 4))
        await h.deliver(obs_naming(5, [4, 4]), proposal(5, [BUY, BUY]))
        decision = await h.recv(FusionDecision, where=lambda d: d.step == 5)
        assert decision.llm_query_ids == ["q0-4", ""]
        assert h.actor.counters["thought_waits"] == 1 and h.actor.counters["thought_waits_expired"] == 1
        await h.deliver(thought(1, 4))  # the lost thought, too late: nothing is decided twice
        await h.deliver(obs_naming(6, [4, 4]), proposal(6, [BUY, BUY]))
        await h.recv(FusionDecision, where=lambda d: d.step == 6)
    assert [d.step for d in decisions(h)] == [5, 6] and h.actor.counters["thought_waits"] == 1


async def test_a_fallback_thought_releases_the_step_it_was_waited_for():
    async with actor_harness("fusion", WAIT_LONG) as h:
        await h.deliver(obs_naming(5, [4, 4]), proposal(5, [BUY, BUY]))
        await h.deliver(thought(0, 4, HOLD, fallback=True), thought(1, 4, HOLD, fallback=True))
        decision = await h.recv(FusionDecision, where=lambda d: d.step == 5)
    assert decision.llm_actions.tolist() == [NO_ACTION, NO_ACTION]  # answered, but no opinion to use
    assert h.actor.counters["fallback_thoughts"] == 2 and h.actor.counters["thought_waits_expired"] == 0


async def test_an_observation_that_names_no_thought_or_one_already_here_is_decided_at_once():
    async with actor_harness("fusion", WAIT_LONG) as h:
        await h.deliver(env_obs(1), proposal(1, [BUY, BUY]))  # empty thought_steps: free-running
        await h.recv(FusionDecision, where=lambda d: d.step == 1)
        await h.deliver(obs_naming(2, [-1, -1]), proposal(2, [BUY, BUY]))  # the env had none either
        await h.recv(FusionDecision, where=lambda d: d.step == 2)
        await h.deliver(thought(0, 2), thought(1, 2), obs_naming(3, [2, 2]), proposal(3, [BUY, BUY]))
        decision = await h.recv(FusionDecision, where=lambda d: d.step == 3)
    assert decision.llm_staleness.tolist() == [1, 1]
    assert h.actor.counters["thought_waits"] == 0


async def test_a_re_sent_observation_of_a_waiting_step_opens_no_second_wait():
    async with actor_harness("fusion", WAIT_LONG) as h:
        await h.deliver(obs_naming(5, [4, 4]), proposal(5, [BUY, BUY]))
        await h.deliver(obs_naming(5, [4, 4]), proposal(5, [BUY, BUY]))
        await h.deliver(thought(0, 4), thought(1, 4))
        await h.recv(FusionDecision, where=lambda d: d.step == 5)
    assert len(decisions(h)) == 1 and h.actor.counters["thought_waits"] == 1


async def test_an_env_restart_drops_the_waits_of_its_old_run():
    async with actor_harness("fusion", WAIT_LONG) as h:
        await h.deliver(obs_naming(40, [39, 39]), proposal(40, [BUY, BUY]))
        await h.deliver(env_obs(0), proposal(0, [BUY, BUY]))  # the env started over and names no thought yet
        await h.recv(FusionDecision, where=lambda d: d.step == 0)
        await h.deliver(thought(0, 39), thought(1, 39))  # an old-run thought releases nothing
    assert [d.step for d in decisions(h)] == [0]


async def test_an_outcome_ahead_of_its_last_verdict_waits_for_it_so_the_trade_teaches_what_risk_executed():
    async with actor_harness("fusion", {**NETWORK, "fusion.max_verdict_wait_ms": 60_000.0}) as h:
        await h.deliver(env_obs(1), proposal(1, [BUY, BUY]))
        assert (await h.recv(FusionDecision, where=lambda d: d.step == 1)).actions.tolist() == [BUY, BUY]
        await h.deliver(EnvOutcome(env_id=0, episode_id=0, trade_id=1, side=1, contracts=1, entry_ns=0, exit_ns=1, entry_price=1.0,
                                   exit_price=1.0, pnl_usd=-200.0, bars_held=1, exit_reason="signal", decision_steps=[1], llm_query_ids=[]))
        assert h.actor.counters["outcomes_before_verdict"] == 1 and h.actor.fuser.learner.experience_count == 0
        # Risk vetoed the entry (HOLD): the losing trade must teach "not HOLD" (BUY, the policy's), not "not BUY".
        await h.deliver(RiskVerdict(env_ids=[0, 1], step=1, actions=np.array([HOLD, HOLD]), vetoed=[True, True], reasons=["x", "x"],
                                    degraded=[False, False]))
        [experience] = list(h.actor.fuser.learner._buffer)
    assert experience.target_action == BUY and h.actor.counters.get("outcomes_without_verdict", 0) == 0


async def test_an_outcome_whose_verdict_never_comes_teaches_after_max_verdict_wait_ms_and_is_counted():
    async with actor_harness("fusion", {**NETWORK, "fusion.max_verdict_wait_ms": 50.0}) as h:
        await h.deliver(env_obs(1), proposal(1, [BUY, BUY]))
        await h.recv(FusionDecision, where=lambda d: d.step == 1)
        await h.deliver(EnvOutcome(env_id=0, episode_id=0, trade_id=1, side=1, contracts=1, entry_ns=0, exit_ns=1, entry_price=1.0,
                                   exit_price=1.0, pnl_usd=-200.0, bars_held=1, exit_reason="signal", decision_steps=[1], llm_query_ids=[]))
        for _ in range(200):  # the wait ends on the loop's timer: poll its effect, not the clock
            if h.actor.counters.get("outcomes_without_verdict", 0):
                break
            await asyncio.sleep(0.05)
        [experience] = list(h.actor.fuser.learner._buffer)
    # Without risk's word the trade teaches as fusion decided: the losing BUY teaches HOLD.
    assert h.actor.counters["outcomes_without_verdict"] == 1 and experience.target_action == HOLD
