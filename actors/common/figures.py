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
    """A figure: ``name`` the key actors count it under; ``label`` the full label, unit included, as the report's
    metrics table and the summaries show it; ``unit`` ($, %, steps, bars, s, µs, steps/s; '' for counts, shares and
    ratios); ``short`` a compact label for progress lines and narrow columns ('' = the label); ``fmt`` the format
    spec of its value in a progress line."""

    name: str
    label: str
    unit: str = ""
    short: str = ""
    fmt: str = ".3g"

    @property
    def brief(self) -> str:
        return self.short or self.label

    def text(self, value: float) -> str:
        return format(value, self.fmt)


# key | label | unit | compact label; in the order the report shows them. '#' lines head the groups.
_TABLE = """
# the trades and the account
net_pnl_usd             | Net P&L ($)                                     | $       | net P&L $
return_pct              | Return (%)                                      | %       |
sharpe                  | Sharpe (annualised)                             |         | Sharpe
sortino                 | Sortino (annualised)                            |         | Sortino
max_drawdown_usd        | Max drawdown ($)                                | $       | max DD $
max_drawdown_pct        | Max drawdown (%)                                | %       |
sessions                | Sessions                                        |         |
bars                    | Bars                                            | bars    |
exposure                | Exposure (share of bars in a position)          |         |
trades                  | Trades                                          |         | trades
win_rate                | Win rate                                        |         | win rate
profit_factor           | Profit factor                                   |         | profit factor
avg_trade_usd           | Average trade ($)                               | $       |
median_trade_usd        | Median trade ($)                                | $       |
avg_win_usd             | Average win ($)                                 | $       |
avg_loss_usd            | Average loss ($)                                | $       |
expectancy_usd          | Expectancy per trade ($)                        | $       |
avg_bars_held           | Average bars held                               | bars    |
evaluations             | Evaluation accounts                             |         |
passed                  | Evaluations passed                              |         |
failed                  | Evaluations failed                              |         |
open                    | Evaluations open                                |         |
pass_rate               | Pass rate (of decided)                          |         |
mean_days_to_pass       | Trading days to pass (mean)                     |         |
apex_violations         | Apex violations                                 |         | Apex violations
forced_flat_exits       | Forced-flat exits                               |         |
# who decided
agreement_rate          | RL/LLM agreement rate                           |         | agreement
veto_rate               | Risk veto rate                                  |         | veto rate
query_rate              | LLM query rate                                  |         | query rate
llm_confidence          | LLM confidence (mean)                           |         | LLM confidence
rl_trust                | Fusion RL trust (mean)                          |         | RL trust
llm_trust               | Fusion LLM trust (mean)                         |         | LLM trust
# the LLM's pace against the loop's (actors/env/pacing.py)
lag_query_rate          | Decisions with a thought at most K steps old    |         | lag query rate
llm_staleness_min_steps | Thought staleness, min (steps)                  | steps   | staleness min
llm_staleness_steps     | Thought staleness, mean (steps)                 | steps   | LLM staleness (steps)
llm_staleness_max_steps | Thought staleness, max (steps)                  | steps   | staleness max
thought_lag_steps       | Bounded thought lag K (steps; 0 = free-running) | steps   | K
thought_waits           | Steps that waited for thoughts                  |         | thought waits
late_steps              | Late steps (thought wait deadline passed)       |         | late steps
thought_wait_secs       | Time the loop waited for thoughts (s)           | s       | thought wait s
thought_wait_share      | Share of wall time waiting for thoughts         |         | wait share
# the loop
decision_latency_p50_us | Decision latency obs -> verdict, p50 (µs)       | µs      | p50 µs
decision_latency_p99_us | Decision latency obs -> verdict, p99 (µs)       | µs      | p99 µs
loop_steps              | Loop steps                                      | steps   |
steps_per_sec           | Loop steps per second                           | steps/s | steps/s
verdict_timeouts        | Steps with no verdict in time (held)            |         |
illegal_actions         | Illegal actions (replaced by HOLD)              |         |
# learning
episodes                | Episodes                                        |         | episodes
mean_episode_return     | Mean episode return (reward units)              |         | mean return
num_timesteps           | Policy timesteps                                | steps   | timesteps
updates                 | PPO updates                                     |         | updates
approx_kl               | PPO approximate KL                              |         | approx KL
clip_fraction           | PPO clip fraction                               |         | clip fraction
explained_variance      | Explained variance (value function)             |         | explained var
entropy_loss            | Entropy loss                                    |         | entropy loss
thoughts                | Thoughts                                        |         | thoughts
"""


def _parse(table: str) -> dict[str, Figure]:
    rows = (line.split("|") for line in table.strip().splitlines() if not line.startswith("#"))
    figures = (Figure(*(cell.strip() for cell in row)) for row in rows)
    return {figure.name: figure for figure in figures}


FIGURES: dict[str, Figure] = _parse(_TABLE)
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
