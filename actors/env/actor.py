"""The env actor: hosts env.n_envs environments on the bus.

Loop: publish ``env.obs`` for step N; on the ``risk.verdict`` for step N, step every env
with its action, publish ``env.transition``, an ``env.outcome`` per closed trade, an
``env.episode`` per finished episode, then ``env.obs`` for N+1. Verdicts for any other
step are counted and ignored. Without a verdict by ``env.verdict_deadline_ms`` every env
holds (counted as ``verdict_timeouts``, ``timed_out`` in the transition), so the loop
never stalls. ``fusion.decision`` messages only feed the decision statistics of the
report (agreement, query rate, LLM confidence, trust).

Backtest mode writes a report into <run_dir>/<env.report_dir> after the pass and calls
``done("backtest_complete", metrics)``; ``env.max_steps`` > 0 ends any mode the same way.
Train mode writes the metrics of its finished episodes into <run_dir>/train_report when
it stops.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

import numpy as np

from actors.env.batch import BatchStep, EnvBatch
from actors.env.env import FuturesTradingEnv
from actors.env.factory import load_dataset
from actors.env.instruments import resolve_instrument
from actors.env.metrics import DecisionStats
from actors.env.report import write_report
from bus.messages import EnvEpisode, EnvObs, EnvOutcome, EnvTransition, FusionDecision, MarketContext, RiskVerdict
from runtime.actor import Actor

TRAIN_REPORT_DIR = "train_report"
"""Run sub-directory for the metrics of training episodes (backtests use env.report_dir)."""
DECISION_LATENCY_WINDOW = 4096
"""Recent decisions behind the latency percentiles."""
START_SETTLE_SECS = 0.2
"""Pause after every peer's first heartbeat so the last subscriptions have crossed the broker."""


class EnvActor(Actor):
    subscriptions = (RiskVerdict, FusionDecision)

    async def on_start(self) -> None:
        cfg = self.config.env
        if cfg.mode != "backtest":
            # fusion.decision only feeds the backtest report's decision figures: training skips the wake-up.
            self.subscriptions = (RiskVerdict,)
        dataset = await self.in_worker(load_dataset, self.config)
        instrument = resolve_instrument(self.config.instrument)
        split = dataset.split(cfg.split)
        envs = [FuturesTradingEnv(split, instrument, self.config.account, cfg) for _ in range(cfg.n_envs)]
        self.batch = EnvBatch(envs, mode=cfg.mode, seed=self.config.run.seed)
        self.batch.reset()
        self.decisions = DecisionStats()
        self.step_index = 0
        self.env_steps = 0
        self.finished = False
        self._awaiting: list[int] = []
        self._deadline_secs = cfg.verdict_deadline_ms / 1000.0
        self._deadline_at = float("inf")
        self._obs_sent_ns = 0
        self._last_obs_at = 0.0
        self._step_interval_secs = cfg.step_interval_ms / 1000.0
        self._decision_latency_ns: deque[int] = deque(maxlen=DECISION_LATENCY_WINDOW)
        self._started = time.monotonic()
        self._total_steps = self._planned_env_steps()
        self.log.info("env_ready", source=dataset.source, split=cfg.split, bars=split.n_bars, n_envs=cfg.n_envs, mode=cfg.mode,
                      **({f"repaired_{k}": v for k, v in dataset.repair.as_dict().items()} if dataset.repair else {}))
        self.spawn(self._begin(), "begin")
        self.spawn(self._watch_deadline(), "verdict_deadline")
        self.spawn(self._report_progress(), "progress")

    def _planned_env_steps(self) -> int:
        cfg = self.config.env
        if cfg.max_steps:
            return cfg.max_steps * cfg.n_envs
        if cfg.mode == "backtest":
            split = self.batch.envs[0].split
            return (split.stop - 1 - split.start) // cfg.n_envs * cfg.n_envs
        return 0

    async def _begin(self) -> None:
        # A heartbeat means a peer finished on_start and subscribed: the first observation goes
        # out when the whole loop can answer it, not into a deadline-driven HOLD.
        missing = await self.wait_for_peers(self.loop_peers(), self.config.runtime.startup_grace_secs)
        if missing:
            self.log.warning("peers_not_started", missing=missing)
        await asyncio.sleep(START_SETTLE_SECS)
        self._publish_obs()

    # ------------------------------------------------------------------ messages

    async def on_message(self, msg) -> None:
        match msg:
            case RiskVerdict():
                self._on_verdict(msg)
            case FusionDecision():
                arrays = (msg.rl_actions, msg.llm_actions, msg.llm_confidences, msg.llm_staleness, msg.rl_trust, msg.llm_trust)
                if all(array.shape == (len(msg.env_ids),) for array in arrays):
                    self.decisions.add_fusion(*arrays)
                else:
                    self.counters["bad_decisions"] += 1

    def _on_verdict(self, verdict: RiskVerdict) -> None:
        if self.finished or verdict.step != self.step_index or not self._awaiting:
            self.counters["verdicts_ignored"] += 1
            return
        if verdict.actions.shape != (len(verdict.env_ids),) or not np.issubdtype(verdict.actions.dtype, np.integer):
            self.counters["bad_verdicts"] += 1
            return
        by_env = dict(zip(verdict.env_ids, verdict.actions.tolist()))
        query_by_env = dict(zip(verdict.env_ids, verdict.llm_query_ids)) if verdict.llm_query_ids else {}
        missing = [env_id for env_id in self._awaiting if env_id not in by_env]
        if missing:
            self.counters["verdict_missing_envs"] += len(missing)
        actions = np.array([by_env.get(env_id, 0) for env_id in self._awaiting], dtype=np.int64)
        query_ids = [query_by_env.get(env_id, "") for env_id in self._awaiting]
        self.decisions.add_verdict(verdict.vetoed)
        self._decision_latency_ns.append(time.monotonic_ns() - self._obs_sent_ns)
        self._advance(actions, query_ids, timed_out=False)

    async def _watch_deadline(self) -> None:
        while True:
            remaining = self._deadline_at - time.monotonic()
            if remaining > 0:
                await asyncio.sleep(min(remaining, self._deadline_secs))
                continue
            if self._awaiting and not self.finished:
                self.counters["verdict_timeouts"] += 1
                self.log.warning("verdict_timeout", step=self.step_index, deadline_ms=self.config.env.verdict_deadline_ms)
                self._advance(np.zeros(len(self._awaiting), dtype=np.int64), [""] * len(self._awaiting), timed_out=True)
            else:
                self._deadline_at = float("inf")
                await asyncio.sleep(self._deadline_secs)

    # ------------------------------------------------------------------ the loop

    def _advance(self, actions: np.ndarray, query_ids: list[str], timed_out: bool) -> None:
        env_ids = self._awaiting
        self._awaiting = []
        self._deadline_at = float("inf")
        result = self.batch.step(env_ids, actions, self.step_index, query_ids)
        self.env_steps += len(env_ids)
        if result.illegal_actions:
            self.counters["illegal_actions"] += result.illegal_actions
        self._publish_step(result, timed_out)
        self.step_index += 1
        max_steps = self.config.env.max_steps
        if self.batch.finished or (max_steps and self.step_index >= max_steps):
            self.finished = True
            self.spawn(self._finish("backtest_complete" if self.batch.finished else "max_steps"), "finish")
            return
        delay_secs = self._last_obs_at + self._step_interval_secs - time.monotonic()
        if delay_secs > 0:  # paced (env.step_interval_ms): the next bar comes when it is due
            asyncio.get_running_loop().call_later(delay_secs, self._publish_obs)
        else:
            self._publish_obs()

    def _publish_obs(self) -> None:
        self._last_obs_at = time.monotonic()
        env_ids = self.batch.active_ids()
        obs, masks = self.batch.observations(env_ids)
        contexts = [MarketContext(**context) for context in self.batch.contexts(env_ids)]
        self.publish(EnvObs(env_ids=env_ids, episode_ids=self.batch.episode_ids(env_ids), step=self.step_index, obs=obs, masks=masks, contexts=contexts))
        self._awaiting = env_ids
        self._obs_sent_ns = time.monotonic_ns()
        self._deadline_at = time.monotonic() + self._deadline_secs

    def _publish_step(self, result: BatchStep, timed_out: bool) -> None:
        self.publish(EnvTransition(
            env_ids=result.env_ids, step=self.step_index, actions=result.actions, rewards=result.rewards,
            terminated=result.terminated, truncated=result.truncated, terminal_obs=result.terminal_obs,
            timed_out=[timed_out] * len(result.env_ids),
        ))
        for closed in result.closed_trades:
            trade = closed.trade
            self.counters["trades"] += 1
            self.publish(EnvOutcome(
                env_id=closed.env_id, episode_id=closed.episode_id, trade_id=trade.trade_id, side=trade.side,
                contracts=trade.contracts, entry_ns=trade.entry_ns, exit_ns=trade.exit_ns, entry_price=trade.entry_price,
                exit_price=trade.exit_price, pnl_usd=trade.pnl_usd, bars_held=trade.bars_held, exit_reason=trade.exit_reason,
                decision_steps=closed.decision_steps, llm_query_ids=closed.llm_query_ids,
            ))
        for episode in result.finished_episodes:
            self.counters["episodes"] += 1
            if episode.metrics.get("apex_violations", 0.0) > 0:
                self.counters["drawdown_breaches"] += 1
            self.publish(EnvEpisode(env_id=episode.env_id, episode_id=episode.episode_id, steps=episode.steps,
                                    episode_return=episode.episode_return, metrics=episode.metrics))

    # ------------------------------------------------------------------ ending

    def decision_latency_us(self) -> dict[str, float]:
        """env.obs published -> its risk.verdict received: what one decision of the loop costs in time."""
        if not self._decision_latency_ns:
            return {}
        p50, p99 = np.percentile(np.asarray(self._decision_latency_ns, dtype=np.float64) / 1e3, [50, 99])
        return {"decision_latency_p50_us": float(p50), "decision_latency_p99_us": float(p99)}

    def summary(self) -> dict[str, float]:
        metrics, _, _ = self.batch.run_summary()
        decisions = self.decisions.summary()
        if not self.decisions.decisions:  # no fusion actor: its figures would read as zeros, not as absent
            decisions = {key: value for key, value in decisions.items() if key == "veto_rate"}
        return {**metrics, **decisions, **self.decision_latency_us(), "loop_steps": float(self.step_index),
                "verdict_timeouts": float(self.counters["verdict_timeouts"]), "illegal_actions": float(self.counters["illegal_actions"])}

    async def _write_report(self, title: str, sub_dir: str) -> dict[str, float]:
        summary = self.summary()
        _, equity_curve, trades = self.batch.run_summary()
        out_dir = self.run_dir / sub_dir
        notes = f"{self.config.instrument.symbol}, split {self.config.env.split}, mode {self.config.env.mode}, {self.config.env.n_envs} env(s), {self.step_index} loop steps."
        await self.in_worker(write_report, out_dir, equity_curve, trades, summary, title, notes)
        self.log.info("report_written", path=str(out_dir))
        return summary

    async def _finish(self, reason: str) -> None:
        summary = await self._write_report(*self._report_title_and_dir())
        self.done(reason, summary)

    def _report_title_and_dir(self) -> tuple[str, str]:
        if self.config.env.mode == "backtest":
            return "Backtest", self.config.env.report_dir
        return "Training episodes", TRAIN_REPORT_DIR

    async def on_stop(self) -> None:
        if not self.finished and hasattr(self, "batch") and any(metrics.episodes for metrics in self.batch.run_metrics):
            title, sub_dir = self._report_title_and_dir()
            await self._write_report(f"{title} (stopped early)", sub_dir)

    # ------------------------------------------------------------------ figures

    async def _report_progress(self) -> None:
        last_steps, last_time = 0, time.monotonic()
        while True:
            await asyncio.sleep(self.config.env.progress_interval_secs)
            now = time.monotonic()
            rate = (self.env_steps - last_steps) / max(now - last_time, 1e-9)
            last_steps, last_time = self.env_steps, now
            self.progress(self.env_steps, self._total_steps, rate, self._figures())

    def _figures(self) -> dict[str, float]:
        returns = self.batch.recent_returns
        return {
            "mean_episode_return": float(np.mean(returns)) if returns else 0.0,
            "episodes": float(self.counters["episodes"]),
            "loop_steps": float(self.step_index),
            "verdict_timeouts": float(self.counters["verdict_timeouts"]),
        }

    def gauges(self) -> dict[str, float]:
        # Names must differ from the counters' (episodes, verdict_timeouts): the stats log merges both.
        if not hasattr(self, "batch"):
            return {}
        elapsed = max(time.monotonic() - self._started, 1e-9)
        returns = self.batch.recent_returns
        return {
            "mean_episode_return": float(np.mean(returns)) if returns else 0.0,
            "loop_step": float(self.step_index),
            "env_steps_per_sec": self.env_steps / elapsed,
            **self.decision_latency_us(),
        }


ACTOR = EnvActor
