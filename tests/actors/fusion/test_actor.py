"""The fusion actor's shell: in-process on the harness (fast), plus one real process for the wiring."""

import pytest
from structlog.testing import capture_logs

from actors.common.actions import BUY, HOLD, SELL
from actors.fusion.network import MODEL_FILE_NAME
import numpy as np

from bus.messages import EnvHindsight, EnvOutcome, FusionDecision, LlmThought, RiskVerdict, Stats
from runtime.testing import actor_harness, running_actors
from tests.actors.risk.bus_inputs import env_obs, proposal

NETWORK = {"fusion.method": "network", "fusion.hidden_dims": [16], "fusion.min_experiences": 8,
           "fusion.update_every_experiences": 8, "fusion.gradient_steps_per_update": 5, "fusion.batch_size": 8, "fusion.explore_rate": 0.0,
           "runtime.stats_interval_secs": 0.05}


async def decide(h, step: int) -> FusionDecision:
    await h.deliver(env_obs(step), proposal(step, [BUY, BUY], confidence=0.7))
    return await h.recv(FusionDecision, where=lambda d: d.step == step)


def outcome(step: int, pnl_usd: float) -> EnvOutcome:
    return EnvOutcome(env_id=0, episode_id=0, trade_id=step, side=1, contracts=1, entry_ns=0, exit_ns=1,
                      entry_price=1.0, exit_price=1.0, pnl_usd=pnl_usd, bars_held=1, exit_reason="signal",
                      decision_steps=[step], llm_query_ids=[])


def thought(step_seen: int, action: int, query_id: str) -> LlmThought:
    return LlmThought(env_id=0, episode_id=0, step_seen=step_seen, query_id=query_id, action=action,
                      confidence=0.95, mode="single_shot")


async def test_network_fusion_learns_from_outcomes_and_saves_its_network(tmp_path):
    async with actor_harness("fusion", NETWORK, run_dir=tmp_path) as h:
        await decide(h, 0)
        for step in range(1, 31):
            h.send(LlmThought(env_id=0, episode_id=0, step_seen=step - 1, query_id=f"q{step}",
                              action=SELL, confidence=0.7, mode="single_shot"))
            decision = await decide(h, step)
            assert decision.method == "network"
            executed = int(decision.actions[0])
            await h.deliver(RiskVerdict(env_ids=[0, 1], step=step, actions=decision.actions, vetoed=[False, False],
                                        reasons=["", ""], degraded=[False, False]),
                            outcome(step, 200.0 if executed == SELL else -200.0))
        stats = await h.recv(Stats, timeout_secs=15, where=lambda s: s.gauges.get("network_updates", 0) >= 1)
        assert stats.counters["experiences"] >= 8
        later = await decide(h, 100)
        assert later.rules[0] == "network"
        assert await h.stop() == 0
    assert (tmp_path / "fusion" / MODEL_FILE_NAME).is_file()


def short_paid(step: int) -> EnvHindsight:
    """Both envs' step: a short from the next open made $300, a long lost $300."""
    return EnvHindsight(env_ids=[0, 1], episode_ids=[0, 0], steps=[step, step], actions=np.array([SELL, SELL]),
                        long_pnl_usd=np.array([-300.0, -300.0]), short_pnl_usd=np.array([300.0, 300.0]),
                        long_exits=["stop", "stop"], short_exits=["target", "target"], long_bars=np.array([3, 3]),
                        short_bars=np.array([3, 3]))


async def test_flat_holds_learn_from_hindsight_what_no_trade_could_teach(tmp_path):
    # The policy holds, the LLM says SELL, rules follow the policy: nothing trades, no outcome ever comes.
    async with actor_harness("fusion", {**NETWORK, "fusion.min_experiences": 16, "fusion.update_every_experiences": 16,
                                        "fusion.gradient_steps_per_update": 100,
                                        "fusion.learning_rate": 3e-3}, run_dir=tmp_path) as h:
        for step in range(1, 25):
            await h.deliver(LlmThought(env_id=0, episode_id=0, step_seen=step - 1, query_id=f"q{step}", action=SELL,
                                       confidence=0.6, mode="single_shot"))
            await h.deliver(env_obs(step), proposal(step, [HOLD, HOLD], confidence=0.8))
            decision = await h.recv(FusionDecision, where=lambda d, step=step: d.step == step)
            assert decision.actions.tolist() == [HOLD, HOLD] and decision.rules[0].startswith("warmup_")
            await h.deliver(RiskVerdict(env_ids=[0, 1], step=step, actions=decision.actions, vetoed=[False, False],
                                        reasons=["", ""], degraded=[False, False]), short_paid(step))
        stats = await h.recv(Stats, timeout_secs=15, where=lambda s: s.gauges.get("network_updates", 0) >= 1
                             and s.counters.get("hindsight_experiences", 0) >= 24)
        # env 0 had the LLM's SELL to choose; env 1 had no thought, HOLD its only choice: nothing to learn there.
        assert stats.counters["hindsight_experiences"] == 24 and stats.counters.get("experiences", 0) == 0
        await h.deliver(LlmThought(env_id=0, episode_id=0, step_seen=29, query_id="q30", action=SELL, confidence=0.6,
                                   mode="single_shot"))
        await h.deliver(env_obs(30), proposal(30, [HOLD, HOLD], confidence=0.8))
        later = await h.recv(FusionDecision, where=lambda d: d.step == 30)
        assert later.rules == ["network", "network"] and later.actions.tolist() == [SELL, HOLD]


async def test_fusion_forgets_old_thoughts_when_the_env_starts_over():
    with capture_logs() as logs:
        async with actor_harness("fusion") as h:
            await decide(h, 40)
            await h.deliver(thought(41, SELL, "before-restart"))
            assert (await decide(h, 42)).llm_query_ids[0] == "before-restart"
            # the env actor restarted: steps count from 0 again
            assert (await decide(h, 0)).llm_query_ids[0] == ""
            await h.deliver(thought(0, SELL, "after-restart"))
            assert (await decide(h, 1)).llm_query_ids[0] == "after-restart"
    restarts = [entry for entry in logs if entry["event"] == "env_restart_seen"]
    assert [(entry["step"], entry["previous_step"]) for entry in restarts] == [(0, 42)]


@pytest.mark.slow
def test_a_fusion_process_decides_over_the_bus_and_stops_cleanly():
    with running_actors(["fusion"]) as rt:
        rt.client.subscribe(FusionDecision)
        rt.client.publish(env_obs(0))
        rt.client.publish(proposal(0, [BUY, BUY], confidence=0.7))
        decision = rt.client.recv(FusionDecision, timeout_secs=10, where=lambda d: d.step == 0)
        assert decision.env_ids == [0, 1] and decision.method == "rules"
        assert rt.stop() == 0


@pytest.mark.parametrize("reproducible", [False, True])
async def test_a_reproducible_run_uses_a_thought_about_step_n_from_step_n_plus_1_even_when_it_beat_ns_proposal(reproducible):
    async with actor_harness("fusion", {"run.reproducible": reproducible}) as h:
        await decide(h, 4)
        # The thought about step 5 arrives before step 5's proposal (the policy was busy with an update) ...
        await h.deliver(env_obs(5), thought(5, SELL, "about-5"))
        await h.deliver(proposal(5, [BUY, BUY], confidence=0.7))
        at_5 = await h.recv(FusionDecision, where=lambda d: d.step == 5)
        at_6 = await decide(h, 6)
    # ... asynchronous: used at once, at age 0; reproducible: as lockstep means it, from the next step, whatever the pace
    assert at_5.llm_query_ids[0] == ("" if reproducible else "about-5")
    assert at_6.llm_query_ids[0] == "about-5"
