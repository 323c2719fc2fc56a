"""The env actor's shell in-process on the harness (fast), and with random_verdicts in real processes for the wiring."""

from __future__ import annotations

import json

import numpy as np
import pytest
from structlog.testing import capture_logs

from actors.env.random_verdicts import random_legal_actions
from bus.messages import Done, EnvEpisode, EnvObs, EnvOutcome, EnvTransition, Progress, RiskVerdict, Stats
from runtime.testing import actor_harness, running_actors

SMALL = {"data.synthetic_days": 6, "env.n_envs": 2}


def verdict(step: int, env_ids: list[int], actions: list[int], query_ids: list[str] | None = None) -> RiskVerdict:
    n = len(env_ids)
    return RiskVerdict(env_ids=env_ids, step=step, actions=np.array(actions, dtype=np.int64), vetoed=[False] * n,
                       reasons=[""] * n, degraded=[False] * n, llm_query_ids=query_ids or [""] * n)


async def answer_every_obs_until_done(h, seed: int = 0) -> Done:
    """Play random_verdicts' part: a random legal verdict for every env.obs, until the env is done."""
    rng = np.random.default_rng(seed)
    while True:
        obs = await h.recv((EnvObs, Done), timeout_secs=30)
        if isinstance(obs, Done):
            return obs
        n = len(obs.env_ids)
        await h.deliver(RiskVerdict(env_ids=list(obs.env_ids), step=obs.step, actions=random_legal_actions(obs.masks, rng),
                                    vetoed=[False] * n, reasons=[""] * n, degraded=[False] * n, llm_query_ids=[""] * n))


@pytest.mark.slow
def test_env_and_random_verdicts_exchange_observations_transitions_outcomes_and_episodes():
    overrides = {**SMALL, "env.episode_bars": 40, "env.verdict_deadline_ms": 2000, "runtime.stats_interval_secs": 1.0}
    with running_actors(["env", "actors.env.random_verdicts"], overrides=overrides) as rt:
        rt.client.subscribe(EnvObs, EnvTransition, EnvOutcome, EnvEpisode, Progress, Stats)
        first = rt.client.recv(EnvObs, timeout_secs=30)
        env_pid = rt.pid("env")
        assert first.obs.shape == (2, 261) and first.obs.dtype == np.float32
        assert first.masks.shape == (2, 6) and first.masks[:, 0].all()
        assert len(first.contexts) == 2 and first.contexts[0].symbol == "MNQ" and first.contexts[0].trailing_limit == 2500.0
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


async def test_the_env_executes_the_verdict_for_its_step_ignores_others_and_holds_at_the_deadline():
    overrides = {**SMALL, "env.verdict_deadline_ms": 300, "env.stop_loss_atr": 100.0, "env.take_profit_atr": 100.0}
    with capture_logs() as logs:
        async with actor_harness("env", overrides) as h:
            obs = await h.recv(EnvObs, timeout_secs=30)
            assert obs.step == 0
            h.send(verdict(7, [0, 1], [1, 1]))  # wrong step: ignored
            h.send(RiskVerdict(env_ids=[0, 1], step=0, actions=np.array([np.nan, 1.0]), vetoed=[False] * 2,
                               reasons=["", ""], degraded=[False] * 2))  # not integer actions: counted, dropped
            await h.deliver(verdict(0, [0, 1], [1, 2], ["q-a", "q-b"]))
            transition = await h.recv(EnvTransition)
            assert transition.step == 0 and transition.actions.tolist() == [1, 2]
            obs = await h.recv(EnvObs)
            assert [context.position for context in obs.contexts] == [1, -1]
            assert obs.masks[0].tolist()[:3] == [True, False, True]  # long: no second entry, SELL exits
            assert h.actor.counters["verdicts_ignored"] == 1

            # no verdict for step 1: after the deadline every env holds and the transition says so
            held = await h.recv(EnvTransition)
            assert held.step == 1 and held.timed_out == [True, True] and held.actions.tolist() == [0, 0]
            obs = await h.recv(EnvObs)
            assert obs.step == 2

            await h.deliver(verdict(2, [0, 1], [2, 1], ["q-exit", ""]))
            outcomes = [await h.recv(EnvOutcome) for _ in range(2)]
            by_env = {outcome.env_id: outcome for outcome in outcomes}
            assert by_env[0].exit_reason == "signal" and by_env[0].decision_steps == [0, 2]
            assert by_env[0].llm_query_ids == ["q-a", "q-exit"] and by_env[1].llm_query_ids == ["q-b"]
    timeouts = [entry for entry in logs if entry["event"] == "verdict_timeout"]
    assert [entry["step"] for entry in timeouts] == [1] and timeouts[0]["log_level"] == "warning"


async def test_a_backtest_passes_over_the_test_split_writes_a_report_and_reports_done(tmp_path):
    # The test answers every observation, so the deadline only has to outlast a loaded machine's scheduling gaps
    # (2 s did not: it failed once at load 6 with a verdict counted as timed out).
    overrides = {**SMALL, "env.mode": "backtest", "env.split": "test", "env.verdict_deadline_ms": 30000}
    async with actor_harness("env", overrides, run_dir=tmp_path) as h:
        done = await answer_every_obs_until_done(h)
        assert done.reason == "backtest_complete"
        assert done.summary["bars"] >= 388 and done.summary["trades"] > 0 and done.summary["verdict_timeouts"] == 0
        report = tmp_path / "backtest"
        assert json.loads((report / "metrics.json").read_text())["bars"] == done.summary["bars"]
        assert (report / "equity.png").stat().st_size > 1000 and "Max drawdown" in (report / "report.md").read_text()


async def test_a_paced_env_publishes_no_faster_than_its_step_interval_and_reports_decision_latency():
    overrides = {**SMALL, "env.step_interval_ms": 100.0, "env.max_steps": 6, "runtime.stats_interval_secs": 60.0}
    async with actor_harness("env", overrides) as h:
        done = await answer_every_obs_until_done(h)
        obs_sent = [record.sent_ns for record in h.published if isinstance(record.msg, EnvObs)]
    gaps_ms = np.diff(obs_sent) / 1e6
    assert len(gaps_ms) >= 5 and gaps_ms.min() >= 99.0
    assert 0 < done.summary["decision_latency_p50_us"] < 100_000
