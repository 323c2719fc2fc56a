"""Lockstep (env.thought_lag_steps = 1) in real processes with the real model: env, policy, reasoner, fusion, risk."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict

import pytest

from bus.messages import Done, EnvObs, FusionDecision, Heartbeat, LlmThought, Progress
from runtime.actor import Actor
from runtime.testing import running_actors

pytestmark = pytest.mark.slow

LOOP = ["env", "policy", "reasoner", "fusion", "risk"]
LOCKSTEP = {
    "env.n_envs": 2, "data.synthetic_days": 5, "env.thought_lag_steps": 1, "policy.learn": False,
    # Lockstep waits for the LLM anyway: a niced reasoner would only lose the CPU to whatever else runs.
    "reasoner.mode": "single_shot", "reasoner.cache_enabled": False, "reasoner.process_nice": 0, "reasoner.max_decide_tokens": 16,
    "risk.fusion_deadline_ms": 5000.0,
    "runtime.stats_interval_secs": 60.0, "env.progress_interval_secs": 0.5,
}


def staleness_by_env(decisions: list[FusionDecision]) -> dict[int, list[tuple[int, int]]]:
    """env id -> (step, llm staleness) of every decision watched."""
    rows: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for decision in decisions:
        for env_id, staleness in zip(decision.env_ids, decision.llm_staleness.tolist()):
            rows[env_id].append((decision.step, staleness))
    return rows


@pytest.mark.parametrize("direct", [False, True], ids=["broker", "direct_lanes"])
def test_with_k_1_every_decision_after_the_first_uses_the_thought_about_the_previous_step_of_its_env(direct):
    # On direct lanes (bus.direct) the reasoner's thought may reach fusion after the env's next observation: fusion
    # waits for the thought the observation names (EnvObs.thought_steps), so the result is the broker's.
    steps = 4  # 3 watched decisions an env: a lag or a stale thought shows on any of them
    settings = {**LOCKSTEP, "env.max_steps": steps, "env.thought_wait_deadline_ms": 60_000.0, "bus.direct": direct}
    with running_actors(LOOP, settings) as rt:
        rt.client.subscribe(FusionDecision, Done, settle_secs=0)
        decisions: list[FusionDecision] = []
        while True:
            msg = rt.client.recv(timeout_secs=60)
            if isinstance(msg, FusionDecision):
                decisions.append(msg)
            elif isinstance(msg, Done) and msg.actor == "env":
                break
    by_env = staleness_by_env(decisions)
    assert sorted(by_env) == [0, 1]
    for env_id, rows in by_env.items():
        watched = [(step, staleness) for step, staleness in rows if step >= 1]  # step 0 had nothing to think about before it
        assert len(watched) == steps - 1, env_id
        # 1 = the thought saw the previous step; 0 would be this step's (a thought faster than the policy): never older.
        assert all(staleness in (0, 1) for _, staleness in watched), (env_id, watched)
    assert msg.summary["late_steps"] == 0.0 and msg.summary["loop_steps"] == steps
    assert msg.summary["llm_staleness_max_steps"] <= 1.0 and msg.summary["lag_query_rate"] >= (steps - 1) / steps - 1e-9
    assert 0.0 < msg.summary["thought_wait_share"] < 1.0


class QuickReasoner(Actor):
    """Stands in for the reasoner where its speed is not the point: a HOLD thought per env of every
    env.obs, THINK_SECS later (as a thought that saw that step)."""

    subscriptions = (EnvObs,)

    async def on_message(self, msg) -> None:
        await asyncio.sleep(THINK_SECS)
        for env_id, episode_id in zip(msg.env_ids, msg.episode_ids):
            self.publish(LlmThought(env_id=env_id, episode_id=episode_id, step_seen=msg.step, query_id=f"quick-{msg.step}-{env_id}",
                                    action=0, confidence=0.5, mode="single_shot"))


THINK_SECS = 0.05
QUICK = "tests.actors.env.test_lockstep:QuickReasoner"


def test_a_reasoner_that_stops_answering_makes_steps_late_not_a_hang_and_lockstep_resumes_after_its_restart():
    settings = {**LOCKSTEP, "env.thought_wait_deadline_ms": 300.0, "runtime.restart_backoff_secs": 1.0}
    with running_actors(["env", "policy", QUICK, "fusion", "risk"], settings) as rt:
        rt.client.subscribe(FusionDecision, Progress, Heartbeat, settle_secs=0)
        assert _consecutive_fresh_decisions(rt, wanted=5, timeout_secs=20) == 5
        killed_at_step = _env_figures(rt)["loop_steps"]
        rt.kill("quickreasoner")

        # Down: steps go on, one deadline each, counted as late.
        late = rt.client.recv(Progress, timeout_secs=20, where=lambda p: p.actor == "env" and p.figures.get("late_steps", 0) >= 2)
        assert late.figures["loop_steps"] > killed_at_step

        # Back: once the restarted reasoner beats, thoughts of the previous step return and late steps stop growing.
        rt.client.recv(Heartbeat, timeout_secs=30, where=lambda b: b.actor == "quickreasoner")
        assert _consecutive_fresh_decisions(rt, wanted=5, timeout_secs=20) == 5
        before = _env_figures(rt)
        _consecutive_fresh_decisions(rt, wanted=10, timeout_secs=20)
        after = _env_figures(rt)
        assert after["loop_steps"] >= before["loop_steps"] + 5
        assert after["late_steps"] == before["late_steps"]


def _env_figures(rt) -> dict[str, float]:
    return rt.client.recv(Progress, timeout_secs=5, where=lambda p: p.actor == "env").figures


def _consecutive_fresh_decisions(rt, wanted: int, timeout_secs: float) -> int:
    """Read decisions until ``wanted`` in a row had every env's thought of the previous step (staleness 1)."""
    deadline = time.monotonic() + timeout_secs
    in_a_row = 0
    while in_a_row < wanted:
        decision = rt.client.recv(FusionDecision, timeout_secs=max(deadline - time.monotonic(), 0.01))
        in_a_row = in_a_row + 1 if all(staleness == 1 for staleness in decision.llm_staleness.tolist()) else 0
    return in_a_row
