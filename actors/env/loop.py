"""The env actor's loop driver: hosts env.n_envs environments on the bus (the mode shells are actors/env/actor.py).

Loop: publish ``env.obs`` for step N; on the ``risk.verdict`` for step N, step every env
with its action, publish ``env.transition``, an ``env.outcome`` per closed trade, an
``env.episode`` per finished episode, then ``env.obs`` for N+1. Verdicts for any other
step are counted and ignored. Without a verdict by ``env.verdict_deadline_ms`` every env
holds (counted as ``verdict_timeouts``, ``timed_out`` in the transition), so the loop
never stalls. ``fusion.decision`` messages only feed the decision statistics of the
report (agreement, query rate, LLM confidence, trust).

Where the env reads fusion.decision (a report that explains trades, lockstep's figures), a verdict
that followed a fusion decision (not degraded) is executed only once that decision is in too: on
direct lanes (bus.direct) risk's verdict can arrive before the fusion decision it was made from.
It waits at most env.max_fusion_decision_wait_ms (then goes on without it, counted as
``fusion_decisions_missing``); through the broker the decision always comes first.

A shell that ``explains`` (backtest) also keeps what the report explains in a DecisionBook
(actors/env/decision_book.py). At the end of the pass the shell's ``write_report`` writes its report and
the loop calls ``done("backtest_complete", metrics)``; ``env.max_steps`` > 0 ends any mode the same way.
The account checkpoints are actors/env/checkpoint.py's AccountCheckpoints.

It is over 400 lines because the loop's parts share one state machine (the step awaited, its deadline,
its retry, the lockstep gate, a restarted peer's re-sent observation); split, each part would reach into
the others' fields. What it tells while it runs and at the end (progress, gauges, the summary) is
actors/env/loop_figures.py's.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from actors import FUSION
from actors.common.actions import BUY, SELL
from actors.common.decisions import DecisionStats
from actors.common.instruments import resolve_instrument
from actors.env.batch import BatchStep, EnvBatch
from actors.env.checkpoint import AccountCheckpoints, restore
from actors.env.decision_book import DecisionBook
from actors.env.env import FuturesTradingEnv
from actors.env.event_replay import EventReplay
from actors.env.factory import load_dataset
from actors.env.regime_model import record_regime_model
from actors.env.hindsight import HindsightBook, LabelledStep, hindsight_book
from actors.env.loop_figures import DECISION_LATENCY_WINDOW, LoopFigures
from actors.env.pacing import LagStats, ThoughtGate
from actors.env.config import EnvSettings
from bus.messages import Bar, EnvEpisode, EnvHindsight, EnvObs, EnvOutcome, EnvTransition, FusionDecision, Heartbeat, LlmThought, MarketContext, RiskVerdict
from runtime.actor import Actor

START_SETTLE_SECS = 0.2
"""Pause after every peer's first heartbeat so the last subscriptions have crossed the broker."""
CHECKPOINT_DIR = "env_state"
"""Run sub-directory of the account checkpoints (actors/env/checkpoint.py), one file per env actor."""


class EnvLoop(LoopFigures, Actor):
    """The loop of every file-driven mode; a shell (actors/env/actor.py) says what it explains and which report it writes."""
    settings_type = EnvSettings

    # Heartbeats tell a peer's restart (a new pid): the pending observation is then re-sent (_on_heartbeat).
    subscriptions = (RiskVerdict, FusionDecision, LlmThought, Heartbeat)
    hindsight: HindsightBook | None = None
    """Labels decision steps once their horizon is played (env.publish_hindsight, actors/env/hindsight.py)."""
    explains = False
    """Whether the shell's report explains each trade (a DecisionBook: fusion decisions and thoughts are kept)."""
    report_title = "Run"
    """The report's title (a shell's own)."""
    batch: EnvBatch | None = None
    """None until on_start has built the envs."""
    book: DecisionBook | None = None
    checkpoints: AccountCheckpoints | None = None

    async def on_start(self) -> None:
        cfg = self.config.env
        if not self.explains and not cfg.thought_lag_steps:
            # fusion.decision and llm.thought only feed the backtest report and lockstep: training skips the wake-ups.
            self.subscriptions = (RiskVerdict, Heartbeat)
        self.gate = ThoughtGate(cfg.thought_lag_steps, cfg.thought_wait_deadline_ms / 1000.0) if cfg.thought_lag_steps else None
        self.lag = LagStats(cfg.thought_lag_steps)
        self._gate_deadline: asyncio.TimerHandle | None = None
        dataset = await self.in_worker(load_dataset, self.config)
        instrument = resolve_instrument(self.config.instrument)
        split = dataset.split(cfg.split)
        envs = [FuturesTradingEnv(split, instrument, self.config.account, cfg) for _ in range(cfg.n_envs)]
        self.batch = EnvBatch(envs, mode=cfg.mode, seed=self.config.run.seed)
        self.batch.reset()
        self.hindsight = hindsight_book(self.config, instrument, split.dataset.lists)
        self.event_replay = EventReplay.of(split.dataset)  # the news market's md.event (actors/env/event_replay.py)
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
        self.book = DecisionBook(len(envs)) if self.explains else None
        self.data_notes: list[str] = list(getattr(dataset, "warnings", ()) or ())
        self._started = time.monotonic()
        self._loop_started = self._started
        """When the first observation went out: the wall time of the loop (thought_wait_share) counts from it."""
        self._total_steps = self._planned_env_steps()
        self._peer_pids: dict[str, int] = {}
        self._resend_delay_secs = cfg.resend_obs_delay_ms / 1000.0
        self._retry_secs = cfg.verdict_retry_ms / 1000.0
        self._retry_at = float("inf")
        self._retry_step = -1
        """When the observation of _retry_step goes out once more if its verdict has not come (_watch_retry)."""
        self._last_obs: EnvObs | None = None
        self._fusion_step = -1
        """The step of the newest fusion.decision received."""
        self._reads_fusion = FusionDecision in self.subscriptions and FUSION in self.loop_peers()
        """A verdict may wait for its fusion decision: this env reads them, and a fusion actor runs to send them."""
        self._held_verdict: RiskVerdict | None = None
        self._held_verdict_timer: asyncio.TimerHandle | None = None
        """A verdict waiting for the fusion.decision it follows (_hold_verdict), and the end of its wait."""
        self._flatten_env_ids: set[int] = set()
        self.checkpoints = AccountCheckpoints(self.run_dir / CHECKPOINT_DIR / f"{self.name}.json", self._checkpoint_settings(),
                                              cfg.checkpoint_every_steps)
        self._restore_checkpoint()
        self.log.info("env_ready", source=dataset.source, split=cfg.split, bars=split.n_bars, n_envs=cfg.n_envs, mode=cfg.mode,
                      **({f"repaired_{k}": v for k, v in dataset.repair.as_dict().items()} if dataset.repair else {}))
        self.data_notes += record_regime_model(self.log, dataset.regime_model, self.run_dir / "checkpoints" if cfg.split == "train" else None)
        self.spawn(self._begin(), "begin")
        self.spawn(self._watch_deadline(), "verdict_deadline")
        if self._retry_secs > 0:
            self.spawn(self._watch_retry(), "verdict_retry")
        self.spawn(self._report_progress(), "progress")

    # ------------------------------------------------------------------ account checkpoint (actors/env/checkpoint.py)

    def _checkpoint_settings(self) -> dict:
        """What shapes the saved state: a checkpoint written under other settings is not restored."""
        cfg = self.config.env
        return {
            "mode": cfg.mode, "split": cfg.split, "n_envs": cfg.n_envs, "episode_bars": cfg.episode_bars, "seed": self.config.run.seed,
            "account": self.config.account, "instrument": self.config.instrument, "data": self.config.data,
        }

    def _restore_checkpoint(self) -> None:
        """A restart inside the same run goes on from the checkpoint: the drawdown floor never resets."""
        state = self.checkpoints.read()
        if state is None:
            return
        open_ids = restore(self.batch, state)
        self.step_index, self.env_steps = int(state["step_index"]), int(state["env_steps"])
        if self.config.env.restart_position == "flatten":
            self._flatten_env_ids = set(open_ids)  # closed at the next bar's open by the step's action (_advance)
        self.counters["restarts_restored"] += 1
        self.log.warning("env_restored", step=self.step_index, open_positions=open_ids, restart_position=self.config.env.restart_position,
                         balances=[round(env.account.balance, 2) for env in self.batch.envs], peaks=[round(env.account.peak, 2) for env in self.batch.envs])
        if self.batch.finished:
            self.finished = True
            self.spawn(self._finish("backtest_complete"), "finish")

    def _flatten_actions(self, env_ids: list[int], actions: np.ndarray) -> np.ndarray:
        """restart_position = flatten: the first step after the restart closes the restored positions at the bar's open."""
        actions = actions.copy()
        for row, env_id in enumerate(env_ids):
            position = self.batch.envs[env_id].position
            if env_id in self._flatten_env_ids and position is not None:
                actions[row] = SELL if position.side > 0 else BUY
                self.counters["positions_flattened_at_restart"] += 1
        self._flatten_env_ids = set()
        return actions

    def _planned_env_steps(self) -> int:
        cfg = self.config.env
        if cfg.max_steps:
            return cfg.max_steps * cfg.n_envs
        if self.explains:  # a backtest plays its split once
            split = self.batch.envs[0].split
            return (split.stop - 1 - split.start) // cfg.n_envs * cfg.n_envs
        return 0

    async def _begin(self) -> None:
        # A heartbeat means a peer finished on_start and subscribed: the first observation goes
        # out when the whole loop can answer it, not into a deadline-driven HOLD.
        if self.counters["restarts_restored"] and self.loop_peers():
            # A restart mid-run: the peers are up and subscribed long since; one heartbeat from any of them shows
            # this process's own subscriptions are in place (no settle, no wait for the slowest heartbeat).
            waits = [asyncio.ensure_future(self.wait_for_peers([peer], self.config.runtime.startup_grace_secs)) for peer in self.loop_peers()]
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for wait in pending:
                wait.cancel()
        else:
            missing = await self.wait_for_peers(self.loop_peers(), self.config.runtime.startup_grace_secs)
            if missing:
                self.log.warning("peers_not_started", missing=missing)
            await asyncio.sleep(START_SETTLE_SECS)
        self._loop_started = time.monotonic()
        self._publish_obs()

    # ------------------------------------------------------------------ messages

    async def on_message(self, msg) -> None:
        match msg:
            case RiskVerdict():
                self._on_verdict(msg)
            case FusionDecision():
                self._on_fusion(msg)
            case Heartbeat():
                self._on_heartbeat(msg)
            case LlmThought():
                if self.gate is not None and self.gate.record(msg.env_id, msg.step_seen, time.monotonic()):
                    self._thoughts_arrived()
                if self.book is not None and msg.query_id:
                    self.book.keep_thought(msg)

    def _on_fusion(self, msg: FusionDecision) -> None:
        arrays = (msg.rl_actions, msg.llm_actions, msg.llm_confidences, msg.llm_staleness, msg.rl_trust, msg.llm_trust)
        if all(array.shape == (len(msg.env_ids),) for array in arrays):
            self.decisions.add_fusion(*arrays)
            self.lag.add(msg.llm_staleness)
            if self.book is not None:
                self.book.keep_fusion(msg)
        else:
            self.counters["bad_decisions"] += 1
        self._fusion_step = msg.step
        if self._held_verdict is not None and self._held_verdict.step == msg.step:
            self._release_held_verdict()  # a bad decision too: nothing better is coming

    def _on_heartbeat(self, beat: Heartbeat) -> None:
        """A loop peer beating from a new pid restarted: it lost the pending observation, so it goes out again
        (fusion, risk and policy answer a step once; a re-sent one gets the same answer) rather than the loop
        waiting out verdict_deadline_ms."""
        previous = self._peer_pids.get(beat.actor)
        self._peer_pids[beat.actor] = beat.pid
        if previous is None or previous == beat.pid or beat.actor == self.name or beat.actor not in self.loop_peers():
            return
        self.log.info("peer_restarted", peer=beat.actor, pid=beat.pid, step=self.step_index)
        asyncio.get_running_loop().call_later(self._resend_delay_secs, self._resend_obs, self.step_index)

    def _resend_obs(self, step: int) -> None:
        if self.finished or step != self.step_index or not self._awaiting or self._last_obs is None or self._last_obs.step != step:
            return  # the step was answered meanwhile
        self.publish(self._last_obs)
        self._deadline_at = time.monotonic() + self._deadline_secs
        self.counters["obs_resent"] += 1

    def _on_verdict(self, verdict: RiskVerdict) -> None:
        if self.finished or verdict.step != self.step_index or not self._awaiting or self._held_verdict is not None:
            # Idempotent per step: a duplicate (re-sent obs, replayed frame) or stale verdict never trades again.
            self.counters["verdicts_ignored"] += 1
            return
        if verdict.actions.shape != (len(verdict.env_ids),) or not np.issubdtype(verdict.actions.dtype, np.integer):
            self.counters["bad_verdicts"] += 1
            return
        if self._fusion_decision_on_its_way(verdict):
            self._hold_verdict(verdict)
            return
        self._take_verdict(verdict)

    # ------------------------------------------------------------------ a verdict ahead of its fusion decision (direct lanes)

    def _fusion_decision_on_its_way(self, verdict: RiskVerdict) -> bool:
        """Risk decided from a fusion.decision (not degraded) that this env reads but has not received yet."""
        return self._reads_fusion and self._fusion_step != verdict.step and not all(verdict.degraded)

    def _hold_verdict(self, verdict: RiskVerdict) -> None:
        self.counters["verdicts_before_decision"] += 1
        self._held_verdict = verdict
        self._held_verdict_timer = asyncio.get_running_loop().call_later(self.config.env.max_fusion_decision_wait_ms / 1000.0, self._fusion_decision_missing)

    def _fusion_decision_missing(self) -> None:
        self._held_verdict_timer = None
        if self._held_verdict is not None:
            self.counters["fusion_decisions_missing"] += 1
            self._release_held_verdict()

    def _release_held_verdict(self) -> None:
        """Execute the held verdict (its fusion decision came, or the wait is over), unless the step moved on meanwhile."""
        verdict, self._held_verdict = self._held_verdict, None
        if self._held_verdict_timer is not None:
            self._held_verdict_timer.cancel()
            self._held_verdict_timer = None
        if verdict is not None and not self.finished and verdict.step == self.step_index and self._awaiting:
            self._take_verdict(verdict)

    def _take_verdict(self, verdict: RiskVerdict) -> None:
        by_env = dict(zip(verdict.env_ids, verdict.actions.tolist()))
        query_by_env = dict(zip(verdict.env_ids, verdict.llm_query_ids)) if verdict.llm_query_ids else {}
        missing = [env_id for env_id in self._awaiting if env_id not in by_env]
        if missing:
            self.counters["verdict_missing_envs"] += len(missing)
        actions = np.array([by_env.get(env_id, 0) for env_id in self._awaiting], dtype=np.int64)
        query_ids = [query_by_env.get(env_id, "") for env_id in self._awaiting]
        self.decisions.add_verdict(verdict.vetoed)
        self._decision_latency_ns.append(time.monotonic_ns() - self._obs_sent_ns)
        if self.book is not None:
            self.book.note_verdict(verdict)
        self._advance(actions, query_ids, timed_out=False)

    @staticmethod
    async def _sleep_until(due_at: Callable[[], float], max_nap_secs: float) -> None:
        """Until ``due_at()`` (re-read after every nap of at most ``max_nap_secs``: each step moves it)."""
        while (remaining := due_at() - time.monotonic()) > 0:
            await asyncio.sleep(min(remaining, max_nap_secs))

    async def _watch_deadline(self) -> None:
        while True:
            await self._sleep_until(lambda: self._deadline_at, self._deadline_secs)
            self._deadline_at = float("inf")
            if self._held_verdict is not None:  # a verdict came in time: it is executed, without its fusion decision
                self.counters["fusion_decisions_missing"] += 1
                self._release_held_verdict()
                continue
            if self._awaiting and not self.finished:
                self.counters["verdict_timeouts"] += 1
                self.log.warning("verdict_timeout", step=self.step_index, deadline_ms=self.config.env.verdict_deadline_ms)
                self._advance(np.zeros(len(self._awaiting), dtype=np.int64), [""] * len(self._awaiting), timed_out=True)

    async def _watch_retry(self) -> None:
        # One task for every step's retry, not a timer per observation: at full speed the loop publishes
        # hundreds of observations a second and nearly all are answered long before verdict_retry_ms.
        while True:
            await self._sleep_until(lambda: self._retry_at, self._retry_secs)
            step, self._retry_at = self._retry_step, float("inf")
            self._resend_obs(step)  # a no-op when the step was answered meanwhile

    # ------------------------------------------------------------------ the loop

    def _advance(self, actions: np.ndarray, query_ids: list[str], timed_out: bool) -> None:
        env_ids = self._awaiting
        self._awaiting = []
        self._deadline_at = float("inf")
        if self._flatten_env_ids:
            actions = self._flatten_actions(env_ids, actions)
        result = self.batch.step(env_ids, actions, self.step_index, query_ids)
        self.env_steps += len(env_ids)
        if self.checkpoints.due(self.step_index + 1, bool(result.closed_trades)):
            # Before the step's messages go out: a trade published is never played again after a restart.
            self.checkpoints.save(self.batch, self.step_index + 1, self.env_steps)
        if result.illegal_actions:
            self.counters["illegal_actions"] += result.illegal_actions
        if self.book is not None:
            self.book.explain_step(self.step_index, result)
        self._publish_step(result, timed_out)
        if self.hindsight is not None:
            self._publish_hindsight(result.env_ids)
        self.step_index += 1
        max_steps = self.config.env.max_steps
        if self.batch.finished or (max_steps and self.step_index >= max_steps):
            self.finished = True
            self.spawn(self._finish("backtest_complete" if self.batch.finished else "max_steps"), "finish")
            return
        if self.gate is not None and not self.gate.begin(self.step_index, self.batch.active_ids(), time.monotonic()):
            # Lockstep: the observation waits for its thoughts (_thoughts_arrived) or the deadline (_thoughts_late).
            self._gate_deadline = asyncio.get_running_loop().call_later(self.gate.deadline_secs, self._thoughts_late)
            return
        self._publish_obs_when_due()

    def _thoughts_arrived(self) -> None:
        if self._gate_deadline is not None:
            self._gate_deadline.cancel()
            self._gate_deadline = None
        self._publish_obs_when_due()

    def _thoughts_late(self) -> None:
        self._gate_deadline = None
        missing = self.gate.expire(time.monotonic())
        if self.finished or not missing:
            return
        self.log.warning("thoughts_late", step=self.step_index, missing_env_ids=missing, deadline_ms=self.config.env.thought_wait_deadline_ms)
        self._publish_obs_when_due()

    def _publish_obs_when_due(self) -> None:
        delay_secs = self._last_obs_at + self._step_interval_secs - time.monotonic()
        if delay_secs > 0:  # paced (env.step_interval_ms): the next bar comes when it is due
            asyncio.get_running_loop().call_later(delay_secs, self._publish_obs)
        else:
            self._publish_obs()

    def _publish_obs(self) -> None:
        env_ids = self.batch.active_ids()
        obs, masks = self.batch.observations(env_ids)
        if self.book is not None:
            self.book.note_observation(self.batch, env_ids, masks)
        contexts = [MarketContext(**context) for context in self.batch.contexts(env_ids)]
        if self.event_replay and env_ids:  # a market with events: the news rule's clock is the market's (actors/risk/news.py)
            self.publish(self._clock_bar(env_ids[0]))
        for event in self.event_replay.due([self.batch.envs[e].bar for e in env_ids]) if self.event_replay else ():
            self.publish(event)  # before the observation that makes it public
            self.log.info(event.LOG_EVENT, **event.log_fields())  # a finished run's dashboard reads its events from the logs
        thought_steps = self.gate.newest_seen(env_ids) if self.gate is not None else []  # lockstep: the thoughts it waited for
        self._last_obs = EnvObs(env_ids=env_ids, episode_ids=self.batch.episode_ids(env_ids), step=self.step_index, obs=obs, masks=masks,
                                contexts=contexts, thought_steps=thought_steps)
        # Paced from the moment it goes out, not from when it was built: a slow build (the first bar's tape table)
        # must not bring the next observation forward.
        self._last_obs_at = time.monotonic()
        self.publish(self._last_obs)
        if self.hindsight is not None:
            self.hindsight.record_steps(env_ids, self.batch.episode_ids(env_ids), self.step_index, [self.batch.envs[e].bar for e in env_ids])
        self._awaiting = env_ids
        self._obs_sent_ns = time.monotonic_ns()
        self._deadline_at = time.monotonic() + self._deadline_secs
        if self._retry_secs > 0:  # a lost frame (a broker restarting) costs this long, not the whole deadline
            self._retry_at, self._retry_step = time.monotonic() + self._retry_secs, self.step_index  # _watch_retry

    def _clock_bar(self, env_id: int) -> Bar:
        """The bar an observation is built on, as md.bar (markets with events only; only the risk actor's calendar
        blackout, risk.news_blackout_enabled, subscribes): the rule keeps the market's clock from it; without it the
        rule read the wall clock and never met a replayed release. The first env's bar: the rule keeps one clock (a
        backtest has one env)."""
        env = self.batch.envs[env_id]
        data, bar = env.split.dataset, env.bar
        return Bar(symbol=self.config.instrument.symbol, source="env", start_ns=int(data.start_ns[bar]), open=float(data.open[bar]),
                   high=float(data.high[bar]), low=float(data.low[bar]), close=float(data.close[bar]), volume=float(data.volume[bar]))

    def _publish_step(self, result: BatchStep, timed_out: bool) -> None:
        self.publish(EnvTransition(
            env_ids=result.env_ids, step=self.step_index, actions=result.actions, rewards=result.rewards,
            terminated=result.terminated, truncated=result.truncated, terminal_obs=result.terminal_obs,
            timed_out=[timed_out] * len(result.env_ids),
        ))
        for closed in result.closed_trades:
            trade = closed.trade
            self.counters["trades"] += 1
            if self.book is not None:
                self.book.keep_trade(self.step_index, closed.env_id, trade, closed.decision_steps)
            self.publish(EnvOutcome(
                env_id=closed.env_id, episode_id=closed.episode_id, trade_id=trade.trade_id, side=trade.side,
                contracts=trade.contracts, entry_ns=trade.entry_ns, exit_ns=trade.exit_ns, entry_price=trade.entry_price,
                exit_price=trade.exit_price, pnl_usd=trade.pnl_usd, bars_held=trade.bars_held, exit_reason=trade.exit_reason,
                decision_steps=closed.decision_steps, llm_query_ids=closed.llm_query_ids,
            ))
        for episode in result.finished_episodes:
            self.counters["episodes"] += 1
            if self.book is not None:
                self.book.open_decisions[episode.env_id] = {}
            if episode.metrics.get("apex_violations", 0.0) > 0:
                self.counters["drawdown_breaches"] += 1
            self.publish(EnvEpisode(env_id=episode.env_id, episode_id=episode.episode_id, steps=episode.steps,
                                    episode_return=episode.episode_return, metrics=episode.metrics))

    def _publish_hindsight(self, env_ids: list[int]) -> None:
        labelled = self.hindsight.mature({e: (self.batch.envs[e].episode_id, self.batch.envs[e].bar) for e in env_ids})
        if labelled:
            self.counters["hindsight_labels"] += len(labelled)
            self.publish(hindsight_message(labelled))

    # ------------------------------------------------------------------ ending

    async def write_report(self, title: str, summary: dict[str, float]) -> dict[str, float]:
        """The shell's report of the run (actors/env/actor.py); returns the figures of sys.done."""
        raise NotImplementedError

    def report_context(self) -> str:
        cfg = self.config.env
        return f"{self.config.instrument.symbol}, split {cfg.split}, mode {cfg.mode}, {cfg.n_envs} env(s), {self.step_index} loop steps."

    async def _finish(self, reason: str) -> None:
        if self.hindsight is not None and (labelled := self.hindsight.label_all()):
            # Before sys.done: whoever scores decisions against hindsight gets the last steps' labels too.
            self.counters["hindsight_labels"] += len(labelled)
            self.publish(hindsight_message(labelled))
        summary = await self.write_report(self.report_title, self.summary())
        self.done(reason, summary)

    async def on_stop(self) -> None:
        if self.checkpoints is not None:
            if not self.finished:
                self.checkpoints.save(self.batch, self.step_index, self.env_steps)
            self.checkpoints.close()  # the last state, on disk before the process ends
        if not self.finished and self.batch is not None and self._has_results():
            await self.write_report(f"{self.report_title} (stopped early)", self.summary())

    def _has_results(self) -> bool:
        # A backtest's one evaluation may still be open: its bars are results all the same.
        return any(metrics.episodes for metrics in self.batch.run_metrics) or (self.explains and self.step_index > 0)

def hindsight_message(labelled: list[LabelledStep]) -> EnvHindsight:
    decisions, labels = [item.decision for item in labelled], [item.label for item in labelled]
    return EnvHindsight(
        env_ids=[d.env_id for d in decisions], episode_ids=[d.episode_id for d in decisions], steps=[d.step for d in decisions],
        actions=np.array([label.action for label in labels], dtype=np.int64),
        long_pnl_usd=np.array([label.long.pnl_usd for label in labels]), short_pnl_usd=np.array([label.short.pnl_usd for label in labels]),
        long_exits=[label.long.exit for label in labels], short_exits=[label.short.exit for label in labels],
        long_bars=np.array([label.long.bars_held for label in labels], dtype=np.int64),
        short_bars=np.array([label.short.bars_held for label in labels], dtype=np.int64),
    )

