"""The risk actor's shell in-process on the harness (fast); fusion and risk in real processes for the wiring."""

import asyncio
import time

import numpy as np
import pytest
from structlog.testing import capture_logs

from actors.common.actions import BUY, HOLD, SELL
from bus.messages import FusionDecision, LlmThought, RiskVerdict, Stats
from runtime.testing import actor_harness, running_actors
from tests.actors.risk.bus_inputs import env_obs, proposal


def decision(step: int, actions: list[int]) -> FusionDecision:
    n = len(actions)
    zeros = np.zeros(n, dtype=np.float32)
    return FusionDecision(env_ids=list(range(n)), step=step, actions=np.array(actions, dtype=np.int64), method="rules",
                          rules=["no_thought"] * n, rl_actions=np.array(actions, dtype=np.int64), rl_confidences=zeros,
                          llm_actions=np.full(n, -1, dtype=np.int64), llm_confidences=zeros,
                          llm_staleness=np.full(n, -1, dtype=np.int64), llm_query_ids=[""] * n, rl_trust=zeros, llm_trust=zeros)


def wait_until_ready(rt, with_fusion: bool = False) -> int:
    """Publish steps 1, 2, ... until risk answers one (from fusion's decision when ``with_fusion``):
    proves the subscriptions are live. Returns the first step the test itself may use."""
    deadline = time.monotonic() + 30
    step = 1
    while time.monotonic() < deadline:
        rt.client.publish(env_obs(step))
        rt.client.publish(proposal(step, [HOLD, HOLD]))
        try:
            verdict = rt.client.recv(RiskVerdict, timeout_secs=1.0, where=lambda v: v.step == step)
            if not with_fusion or not any(verdict.degraded):
                return step + 1
        except TimeoutError:
            pass
        step += 1
    raise TimeoutError("the actors never answered")


async def test_risk_holds_when_everything_upstream_is_silent_and_uses_rl_past_the_deadline():
    with capture_logs() as logs:
        async with actor_harness("risk", {"risk.fusion_deadline_ms": 100.0, "env.mode": "backtest"}) as h:
            step = 1
            await h.deliver(env_obs(step))
            silent = await h.recv(RiskVerdict, where=lambda v: v.step == step)
            assert silent.actions.tolist() == [HOLD, HOLD] and silent.degraded == [True, True]

            await h.deliver(env_obs(step + 1, consecutive_losses=5), proposal(step + 1, [BUY, HOLD]))
            from_rl = await h.recv(RiskVerdict, where=lambda v: v.step == step + 1)
            assert from_rl.actions.tolist() == [HOLD, HOLD] and from_rl.reasons == ["consecutive_losses", ""]
            assert from_rl.degraded == [True, True]
    vetoes = [entry for entry in logs if entry["event"] == "veto"]
    assert [(entry["rule"], entry["env_id"], entry["step"]) for entry in vetoes] == [("consecutive_losses", 0, step + 1)]
    assert any(entry["event"] == "fusion_deadline_passed" and entry["step"] == step for entry in logs)


async def test_in_training_the_risk_actor_lets_an_entry_through_a_losing_streak():
    async with actor_harness("risk", {"risk.fusion_deadline_ms": 100.0, "env.mode": "train"}) as h:
        await h.deliver(env_obs(1, consecutive_losses=5), proposal(1, [BUY, HOLD]))
        verdict = await h.recv(RiskVerdict, where=lambda v: v.step == 1)
        assert verdict.actions.tolist() == [BUY, HOLD] and verdict.reasons == ["", ""]


async def test_risk_answers_a_fusion_decision_at_once_and_never_twice_for_a_step():
    async with actor_harness("risk", {"risk.fusion_deadline_ms": 100.0}) as h:
        await h.deliver(env_obs(1), proposal(1, [BUY, BUY]), decision(1, [SELL, BUY]))
        await asyncio.sleep(0.15)  # past the deadline: the step is answered already, no second verdict

        verdicts = h.messages(RiskVerdict)
        assert [v.step for v in verdicts] == [1]
        assert verdicts[0].actions.tolist() == [SELL, BUY] and verdicts[0].degraded == [False, False]


@pytest.mark.slow
def test_fusion_and_risk_processes_answer_every_step_once_with_the_freshest_thought():
    overrides = {"fusion.max_staleness_steps": 5, "runtime.stats_interval_secs": 1.0}
    with running_actors(["fusion", "risk"], overrides=overrides) as rt:
        rt.client.subscribe(FusionDecision, RiskVerdict)
        base = wait_until_ready(rt, with_fusion=True)
        # Wait for fusion to count the thought (its sys.stats), not a fixed sleep: on a busy machine 0.2 s was too short.
        rt.client.subscribe(Stats)
        known = rt.client.recv(Stats, timeout_secs=15, where=lambda s: s.actor == "fusion").counters.get("thoughts", 0)
        rt.client.publish(LlmThought(env_id=0, episode_id=0, step_seen=base, query_id="q-0", action=SELL,
                                     confidence=0.95, mode="four_step"))
        rt.client.recv(Stats, timeout_secs=15, where=lambda s: s.actor == "fusion" and s.counters.get("thoughts", 0) > known)
        rt.client.unsubscribe(Stats)
        decisions, verdicts = {}, {}
        test_steps = range(base + 1, base + 21)
        for step in test_steps:
            rt.client.publish(env_obs(step))
            rt.client.publish(proposal(step, [BUY, BUY], confidence=0.55))
            while step not in verdicts:
                msg = rt.client.recv(timeout_secs=5)
                if not isinstance(msg, (FusionDecision, RiskVerdict)):
                    continue  # a sys.stats still queued from the wait above
                book = decisions if isinstance(msg, FusionDecision) else verdicts
                assert msg.step not in book, "a second answer for one step"
                book[msg.step] = msg
        time.sleep(0.3)
        while True:
            try:
                extra = rt.client.recv(timeout_secs=0.2)
            except TimeoutError:
                break
            assert not isinstance(extra, (FusionDecision, RiskVerdict)) or extra.step < base
        assert sorted(s for s in decisions if s > base) == list(test_steps)
        # 1..5 steps later: the thought is at most 5 steps old, confident, and RL is unsure -> the LLM wins
        first, sixth = base + 1, base + 6
        assert decisions[first].rules == ["llm_override", "no_thought"]
        assert decisions[first].llm_staleness.tolist() == [1, -1]
        assert verdicts[first].actions.tolist() == [SELL, BUY] and verdicts[first].llm_query_ids == ["q-0", ""]
        assert verdicts[first].degraded == [False, False]
        # 6 steps later the thought is too old -> no thought
        assert decisions[sixth].rules == ["no_thought", "no_thought"]
        assert verdicts[sixth].actions.tolist() == [BUY, BUY]
        rt.client.subscribe(Stats)
        stats = rt.client.recv(Stats, timeout_secs=15, where=lambda s: s.actor == "fusion")
        assert stats.counters["decisions"] >= 20
        assert 0 < stats.gauges["query_rate"] < 1
