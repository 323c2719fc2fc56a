"""What the dashboard shows, aggregated from bus messages and log records: plain Python, no sockets.

One ``DashboardState`` is fed by one reader thread (``on_message``: bus messages, ``on_log``: JSON log records) and read by
every browser session (``snapshot``) under one lock. Charts take only the points added since the cursor a session holds
(``Series.since``): a few new points per update instead of a whole chart; tables are short and sent whole. Charts and
the decisions table follow env 0 (one account walking through the data); counters cover every env the reader decoded.

Everything is derived from the typed messages (bus/messages.py): candles, stops and targets from env.obs's market
context, halted stretches from risk.verdict and the evaluation-account walk from env.obs and env.episode (walk.py),
trust from fusion.decision, fusion accuracy from env.hindsight labels joined to the fusion decisions of the same step
(as actors/jobs/evaluation/decision_sources.py scores it after a run), learning from policy.update and lora.round (or the
same messages read back from a finished run's log), the trades of a finished run from its report (report.py).

The records are model.py's, the page's text lines.py's, market events' (md.event) news.py's. Over 400 lines, on
purpose: one aggregate under one lock whose handlers write the same series and tables; split by message, the parts
would reach into each other's fields.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable

import msgspec
import numpy as np

from actors.common.actions import BUY, NO_ACTION
from actors.dashboard.cells import CellsView
from actors.dashboard.config import RunView
from actors.dashboard.lines import decision_text, fields_text, lora_row
from actors.dashboard.model import (AccountRules, ActorHealth, Decision, Event, Health, MarketHistory, Scores, Series, Trade, action_name,
                                    live_account, share)
from actors.dashboard.news import NewsMarks
from actors.dashboard.report import RunReport, read_report, report_file
from actors.dashboard.walk import AccountWalk, HaltSpans
from bus.messages import Event as MarketEventMessage
from bus.messages import LoraRound, PolicyUpdate

MAX_POINTS = 3000
"""Points kept per chart series (older ones roll off; the browser keeps as many)."""
MAX_CANDLES = 300
"""Candles kept (the newest bars); the close line under them goes back MAX_POINTS steps."""
MAX_HALT_SPANS = 200
MAX_ROWS = 40
"""Rows of the decisions, trades and events tables."""
MAX_EVENTS = 300
MAX_CHAINS = 4000
"""Decisions of env 0 kept by step, for the chain behind a clicked trade."""
PENDING_STEPS = 64
"""A step whose proposal, fusion decision and verdict have not all arrived after this many newer steps is dropped."""
LEARNING_KEYS = ("approx_kl", "entropy_loss", "value_loss", "policy_gradient_loss", "loss", "explained_variance",
                 "clip_fraction", "mean_episode_return")
LOGGED_MESSAGES = {message.LOG_EVENT: message for message in (PolicyUpdate, LoraRound, MarketEventMessage)}
"""The messages an actor also logs (their own fields under their LOG_EVENT): a finished run's log reads back as them."""
LOG_EVENTS = {
    # event name -> kind shown in the events table (warnings and errors are shown whatever their name)
    "actor_restarting": "restart", "broker_restarted": "restart", "peer_restarted": "restart",
    "adapter_loaded": "adapter", "adapter_announced": "adapter", "lora_round": "lora", "training_complete": "learning",
    "report_written": "report", "runtime_started": "runtime", "runtime_stopped": "runtime", "runtime_failed": "error",
    "feed_silent": "feed", "feed_resumed": "feed", "paper_stopped": "runtime", "done": "runtime",
}
EVENT_KINDS = ("order", "fill", "veto", "halt", "account", "adapter", "lora", "learning", "restart", "error", "warning", "feed",
               "report", "runtime", "news")
"""Every kind the events table can show (its filter offers these)."""


def _time_of(stamp: str) -> str:
    """HH:MM:SS of a log record's ISO timestamp; now (UTC) for a bus message, which carries none."""
    return stamp[11:19] if len(stamp) >= 19 else time.strftime("%H:%M:%S", time.gmtime())


class DashboardState:
    """Everything the page shows; thread-safe (one writer thread, many reading sessions)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.lock = clock, threading.Lock()
        self.generation = 0
        """Bumped when the charts start over (a new run or stage is attached): sessions then reload them."""
        self.health = Health()
        self.actors: dict[str, ActorHealth] = {}
        self.price = Series(("step", "price"), MAX_POINTS)
        self.candles = Series(("step", "open", "high", "low", "close", "colour"), maxlen=MAX_CANDLES)
        self.position = Series(("step", "entry", "stop", "target"), MAX_POINTS)
        """The open position of env 0 at each step: entry, stop and target prices (NaN while flat)."""
        self.marks = Series(("step", "price", "kind", "colour", "trade"), MAX_POINTS)
        """Entry and exit marks of env 0's trades; ``trade`` is the trade's id (a click on a mark shows its chain)."""
        self.news = NewsMarks(MAX_POINTS)
        self.equity = Series(("step", "equity", "threshold"), MAX_POINTS)
        self.trust = Series(("step", "rl_trust", "llm_trust"), MAX_POINTS)
        self.accuracy = Series(("labels", "chose_right", "fused", "rl", "llm"), maxlen=1000)
        """Running shares over the hindsight-labelled decisions, one point per labelled message."""
        self.learning = Series(("t", *LEARNING_KEYS), maxlen=1000)
        self.account: dict[str, float] = {}
        self.walk = AccountWalk(MAX_ROWS)
        self.halts = HaltSpans(MAX_HALT_SPANS)
        self.scores = Scores()
        self.fusion_gauges: dict[str, float] = {}
        self.decisions: deque[Decision] = deque(maxlen=MAX_ROWS)
        self.chains: dict[int, Decision] = {}
        self.trades: deque[Trade] = deque(maxlen=MAX_ROWS)
        self.report_trades: dict[int, Trade] = {}
        """Env 0's trades of a finished run's report by id, all of them (the table shows the newest): a mark's chain."""
        self.lora_rounds: deque[dict[str, Any]] = deque(maxlen=MAX_ROWS)
        self.events: deque[Event] = deque(maxlen=MAX_EVENTS)
        self.report: dict[str, Any] = {}
        """The key figures of the run's report (a finished backtest or paper run)."""
        self.cells = CellsView()  # a cell job's progress (evaluate, ablation, sweep): cells.py
        self.counts: dict[str, int] = {"decisions": 0, "vetoes": 0, "trades": 0, "thoughts": 0, "errors": 0}
        self._pending: dict[tuple[int, int], Decision] = {}
        self._fused: dict[tuple[int, int], tuple[int, int, int]] = {}
        """(env, step) -> fused, RL and LLM action of the decisions made flat, until their hindsight label arrives."""
        self._flat: dict[tuple[int, int], bool] = {}
        """(env, step) of the observations seen flat (BUY allowed), for the fusion accuracy's flat decisions."""
        self._thoughts: dict[str, Any] = {}
        self._halts: dict[int, str] = {}
        self._event_seq = self._learning_t = 0
        self._recent_updates: deque[tuple] = deque(maxlen=16)

    # ------------------------------------------------------------------ attaching

    def attach(self, run_dir: str, mode: str, source: str) -> None:
        """A new run (or the next stage of one): charts and decisions start over; events and learning stay."""
        with self.lock:
            if run_dir != self.health.run_dir:
                self.generation += 1
                for series in (self.price, self.candles, self.position, self.marks, self.news, self.equity, self.trust):
                    series.clear()
                self.walk.clear()
                self.halts.clear()
                self._fused.clear()
                self._flat.clear()
                self.decisions.clear()
                self.chains.clear()
                self.trades.clear()
                self.report_trades.clear()
                self._pending.clear()
                self._thoughts.clear()
                self.account = {}
                self.actors = {}
                self.report = {}
                self._halts.clear()
                # the figures of one run; the events and the learning curve go on across a job's stages
                self.health = Health()
                self.counts = dict.fromkeys(self.counts, 0)
            self.health.run_dir, self.health.mode, self.health.source = run_dir, mode, source
            self._event("runtime", "dashboard", f"attached to {run_dir} ({source})")

    def set_rules(self, rules: AccountRules) -> None:
        with self.lock:
            self.walk.rules = rules

    def set_source(self, source: str) -> None:
        with self.lock:
            if source != self.health.source:
                self.health.source = source
                self._event("runtime", "dashboard", f"source: {source}")

    # ------------------------------------------------------------------ bus messages

    def on_message(self, msg: Any, sender: str = "") -> None:
        handler = getattr(self, f"_on_{type(msg).__name__}", None)
        with self.lock:
            self.health.transport.messages += 1
            if handler is not None:
                handler(msg)

    def _on_Heartbeat(self, msg) -> None:
        now = self.clock()
        health = self.actors.get(msg.actor)
        if health is None:
            self.actors[msg.actor] = ActorHealth(msg.pid, now, msg.uptime_secs)
            return
        if msg.pid != health.pid:  # a new process under the same name: the supervisor restarted it
            health.restarts += 1
            self._event("restart", msg.actor, f"new process pid {msg.pid} (was {health.pid})")
        health.pid, health.last_beat, health.uptime_secs = msg.pid, now, msg.uptime_secs

    def _on_Stats(self, msg) -> None:
        self._gauges(msg.actor, msg.gauges)
        dropped = sum(v for k, v in msg.counters.items() if k.startswith("dropped_"))
        self.health.transport.dropped_frames = max(self.health.transport.dropped_frames, dropped)

    def _gauges(self, actor: str, gauges: dict[str, float]) -> None:
        if "decision_latency_p50_us" in gauges:
            self.health.transport.latency_p50_us = float(gauges["decision_latency_p50_us"])
            self.health.transport.latency_p99_us = float(gauges.get("decision_latency_p99_us", float("nan")))
        if actor == "feed" and "lag_ms_p50" in gauges:  # the feed's own figure: bar close -> published
            self.health.transport.feed_lag_secs = float(gauges["lag_ms_p50"]) / 1000.0
        if actor == "fusion":
            self.fusion_gauges = {k: float(v) for k, v in gauges.items()}

    def _on_Progress(self, msg) -> None:
        if msg.actor == "env" or not self.health.progress.steps_per_sec:
            self.health.progress = msg

    def _on_Done(self, msg) -> None:
        self._event("runtime", msg.actor, f"done: {msg.reason}")

    def _on_Shutdown(self, msg) -> None:
        self._event("runtime", "supervisor", f"shutdown: {msg.reason}")

    def _on_EnvObs(self, msg) -> None:
        self.health.loop_step = max(self.health.loop_step, int(msg.step))
        for i, env_id in enumerate(msg.env_ids):
            if msg.masks[i][BUY]:
                self._flat[(env_id, int(msg.step))] = True
        while len(self._flat) > MAX_CHAINS:
            del self._flat[next(iter(self._flat))]
        if not msg.env_ids or msg.env_ids[0] != 0:
            return
        context, step = msg.contexts[0], int(msg.step)
        if closed := self.walk.step(step, int(msg.episode_ids[0]), float(context.balance)):
            self._event("account", "env 0", closed)
        previous = self.account.get("position", 0.0)
        if context.position and context.position != previous:
            side = "long" if context.position > 0 else "short"
            self._event("order", "env 0", f"step {step}: entered {side} {context.contracts} @ {context.entry_price:.2f}"
                                          + (f" stop {context.stop_price:.2f} target {context.target_price:.2f}" if context.stop_price else ""))
        self.price.add(step, float(context.price))
        self.news.bar(step, context)
        if context.bar_high > 0:  # senders that give the bar's range (the env does)
            colour = "#2ca02c" if context.price >= context.bar_open else "#d62728"
            self.candles.add(step, float(context.bar_open), float(context.bar_high), float(context.bar_low), float(context.price), colour)
        nan = float("nan")
        if context.position:
            self.position.add(step, float(context.entry_price), float(context.stop_price) or nan, float(context.target_price) or nan)
        elif previous:
            self.position.add(step, nan, nan, nan)  # a break in the lines (the next position starts a new segment)
        equity = float(context.balance + context.unrealized_pnl)
        self.equity.add(step, equity, equity - float(context.drawdown_buffer))
        self.account = live_account(context)

    def _on_Event(self, msg, stamp: str = "") -> None:  # md.event (bus or log): a line in the events table, a mark once env 0's clock reaches it
        if self.news.first_time(msg):
            self._event("news", msg.source or "feed", self.news.arrived(msg), stamp=stamp)

    def _on_EnvEpisode(self, msg) -> None:
        if msg.env_id == 0 and (closed := self.walk.episode_ended(msg.episode_id, msg.metrics)):
            self._event("account", "env 0", closed)

    def _on_EnvHindsight(self, msg) -> None:
        for i, env_id in enumerate(msg.env_ids):
            decision = self._fused.pop((env_id, int(msg.steps[i])), None)
            if decision is not None:
                self.scores.add(*decision, int(msg.actions[i]))
        s = self.scores
        if s.scored:
            self.accuracy.add(s.scored, share(s.chose_right, s.contested), share(s.fused_hits, s.scored),
                              share(s.rl_hits, s.scored), share(s.llm_hits, s.scored))

    def _decision(self, step: int, env_id: int) -> Decision:
        key = (step, env_id)
        decision = self._pending.get(key)
        if decision is None:
            decision = self._pending[key] = Decision(step, env_id)
            if len(self._pending) > PENDING_STEPS * 8:  # parts of old steps that will never complete (decimated or lost)
                newest = max(s for s, _ in self._pending)
                self._pending = {k: v for k, v in self._pending.items() if k[0] > newest - PENDING_STEPS}
        return decision

    def _on_PolicyProposal(self, msg) -> None:
        probs = np.asarray(msg.probs)
        for i, env_id in enumerate(msg.env_ids):
            decision = self._decision(msg.step, env_id)
            decision.rl_action = int(msg.actions[i])
            if env_id == 0:  # the decisions table and the chains show env 0 only
                decision.probs = tuple(probs[i].tolist())

    def _on_LlmThought(self, msg) -> None:
        self.counts["thoughts"] += 1
        self._thoughts[msg.query_id] = msg
        if len(self._thoughts) > 512:
            for key in list(self._thoughts)[:256]:
                del self._thoughts[key]

    def _on_FusionDecision(self, msg) -> None:
        if msg.env_ids and msg.env_ids[0] == 0:
            self.trust.add(int(msg.step), float(msg.rl_trust[0]), float(msg.llm_trust[0]))
        for i, env_id in enumerate(msg.env_ids):
            if int(msg.llm_actions[i]) != NO_ACTION and (env_id, msg.step) in self._flat:
                self._fused[(env_id, int(msg.step))] = (int(msg.actions[i]), int(msg.rl_actions[i]), int(msg.llm_actions[i]))
                if len(self._fused) > MAX_CHAINS:  # labels lost or never published: forget the oldest
                    del self._fused[next(iter(self._fused))]
            decision = self._decision(msg.step, env_id)
            decision.fused_action = int(msg.actions[i])
            decision.method, decision.rule = msg.method, msg.rules[i]
            decision.rl_trust, decision.llm_trust = float(msg.rl_trust[i]), float(msg.llm_trust[i])
            decision.llm_action, decision.llm_confidence = int(msg.llm_actions[i]), float(msg.llm_confidences[i])
            decision.llm_staleness = int(msg.llm_staleness[i])
            thought = self._thoughts.get(msg.llm_query_ids[i]) if msg.llm_query_ids[i] else None
            if thought is not None:
                decision.llm_reason = (thought.reason or thought.decision)[:120]
                decision.adapter = f"v{thought.adapter_version}" if thought.adapter_version else "base"
            if decision.rl_action == NO_ACTION:
                decision.rl_action = int(msg.rl_actions[i])

    def _on_RiskVerdict(self, msg) -> None:
        for i, env_id in enumerate(msg.env_ids):
            decision = self._pending.pop((msg.step, env_id), None) or Decision(msg.step, env_id)
            decision.final_action = int(msg.actions[i])
            vetoed = bool(msg.vetoed[i])
            decision.verdict = f"veto: {msg.reasons[i]}" if vetoed else ("degraded" if msg.degraded[i] else "pass")
            decision.halt = msg.halts[i] if msg.halts else ""
            self.counts["decisions"] += 1
            if vetoed:
                self.counts["vetoes"] += 1
                self._event("veto", "risk", f"env {env_id} step {msg.step}: {action_name(decision.fused_action)} -> "
                                           f"{action_name(decision.final_action)} ({msg.reasons[i]})")
            if self._halts.get(env_id, "") != decision.halt:
                self._event("halt", "risk", f"env {env_id} step {msg.step}: " + (f"halt {decision.halt}" if decision.halt else "halt lifted"))
                self._halts[env_id] = decision.halt
            if env_id == 0:
                self.halts.add(int(msg.step), decision.halt)
                self.decisions.appendleft(decision)
                self.chains[msg.step] = decision
                if len(self.chains) > MAX_CHAINS:
                    del self.chains[next(iter(self.chains))]

    def _on_EnvOutcome(self, msg) -> None:
        self.counts["trades"] += 1
        side = "long" if msg.side > 0 else "short"
        steps = list(msg.decision_steps)
        entry_step = steps[0] if steps else self.health.loop_step - msg.bars_held
        exit_step = max(steps[-1], entry_step + msg.bars_held) if steps else self.health.loop_step  # a stop closes with no decision
        self._event("fill", f"env {msg.env_id}", f"trade {msg.trade_id} {side} {msg.contracts} @ {msg.entry_price:.2f} -> "
                                                 f"{msg.exit_price:.2f} ({msg.exit_reason}) {msg.pnl_usd:+.2f} $")
        if msg.env_id != 0:
            return
        self.trades.appendleft(Trade(trade_id=msg.trade_id, env_id=msg.env_id, side=side, entry_step=entry_step, entry_price=msg.entry_price,
                                     exit_step=exit_step, exit_price=msg.exit_price, pnl_usd=msg.pnl_usd, bars_held=msg.bars_held,
                                     exit_reason=msg.exit_reason, decision_steps=steps))
        self._mark_trade(self.trades[0])

    def _mark_trade(self, trade: Trade) -> None:
        self.marks.add(trade.entry_step, float(trade.entry_price), f"{trade.side} entry", "#2ca02c" if trade.side == "long" else "#d62728",
                       trade.trade_id)
        self.marks.add(trade.exit_step, float(trade.exit_price), f"exit ({trade.exit_reason})", "#444444", trade.trade_id)

    def _on_PolicyUpdate(self, msg: PolicyUpdate, stamp: str = "") -> None:
        if self._first_time(("policy.update", msg.update, msg.num_timesteps)):
            self._learning_t += 1
            self.learning.add(self._learning_t, *(getattr(msg, key) for key in LEARNING_KEYS))

    def _on_LoraRound(self, msg: LoraRound, stamp: str = "") -> None:
        if self._first_time(("lora.round", msg.version)):
            self.lora_rounds.appendleft(lora_row(msg, _time_of(stamp)))

    def _first_time(self, key: tuple) -> bool:
        """A live run's update or round comes twice, on the bus and in the log (read for what came before the attach)."""
        if key in self._recent_updates:
            return False
        self._recent_updates.append(key)
        return True

    def _on_LoraAdapter(self, msg) -> None:
        metrics = " ".join(f"{k}={v:.3g}" for k, v in msg.metrics.items())
        self._event("adapter", "lora", f"adapter v{msg.version} published {metrics}".strip())

    # ------------------------------------------------------------------ log records

    def on_log(self, record: dict[str, Any]) -> None:
        """One JSON log line of any actor: events, a logged message (a finished run's learning), and (for a finished run) health."""
        event, actor, level = str(record.get("event", "")), str(record.get("actor", "?")), str(record.get("level", "info"))
        with self.lock:
            if (message := LOGGED_MESSAGES.get(event)) is not None:
                try:
                    getattr(self, f"_on_{message.__name__}")(msgspec.convert(record, message, strict=False), str(record.get("timestamp", "")))
                except msgspec.ValidationError:  # a log written before the message had these fields: its event row stays
                    pass
            elif event == "stats" and self.health.source.startswith("logs"):
                self._gauges(actor, {k: v for k, v in record.items() if isinstance(v, (int, float))})
            if self.health.source.startswith("logs") and actor not in ("supervisor", "dashboard"):
                health = self.actors.setdefault(actor, ActorHealth(int(record.get("pid", 0) or 0), self.clock()))
                health.last_log = str(record.get("timestamp", ""))[11:19]
            kind = LOG_EVENTS.get(event) or ("error" if level in ("error", "critical") else "warning" if level == "warning" else "")
            if kind:
                if kind == "error":
                    self.counts["errors"] += 1
                self._event(kind, actor, f"{event} {fields_text(record)}".strip(), stamp=str(record.get("timestamp", "")))

    # ------------------------------------------------------------------ reports of a finished run

    def on_report(self, run_dir: str | Path, run: RunView = RunView()) -> None:
        """The trades and evaluation accounts of a run's backtest or paper report, where its settings put it (``run``)."""
        path = report_file(Path(run_dir), run)
        report = read_report(path) if path is not None else None
        if report is not None:
            with self.lock:
                self._report(report)

    def _report(self, report: RunReport) -> None:
        trades = report.trades
        self.trades.clear()
        self.trades.extendleft(trades[-MAX_ROWS:])
        self.report_trades = {t.trade_id: t for t in trades if t.env_id == 0}
        if not self.price.rows and not self.marks.rows:  # a finished run (the bus drew nothing): its trades on the charts
            self._report_charts(trades)
        if not self.walk.accounts:  # not followed live: the report's walk (every env's, in the order they started)
            for number, account in enumerate(report.accounts[-MAX_ROWS:]):
                self.walk.accounts.appendleft(dataclasses.replace(account, index=number))
        self.report = dict(report.figures)
        self._event("report", "env", f"report {report.path}: {len(trades)} trades, accounts {self.report['accounts']}")

    def _report_charts(self, trades: list[Trade]) -> None:
        """Env 0's trades of a report as entry and exit marks, and its realised equity (the balance after each exit;
        the trailing threshold is not in the report) on the equity chart."""
        balance = self.walk.rules.start_balance
        for trade in sorted(trades, key=lambda t: (t.exit_step, t.trade_id)):
            if trade.env_id != 0 or trade.entry_step < 0:
                continue
            self._mark_trade(trade)
            if balance:
                balance += trade.pnl_usd
                self.equity.add(trade.exit_step, balance, float("nan"))

    def on_market(self, history: MarketHistory) -> None:
        """A finished run's bars (see ``MarketHistory``): the close line over the whole run (sampled to MAX_POINTS
        points) and the last MAX_CANDLES bars as candles. Ignored when the bus already drew the chart."""
        with self.lock:
            if self.price.rows:
                return
            n = len(history.close)
            stride = max(1, -(-n // MAX_POINTS))
            for i in range(0, n, stride):
                self.price.add(history.first_step + i, float(history.close[i]))
            for i in range(max(0, n - MAX_CANDLES), n):
                colour = "#2ca02c" if history.close[i] >= history.open[i] else "#d62728"
                self.candles.add(history.first_step + i, float(history.open[i]), float(history.high[i]), float(history.low[i]),
                                 float(history.close[i]), colour)
            self.health.loop_step = max(self.health.loop_step, history.first_step + n - 1)
            self._event("report", "dashboard", f"price: {n:,} bars of env 0 rebuilt from the run's data {history.source}".strip())

    def note(self, kind: str, actor: str, text: str) -> None:
        """An event of the dashboard's own (what it could not show, and why)."""
        with self.lock:
            self._event(kind, actor, text)

    def trade(self, trade_id: int) -> Trade | None:
        """Env 0's trade ``trade_id`` while the trades table keeps it."""
        with self.lock:
            return next((t for t in self.trades if t.trade_id == trade_id and t.env_id == 0), None) or self.report_trades.get(trade_id)

    def _event(self, kind: str, actor: str, text: str, stamp: str = "") -> None:
        self._event_seq += 1
        self.events.appendleft(Event(self._event_seq, _time_of(stamp), kind, actor, text))

    # ------------------------------------------------------------------ reading

    def heartbeat_rows(self) -> list[dict[str, Any]]:
        now = self.clock()
        return [{"actor": name, "pid": h.pid, "age": f"last log {h.last_log}" if h.last_log else f"{now - h.last_beat:.1f} s",
                 "restarts": h.restarts,
                 "uptime": f"{h.uptime_secs:.0f} s"} for name, h in sorted(self.actors.items())]

    def chain_text(self, trade: Trade) -> str:
        """The decisions that opened, managed and closed a trade (those still kept), one line each."""
        if trade.chain_text:
            return trade.chain_text
        with self.lock:
            chain = [self.chains[step] for step in trade.decision_steps if step in self.chains]
        if not chain:
            return f"trade {trade.trade_id}: the decisions of steps {trade.decision_steps} are no longer kept"
        return "\n".join(decision_text(d) for d in chain)

    def snapshot(self, cursors: dict[str, int], event_filter: str = "", event_kinds: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
        """New chart points since ``cursors`` (updated in place) and the current tables and figures; the events table
        keeps the ``event_kinds`` (all when empty) whose text contains ``event_filter``."""
        with self.lock:
            if cursors.get("generation") != self.generation:
                cursors.clear()
                cursors["generation"] = self.generation
                reset = True
            else:
                reset = False
            new: dict[str, dict[str, list]] = {}
            for name in ("price", "candles", "position", "marks", "news", "equity", "trust", "accuracy", "learning"):
                new[name], cursors[name] = getattr(self, name).since(cursors.get(name, 0))
            needle = event_filter.lower()
            events = [e.row() for e in self.events if (not event_kinds or e.kind in event_kinds)
                      and (not needle or needle in f"{e.kind} {e.actor} {e.text}".lower())][:MAX_ROWS]
            return {
                "reset": reset, "new": new, "health": self.health.figures(), "actors": self.heartbeat_rows(),
                "account": dict(self.account), "counts": dict(self.counts),
                "decisions": [d.row() for d in self.decisions], "trades": [t.row() for t in self.trades],
                "trade_objects": list(self.trades), "report": dict(self.report), "lora": list(self.lora_rounds), "events": events,
                "accounts": [a.row() for a in self.walk.accounts], "account_counts": dict(self.walk.counts),
                "open_accounts": sum(a.outcome == "open" for a in self.walk.accounts), "rules": self.walk.rules.__dict__.copy(),
                "halts": [{"start": start - 0.5, "end": end + 0.5, "rule": rule} for start, end, rule in self.halts.spans],
                "scores": self.scores.__dict__.copy(), "fusion_gauges": dict(self.fusion_gauges),
            }

