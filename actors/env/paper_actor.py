"""The env actor in paper mode (env.mode = "paper"): bars from md.bar, one decision per closed bar.

A thin shell over actors/env/live.py (PaperSession, SilenceWatch, PaperRecorder):
- md.bar -> the session steps the account on the bar with the previous bar's decision (filled at this
  bar's open) and, once warm, publishes ``env.obs`` for this bar; a duplicate bar is ignored; a bar flagged
  ``history`` (a replay's warm-up from the file) only warms the features up. Until the warm-up is complete
  the env logs ``warming_up`` and publishes sys.progress with ``warmup_bars_known`` of ``warmup_bars_needed``;
- env.thought_lag_steps = K >= 1 (bin/run paper --lockstep): the observation of a bar waits, up to
  env.thought_wait_deadline_ms, for a thought that saw step >= N-K (actors/env/pacing.py ThoughtGate); a new bar
  before then ends the wait (counted late, the held observation is dropped: that bar had no decision);
- risk.verdict for the waiting step -> the decision, kept for the next bar (no verdict by then = HOLD);
- fusion.decision / llm.thought -> the decision behind each trade (a DecisionBook, as a backtest keeps); a verdict
  is explained (decisions.jsonl, the trade's decision) once the fusion decision it follows is in too: on direct
  lanes (bus.direct) it may come a few ms after the verdict. The next bar, or the stop, explains it with what is
  there (``fusion_decisions_missing``); every thought
  is counted with its age on arrival (ThoughtTally): arrived, used, dropped as stale, late, fallbacks;
- a silent feed -> ``feed_silent`` warning after env.feed_silence_warn_secs, and past
  env.feed_silence_flatten_secs in a position the position is closed at the last close;
- files in <run_dir>/<env.paper_dir> are appended per bar; at stop the backtest-style report is written
  to <run_dir>/<env.paper_dir>/report and a summary (with the LLM's staleness) to summary.json.

``bar_to_verdict_ms``: from the md.bar's arrival (one sub-millisecond bus hop after the feed published the
closed bar) to the risk.verdict for it: features, env step, policy, fusion and risk. ``bin/bench feed``
measures the same from the publisher's side.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import OrderedDict, deque
from dataclasses import dataclass

import numpy as np

from actors import FUSION
from actors.common.actions import ACTION_NAMES, HOLD, NO_ACTION
from actors.common.bar_files import load_bars
from actors.common.decisions import DecisionStats
from actors.common.instruments import resolve_instrument
from actors.env.batch import ClosedTrade
from actors.env.decision_book import DecisionBook, backtest_report
from actors.env.explain import VerdictRow
from actors.env.live import PaperSession, SilenceWatch
from actors.env.paper_recorder import PaperRecorder, trade_row
from actors.env.pacing import LateVerdictWait, ThoughtGate, ThoughtTally, unused_thoughts_cause
from actors.env.report import ReportInput, ReportTrade, headline_fields, window_events
from actors.env.config import EnvSettings
from bus.messages import Bar, EnvObs, EnvOutcome, Event, FusionDecision, LlmThought, MarketContext, RiskVerdict
from runtime.actor import Actor

LAG_WINDOW = 4096
"""Recent decisions behind the lag percentiles."""
SILENCE_CHECK_SECS = 0.25
WARMUP_LOG_EVERY_BARS = 30
"""A warming_up log line and sys.progress every this many bars known (and at the first and the last)."""
PROGRESS_EVERY_DECISIONS = 10
OBS_TIMES_KEPT = 512


@dataclass(frozen=True, slots=True)
class _Unexplained:
    """A verdict executed but not yet explained: what its decision row needs from the moment it came."""

    step: int
    row: VerdictRow
    bar_start_ns: int
    bar_to_verdict_ms: float


class PaperEnvActor(Actor):
    settings_type = EnvSettings
    subscriptions = (Bar, RiskVerdict, FusionDecision, LlmThought, Event)
    session: PaperSession | None = None
    """None until on_start has opened the session."""

    async def on_start(self) -> None:
        cfg = self.config.env
        history = None
        if cfg.paper_history_path:
            history, _ = await self.in_worker(load_bars, cfg.paper_history_path, self.config.data.timezone, self.config.data.dayfirst)
        self.session = PaperSession(resolve_instrument(self.config.instrument), self.config.account, cfg,
                                    warmup_bars=cfg.paper_warmup_bars, window_bars=cfg.paper_window_bars, history=history)
        self.silence = SilenceWatch(cfg.feed_silence_warn_secs, cfg.feed_silence_flatten_secs)
        self.out_dir = self.run_dir / cfg.paper_dir
        self.recorder = PaperRecorder(self.out_dir)
        self.decisions = DecisionStats()
        self.step_index = 0
        self.env_steps = 0
        self.finished = False
        self.book = DecisionBook(1)
        self._awaiting_step = -1
        self._bar_sent_ns = 0
        self._obs_sent_ns = 0
        self._decided: dict[int, tuple] = {}
        """step -> (TradeDecision, VerdictRow) of decisions not yet filled."""
        self._unexplained: _Unexplained | None = None
        """The last verdict, while the fusion decision it follows is still on its way (_explain)."""
        self._reads_fusion = FUSION in self.loop_peers()
        self._bar_to_verdict_ns: deque[int] = deque(maxlen=LAG_WINDOW)
        self._decision_latency_ns: deque[int] = deque(maxlen=LAG_WINDOW)
        self._staleness: list[int] = []
        self.data_notes: list[str] = []
        self._started = time.monotonic()
        self.gate = ThoughtGate(cfg.thought_lag_steps, cfg.thought_wait_deadline_ms / 1000.0) if cfg.thought_lag_steps else None
        self._gate_timer: asyncio.TimerHandle | None = None
        self.tally = ThoughtTally(self.config.fusion.max_staleness_steps)
        self._obs_times: OrderedDict[int, float] = OrderedDict()
        """step -> when its observation went out (a thought's age in seconds)."""
        self._played_at: list[float] = []
        """When the first and the newest played bar arrived; with _played, the mean wall-clock bar interval."""
        self._played = 0
        self.verdict_wait = LateVerdictWait(cfg.max_late_verdict_wait_ms / 1000.0, self._play_bar, self.counters)
        self.log.info("env_ready", mode="paper", lag_steps=cfg.thought_lag_steps, history_bars=self.session.counters["history_bars"], warmup_bars=cfg.paper_warmup_bars,
                      instrument=self.session.instrument.symbol, account=self.config.account.name, out_dir=str(self.out_dir))
        self.spawn(self._watch_silence(), "feed_silence")

    # ------------------------------------------------------------------ messages

    async def on_message(self, msg) -> None:
        match msg:
            case Bar():
                self._on_bar(msg)
            case RiskVerdict():
                self._on_paper_verdict(msg)
                if self._awaiting_step < 0:
                    self.verdict_wait.taken()
            case FusionDecision():
                self._on_fusion(msg)
            case LlmThought():
                self._on_thought(msg)
            case Event():  # the feed's news, for the report's chart and events table
                self.book.keep_event(msg)

    def _on_thought(self, msg: LlmThought) -> None:
        if msg.query_id:
            self.book.keep_thought(msg)
        if msg.env_id != 0:
            return
        # Its age (from the step its prompt read) at the next decision that can use it: this step's, or the next one.
        next_decision = self.session.step + (0 if self._awaiting_step >= 0 or self._gate_timer is not None else 1)
        seen_at = self._obs_times.get(msg.built_on)
        self.tally.add(msg.age_at(next_decision), None if seen_at is None else time.monotonic() - seen_at, msg.latency_ms, msg.fallback)
        if self.gate is not None and self.gate.record(0, msg.step_seen, time.monotonic()) and self._gate_timer is not None:
            self._gate_timer.cancel()
            self._gate_timer = None
            self._publish_obs()

    def _on_fusion(self, msg: FusionDecision) -> None:
        arrays = (msg.rl_actions, msg.llm_actions, msg.llm_confidences, msg.llm_staleness, msg.rl_trust, msg.llm_trust)
        if list(msg.env_ids) != [0] or any(array.shape != (1,) for array in arrays):
            self.counters["bad_decisions"] += 1
            return
        self.decisions.add_fusion(*arrays)
        self.book.keep_fusion(msg)
        if int(msg.llm_actions[0]) != NO_ACTION:
            self._staleness.append(int(msg.llm_staleness[0]))
        if self._unexplained is not None and self._unexplained.step == msg.step:
            self._explain()

    def _on_bar(self, msg: Bar) -> None:
        if not self.verdict_wait.hold(msg, verdict_out=self._awaiting_step >= 0):
            self._play_bar(msg)

    async def finish_in_flight(self) -> None:
        await self.verdict_wait.before_stop(verdict_out=self._awaiting_step >= 0)

    def _play_bar(self, msg: Bar) -> None:
        self._bar_sent_ns = time.monotonic_ns()
        resumed_after = self.silence.on_bar(time.monotonic())
        if resumed_after:
            self.log.info("feed_resumed", silent_secs=round(resumed_after, 1), bar_start_ns=msg.start_ns)
        if self.session.bars_known == 0:
            self.log.info("first_bar", symbol=msg.symbol, source=msg.source, start_ns=msg.start_ns)
        step = self.session.add_bar(msg, history=msg.history)
        if step is None:
            self.counters["duplicate_bars"] += 1
            return
        self.counters["bars"] += 1
        if step.warming:
            self._warming(step)
            return
        self._count_played()
        self._end_thought_wait()
        self._explain_without_fusion()  # before the fill reads the decision it explains
        if step.decision_step >= 0 or step.closed_trades:
            self._after_fill(step)
        self.step_index = self.session.step
        if self.step_index == 0:
            self._warmed_up(msg)
        if self.gate is not None and not self.gate.begin(self.step_index, [0], time.monotonic()):
            # Lockstep: this bar's observation waits for the previous bar's thought (_on_thought) or the deadline.
            self._gate_timer = asyncio.get_running_loop().call_later(self.gate.deadline_secs, self._thoughts_late)
        else:
            self._publish_obs()
        self.recorder.bar(step, self.session.env.evaluation.index, ACTION_NAMES[step.executed_action], self.session.position_row())
        self.env_steps += 1

    def _count_played(self) -> None:
        now = time.monotonic()
        self._played_at = [self._played_at[0] if self._played_at else now, now]
        self._played += 1

    def _warming(self, step) -> None:
        known, needed = self.session.bars_known, self.session.warmup_bars
        if known >= needed:  # history beyond the warm-up: warm, waiting for the first played bar
            return
        if known in (1, needed - 1) or known % WARMUP_LOG_EVERY_BARS == 0 or (not step.history and self.session.counters["warmup_bars"] == 1):
            self.log.info("warming_up", status=f"warming up: {known} of {needed} bars", bars_known=known, bars_needed=needed,
                          history_bars=self.session.counters["history_bars"])
            self.progress(known, needed, 0.0, {"warmup_bars_known": float(known), "warmup_bars_needed": float(needed)})

    def _warmed_up(self, bar: Bar) -> None:
        """The first decision: the features are warm (from history bars, the feed's bars, or both)."""
        needed = self.session.warmup_bars
        self.log.info("warmed_up", status=f"warmed up: {needed} bars known, deciding", history_bars=self.session.counters["history_bars"],
                      feed_bars_warming=self.session.counters["warmup_bars"], first_decision_bar_start_ns=bar.start_ns)
        self.progress(needed, needed, 0.0, {"warmup_bars_known": float(needed), "warmup_bars_needed": float(needed)})

    def _end_thought_wait(self) -> None:
        """A new bar while the previous one's observation still waited for a thought: that wait ends, late."""
        if self._gate_timer is None:
            return
        self._gate_timer.cancel()
        self._gate_timer = None
        self.gate.expire(time.monotonic())
        self.counters["thought_waits_superseded"] += 1

    def _thoughts_late(self) -> None:
        self._gate_timer = None
        if self.gate.expire(time.monotonic()):
            self.log.warning("thoughts_late", step=self.step_index, deadline_ms=self.config.env.thought_wait_deadline_ms)
        self._publish_obs()

    def _publish_obs(self) -> None:
        obs, masks = self.session.observation()
        context = MarketContext(**self.session.context())
        episode = self.session.env.episode_id
        thought_steps = self.gate.newest_seen([0]) if self.gate is not None else []  # lockstep: the thought it waited for
        self.publish(EnvObs(env_ids=[0], episode_ids=[episode], step=self.step_index, obs=obs, masks=masks, contexts=[context],
                            thought_steps=thought_steps))
        self._awaiting_step = self.step_index
        self._obs_sent_ns = time.monotonic_ns()
        self._obs_times[self.step_index] = time.monotonic()
        while len(self._obs_times) > OBS_TIMES_KEPT:
            self._obs_times.popitem(last=False)

    def _on_paper_verdict(self, verdict: RiskVerdict) -> None:
        if verdict.step != self._awaiting_step or list(verdict.env_ids) != [0] or verdict.actions.shape != (1,):
            self.counters["verdicts_ignored"] += 1
            return
        now = time.monotonic_ns()
        self._awaiting_step = -1
        action = int(verdict.actions[0])
        query_id = verdict.llm_query_ids[0] if verdict.llm_query_ids else ""
        if not self.session.decide(verdict.step, action, query_id):
            return
        self.decisions.add_verdict(verdict.vetoed)
        self._decision_latency_ns.append(now - self._obs_sent_ns)
        self._bar_to_verdict_ns.append(now - self._bar_sent_ns)
        halt = verdict.halts[0] if verdict.halts else ""
        row = VerdictRow(action, bool(verdict.vetoed[0]), str(verdict.reasons[0]), str(halt))
        self.book.halts[0].append(halt)
        self._explain_without_fusion()
        self._unexplained = _Unexplained(verdict.step, row, self.session.last_start_ns, round((now - self._bar_sent_ns) / 1e6, 3))
        if not self._fusion_decision_on_its_way(verdict):
            self._explain()
        decided = self.session.counters["decisions"]
        if decided % PROGRESS_EVERY_DECISIONS == 0:
            rate = self.decisions.summary().get("query_rate", 0.0)
            self.progress(decided, 0, decided / max(time.monotonic() - self._started, 1e-9),
                          {"thoughts": float(self.tally.arrived), "query_rate": float(rate)})

    # ------------------------------------------------------------------ explaining a verdict (its fusion decision may come after it)

    def _fusion_decision_on_its_way(self, verdict: RiskVerdict) -> bool:
        """Risk decided from a fusion.decision (not degraded) that has not arrived here yet."""
        return self._reads_fusion and verdict.step not in self.book.fusion_by_step and not all(verdict.degraded)

    def _explain_without_fusion(self) -> None:
        """The fusion decision the last verdict follows did not come in time (a lost frame): explain it without."""
        if self._unexplained is not None:
            self.counters["fusion_decisions_missing"] += 1
            self._explain()

    def _explain(self) -> None:
        """The decision behind the last verdict: kept for its fill (a trade's entry or exit) and written to decisions.jsonl."""
        pending, self._unexplained = self._unexplained, None
        fusion = self.book.fusion_by_step.get(pending.step)
        fusion_row = 0 if fusion is not None and list(fusion.env_ids) == [0] else None
        row = pending.row
        decision = self.book.decision(pending.step, fusion, fusion_row, row)
        self._decided = {pending.step: (decision, row)}
        self.recorder.decision({
            "step": pending.step, "bar_start_ns": pending.bar_start_ns, "action": ACTION_NAMES[row.action], "vetoed": row.vetoed,
            "reason": row.reason, "halt": row.halt, "rl_action": decision.rl_action, "rl_confidence": decision.rl_confidence,
            "llm": None if decision.thought is None else {"action": decision.thought.action, "confidence": decision.thought.confidence,
                                                          "staleness_steps": decision.thought.staleness_steps, "reason": decision.thought.reason, "news": decision.thought.news},
            "fusion_method": decision.fusion_method, "bar_to_verdict_ms": pending.bar_to_verdict_ms,
        })

    # ------------------------------------------------------------------ fills and trades

    def _after_fill(self, step) -> None:
        """The previous decision was filled on this bar: keep it if it acted on a trade; book closed trades."""
        decided = self._decided.pop(step.decision_step, None)
        if decided is not None and step.executed_action != HOLD:
            self.book.open_decisions[0][step.decision_step] = decided[0]
        for closed in step.closed_trades:
            self._book_trade(closed, exit_step=step.decision_step)

    def _book_trade(self, closed: ClosedTrade, exit_step: int) -> None:
        trade = closed.trade
        self.counters["trades"] += 1
        decisions = self.book.open_decisions[0]
        entry = decisions.get(closed.decision_steps[0]) if closed.decision_steps else None
        exit_decision = decisions.get(exit_step)
        self.book.trades.append(ReportTrade(trade=trade, entry=entry, exit=exit_decision, env_id=0))
        self.book.open_decisions[0] = {}
        self.recorder.trade({**trade_row(closed), "entry_decision": entry, "exit_decision": exit_decision, **headline_fields(entry, self.book.events.values(), trade.entry_ns)})
        self.publish(EnvOutcome(
            env_id=0, episode_id=closed.episode_id, trade_id=trade.trade_id, side=trade.side, contracts=trade.contracts,
            entry_ns=trade.entry_ns, exit_ns=trade.exit_ns, entry_price=trade.entry_price, exit_price=trade.exit_price,
            pnl_usd=trade.pnl_usd, bars_held=trade.bars_held, exit_reason=trade.exit_reason,
            decision_steps=closed.decision_steps, llm_query_ids=closed.llm_query_ids,
        ))

    # ------------------------------------------------------------------ a silent feed

    async def _watch_silence(self) -> None:
        while True:
            await asyncio.sleep(min(SILENCE_CHECK_SECS, self.silence.warn_secs / 4))
            now = time.monotonic()
            action = self.silence.check(now, self.session.in_position)
            if action == "warn":
                self.counters["feed_silent"] += 1
                self.log.warning("feed_silent", silent_secs=round(self.silence.silent_secs(now), 1),
                                 last_bar_start_ns=self.session.last_start_ns, in_position=self.session.in_position)
            elif action == "flatten":
                closed = self.session.flatten("feed_silent")
                if closed is not None:
                    self._explain_without_fusion()
                    self._decided = {}
                    self._book_trade(closed, exit_step=-1)
                    self.log.warning("feed_silent_flatten", silent_secs=round(self.silence.silent_secs(now), 1),
                                     pnl_usd=round(closed.trade.pnl_usd, 2), exit_price=closed.trade.exit_price)

    # ------------------------------------------------------------------ ending

    def lag_ms(self) -> dict[str, float]:
        """md.bar published -> its risk.verdict received, and env.obs -> verdict, p50/p99 in ms."""
        figures: dict[str, float] = {}
        for name, values in (("bar_to_verdict", self._bar_to_verdict_ns), ("decision_latency", self._decision_latency_ns)):
            if values:
                p50, p99 = np.percentile(np.asarray(values, dtype=np.float64) / 1e6, [50, 99])
                figures.update({f"{name}_p50_ms": float(p50), f"{name}_p99_ms": float(p99)})
        return figures

    def staleness_summary(self) -> dict[str, float]:
        """How fresh the LLM's thoughts were: staleness in decisions (bars) of the thoughts fusion used."""
        staleness = np.asarray(self._staleness, dtype=np.float64)
        decisions = float(self.session.counters["decisions"])
        if not len(staleness):
            return {"thoughts_used": 0.0, "decisions": decisions}
        return {
            "decisions": decisions, "thoughts_used": float(len(staleness)),
            "llm_staleness_mean_bars": float(staleness.mean()), "llm_staleness_max_bars": float(staleness.max()),
            "fresh_thought_share": float(np.mean(staleness <= 1)),
        }

    def thought_summary(self) -> dict[str, float]:
        """Thoughts arrived, dropped as stale, late, fallbacks, their ages; the wall-clock bar interval; lockstep waits."""
        figures = self.tally.figures(late=self.gate.late_steps if self.gate is not None else 0)
        if self._played >= 2:
            figures["bar_interval_mean_secs"] = (self._played_at[1] - self._played_at[0]) / (self._played - 1)
        if self.gate is not None:
            figures.update(self.gate.figures(time.monotonic() - self._started))
        return figures

    def paper_summary(self) -> dict[str, float]:
        counters = self.session.counters
        decisions = self.decisions.summary()
        return {
            **decisions, **self.staleness_summary(), **self.thought_summary(), **self.lag_ms(),
            "warmup_bars_known": float(min(self.session.bars_known, self.session.warmup_bars)), "warmup_bars_needed": float(self.session.warmup_bars),
            "feed_bars": float(counters["bars"]), "duplicate_bars": float(counters["duplicate_bars"] + counters["late_bars"]),
            "warmup_bars": float(counters["warmup_bars"]), "history_bars": float(counters["history_bars"]),
            "bars_without_decision": float(counters["bars_without_decision"]), "trades": float(len(self.session.trades)),
            "feed_silent": float(self.counters["feed_silent"]), "flattened_feed_silent": float(counters["flattened_feed_silent"]),
            "equity": float(self.session.env.equity) if self.session.env is not None else self.config.account.start_balance,
        }

    def paper_report_input(self, metrics: dict[str, float]) -> ReportInput:
        history = self.session.history()
        halts = (self.book.halts[0] + [""] * len(history.times_ns))[: len(history.times_ns)]
        context = (f"paper trading {self.session.instrument.symbol} on md.bar, account {self.config.account.name}, "
                   f"{self.session.counters['bars']} bars, {self.session.counters['decisions']} decisions.")
        return ReportInput(
            title="Paper trading", bars=history, halts=np.array(halts, dtype=object), trades=list(self.book.trades),
            evaluations=self.session.evaluations(), metrics=metrics, notes=self.paper_notes(metrics),
            entries_funnel={}, context=context, events=window_events(list(self.book.events.values()), history.times_ns),
        )

    def paper_notes(self, summary: dict[str, float]) -> list[str]:
        """The report's notes: where the warm-up came from, and what became of the thoughts (why none was used)."""
        counters = self.session.counters
        notes = [f"features warmed up on {self.config.env.paper_warmup_bars} bars ({counters['history_bars']} history bars from the feed, "
                 f"{counters['warmup_bars']} of the played bars)"]
        notes.append(f"thoughts: {summary.get('thoughts_arrived', 0):.0f} arrived, {summary.get('thoughts_used', 0):.0f} decisions used one, "
                     f"{summary.get('thoughts_dropped_stale', 0):.0f} dropped as older than max_staleness_steps = "
                     f"{summary.get('max_staleness_steps', 0):.0f}, {summary.get('thoughts_late', 0):.0f} late, "
                     f"{summary.get('thoughts_fallback', 0):.0f} fallbacks")
        cause = unused_thoughts_cause(summary)
        if cause:
            notes.append(f"no decision used a thought: {cause}")
        return notes

    async def on_stop(self) -> None:
        if self.session is None:
            return
        self._explain_without_fusion()
        summary = self.paper_summary()
        if self.session.warm and len(self.session.history().times_ns) >= 2:
            try:
                summary = await self.in_worker(backtest_report, self.out_dir / "report", self.paper_report_input(summary), self.config.run.seed)
                self.log.info("report_written", path=str(self.out_dir / "report"))
            except Exception as exc:  # the files appended per bar are kept either way
                self.log.error("report_failed", exc_info=exc)
        cause = unused_thoughts_cause(summary) if summary.get("thoughts_used", 0.0) == 0 else ""
        document = {key: (None if isinstance(value, float) and not math.isfinite(value) else value) for key, value in summary.items()}  # n/a -> null
        (self.out_dir / "summary.json").write_text(json.dumps({**document, **({"thoughts_unused_cause": cause} if cause else {})}, indent=2, sort_keys=True))
        self.recorder.close()
        self.log.info("paper_stopped", **{key: summary[key] for key in sorted(summary) if isinstance(summary[key], float)})

    def gauges(self) -> dict[str, float]:
        if self.session is None:
            return {}
        return {"bars_seen": float(self.session.counters["bars"]), "loop_step": float(self.step_index), **self.lag_ms()}
