"""The account walk: a prop-firm evaluation as it is played, open until it passes or fails (the walk-forward
evidence of a run is another thing: actors/jobs/evaluation/).

- passed: the balance reached ``start + profit_target`` while flat, with no breach before;
- failed: the trailing drawdown was touched (the env liquidated there);
- open: neither yet (a backtest that ends mid-evaluation leaves it open, reason ``data_end``).

A backtest walks consecutive evaluations through its period: after a pass or a fail a new
account starts at the next bar, as a trader would buy a reset, while the data goes on
(actors/env/batch.py). Plain state, no I/O: the env feeds it one bar at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OUTCOMES = ("passed", "failed", "open")


@dataclass(frozen=True)
class EvaluationRecord:
    index: int
    """0, 1, 2, ... in the order the evaluations started (per env)."""
    start_ns: int
    """Start time (UTC ns) of the first bar the account traded."""
    end_ns: int
    """Start time (UTC ns) of the bar on which it passed or failed (the last bar seen while open)."""
    outcome: str
    """passed | failed | open."""
    reason: str
    """profit_target | trailing_drawdown | data_end ('' while running)."""
    trading_days: int
    """Trading days (by the account's reset time) the evaluation had bars in."""
    net_pnl_usd: float
    """Balance at the end minus the start balance."""


class Evaluation:
    """The state machine of one evaluation account."""

    __slots__ = ("index", "start_ns", "end_ns", "start_balance", "profit_target_usd", "outcome", "reason", "balance", "_days")

    def __init__(self, index: int, start_ns: int, start_balance: float, profit_target_usd: float) -> None:
        self.index = index
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.start_balance = start_balance
        self.profit_target_usd = profit_target_usd
        """0 = no target: the evaluation can only fail or stay open."""
        self.outcome = "open"
        self.reason = ""
        self.balance = start_balance
        self._days: set[int] = set()

    @property
    def over(self) -> bool:
        return self.outcome != "open"

    def on_bar(self, time_ns: int, trading_day: int, balance: float, flat: bool, breached: bool) -> str:
        """One played bar; returns the outcome (unchanged once passed or failed)."""
        if self.over:
            return self.outcome
        self._days.add(trading_day)
        self.end_ns = time_ns
        self.balance = balance
        if breached:
            self.outcome, self.reason = "failed", "trailing_drawdown"
        elif self.profit_target_usd > 0 and flat and balance - self.start_balance >= self.profit_target_usd:
            self.outcome, self.reason = "passed", "profit_target"
        return self.outcome

    def end_of_data(self) -> None:
        """The data ended with the evaluation still running."""
        if not self.over:
            self.reason = "data_end"

    def record(self) -> EvaluationRecord:
        return EvaluationRecord(
            index=self.index, start_ns=self.start_ns, end_ns=self.end_ns, outcome=self.outcome, reason=self.reason,
            trading_days=len(self._days), net_pnl_usd=self.balance - self.start_balance,
        )


def evaluation_summary(records: list[EvaluationRecord]) -> dict[str, float]:
    """evaluations, passed, failed, open, pass_rate (of decided ones: passed / (passed + failed)),
    mean_days_to_pass (nan when none passed)."""
    passed = [record for record in records if record.outcome == "passed"]
    failed = sum(record.outcome == "failed" for record in records)
    decided = len(passed) + failed
    return {
        "evaluations": float(len(records)),
        "passed": float(len(passed)),
        "failed": float(failed),
        "open": float(len(records) - decided),
        "pass_rate": len(passed) / decided if decided else float("nan"),
        "mean_days_to_pass": float(np.mean([record.trading_days for record in passed])) if passed else float("nan"),
    }
