"""Backtest / ablation report: metrics.json, report.md, PNG charts and one self-contained report.html.

Two writers:
- ``write_backtest_report(out_dir, ReportInput)``: the backtest report. Charts with US/Eastern time on the
  x axes (price with entry/exit markers, equity and drawdown, P&L per session; halted periods shaded),
  the evaluation accounts, where entries went, warnings, and a trades table where every row shows the
  decision behind its entry and exit. report.html carries the same with its images inline (base64 data
  URIs): it opens from a file, with no network.
- ``write_report(out_dir, equity_curve, trades, metrics, ...)``: the short form (metrics table, equity.png
  against bar numbers) for runs without per-bar times, e.g. the training episodes.

metrics.json holds every figure shown: the flat metrics at the top level (floats; None where undefined),
plus ``warnings``, ``entries_funnel``, ``evaluation_accounts`` and ``trade_list``.
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from actors.env.statistics import MIN_SESSIONS, MIN_TRADES, session_returns

if TYPE_CHECKING:
    from actors.env.batch import BarHistory
    from actors.env.evaluation import EvaluationRecord
    from actors.env.trading import Trade

ET = "America/New_York"
STATISTICS_BASIS = (
    "Sharpe and Sortino come from daily (session) returns, a session being the US/Eastern trading day that "
    "starts at 18:00 ET, annualised by sqrt(252); Sortino's downside deviation is sqrt(mean(min(r, 0)^2)). "
    "95% intervals: bootstrap over sessions (resampled with replacement, 2,000 draws, seeded). "
    f"Trade figures from fewer than {MIN_TRADES} trades and session figures from fewer than {MIN_SESSIONS} "
    "sessions carry a warning."
)
MARKDOWN_TRADES = 50
"""report.md lists the last this many trades (report.html and metrics.json list them all)."""
HTML_TRADES = 2000
"""report.html lists at most this many trades (the last ones)."""

# Display order and labels; other metrics follow alphabetically. Interval keys (<key>_ci_low/_high)
# are shown in their base figure's row.
_LABELS: dict[str, str] = {
    "net_pnl_usd": "Net P&L ($)",
    "return_pct": "Return (%)",
    "sharpe": "Sharpe (annualised)",
    "sortino": "Sortino (annualised)",
    "max_drawdown_usd": "Max drawdown ($)",
    "max_drawdown_pct": "Max drawdown (%)",
    "sessions": "Sessions",
    "bars": "Bars",
    "exposure": "Exposure (share of bars in a position)",
    "trades": "Trades",
    "win_rate": "Win rate",
    "profit_factor": "Profit factor",
    "avg_trade_usd": "Average trade ($)",
    "median_trade_usd": "Median trade ($)",
    "avg_win_usd": "Average win ($)",
    "avg_loss_usd": "Average loss ($)",
    "expectancy_usd": "Expectancy per trade ($)",
    "avg_bars_held": "Average bars held",
    "evaluations": "Evaluation accounts",
    "passed": "Evaluations passed",
    "failed": "Evaluations failed",
    "open": "Evaluations open",
    "pass_rate": "Pass rate (of decided)",
    "mean_days_to_pass": "Trading days to pass (mean)",
    "apex_violations": "Apex violations",
    "forced_flat_exits": "Forced-flat exits",
    "agreement_rate": "RL/LLM agreement rate",
    "veto_rate": "Risk veto rate",
    "query_rate": "LLM query rate",
    "llm_confidence": "LLM confidence (mean)",
    "rl_trust": "Fusion RL trust (mean)",
    "llm_trust": "Fusion LLM trust (mean)",
    "lag_query_rate": "Decisions with a thought at most K steps old",
    "llm_staleness_min_steps": "Thought staleness, min (steps)",
    "llm_staleness_steps": "Thought staleness, mean (steps)",
    "llm_staleness_max_steps": "Thought staleness, max (steps)",
    "thought_lag_steps": "Bounded thought lag K (steps; 0 = free-running)",
    "thought_waits": "Steps that waited for thoughts",
    "late_steps": "Late steps (thought wait deadline passed)",
    "thought_wait_secs": "Time the loop waited for thoughts (s)",
    "thought_wait_share": "Share of wall time waiting for thoughts",
    "decision_latency_p50_us": "Decision latency obs -> verdict, p50 (µs)",
    "decision_latency_p99_us": "Decision latency obs -> verdict, p99 (µs)",
    "loop_steps": "Loop steps",
    "verdict_timeouts": "Steps with no verdict in time (held)",
    "illegal_actions": "Illegal actions (replaced by HOLD)",
    "episodes": "Episodes",
    "mean_episode_return": "Mean episode return (reward units)",
}
_PARTICIPATION_KEYS = ("thought_lag_steps", "query_rate", "lag_query_rate", "llm_staleness_min_steps", "llm_staleness_steps",
                       "llm_staleness_max_steps", "thought_waits", "late_steps", "thought_wait_secs", "thought_wait_share")
"""The LLM participation table (actors/env/pacing.py): how much the LLM took part in the decisions."""
_CI_SUFFIXES = ("_ci_low", "_ci_high")
_HALT_COLOURS = ("#f4a261", "#e76f51", "#9b5de5", "#00bbf9", "#8d99ae", "#f15bb5")


# ---------------------------------------------------------------------- input


@dataclass(frozen=True)
class ThoughtUsed:
    """The LLM thought fusion used for a decision."""

    action: str
    confidence: float
    staleness_steps: int
    reason: str
    query_id: str


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


# ---------------------------------------------------------------------- formatting


def _format_value(value: float | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and not math.isfinite(value):
        return "n/a" if math.isnan(value) else str(value)
    if float(value).is_integer() and abs(value) < 1e12:
        return f"{int(value):,}"
    return f"{value:,.4f}" if abs(value) < 10 else f"{value:,.2f}"


def _ordered_keys(metrics: dict[str, float]) -> list[str]:
    shown = [key for key in metrics if not key.endswith(_CI_SUFFIXES) or key.removesuffix("_ci_low").removesuffix("_ci_high") not in metrics]
    return [key for key in _LABELS if key in shown] + sorted(key for key in shown if key not in _LABELS)


def _interval(metrics: dict[str, float], key: str) -> str:
    low, high = metrics.get(f"{key}_ci_low"), metrics.get(f"{key}_ci_high")
    if low is None or high is None:
        return ""
    if not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return "n/a"  # undefined (one session), never a zero-width interval
    return f"[{_format_value(float(low))}, {_format_value(float(high))}]"


def _label(key: str) -> str:
    if key in _LABELS:
        return _LABELS[key]
    if key.startswith("halted_bars_"):
        return f"Bars halted by {key.removeprefix('halted_bars_')}"
    if key.startswith("entries_"):
        return f"Entries: {key.removeprefix('entries_').replace('_', ' ')}"
    return key


def _shown_value(key: str, value: float, metrics: dict[str, float]) -> str:
    # A staleness of -1 (or a mean over no decision) means that no decision used a thought: no age to state.
    if key.startswith("llm_staleness") and (value < 0 or not metrics.get("query_rate", 1.0)):
        return "n/a (no thought used)"
    return _format_value(value)


def _metric_rows(metrics: dict[str, float], warnings: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(label, value, 95% interval, warning) per shown metric."""
    return [(_label(key), _shown_value(key, float(metrics[key]), metrics), _interval(metrics, key), warnings.get(key, ""))
            for key in _ordered_keys(metrics)]


def format_metrics_table(metrics: dict[str, float], warnings: dict[str, str] | None = None) -> str:
    """A Markdown table of the metrics, known ones first in a fixed order; intervals and warnings beside them."""
    warnings = warnings or {}
    rows = _metric_rows(metrics, warnings)
    if not any(interval or warning for _, _, interval, warning in rows):
        return "\n".join(["| metric | value |", "| --- | ---: |", *(f"| {label} | {value} |" for label, value, _, _ in rows)])
    lines = ["| metric | value | 95% interval | warning |", "| --- | ---: | ---: | --- |"]
    lines += [f"| {label} | {value} | {interval} | {'⚠ ' + warning if warning else ''} |" for label, value, interval, warning in rows]
    return "\n".join(lines)


def et_text(time_ns: int, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return pd.Timestamp(int(time_ns), unit="ns", tz="UTC").tz_convert(ET).strftime(fmt)


@dataclass(frozen=True)
class _DecisionStyle:
    """How one medium writes a decision's parts (report.md text, report.html): format strings over the
    decision's fields, string fields passed through ``escape`` first."""

    escape: Callable[[object], str]
    missing: str
    head: str
    no_thought: str
    thought: tuple[str, ...]
    fusion: str
    veto: str
    join: Callable[[list[str]], str]


def _render_decision(decision: TradeDecision | None, style: _DecisionStyle) -> str:
    """RL, thought, fusion, veto: the same parts in every medium."""
    if decision is None:
        return style.missing
    esc = style.escape
    parts = [style.head.format(step=decision.step, action=esc(decision.rl_action), confidence=decision.rl_confidence)]
    thought = decision.thought
    if thought is None:
        parts.append(style.no_thought)
    else:
        fields = dict(action=esc(thought.action), confidence=thought.confidence, staleness=thought.staleness_steps,
                      query_id=esc(thought.query_id), reason=esc(thought.reason))
        parts += [line.format(**fields) for line in style.thought]
    if decision.fusion_method:
        parts.append(style.fusion.format(method=esc(decision.fusion_method), rule=esc(decision.fusion_rule), rl_trust=decision.rl_trust,
                                         llm_trust=decision.llm_trust, action=esc(decision.final_action)))
    if decision.veto_reason:
        parts.append(style.veto.format(reason=esc(decision.veto_reason)))
    return style.join(parts)


_TEXT_DECISION = _DecisionStyle(
    escape=str,
    missing="no decision recorded",
    head="step {step}: RL {action} ({confidence:.2f})",
    no_thought="no thought",
    thought=("thought {action} ({confidence:.2f}, {staleness} steps old, {query_id}): {reason}",),
    fusion="fusion {method}/{rule} (trust RL {rl_trust:.2f}, LLM {llm_trust:.2f}) -> {action}",
    veto="veto: {reason}",
    join="; ".join,
)


def _decision_text(decision: TradeDecision | None) -> str:
    """One line: RL, thought, fusion, veto."""
    return _render_decision(decision, _TEXT_DECISION)


def entries_sentence(funnel: dict[str, float]) -> str:
    """Where entries went, in one sentence (empty without a funnel)."""
    if not funnel:
        return ""
    count = lambda stage: int(funnel.get(stage, 0))  # noqa: E731
    vetoes = {stage.removeprefix("vetoed_"): int(value) for stage, value in funnel.items() if stage.startswith("vetoed_") and value}
    veto_text = ", ".join(f"{reason} {value:,}" for reason, value in sorted(vetoes.items(), key=lambda item: -item[1])) or "none"
    return (
        f"Where entries went: of {count('flat_bars'):,} decisions taken flat, entries were forbidden by the masks "
        f"(flat time, end of data) at {count('masked'):,}; the policy chose HOLD at {count('policy_hold'):,} and proposed "
        f"an entry at {count('proposed'):,}; fusion turned {count('fusion_hold'):,} of those into HOLD; risk vetoed "
        f"{sum(vetoes.values()):,} ({veto_text}); the env refused {count('refused_by_env'):,}; {count('executed'):,} were executed."
        + (f" {count('no_fusion_decision'):,} flat decisions had no fusion decision to read." if count("no_fusion_decision") else "")
    )


# ---------------------------------------------------------------------- charts


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _et_axis(axis, times_ns: np.ndarray) -> None:
    """Bars are plotted at their index (no gaps for nights and weekends); ticks read the ET time."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    span_ns = int(times_ns[-1] - times_ns[0]) if len(times_ns) > 1 else 0
    fmt = "%m-%d %H:%M" if span_ns < 3 * 86_400 * 10**9 else "%m-%d"
    labels = pd.to_datetime(times_ns, unit="ns", utc=True).tz_convert(ET).strftime(fmt) if len(times_ns) else []

    def label(value: float, _position: int) -> str:
        index = int(round(value))
        return labels[index] if 0 <= index < len(labels) else ""

    axis.xaxis.set_major_locator(MaxNLocator(nbins=10, integer=True))
    axis.xaxis.set_major_formatter(FuncFormatter(label))
    axis.set_xlabel("time (US/Eastern)")


def _halt_runs(halts: np.ndarray) -> list[tuple[int, int, str]]:
    """(first bar, last bar, rule) of each contiguous halted stretch."""
    runs: list[tuple[int, int, str]] = []
    start = 0
    for index in range(1, len(halts) + 1):
        if index == len(halts) or halts[index] != halts[start]:
            if halts[start]:
                runs.append((start, index - 1, str(halts[start])))
            start = index
    return runs


def _shade_halts(axis, halts: np.ndarray, legend: bool) -> None:
    rules = sorted({str(rule) for rule in halts if rule})
    colours = {rule: _HALT_COLOURS[index % len(_HALT_COLOURS)] for index, rule in enumerate(rules)}
    labelled: set[str] = set()
    for start, end, rule in _halt_runs(halts):
        label = f"halted: {rule}" if legend and rule not in labelled else None
        labelled.add(rule)
        axis.axvspan(start - 0.5, end + 0.5, color=colours[rule], alpha=0.18, linewidth=0, label=label)


def _session_starts(times_ns: np.ndarray) -> np.ndarray:
    from actors.env.statistics import session_of

    sessions = session_of(times_ns)
    return np.flatnonzero(np.diff(sessions) != 0) + 1


def _mark_sessions(axis, times_ns: np.ndarray) -> None:
    starts = _session_starts(times_ns)
    if len(starts) <= 60:  # more would be a grey wash
        for start in starts:
            axis.axvline(start - 0.5, color="grey", alpha=0.25, linewidth=0.6, linestyle=":")


def plot_price(path: Path, data: ReportInput) -> None:
    plt = _pyplot()
    times = np.asarray(data.bars.times_ns, dtype=np.int64)
    figure, axis = plt.subplots(figsize=(12, 5))
    bars = np.arange(len(times))
    axis.fill_between(bars, data.bars.low, data.bars.high, color="tab:grey", alpha=0.25, linewidth=0, label="bar range")
    axis.plot(bars, data.bars.close, color="black", linewidth=0.7, label="close")
    _shade_halts(axis, np.asarray(data.halts), legend=True)
    _mark_sessions(axis, times)
    for item in data.trades:
        trade = item.trade
        entry_at, exit_at = np.searchsorted(times, [trade.entry_ns, trade.exit_ns])
        colour = "tab:green" if trade.pnl_usd > 0 else "tab:red"
        axis.plot([entry_at, exit_at], [trade.entry_price, trade.exit_price], color=colour, linewidth=1.0, alpha=0.8)
        axis.scatter([entry_at], [trade.entry_price], marker="^" if trade.side > 0 else "v", s=40, color="tab:blue", zorder=3, edgecolors="white", linewidths=0.5)
        axis.scatter([exit_at], [trade.exit_price], marker="X", s=36, color=colour, zorder=3, edgecolors="white", linewidths=0.5)
    handles, labels = axis.get_legend_handles_labels()
    from matplotlib.lines import Line2D

    handles += [Line2D([], [], marker="^", linestyle="", color="tab:blue", label="long entry"),
                Line2D([], [], marker="v", linestyle="", color="tab:blue", label="short entry"),
                Line2D([], [], marker="X", linestyle="", color="tab:green", label="exit, win"),
                Line2D([], [], marker="X", linestyle="", color="tab:red", label="exit, loss")]
    # Below the axes: over the price it would hide the first trades.
    axis.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, ncol=min(len(handles), 6), frameon=False)
    axis.set_ylabel("price")
    axis.set_title(f"{data.title}: price, entries and exits ({len(data.trades)} trades)")
    axis.grid(alpha=0.3)
    _et_axis(axis, times)
    figure.tight_layout()
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)


def plot_equity(path: Path, data: ReportInput) -> None:
    plt = _pyplot()
    times = np.asarray(data.bars.times_ns, dtype=np.int64)
    equity = np.asarray(data.bars.equity, dtype=np.float64)
    bars = np.arange(len(equity))
    drawdown = np.maximum.accumulate(equity) - equity if len(equity) else equity
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(12, 6), sharex=True, gridspec_kw={"height_ratios": (3, 1)})
    top.plot(bars, equity, color="tab:blue", linewidth=1.0, label="equity (accounts chained)")
    _shade_halts(top, np.asarray(data.halts), legend=True)
    _shade_halts(bottom, np.asarray(data.halts), legend=False)
    _mark_evaluations(top, times, data.evaluations)
    top.set_ylabel("equity ($)")
    top.set_title(f"{data.title}: equity and drawdown")
    top.grid(alpha=0.3)
    top.legend(loc="upper left", fontsize=8)
    bottom.fill_between(bars, -drawdown, 0.0, color="tab:red", alpha=0.5, linewidth=0)
    bottom.set_ylabel("drawdown ($)")
    bottom.grid(alpha=0.3)
    _et_axis(bottom, times)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _mark_evaluations(axis, times_ns: np.ndarray, evaluations: Sequence[EvaluationRecord]) -> None:
    """A line where each evaluation account ended, labelled with its outcome."""
    colours = {"passed": "tab:green", "failed": "tab:red"}
    for record in evaluations:
        if record.outcome not in colours or not len(times_ns):
            continue
        at = int(np.searchsorted(times_ns, record.end_ns))
        axis.axvline(at, color=colours[record.outcome], linewidth=1.0, alpha=0.7)
        axis.annotate(f"#{record.index} {record.outcome}", (at, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                      va="top", ha="right", fontsize=7, color=colours[record.outcome])


def _session_pnl_records(data: ReportInput) -> list[dict]:
    """Each session's date and P&L (dollars), the series the deflated Sharpe and the interval read."""
    if not len(data.bars.times_ns):
        return []
    sessions = session_returns(data.bars.times_ns, data.bars.equity)
    return [{"date": str(day.date()), "pnl_usd": float(pnl)} for day, pnl in zip(sessions.dates(), sessions.pnl_usd)]


def plot_sessions(path: Path, data: ReportInput) -> None:
    plt = _pyplot()
    sessions = session_returns(data.bars.times_ns, data.bars.equity)
    figure, axis = plt.subplots(figsize=(12, 3.5))
    positions = np.arange(len(sessions.pnl_usd))
    colours = np.where(sessions.pnl_usd >= 0, "tab:green", "tab:red")
    axis.bar(positions, sessions.pnl_usd, color=colours, width=0.8)
    axis.axhline(0.0, color="black", linewidth=0.6)
    labels = sessions.dates().strftime("%a %m-%d")
    step = max(1, len(labels) // 25)
    axis.set_xticks(positions[::step], labels[::step], rotation=45, ha="right", fontsize=8)
    axis.set_ylabel("P&L ($)")
    axis.set_xlabel("session (US/Eastern trading day, from 18:00 the evening before)")
    winning = int((sessions.pnl_usd > 0).sum())
    axis.set_title(f"{data.title}: P&L per session ({winning} of {len(labels)} sessions up)")
    axis.grid(alpha=0.3, axis="y")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


# ---------------------------------------------------------------------- tables


def _evaluation_rows(evaluations: Sequence[EvaluationRecord]) -> list[list[str]]:
    return [[str(record.index), et_text(record.start_ns), et_text(record.end_ns), record.outcome, record.reason or "",
             str(record.trading_days), f"{record.net_pnl_usd:,.2f}"] for record in evaluations]


_EVALUATION_HEADER = ["#", "start (ET)", "end (ET)", "outcome", "reason", "trading days", "net P&L ($)"]


def _evaluation_summary(metrics: dict[str, float]) -> str:
    if "evaluations" not in metrics:
        return ""
    return (f"{_format_value(metrics['evaluations'])} evaluation account(s): {_format_value(metrics.get('passed', 0.0))} passed, "
            f"{_format_value(metrics.get('failed', 0.0))} failed, {_format_value(metrics.get('open', 0.0))} open; pass rate "
            f"{_format_value(metrics.get('pass_rate'))}, trading days to pass {_format_value(metrics.get('mean_days_to_pass'))}.")


def _funnel_rows(funnel: dict[str, float]) -> list[tuple[str, str, str]]:
    proposed = funnel.get("proposed", 0.0)
    rows = []
    for stage, value in funnel.items():
        share = f"{value / proposed:.1%}" if proposed and stage not in ("flat_bars", "masked", "policy_hold", "proposed", "no_fusion_decision") else ""
        rows.append((stage, f"{int(value):,}", share))
    return rows


def participation_rows(metrics: dict[str, float]) -> list[tuple[str, str]]:
    """(label, value) of the LLM's part in the decisions; empty when no fusion decision was seen."""
    if "lag_query_rate" not in metrics and "query_rate" not in metrics:
        return []
    shown = {"thought_lag_steps": 0.0, **metrics}  # free-running runs carry no gate figures: K = 0 all the same
    return [(_label(key), _shown_value(key, float(shown[key]), shown)) for key in _PARTICIPATION_KEYS if key in shown]


def _participation_markdown(metrics: dict[str, float]) -> list[str]:
    rows = participation_rows(metrics)
    if not rows:
        return []
    return ["## LLM participation", "", "| measure | value |", "| --- | ---: |", *(f"| {label} | {value} |" for label, value in rows), ""]


def _halt_rows(halts: np.ndarray) -> list[tuple[str, int, str]]:
    total = max(len(halts), 1)
    rules, counts = np.unique([str(rule) for rule in halts if rule], return_counts=True) if len(halts) else ([], [])
    return [(str(rule), int(count), f"{count / total:.1%}") for rule, count in zip(rules, counts)]


def _trade_record(item: ReportTrade) -> dict[str, Any]:
    trade = item.trade
    return {
        "env_id": item.env_id, "trade_id": trade.trade_id, "side": "long" if trade.side > 0 else "short",
        "contracts": trade.contracts, "entry_time_et": et_text(trade.entry_ns), "exit_time_et": et_text(trade.exit_ns),
        "entry_price": trade.entry_price, "exit_price": trade.exit_price, "pnl_usd": trade.pnl_usd, "bars_held": trade.bars_held,
        "exit_reason": trade.exit_reason,
        "entry_decision": asdict(item.entry) if item.entry else None, "exit_decision": asdict(item.exit) if item.exit else None,
    }


def _markdown_trades(trades: Sequence[ReportTrade]) -> list[str]:
    if not trades:
        return ["No closed trades."]
    rows = ["| trade | side | entry (ET) | entry | exit (ET) | exit | P&L ($) | bars | exit reason | entry decision | exit decision |",
            "| ---: | :---: | --- | ---: | --- | ---: | ---: | ---: | --- | --- | --- |"]
    for item in list(trades)[-MARKDOWN_TRADES:]:
        trade = item.trade
        side = "long" if trade.side > 0 else "short"
        cells = [str(trade.trade_id), side, et_text(trade.entry_ns), f"{trade.entry_price:,.2f}", et_text(trade.exit_ns),
                 f"{trade.exit_price:,.2f}", f"{trade.pnl_usd:,.2f}", str(trade.bars_held), trade.exit_reason,
                 _decision_text(item.entry), _decision_text(item.exit)]
        rows.append("| " + " | ".join(cell.replace("|", "/").replace("\n", " ") for cell in cells) + " |")
    return rows


# ---------------------------------------------------------------------- writers


def _json_value(value: float) -> float | None:
    return float(value) if math.isfinite(float(value)) else None


def _warning_lines(data: ReportInput) -> list[str]:
    lines = list(data.notes)
    trades = int(data.metrics.get("trades", len(data.trades)))
    if trades < MIN_TRADES:
        lines.append(f"Only {trades} trade(s): fewer than {MIN_TRADES}, so win rate, profit factor and every per-trade figure are noise, not evidence.")
    sessions = int(data.metrics.get("sessions", 0))
    if sessions < MIN_SESSIONS:
        lines.append(f"Only {sessions} session(s): fewer than {MIN_SESSIONS}, so Sharpe, Sortino and their intervals say little.")
    if trades < MIN_TRADES and data.entries_funnel:
        lines.append(entries_sentence(data.entries_funnel))
    return lines


def write_backtest_report(out_dir: str | Path, data: ReportInput) -> dict[str, float]:
    """Write metrics.json, report.md, equity.png, price.png, sessions.png and report.html; returns the metrics."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = {key: float(value) for key, value in data.metrics.items()}
    warnings = _warning_lines(data)
    charts = {"price.png": "price, entries and exits", "equity.png": "equity and drawdown", "sessions.png": "P&L per session"}
    if len(data.bars.times_ns):
        plot_price(out / "price.png", data)
        plot_equity(out / "equity.png", data)
        plot_sessions(out / "sessions.png", data)
    else:
        charts = {}
    document = {
        **{key: _json_value(value) for key, value in clean.items()},
        "warnings": {"notes": warnings, "metrics": data.metric_warnings},
        "entries_funnel": {key: float(value) for key, value in data.entries_funnel.items()},
        "halted_bars": {rule: count for rule, count, _ in _halt_rows(np.asarray(data.halts))},
        "evaluation_accounts": [asdict(record) if hasattr(record, "__dataclass_fields__") else dict(vars(record)) for record in data.evaluations],
        "trade_list": [_trade_record(item) for item in data.trades],
        "session_pnl": _session_pnl_records(data),
        "statistics_basis": STATISTICS_BASIS,
    }
    (out / "metrics.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    (out / "report.md").write_text(_markdown(data, clean, warnings, charts))
    (out / "report.html").write_text(_html(out, data, clean, warnings, charts))
    return clean


def _markdown(data: ReportInput, metrics: dict[str, float], warnings: list[str], charts: dict[str, str]) -> str:
    lines = [f"# {data.title}", ""]
    if data.context:
        lines += [data.context, ""]
    if warnings:
        lines += ["## Warnings", "", *(f"- ⚠ {line}" for line in warnings), ""]
    lines += ["## Metrics", "", format_metrics_table(metrics, data.metric_warnings), "", STATISTICS_BASIS, ""]
    lines += _participation_markdown(metrics)
    for name, caption in charts.items():
        lines += [f"![{caption}]({name})", ""]
    lines += ["## Evaluation accounts", "", _evaluation_summary(metrics), ""]
    if data.evaluations:
        lines += ["| " + " | ".join(_EVALUATION_HEADER) + " |", "|" + " --- |" * len(_EVALUATION_HEADER)]
        lines += ["| " + " | ".join(row) + " |" for row in _evaluation_rows(data.evaluations)]
        lines.append("")
    if data.entries_funnel:
        lines += ["## Where entries went", "", entries_sentence(data.entries_funnel), "", "| stage | decisions | share of proposals |", "| --- | ---: | ---: |"]
        lines += [f"| {stage} | {value} | {share} |" for stage, value, share in _funnel_rows(data.entries_funnel)]
        lines.append("")
    halts = _halt_rows(np.asarray(data.halts))
    lines += ["## Halted bars", ""]
    lines += (["| rule | bars | share of bars |", "| --- | ---: | ---: |", *(f"| {rule} | {count:,} | {share} |" for rule, count, share in halts)]
              if halts else ["No entry-veto rule halted trading."])
    lines += ["", f"## Trades (last {min(len(data.trades), MARKDOWN_TRADES)} of {len(data.trades)})", "", *_markdown_trades(data.trades), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------- html

_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1280px; color: #1d2330; padding: 0 16px; }
h1 { margin-bottom: 4px; } h2 { border-bottom: 1px solid #dde2ea; padding-bottom: 4px; margin-top: 32px; }
.context { color: #5b6475; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #dde2ea; padding: 4px 8px; vertical-align: top; }
th { background: #f3f5f9; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:nth-child(even) td { background: #fafbfd; }
.warn { background: #fff4e5; border-left: 4px solid #f0a020; padding: 8px 12px; margin: 6px 0; }
.w { color: #b35c00; font-size: 12px; }
.win { color: #137333; } .loss { color: #b3261e; }
.passed { color: #137333; font-weight: 600; } .failed { color: #b3261e; font-weight: 600; } .open { color: #5b6475; }
.decision { font-size: 12px; line-height: 1.35; min-width: 260px; } .decision .reason { color: #38404f; font-style: italic; }
.muted { color: #8a93a3; } img { max-width: 100%; border: 1px solid #eef0f4; margin: 8px 0; }
.basis { color: #5b6475; font-size: 13px; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """Cells are HTML already (escaped by the caller)."""
    head = "".join(f"<th>{_e(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{cell}</td>" if index in numeric else f"<td>{cell}</td>" for index, cell in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_HTML_DECISION = _DecisionStyle(
    escape=_e,
    missing="<div class=\"decision muted\">no decision recorded</div>",
    head="<b>step {step}</b> · RL {action} ({confidence:.2f})",
    no_thought="<span class=\"muted\">no thought</span>",
    thought=("thought {action} ({confidence:.2f}, {staleness} steps old) <span class=\"muted\">{query_id}</span>",
             "<span class=\"reason\">“{reason}”</span>"),
    fusion="fusion {method}/{rule} · trust RL {rl_trust:.2f} / LLM {llm_trust:.2f} → {action}",
    veto="<span class=\"loss\">veto: {reason}</span>",
    join=lambda lines: "<div class=\"decision\">" + "<br>".join(lines) + "</div>",
)


def _html_decision(decision: TradeDecision | None) -> str:
    return _render_decision(decision, _HTML_DECISION)


def _html_trades(trades: Sequence[ReportTrade]) -> str:
    if not trades:
        return "<p>No closed trades.</p>"
    rows = []
    for item in list(trades)[-HTML_TRADES:]:
        trade = item.trade
        outcome = "win" if trade.pnl_usd > 0 else "loss"
        rows.append([
            _e(trade.trade_id), _e(item.env_id), "long" if trade.side > 0 else "short", _e(et_text(trade.entry_ns)), f"{trade.entry_price:,.2f}",
            _e(et_text(trade.exit_ns)), f"{trade.exit_price:,.2f}", f"<span class=\"{outcome}\">{trade.pnl_usd:,.2f}</span>",
            _e(trade.bars_held), _e(trade.exit_reason), _html_decision(item.entry), _html_decision(item.exit),
        ])
    header = ["trade", "env", "side", "entry (ET)", "entry", "exit (ET)", "exit", "P&L ($)", "bars", "exit reason", "entry decision", "exit decision"]
    note = f"<p class=\"muted\">the last {HTML_TRADES} of {len(trades)} trades</p>" if len(trades) > HTML_TRADES else ""
    return note + _html_table(header, rows, numeric=(0, 1, 4, 6, 7, 8))


def _inline_png(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _html(out: Path, data: ReportInput, metrics: dict[str, float], warnings: list[str], charts: dict[str, str]) -> str:
    parts = [f"<h1>{_e(data.title)}</h1>"]
    if data.context:
        parts.append(f"<p class=\"context\">{_e(data.context)}</p>")
    if warnings:
        parts.append("<h2>Warnings</h2>" + "".join(f"<div class=\"warn\">⚠ {_e(line)}</div>" for line in warnings))
    metric_rows = [[_e(label), _e(value), _e(interval), f"<span class=\"w\">⚠ {_e(warning)}</span>" if warning else ""]
                   for label, value, interval, warning in _metric_rows(metrics, data.metric_warnings)]
    parts.append("<h2>Metrics</h2>" + _html_table(["metric", "value", "95% interval", "warning"], metric_rows, numeric=(1, 2)))
    parts.append(f"<p class=\"basis\">{_e(STATISTICS_BASIS)}</p>")
    participation = participation_rows(metrics)
    if participation:
        parts.append("<h2>LLM participation</h2>" + _html_table(["measure", "value"], [[_e(label), _e(value)] for label, value in participation], numeric=(1,)))
    if charts:
        parts.append("<h2>Charts</h2>" + "".join(f"<figure><img alt=\"{_e(caption)}\" src=\"{_inline_png(out / name)}\"></figure>" for name, caption in charts.items()))
    evaluation_rows = [[*map(_e, row[:3]), f"<span class=\"{_e(row[3])}\">{_e(row[3])}</span>", *map(_e, row[4:])] for row in _evaluation_rows(data.evaluations)]
    parts.append("<h2>Evaluation accounts</h2>" + f"<p>{_e(_evaluation_summary(metrics))}</p>"
                 + (_html_table(_EVALUATION_HEADER, evaluation_rows, numeric=(0, 5, 6)) if evaluation_rows else ""))
    if data.entries_funnel:
        funnel_rows = [[_e(stage), _e(value), _e(share)] for stage, value, share in _funnel_rows(data.entries_funnel)]
        parts.append("<h2>Where entries went</h2>" + f"<p>{_e(entries_sentence(data.entries_funnel))}</p>"
                     + _html_table(["stage", "decisions", "share of proposals"], funnel_rows, numeric=(1, 2)))
    halts = _halt_rows(np.asarray(data.halts))
    parts.append("<h2>Halted bars</h2>" + (_html_table(["rule", "bars", "share of bars"], [[_e(r), f"{c:,}", _e(s)] for r, c, s in halts], numeric=(1, 2))
                                           if halts else "<p>No entry-veto rule halted trading.</p>"))
    parts.append(f"<h2>Trades ({len(data.trades)})</h2>" + _html_trades(data.trades))
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(data.title)}</title>"
            f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n")


# ---------------------------------------------------------------------- short form


def _plot_bar_equity(path: Path, equity_curve: Sequence[float], title: str) -> None:
    plt = _pyplot()
    equity = np.asarray(equity_curve, dtype=np.float64)
    drawdown = np.maximum.accumulate(equity) - equity if len(equity) else equity
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": (3, 1)})
    top.plot(equity, color="tab:blue", linewidth=1.0)
    top.set_ylabel("equity ($)")
    top.set_title(title)
    top.grid(alpha=0.3)
    bottom.fill_between(np.arange(len(drawdown)), -drawdown, 0.0, color="tab:red", alpha=0.5, linewidth=0)
    bottom.set_ylabel("drawdown ($)")
    bottom.set_xlabel("bar")
    bottom.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _trade_rows(trades: Sequence, limit: int = 20) -> list[str]:
    if not trades:
        return ["No closed trades."]
    rows = ["| trade | side | entry | exit | P&L ($) | bars | exit reason |", "| ---: | :---: | ---: | ---: | ---: | ---: | --- |"]
    for trade in list(trades)[-limit:]:
        side = "long" if trade.side > 0 else "short"
        rows.append(f"| {trade.trade_id} | {side} | {trade.entry_price:,.2f} | {trade.exit_price:,.2f} | {trade.pnl_usd:,.2f} | {trade.bars_held} | {trade.exit_reason} |")
    return rows


def write_report(out_dir: str | Path, equity_curve: Sequence[float], trades: Sequence, metrics: dict[str, float], title: str = "Backtest", notes: str = "") -> dict[str, float]:
    """The short form: metrics.json, report.md and equity.png (against bar numbers) into ``out_dir``; returns the metrics.

    Sharpe/Sortino here are whatever the caller computed (training episodes: per-bar, actors/env/metrics.py)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = {key: float(value) for key, value in metrics.items()}
    (out / "metrics.json").write_text(json.dumps(clean, indent=2, sort_keys=True) + "\n")
    _plot_bar_equity(out / "equity.png", equity_curve, title)
    lines = [f"# {title}", ""]
    if notes:
        lines += [notes, ""]
    lines += ["## Metrics", "", format_metrics_table(clean), "", *_participation_markdown(clean), "![equity curve and drawdown](equity.png)", ""]
    lines += [f"## Last trades (of {len(trades)})", "", *_trade_rows(trades), ""]
    (out / "report.md").write_text("\n".join(lines))
    return clean
