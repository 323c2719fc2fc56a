"""The dashboard's records: a decision and the chain behind it, a trade, an evaluation account, the account rules,
fusion's scores, an event, the run's health, a finished run's bars. Plain dataclasses that ``DashboardState`` (state.py) keeps and turns into
table rows (``row()``); apart from it so that what a row shows can change without reading the state's handlers.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from actors.common.actions import ACTION_NAMES, NO_ACTION
from bus.messages import Progress


def action_name(action: int) -> str:
    return ACTION_NAMES[action] if 0 <= action < len(ACTION_NAMES) else "-"


@dataclass
class ActorHealth:
    pid: int
    last_beat: float
    """time.monotonic() of the last heartbeat (or log line, for a finished run)."""
    uptime_secs: float = 0.0
    restarts: int = 0
    last_log: str = ""
    """A finished run: the time (UTC) of the actor's last log line, in place of a heartbeat age."""


@dataclass
class Decision:
    """One environment's decision at one step, joined from proposal, thought, fusion and verdict."""

    step: int
    env_id: int
    rl_action: int = NO_ACTION
    probs: tuple[float, ...] = ()
    """The policy's action probabilities (formatted only when shown: most decisions never are)."""
    llm_action: int = NO_ACTION
    llm_confidence: float = 0.0
    llm_reason: str = ""
    llm_staleness: int = -1
    adapter: str = ""
    method: str = ""
    rule: str = ""
    rl_trust: float = 0.0
    llm_trust: float = 0.0
    fused_action: int = NO_ACTION
    final_action: int = NO_ACTION
    verdict: str = ""
    halt: str = ""

    @property
    def rl_probs(self) -> str:
        return " ".join(f"{ACTION_NAMES[a][:4]} {p:.2f}" for a, p in enumerate(self.probs) if p >= 0.005)

    def row(self) -> dict[str, Any]:
        llm = "-" if self.llm_action == NO_ACTION else f"{action_name(self.llm_action)} {self.llm_confidence:.2f}"
        return {
            "step": self.step, "env": self.env_id, "rl": action_name(self.rl_action), "probs": self.rl_probs, "llm": llm,
            "reason": self.llm_reason, "stale": "-" if self.llm_staleness < 0 else str(self.llm_staleness),
            "adapter": self.adapter, "fusion": f"{self.method}/{self.rule}" if self.rule else self.method,
            "trust": f"{self.rl_trust:.2f} / {self.llm_trust:.2f}", "final": action_name(self.final_action),
            "risk": self.verdict, "halt": self.halt or "-",
        }


@dataclass(kw_only=True)
class Trade:
    """One trade of env 0 as the trades table shows it: its two ends (loop step and price), then what it made."""

    trade_id: int
    env_id: int
    side: str
    entry_step: int
    entry_price: float
    exit_step: int
    exit_price: float
    pnl_usd: float
    bars_held: int
    exit_reason: str
    decision_steps: list[int]
    chain_text: str = ""
    """The decisions behind the trade as a report wrote them (a finished run); live trades join them by step."""

    def row(self) -> dict[str, Any]:
        return {"trade": self.trade_id, "side": self.side, "entry": f"{self.entry_price:.2f} @ {self.entry_step}",
                "exit": f"{self.exit_price:.2f} @ {self.exit_step}", "pnl": round(self.pnl_usd, 2), "bars": self.bars_held,
                "why": self.exit_reason}


@dataclass(frozen=True)
class MarketHistory:
    """Env 0's bars over a finished run's loop steps: a finished run's logs and report hold no prices, so the reader
    rebuilds them from the data the run's config names (actors/dashboard/source.py ``market_history``)."""

    first_step: int
    """The loop step of the first bar (0: the bar of the reset)."""
    open: list[float]
    high: list[float]
    low: list[float]
    close: list[float]
    source: str = ""
    """Where the bars came from, for the events table (the dataset's name)."""


@dataclass
class Account:
    """One evaluation account of env 0's walk (one episode of the env: a pass or a fail starts the next)."""

    index: int
    episode_id: int
    start_step: int
    end_step: int
    start_balance: float
    balance: float
    outcome: str = "open"
    """passed | failed | open (running) | ended (an episode cut by its length: training)."""
    reason: str = ""

    def row(self) -> dict[str, Any]:
        return {"account": self.index, "episode": self.episode_id,
                "steps": f"{self.start_step} - {self.end_step}" if self.start_step >= 0 else "(report)",
                "outcome": self.outcome, "net": round(self.balance - self.start_balance, 2), "why": self.reason or "-"}


@dataclass
class AccountRules:
    """The run's account rules the account panel compares against (config.toml's [account], presets resolved)."""

    name: str = ""
    start_balance: float = 0.0
    """0 = unknown: the first balance seen."""
    profit_target: float = 0.0
    daily_loss_limit: float = 0.0


@dataclass
class Scores:
    """Hindsight-labelled decisions (flat, with a thought) as in actors/jobs/evaluation/decision_sources.py, counted as they arrive."""

    scored: int = 0
    fused_hits: int = 0
    rl_hits: int = 0
    llm_hits: int = 0
    contested: int = 0
    """Decisions where RL and LLM disagreed and exactly one matched the label."""
    chose_right: int = 0

    def add(self, fused: int, rl: int, llm: int, label: int) -> None:
        self.scored += 1
        self.fused_hits += fused == label
        self.rl_hits += rl == label
        self.llm_hits += llm == label
        if rl != llm and label in (rl, llm):
            self.contested += 1
            self.chose_right += fused == label


def share(hits: int, n: int) -> float:
    return hits / n if n else float("nan")


@dataclass
class Event:
    seq: int
    clock: str
    """Wall time, HH:MM:SS UTC."""
    kind: str
    actor: str
    text: str

    def row(self) -> dict[str, Any]:
        return {"time": self.clock, "kind": self.kind, "actor": self.actor, "text": self.text}


@dataclass
class Transport:
    latency_p50_us: float = float("nan")
    """env.obs -> risk.verdict (the env's gauges)."""
    latency_p99_us: float = float("nan")
    feed_lag_secs: float = float("nan")
    messages: int = 0
    dropped_frames: int = 0


@dataclass
class Health:
    """The health panel: which run is shown (set when the reader attaches), how far its loop is (the env's last
    sys.progress, the newest env.obs step) and how its messages travel (sys.stats, the reader's own count)."""

    progress: Progress = field(default_factory=lambda: Progress(actor="", steps=0, total_steps=0, steps_per_sec=0.0))
    mode: str = ""
    run_dir: str = ""
    source: str = "starting"
    """``live bus`` | ``logs (finished run)`` | ``waiting for the runtime`` | ..."""
    loop_step: int = 0
    transport: Transport = field(default_factory=Transport)

    def figures(self) -> dict[str, Any]:
        """All of it as one flat dict (the snapshot's ``health``); env steps are summed over environments (a training
        budget counts these)."""
        return {"mode": self.mode, "run_dir": self.run_dir, "source": self.source, "loop_step": self.loop_step,
                "steps_per_sec": self.progress.steps_per_sec, "env_steps": self.progress.steps, "total_steps": self.progress.total_steps,
                **self.transport.__dict__}


class Series:
    """Points with increasing ids: a reader asks for those after the last id it saw."""

    def __init__(self, columns: tuple[str, ...], maxlen: int) -> None:
        self.columns = columns
        self.rows: deque[tuple[int, tuple]] = deque(maxlen=maxlen)
        self.next_id = 0

    def add(self, *values: Any) -> None:
        self.rows.append((self.next_id, values))
        self.next_id += 1

    def since(self, cursor: int) -> tuple[dict[str, list], int]:
        """The columns of the points with id >= cursor, and the cursor for next time."""
        new = [values for point_id, values in self.rows if point_id >= cursor] if self.rows and self.rows[-1][0] >= cursor else []
        return {name: [row[i] for row in new] for i, name in enumerate(self.columns)}, self.next_id

    def clear(self) -> None:
        self.rows.clear()


def live_account(context: Any) -> dict[str, Any]:
    """The account panel's figures of env 0 from its market context (bus MarketContext)."""
    equity = float(context.balance + context.unrealized_pnl)
    return {"equity": equity, "balance": float(context.balance), "drawdown_buffer": float(context.drawdown_buffer),
            "trailing_limit": float(context.trailing_limit), "daily_pnl": float(context.daily_pnl),
            "minutes_to_close": float(context.minutes_to_close), "position": float(context.position),
            "contracts": float(context.contracts), "entry_price": float(context.entry_price),
            "unrealized_pnl": float(context.unrealized_pnl), "time_et": context.time_et, "symbol": context.symbol,
            "stop_price": float(context.stop_price), "target_price": float(context.target_price)}
