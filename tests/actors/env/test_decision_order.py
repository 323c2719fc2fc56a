"""A risk.verdict may arrive before the fusion.decision it follows (direct lanes, bus.direct): the env's report and
the paper session explain each step the same either way, and a decision that never comes costs a bounded wait."""

from __future__ import annotations

import json
import os
import time

import numpy as np

from actors.env.random_verdicts import random_legal_actions
from bus.messages import Bar, Done, EnvObs, EnvTransition, FusionDecision, Heartbeat, RiskVerdict
from runtime.testing import actor_harness
from tests.actors.env.test_paper_replay import PAPER, WARMUP, as_history, session_bars

WITH_FUSION = {"runtime.actors": ["env", "fusion"]}
"""A fusion actor runs (a verdict that is not degraded was made from its decision); the test plays its part."""
BACKTEST = {**WITH_FUSION, "data.synthetic_days": 6, "env.n_envs": 2, "env.mode": "backtest", "env.split": "test",
            "env.max_steps": 60, "env.verdict_deadline_ms": 30_000.0, "runtime.stats_interval_secs": 60.0,
            "env.max_fusion_decision_wait_ms": 30_000.0}
"""A held verdict waits for its decision longer than any test takes: the order decides, not the machine's speed."""
FUSION_BEAT = Heartbeat(actor="fusion", pid=os.getpid(), uptime_secs=1.0)


def fusion_decision(step: int, env_ids: list[int], actions: np.ndarray) -> FusionDecision:
    n = len(env_ids)
    return FusionDecision(env_ids=env_ids, step=step, actions=actions, method="rules", rules=[f"rule{step}"] * n, rl_actions=actions,
                          rl_confidences=np.full(n, 0.7, dtype=np.float32), llm_actions=np.full(n, -1, dtype=np.int64),
                          llm_confidences=np.zeros(n, dtype=np.float32), llm_staleness=np.full(n, -1, dtype=np.int64),
                          llm_query_ids=[""] * n, rl_trust=np.ones(n, dtype=np.float32), llm_trust=np.zeros(n, dtype=np.float32))


def risk_verdict(step: int, env_ids: list[int], actions: np.ndarray, degraded: bool = False) -> RiskVerdict:
    n = len(env_ids)
    return RiskVerdict(env_ids=env_ids, step=step, actions=actions, vetoed=[False] * n, reasons=[""] * n, degraded=[degraded] * n,
                       llm_query_ids=[""] * n)


async def play_backtest(tmp_path, verdict_first: bool):
    """Random legal actions (the same every run), each step's decision and verdict in the order asked; the env's book."""
    rng = np.random.default_rng(5)
    async with actor_harness("env", BACKTEST, run_dir=tmp_path) as h:
        await h.deliver(FUSION_BEAT)
        while not isinstance(obs := await h.recv((EnvObs, Done), timeout_secs=30), Done):
            env_ids, actions = list(obs.env_ids), random_legal_actions(obs.masks, rng)
            decision, verdict = fusion_decision(obs.step, env_ids, actions), risk_verdict(obs.step, env_ids, actions)
            if verdict_first:
                await h.deliver(verdict)
                assert not [t for t in h.messages(EnvTransition) if t.step == obs.step]  # held for its decision
                await h.deliver(decision)
            else:
                await h.deliver(decision, verdict)
        book, counters = h.actor.book, dict(h.actor.counters)
    return book, obs.summary, counters


def figures(summary: dict[str, float]) -> dict[str, float | None]:
    """The summary without its timings, NaN (no value) as None so that equal runs compare equal."""
    return {key: None if value != value else value for key, value in summary.items() if "latency" not in key}


async def test_a_verdict_before_its_fusion_decision_is_explained_as_one_after_it(tmp_path):
    in_order, in_order_summary, in_order_counters = await play_backtest(tmp_path / "a", verdict_first=False)
    reversed_, reversed_summary, reversed_counters = await play_backtest(tmp_path / "b", verdict_first=True)
    assert len(in_order.trades) > 0
    assert [(t.trade.trade_id, t.entry, t.exit) for t in reversed_.trades] == [(t.trade.trade_id, t.entry, t.exit) for t in in_order.trades]
    assert all(t.entry is None or t.entry.fusion_rule.startswith("rule") for t in reversed_.trades)
    assert reversed_.funnel.as_dict() == in_order.funnel.as_dict() and reversed_.funnel.counts["no_fusion_decision"] == 0
    assert figures(reversed_summary) == figures(in_order_summary)
    assert reversed_counters["verdicts_before_decision"] == 60 and in_order_counters.get("verdicts_before_decision", 0) == 0
    assert reversed_counters.get("fusion_decisions_missing", 0) == 0


async def test_a_verdict_whose_fusion_decision_never_comes_is_executed_after_max_fusion_decision_wait_ms_and_counted():
    async with actor_harness("env", {**BACKTEST, "env.max_fusion_decision_wait_ms": 300.0}) as h:
        await h.deliver(FUSION_BEAT)
        obs = await h.recv(EnvObs, timeout_secs=30)
        sent = time.monotonic()
        await h.deliver(risk_verdict(obs.step, list(obs.env_ids), np.zeros(2, dtype=np.int64)))
        transition = await h.recv(EnvTransition, timeout_secs=30)
        assert time.monotonic() - sent >= 0.3  # held for the whole wait (a lower bound: a busy machine only adds)
        assert transition.step == obs.step and transition.timed_out == [False, False]
        assert h.actor.counters["fusion_decisions_missing"] == 1


async def test_a_degraded_verdict_waits_for_no_fusion_decision():
    async with actor_harness("env", BACKTEST) as h:
        await h.deliver(FUSION_BEAT)
        obs = await h.recv(EnvObs, timeout_secs=30)
        await h.deliver(risk_verdict(obs.step, list(obs.env_ids), np.zeros(2, dtype=np.int64), degraded=True))
        await h.recv(EnvTransition, timeout_secs=10)
        assert h.actor.counters.get("verdicts_before_decision", 0) == 0


async def play_paper(tmp_path, verdict_first: bool) -> list[dict]:
    bars = session_bars(WARMUP + 12)
    async with actor_harness("env", {**PAPER, **WITH_FUSION}, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]])
        for step, bar in enumerate(bars[WARMUP:]):
            await h.deliver(bar)
            obs = await h.recv(EnvObs, where=lambda o, step=step: o.step == step)
            action = np.array([1 if step % 4 == 0 else 2 if step % 4 == 2 else 0], dtype=np.int64)
            action = np.where(obs.masks[0, action], action, 0)
            messages = [risk_verdict(step, [0], action), fusion_decision(step, [0], action)]
            await h.deliver(*(messages if verdict_first else messages[::-1]))
        await h.stop()
    return [json.loads(line) for line in (tmp_path / "paper" / "decisions.jsonl").read_text().splitlines()]


async def test_a_paper_verdict_before_its_fusion_decision_writes_the_same_decision_rows(tmp_path):
    in_order = await play_paper(tmp_path / "a", verdict_first=False)
    reversed_ = await play_paper(tmp_path / "b", verdict_first=True)
    without_timing = lambda rows: [{k: v for k, v in row.items() if k != "bar_to_verdict_ms"} for row in rows]  # noqa: E731
    assert len(in_order) == 12 and all(row["fusion_method"] == "rules" for row in reversed_)
    assert without_timing(reversed_) == without_timing(in_order)
