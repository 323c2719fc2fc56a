"""How the report reads: figure labels and values, intervals, decisions in a line, the rows of its tables.

Every writer (report.md, report.html, the short form) and the jobs' console tables take their words from here,
so a figure reads the same wherever it is shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from actors.common.figures import FIGURES
from actors.env.report.model import TradeDecision
from actors.env.statistics import MIN_SESSIONS, MIN_TRADES

if TYPE_CHECKING:
    from actors.env.account_walk import EvaluationRecord

ET = "America/New_York"
STATISTICS_BASIS = (
    "Sharpe and Sortino come from daily (session) returns, a session being the US/Eastern trading day that "
    "starts at 18:00 ET, annualised by sqrt(252); Sortino's downside deviation is sqrt(mean(min(r, 0)^2)). "
    "95% intervals: bootstrap over sessions (resampled with replacement, 2,000 draws, seeded). "
    f"Trade figures from fewer than {MIN_TRADES} trades and session figures from fewer than {MIN_SESSIONS} "
    "sessions carry a warning."
)


_PARTICIPATION_KEYS = ("thought_lag_steps", "query_rate", "lag_query_rate", "llm_staleness_min_steps", "llm_staleness_steps",
                       "llm_staleness_max_steps", "thought_waits", "late_steps", "thought_wait_secs", "thought_wait_share")
"""The LLM participation table (actors/env/pacing.py): how much the LLM took part in the decisions."""
_CI_SUFFIXES = ("_ci_low", "_ci_high")


def format_value(value: float | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float) and not math.isfinite(value):
        return "n/a" if math.isnan(value) else str(value)
    if float(value).is_integer() and abs(value) < 1e12:
        return f"{int(value):,}"
    return f"{value:,.4f}" if abs(value) < 10 else f"{value:,.2f}"


def _ordered_keys(metrics: dict[str, float]) -> list[str]:
    """The figures registry's order (actors/common/figures.py), then other metrics alphabetically; interval keys
    (<key>_ci_low/_high) are shown in their base figure's row."""
    shown = [key for key in metrics if not key.endswith(_CI_SUFFIXES) or key.removesuffix("_ci_low").removesuffix("_ci_high") not in metrics]
    return [key for key in FIGURES if key in shown] + sorted(key for key in shown if key not in FIGURES)


def _interval(metrics: dict[str, float], key: str) -> str:
    low, high = metrics.get(f"{key}_ci_low"), metrics.get(f"{key}_ci_high")
    if low is None or high is None:
        return ""
    if not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return "n/a"  # undefined (one session), never a zero-width interval
    return f"[{format_value(float(low))}, {format_value(float(high))}]"


def metric_label(key: str) -> str:
    if key in FIGURES:
        return FIGURES[key].label
    if key.startswith("halted_bars_"):
        return f"Bars halted by {key.removeprefix('halted_bars_')}"
    if key.startswith("entries_"):
        return f"Entries: {key.removeprefix('entries_').replace('_', ' ')}"
    return key


_THOUGHT_FIGURES = ("agreement_rate", "llm_confidence", "llm_trust", "lag_query_rate")
"""Figures of the thoughts that decisions used: with none used (an RL-only backtest) they are undefined, not 0."""


def shown_value(key: str, value: float, metrics: dict[str, float]) -> str:
    # A staleness of -1 (or a mean over no decision) means that no decision used a thought: no age to state.
    if key.startswith("llm_staleness") and (value < 0 or not metrics.get("query_rate", 1.0)):
        return "n/a (no thought used)"
    if key in _THOUGHT_FIGURES and not metrics.get("query_rate", 1.0):
        return "n/a (no thought used)"
    return format_value(value)


def metric_rows(metrics: dict[str, float], warnings: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(label, value, 95% interval, warning) per shown metric."""
    return [(metric_label(key), shown_value(key, float(metrics[key]), metrics), _interval(metrics, key), warnings.get(key, ""))
            for key in _ordered_keys(metrics)]


def format_metrics_table(metrics: dict[str, float], warnings: dict[str, str] | None = None) -> str:
    """A Markdown table of the metrics, known ones first in a fixed order; intervals and warnings beside them."""
    warnings = warnings or {}
    rows = metric_rows(metrics, warnings)
    if not any(interval or warning for _, _, interval, warning in rows):
        return "\n".join(["| metric | value |", "| --- | ---: |", *(f"| {label} | {value} |" for label, value, _, _ in rows)])
    lines = ["| metric | value | 95% interval | warning |", "| --- | ---: | ---: | --- |"]
    lines += [f"| {label} | {value} | {interval} | {'⚠ ' + warning if warning else ''} |" for label, value, interval, warning in rows]
    return "\n".join(lines)


def et_text(time_ns: int, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return pd.Timestamp(int(time_ns), unit="ns", tz="UTC").tz_convert(ET).strftime(fmt)


@dataclass(frozen=True)
class DecisionStyle:
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


def render_decision(decision: TradeDecision | None, style: DecisionStyle) -> str:
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


_TEXT_DECISION = DecisionStyle(
    escape=str,
    missing="no decision recorded",
    head="step {step}: RL {action} ({confidence:.2f})",
    no_thought="no thought",
    thought=("thought {action} ({confidence:.2f}, {staleness} steps old, {query_id}): {reason}",),
    fusion="fusion {method}/{rule} (trust RL {rl_trust:.2f}, LLM {llm_trust:.2f}) -> {action}",
    veto="veto: {reason}",
    join="; ".join,
)


def decision_text(decision: TradeDecision | None) -> str:
    """One line: RL, thought, fusion, veto."""
    return render_decision(decision, _TEXT_DECISION)


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


def evaluation_rows(evaluations: Sequence[EvaluationRecord]) -> list[list[str]]:
    return [[str(record.index), et_text(record.start_ns), et_text(record.end_ns), record.outcome, record.reason or "",
             str(record.trading_days), f"{record.net_pnl_usd:,.2f}"] for record in evaluations]


EVALUATION_HEADER = ["#", "start (ET)", "end (ET)", "outcome", "reason", "trading days", "net P&L ($)"]


def evaluation_summary(metrics: dict[str, float]) -> str:
    if "evaluations" not in metrics:
        return ""
    return (f"{format_value(metrics['evaluations'])} evaluation account(s): {format_value(metrics.get('passed', 0.0))} passed, "
            f"{format_value(metrics.get('failed', 0.0))} failed, {format_value(metrics.get('open', 0.0))} open; pass rate "
            f"{format_value(metrics.get('pass_rate'))}, trading days to pass {format_value(metrics.get('mean_days_to_pass'))}.")


def funnel_rows(funnel: dict[str, float]) -> list[tuple[str, str, str]]:
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
    return [(metric_label(key), shown_value(key, float(shown[key]), shown)) for key in _PARTICIPATION_KEYS if key in shown]


def participation_markdown(metrics: dict[str, float]) -> list[str]:
    rows = participation_rows(metrics)
    if not rows:
        return []
    return ["## LLM participation", "", "| measure | value |", "| --- | ---: |", *(f"| {label} | {value} |" for label, value in rows), ""]


def halt_rows(halts: np.ndarray) -> list[tuple[str, int, str]]:
    total = max(len(halts), 1)
    rules, counts = np.unique([str(rule) for rule in halts if rule], return_counts=True) if len(halts) else ([], [])
    return [(str(rule), int(count), f"{count / total:.1%}") for rule, count in zip(rules, counts)]
