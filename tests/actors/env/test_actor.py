"""The env actor in real processes on a real bus."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bus.messages import Done, EnvEpisode, EnvObs, EnvOutcome, EnvTransition, Progress, RiskVerdict, Stats
from runtime.testing import running_actors

pytestmark = pytest.mark.slow

SMALL = {"data.synthetic_days": 6, "env.n_envs": 2}


def verdict(step: int, env_ids: list[int], actions: list[int], query_ids: list[str] | None = None) -> RiskVerdict:
    n = len(env_ids)
    return RiskVerdict(env_ids=env_ids, step=step, actions=np.array(actions, dtype=np.int64), vetoed=[False] * n,
                       reasons=[""] * n, degraded=[False] * n, llm_query_ids=query_ids or [""] * n)


def test_env_and_random_verdicts_exchange_observations_transitions_outcomes_and_episodes():
    overrides = {**SMALL, "env.episode_bars": 40, "env.verdict_deadline_ms": 2000, "runtime.stats_interval_secs": 1.0}
    with running_actors(["env", "actors.env.random_verdicts"], overrides=overrides) as rt:
        rt.client.subscribe(EnvObs, EnvTransition, EnvOutcome, EnvEpisode, Progress, Stats)
        first = rt.client.recv(EnvObs, timeout_secs=30)
        env_pid = rt.pid("env")
        assert first.obs.shape == (2, 261) and first.obs.dtype == np.float32
        assert first.masks.shape == (2, 6) and first.masks[:, 0].all()
        assert len(first.contexts) == 2 and first.contexts[0].symbol == "NQ" and first.contexts[0].trailing_limit == 2500.0
        transition = rt.client.recv(EnvTransition, timeout_secs=10)
        assert transition.env_ids == [0, 1] and transition.timed_out == [False, False]
        nxt = rt.client.recv(EnvObs, timeout_secs=10, where=lambda m: m.step == transition.step + 1)
        assert nxt.env_ids == [0, 1]
        outcome = rt.client.recv(EnvOutcome, timeout_secs=30)
        assert outcome.decision_steps and outcome.exit_reason in ("stop", "target", "trail", "break_even", "forced_flat", "drawdown", "episode_end", "signal")
        episode = rt.client.recv(EnvEpisode, timeout_secs=30)
        assert 0 < episode.steps <= 40 and "win_rate" in episode.metrics and "sharpe" in episode.metrics
        progress = rt.client.recv(Progress, timeout_secs=10, where=lambda m: m.actor == "env")
        assert progress.steps > 0 and progress.steps_per_sec > 0
        stats = rt.client.recv(Stats, timeout_secs=10, where=lambda m: m.actor == "env" and m.counters.get("episodes", 0) > 0)
        assert stats.gauges["env_steps_per_sec"] > 0
        later = rt.client.recv(Stats, timeout_secs=10, where=lambda m: m.actor == "env" and m.counters["msgs_out"] > stats.counters["msgs_out"])
        assert later.gauges["loop_step"] > stats.gauges["loop_step"]
        assert rt.pid("env") == env_pid  # never crashed and restarted along the way


def test_the_env_executes_the_verdict_for_its_step_ignores_others_and_holds_at_the_deadline():
    overrides = {**SMALL, "env.verdict_deadline_ms": 1500, "env.stop_loss_atr": 100.0, "env.take_profit_atr": 100.0}
    with running_actors(["env"], overrides=overrides) as rt:
        rt.client.subscribe(EnvObs, EnvTransition, EnvOutcome)
        obs = rt.client.recv(EnvObs, timeout_secs=30)
        assert obs.step == 0
        rt.client.publish(verdict(7, [0, 1], [1, 1]))  # wrong step: ignored
        rt.client.publish(RiskVerdict(env_ids=[0, 1], step=0, actions=np.array([np.nan, 1.0]), vetoed=[False] * 2,
                                      reasons=["", ""], degraded=[False] * 2))  # not integer actions: counted, dropped
        rt.client.publish(verdict(0, [0, 1], [1, 2], ["q-a", "q-b"]))
        transition = rt.client.recv(EnvTransition, timeout_secs=10)
        assert transition.step == 0 and transition.actions.tolist() == [1, 2]
        obs = rt.client.recv(EnvObs, timeout_secs=10)
        assert [context.position for context in obs.contexts] == [1, -1]
        assert obs.masks[0].tolist()[:3] == [True, False, True]  # long: no second entry, SELL exits

        # no verdict for step 1: after the deadline every env holds and the transition says so
        held = rt.client.recv(EnvTransition, timeout_secs=10)
        assert held.step == 1 and held.timed_out == [True, True] and held.actions.tolist() == [0, 0]
        obs = rt.client.recv(EnvObs, timeout_secs=10)
        assert obs.step == 2

        rt.client.publish(verdict(2, [0, 1], [2, 1], ["q-exit", ""]))
        outcomes = [rt.client.recv(EnvOutcome, timeout_secs=10) for _ in range(2)]
        by_env = {outcome.env_id: outcome for outcome in outcomes}
        assert by_env[0].exit_reason == "signal" and by_env[0].decision_steps == [0, 2]
        assert by_env[0].llm_query_ids == ["q-a", "q-exit"] and by_env[1].llm_query_ids == ["q-b"]


def test_a_backtest_passes_over_the_test_split_writes_a_report_and_reports_done():
    overrides = {**SMALL, "env.mode": "backtest", "env.split": "test", "env.verdict_deadline_ms": 2000}
    with running_actors(["env", "actors.env.random_verdicts"], overrides=overrides) as rt:
        rt.client.subscribe(Done)
        done = rt.client.recv(Done, timeout_secs=60, where=lambda m: m.actor == "env")
        assert done.reason == "backtest_complete"
        assert done.summary["bars"] >= 388 and done.summary["trades"] > 0 and done.summary["verdict_timeouts"] == 0
        report = rt.run_dir / "backtest"
        assert json.loads((report / "metrics.json").read_text())["bars"] == done.summary["bars"]
        assert (report / "equity.png").stat().st_size > 1000 and "Max drawdown" in (report / "report.md").read_text()


def test_a_paced_env_publishes_no_faster_than_its_step_interval_and_reports_decision_latency():
    overrides = {**SMALL, "env.step_interval_ms": 100.0, "env.max_steps": 12, "runtime.stats_interval_secs": 60.0}
    with running_actors(["env", "actors.env.random_verdicts"], overrides=overrides) as rt:
        rt.client.subscribe(EnvObs, Done)
        obs_sent = []
        done = None
        while done is None:
            decoded = rt.client.recv_decoded(timeout_secs=10)
            if isinstance(decoded.msg, EnvObs):
                obs_sent.append(decoded.sent_ns)
            elif isinstance(decoded.msg, Done):
                done = decoded.msg
    gaps_ms = np.diff(obs_sent) / 1e6
    assert len(gaps_ms) >= 5 and gaps_ms.min() >= 99.0
    assert 0 < done.summary["decision_latency_p50_us"] < 100_000
