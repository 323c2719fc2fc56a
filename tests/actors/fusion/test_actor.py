import time

import pytest

from actors.fusion.actions import BUY, SELL
from actors.fusion.network import MODEL_FILE_NAME
from bus.messages import EnvOutcome, FusionDecision, LlmThought, RiskVerdict, Stats
from runtime.testing import running_actors
from tests.actors.risk.bus_inputs import env_obs, proposal

pytestmark = pytest.mark.slow

NETWORK = {"fusion.method": "network", "fusion.hidden_dims": [16], "fusion.min_experiences": 8,
           "fusion.update_every_experiences": 8, "fusion.gradient_steps_per_update": 5, "fusion.batch_size": 8, "fusion.explore_rate": 0.0,
           "runtime.stats_interval_secs": 1.0}


def decide(rt, step: int) -> FusionDecision:
    rt.client.publish(env_obs(step))
    rt.client.publish(proposal(step, [BUY, BUY], confidence=0.7))
    return rt.client.recv(FusionDecision, timeout_secs=5, where=lambda d: d.step == step)


def outcome(step: int, pnl_usd: float) -> EnvOutcome:
    return EnvOutcome(env_id=0, episode_id=0, trade_id=step, side=1, contracts=1, entry_ns=0, exit_ns=1,
                      entry_price=1.0, exit_price=1.0, pnl_usd=pnl_usd, bars_held=1, exit_reason="signal",
                      decision_steps=[step], llm_query_ids=[])


def test_network_fusion_process_learns_from_outcomes_and_saves_its_network():
    with running_actors(["fusion"], overrides=NETWORK) as rt:
        rt.client.subscribe(FusionDecision, Stats)
        deadline = time.monotonic() + 30
        while True:  # until fusion's subscriptions are live
            try:
                decide(rt, 0)
                break
            except TimeoutError:
                assert time.monotonic() < deadline
        for step in range(1, 31):
            rt.client.publish(LlmThought(env_id=0, episode_id=0, step_seen=step - 1, query_id=f"q{step}",
                                         action=SELL, confidence=0.7, mode="single_shot"))
            decision = decide(rt, step)
            assert decision.method == "network"
            executed = int(decision.actions[0])
            rt.client.publish(RiskVerdict(env_ids=[0, 1], step=step, actions=decision.actions, vetoed=[False, False],
                                          reasons=["", ""], degraded=[False, False]))
            rt.client.publish(outcome(step, 200.0 if executed == SELL else -200.0))
        stats = rt.client.recv(Stats, timeout_secs=15,
                               where=lambda s: s.actor == "fusion" and s.gauges.get("network_updates", 0) >= 1)
        assert stats.counters["experiences"] >= 8
        later = decide(rt, 100)
        assert later.rules[0] == "network"
        run_dir = rt.run_dir
        assert rt.stop() == 0
        assert (run_dir / "fusion" / MODEL_FILE_NAME).is_file()


def thought(step_seen: int, action: int, query_id: str) -> LlmThought:
    return LlmThought(env_id=0, episode_id=0, step_seen=step_seen, query_id=query_id, action=action,
                      confidence=0.95, mode="single_shot")


def test_fusion_process_forgets_old_thoughts_when_the_env_starts_over():
    with running_actors(["fusion"]) as rt:
        rt.client.subscribe(FusionDecision)
        deadline = time.monotonic() + 30
        while True:  # until fusion's subscriptions are live
            try:
                decide(rt, 40)
                break
            except TimeoutError:
                assert time.monotonic() < deadline
        rt.client.publish(thought(41, SELL, "before-restart"))
        time.sleep(0.2)
        assert decide(rt, 42).llm_query_ids[0] == "before-restart"
        # the env actor restarted: steps count from 0 again
        assert decide(rt, 0).llm_query_ids[0] == ""
        rt.client.publish(thought(0, SELL, "after-restart"))
        time.sleep(0.2)
        assert decide(rt, 1).llm_query_ids[0] == "after-restart"
