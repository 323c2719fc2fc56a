"""Every figure a run reports, named once: its key, its label, its unit and how a line writes it.

Actors count figures under these keys (sys.progress, sys.done summaries, metrics.json); the report, the
progress lines and the jobs' summaries read the words from here, so ``query_rate`` reads the same wherever
it is shown. A key not listed here is shown as it is spelled (``label_of``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Figure:
    name: str
    """The key actors count it under."""
    label: str
    """The full label, unit included, as the report's metrics table and the summaries show it."""
    unit: str = ""
    """$, %, steps, bars, s, ms, µs, steps/s; '' for counts, shares and ratios."""
    short: str = ""
    """A compact label for progress lines and narrow columns; the label when empty."""
    fmt: str = ".3g"
    """Format spec of the value in a progress line."""

    @property
    def brief(self) -> str:
        return self.short or self.label

    def text(self, value: float) -> str:
        return format(value, self.fmt)


_FIGURES = (
    # the trades and the account
    Figure("net_pnl_usd", "Net P&L ($)", "$", "net P&L $"),
    Figure("return_pct", "Return (%)", "%"),
    Figure("sharpe", "Sharpe (annualised)", short="Sharpe"),
    Figure("sortino", "Sortino (annualised)", short="Sortino"),
    Figure("max_drawdown_usd", "Max drawdown ($)", "$", "max DD $"),
    Figure("max_drawdown_pct", "Max drawdown (%)", "%"),
    Figure("sessions", "Sessions"),
    Figure("bars", "Bars", "bars"),
    Figure("exposure", "Exposure (share of bars in a position)"),
    Figure("trades", "Trades", short="trades"),
    Figure("win_rate", "Win rate", short="win rate"),
    Figure("profit_factor", "Profit factor", short="profit factor"),
    Figure("avg_trade_usd", "Average trade ($)", "$"),
    Figure("median_trade_usd", "Median trade ($)", "$"),
    Figure("avg_win_usd", "Average win ($)", "$"),
    Figure("avg_loss_usd", "Average loss ($)", "$"),
    Figure("expectancy_usd", "Expectancy per trade ($)", "$"),
    Figure("avg_bars_held", "Average bars held", "bars"),
    Figure("evaluations", "Evaluation accounts"),
    Figure("passed", "Evaluations passed"),
    Figure("failed", "Evaluations failed"),
    Figure("open", "Evaluations open"),
    Figure("pass_rate", "Pass rate (of decided)"),
    Figure("mean_days_to_pass", "Trading days to pass (mean)"),
    Figure("apex_violations", "Apex violations", short="Apex violations"),
    Figure("forced_flat_exits", "Forced-flat exits"),
    # who decided
    Figure("agreement_rate", "RL/LLM agreement rate", short="agreement"),
    Figure("veto_rate", "Risk veto rate", short="veto rate"),
    Figure("query_rate", "LLM query rate", short="query rate"),
    Figure("llm_confidence", "LLM confidence (mean)", short="LLM confidence"),
    Figure("rl_trust", "Fusion RL trust (mean)", short="RL trust"),
    Figure("llm_trust", "Fusion LLM trust (mean)", short="LLM trust"),
    # the LLM's pace against the loop's (actors/env/pacing.py)
    Figure("lag_query_rate", "Decisions with a thought at most K steps old", short="lag query rate"),
    Figure("llm_staleness_min_steps", "Thought staleness, min (steps)", "steps", "staleness min"),
    Figure("llm_staleness_steps", "Thought staleness, mean (steps)", "steps", "LLM staleness (steps)"),
    Figure("llm_staleness_max_steps", "Thought staleness, max (steps)", "steps", "staleness max"),
    Figure("thought_lag_steps", "Bounded thought lag K (steps; 0 = free-running)", "steps", "K"),
    Figure("thought_waits", "Steps that waited for thoughts", short="thought waits"),
    Figure("late_steps", "Late steps (thought wait deadline passed)", short="late steps"),
    Figure("thought_wait_secs", "Time the loop waited for thoughts (s)", "s", "thought wait s"),
    Figure("thought_wait_share", "Share of wall time waiting for thoughts", short="wait share"),
    # the loop
    Figure("decision_latency_p50_us", "Decision latency obs -> verdict, p50 (µs)", "µs", "p50 µs"),
    Figure("decision_latency_p99_us", "Decision latency obs -> verdict, p99 (µs)", "µs", "p99 µs"),
    Figure("loop_steps", "Loop steps", "steps"),
    Figure("steps_per_sec", "Loop steps per second", "steps/s", "steps/s"),
    Figure("verdict_timeouts", "Steps with no verdict in time (held)"),
    Figure("illegal_actions", "Illegal actions (replaced by HOLD)"),
    # learning
    Figure("episodes", "Episodes", short="episodes"),
    Figure("mean_episode_return", "Mean episode return (reward units)", short="mean return"),
    Figure("num_timesteps", "Policy timesteps", "steps", "timesteps"),
    Figure("updates", "PPO updates", short="updates"),
    Figure("approx_kl", "PPO approximate KL", short="approx KL"),
    Figure("clip_fraction", "PPO clip fraction", short="clip fraction"),
    Figure("explained_variance", "Explained variance (value function)", short="explained var"),
    Figure("entropy_loss", "Entropy loss", short="entropy loss"),
    Figure("thoughts", "Thoughts", short="thoughts"),
)

FIGURES: dict[str, Figure] = {figure.name: figure for figure in _FIGURES}
"""key -> Figure, in the order the report shows them."""


def label_of(name: str) -> str:
    """The full label of a figure; an unlisted key as it is spelled."""
    figure = FIGURES.get(name)
    return figure.label if figure else name


def brief_of(name: str) -> str:
    """The compact label of a figure; an unlisted key as it is spelled."""
    figure = FIGURES.get(name)
    return figure.brief if figure else name


def labelled(rows: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """(key, value) rows of a summary with each key replaced by its label."""
    return [(label_of(key), value) for key, value in rows]
