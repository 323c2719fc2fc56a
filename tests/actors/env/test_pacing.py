"""Bounded thought lag: the ThoughtGate and LagStats alone, then the env actor's shell on the harness."""

from __future__ import annotations

import numpy as np
import pytest
from structlog.testing import capture_logs

from actors.env.pacing import LagStats, ThoughtGate
from bus.messages import Done, EnvObs, LlmThought, RiskVerdict
from runtime.testing import actor_harness


def thought(env_id: int, step_seen: int) -> LlmThought:
    return LlmThought(env_id=env_id, episode_id=0, step_seen=step_seen, query_id=f"q{env_id}-{step_seen}", action=0,
                      confidence=0.5, mode="single_shot")


def verdict(step: int, env_ids: list[int]) -> RiskVerdict:
    n = len(env_ids)
    return RiskVerdict(env_ids=env_ids, step=step, actions=np.zeros(n, dtype=np.int64), vetoed=[False] * n, reasons=[""] * n,
                       degraded=[False] * n, llm_query_ids=[""] * n)


# ---------------------------------------------------------------- ThoughtGate


def test_the_next_observation_waits_until_every_env_has_a_thought_of_the_previous_step():
    gate = ThoughtGate(lag_steps=1, deadline_secs=5.0)
    assert gate.begin(next_step=1, env_ids=[0, 1], now=10.0) is False
    assert gate.record(0, step_seen=0, now=10.5) is False  # env 1 still thinking
    assert gate.record(1, step_seen=0, now=11.0) is True
    assert not gate.waiting and gate.waits == 1 and gate.late_steps == 0
    assert gate.waited_secs == pytest.approx(1.0)


def test_a_thought_that_arrived_before_the_step_ended_lets_the_observation_go_at_once():
    gate = ThoughtGate(lag_steps=1, deadline_secs=5.0)
    assert gate.record(0, step_seen=3, now=1.0) is False  # no wait open
    assert gate.begin(next_step=4, env_ids=[0], now=2.0) is True
    assert gate.waits == 0 and gate.waited_secs == 0.0


def test_a_thought_older_than_k_steps_does_not_count_and_k_2_accepts_one_more_step():
    one = ThoughtGate(lag_steps=1, deadline_secs=5.0)
    two = ThoughtGate(lag_steps=2, deadline_secs=5.0)
    for gate in (one, two):
        gate.record(0, step_seen=5, now=0.0)
    assert one.missing([0], next_step=7) == [0]
    assert two.missing([0], next_step=7) == []


def test_an_older_thought_arriving_late_never_replaces_a_newer_one():
    gate = ThoughtGate(lag_steps=1, deadline_secs=5.0)
    gate.record(0, step_seen=8, now=0.0)
    gate.record(0, step_seen=6, now=0.1)
    assert gate.missing([0], next_step=9) == []


def test_the_gate_names_the_newest_thought_it_has_per_env_for_the_observation_to_carry():
    gate = ThoughtGate(lag_steps=1, deadline_secs=5.0)
    gate.record(0, step_seen=8, now=0.0)
    gate.record(0, step_seen=6, now=0.1)
    assert gate.newest_seen([0, 1]) == [8, -1]


def test_past_the_deadline_the_wait_ends_as_a_late_step_naming_the_missing_envs():
    gate = ThoughtGate(lag_steps=1, deadline_secs=0.5)
    gate.begin(next_step=1, env_ids=[0, 1, 2], now=0.0)
    gate.record(1, step_seen=0, now=0.2)
    assert gate.expire(now=0.5) == [0, 2]
    assert not gate.waiting and gate.late_steps == 1 and gate.waited_secs == pytest.approx(0.5)
    assert gate.expire(now=0.6) == []  # nothing open: nothing to expire


def test_gate_figures_give_late_steps_and_the_share_of_wall_time_waited():
    gate = ThoughtGate(lag_steps=1, deadline_secs=1.0)
    gate.begin(1, [0], now=0.0)
    gate.record(0, 0, now=2.0)
    gate.begin(2, [0], now=3.0)
    gate.expire(now=4.0)
    figures = gate.figures(wall_secs=10.0)
    assert figures == {"thought_lag_steps": 1.0, "thought_waits": 2.0, "late_steps": 1.0, "thought_wait_secs": 3.0, "thought_wait_share": 0.3}


def test_a_gate_needs_a_lag_of_at_least_one_step():
    with pytest.raises(ValueError, match="lag_steps"):
        ThoughtGate(lag_steps=0, deadline_secs=1.0)


# ---------------------------------------------------------------- LagStats


def test_lag_stats_count_decisions_with_a_thought_at_most_k_steps_old_and_the_staleness_extremes():
    stats = LagStats(lag_steps=1)
    stats.add(np.array([1, 1, -1, 3]))  # -1: no usable thought
    stats.add(np.array([0, 1]))
    assert stats.figures() == {"lag_query_rate": pytest.approx(4 / 6), "llm_staleness_min_steps": 0.0, "llm_staleness_max_steps": 3.0}


def test_lag_stats_without_any_decision_report_nothing_and_without_thoughts_report_minus_one():
    assert LagStats(1).figures() == {}
    stats = LagStats(0)  # free-running is judged against one step
    stats.add(np.array([-1, -1]))
    assert stats.figures() == {"lag_query_rate": 0.0, "llm_staleness_min_steps": -1.0, "llm_staleness_max_steps": -1.0}


# ---------------------------------------------------------------- the env actor's shell

LOCKSTEP = {"data.synthetic_days": 6, "env.n_envs": 2, "env.thought_lag_steps": 1, "runtime.stats_interval_secs": 60.0}


async def test_in_lockstep_the_env_publishes_the_next_observation_only_after_both_envs_thoughts():
    async with actor_harness("env", {**LOCKSTEP, "env.thought_wait_deadline_ms": 10_000}) as h:
        obs = await h.recv(EnvObs, timeout_secs=30)
        assert obs.step == 0 and obs.thought_steps == [-1, -1]  # the first observation never waits: nothing was seen before it
        await h.deliver(verdict(0, [0, 1]), thought(0, 0))
        with pytest.raises(TimeoutError):
            await h.recv(EnvObs, timeout_secs=0.3)  # env 1's thought is missing
        await h.deliver(thought(1, 0))
        obs = await h.recv(EnvObs, timeout_secs=2)
        assert obs.step == 1 and obs.thought_steps == [0, 0]  # what fusion must hold too before deciding it
        figures = h.actor.lag_figures()
        assert figures["thought_waits"] == 1.0 and figures["late_steps"] == 0.0 and figures["thought_wait_secs"] >= 0.3


async def test_in_lockstep_without_thoughts_every_step_goes_on_at_the_deadline_counted_as_late():
    with capture_logs() as logs:
        async with actor_harness("env", {**LOCKSTEP, "env.thought_wait_deadline_ms": 100, "env.max_steps": 4}) as h:
            while True:
                msg = await h.recv((EnvObs, Done), timeout_secs=30)
                if isinstance(msg, Done):
                    break
                await h.deliver(verdict(msg.step, list(msg.env_ids)))
    assert msg.summary["late_steps"] == 3.0 and msg.summary["loop_steps"] == 4.0  # steps 1, 2, 3 waited in vain
    assert msg.summary["thought_wait_secs"] >= 0.3
    late = [entry for entry in logs if entry["event"] == "thoughts_late"]
    assert [entry["step"] for entry in late] == [1, 2, 3] and late[0]["missing_env_ids"] == [0, 1]


async def test_free_running_env_does_not_subscribe_to_thoughts_and_never_waits():
    async with actor_harness("env", {**LOCKSTEP, "env.thought_lag_steps": 0}) as h:
        obs = await h.recv(EnvObs, timeout_secs=30)
        assert obs.thought_steps == []  # depends on no thought
        assert h.send(thought(0, 0)) is False
        await h.deliver(verdict(obs.step, list(obs.env_ids)))
        assert (await h.recv(EnvObs, timeout_secs=2)).step == 1
        assert "late_steps" not in h.actor.lag_figures()


# ---------------------------------------------------------------- the report


def test_the_report_shows_the_llm_participation_table_with_k_0_for_a_free_running_run(tmp_path):
    from actors.env.report import participation_rows, write_report

    lockstep = {"query_rate": 0.9, "lag_query_rate": 0.875, "llm_staleness_min_steps": 1.0, "llm_staleness_steps": 1.0,
                "llm_staleness_max_steps": 1.0, "thought_lag_steps": 1.0, "late_steps": 2.0, "thought_wait_share": 0.5}
    write_report(tmp_path, [50_000.0, 50_010.0], [], lockstep, title="Training episodes")
    text = (tmp_path / "report.md").read_text()
    assert "## LLM participation" in text and "| Late steps (thought wait deadline passed) | 2 |" in text
    assert participation_rows({"query_rate": 0.1})[0] == ("Bounded thought lag K (steps; 0 = free-running)", "0")
    assert participation_rows({"sharpe": 1.0}) == []
