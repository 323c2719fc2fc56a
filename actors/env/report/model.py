"""The backtest report's input: the trades with the decision behind each, the run's bars, halts and evaluation accounts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from actors.common.events import MarketEvent
    from actors.env.batch import BarHistory
    from actors.env.account_walk import EvaluationRecord
    from actors.env.trading import Trade


@dataclass(frozen=True)
class ThoughtUsed:
    """The LLM thought fusion used for a decision."""

    action: str
    confidence: float
    staleness_steps: int
    reason: str
    query_id: str
    news: tuple[str, ...] | None = None
    """The texts of the events the thought's prompt read, newest first (() it read none); None when the thought
    itself did not reach the env, so what it read is unknown."""


@dataclass(frozen=True)
class TradeDecision:
    """The decision of one loop step that opened or closed a trade."""

    step: int
    rl_action: str
    rl_confidence: float
    thought: ThoughtUsed | None
    fusion_method: str
    """rules | network | rl_only | ...; '' when no fusion decision was seen for the step."""
    fusion_rule: str
    rl_trust: float
    llm_trust: float
    final_action: str
    """What risk let through (the action the env executed, unless its masks refused it)."""
    veto_reason: str = ""


@dataclass(frozen=True)
class ReportTrade:
    trade: Trade
    entry: TradeDecision | None = None
    exit: TradeDecision | None = None
    """The decision at the step the trade closed (a HOLD when a stop, target or flat time closed it)."""
    env_id: int = 0


@dataclass
class ReportInput:
    """Everything the backtest report shows. Per-bar arrays are aligned in time (index i is one bar)."""

    title: str
    bars: BarHistory
    """The run's bars; its equity is the run's (consecutive evaluation accounts chained: P&L carried across
    resets, actors/env/explain.py ``run_history``)."""
    halts: np.ndarray
    """str [T]: the entry-veto rule in force at the bar ('' when none)."""
    trades: list[ReportTrade]
    evaluations: Sequence[EvaluationRecord]
    metrics: dict[str, float]
    notes: list[str] = field(default_factory=list)
    """Warnings and facts in sentences (data checks, where entries went, ...)."""
    metric_warnings: dict[str, str] = field(default_factory=dict)
    """metric name -> why not to trust it (actors/env/statistics.py few_data_warnings)."""
    entries_funnel: dict[str, float] = field(default_factory=dict)
    """stage -> count (see entries_sentence)."""
    context: str = ""
    """One line: instrument, split, mode, envs, steps."""
    events: Sequence[MarketEvent] = ()
    """The market events of the run's bars, oldest first (the news market's releases and headlines; () for a
    market without events): marked on the price chart, listed in a table, and each trade's entry shows the
    latest one it could read (actors/env/report/events.py)."""
