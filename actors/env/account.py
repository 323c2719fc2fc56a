"""Apex prop-firm account rules: trailing drawdown from the equity peak, forced flat, limits.

Trailing drawdown: the threshold is ``peak equity - trailing_drawdown`` and only ever
rises; once it reaches ``drawdown_lock_balance`` (Apex: start + $100) it stops trailing.
The peak is taken from mark-to-market equity at every bar close and every fill (not
from intrabar highs). Equity touching the threshold at any time, intrabar included, is
a breach: the env liquidates there and ends the episode.

Forced flat: every position is closed at the close of the last bar that ends by the
flat time (16:59 US/Eastern), or of the last bar of a session that ends earlier (RTH
data closes at 16:00); no entries are allowed from the flat time until the next session.
The schedule reads the session calendar from bar timestamps (whether the next bar starts
after the deadline), never from prices, so it leaks nothing about the market.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import pandas as pd

from actors.env.config import AccountConfig

# Apex evaluation accounts (start balance, trailing drawdown, max contracts) for account.* keys.
APEX_ACCOUNTS: dict[str, tuple[float, float, int]] = {
    "apex_25k": (25_000.0, 1_500.0, 4),
    "apex_50k": (50_000.0, 2_500.0, 10),
    "apex_75k": (75_000.0, 2_750.0, 12),
    "apex_100k": (100_000.0, 3_000.0, 14),
    "apex_150k": (150_000.0, 5_000.0, 17),
    "apex_250k": (250_000.0, 6_500.0, 27),
    "apex_300k": (300_000.0, 7_500.0, 35),
}

_GLOBEX_REOPEN_MINUTE = 18 * 60
_DAY_NS = 86_400_000_000_000
_MINUTE_NS = 60_000_000_000


def apex_account(name: str, flat_time_et: str = "16:59") -> AccountConfig:
    """An AccountConfig for one of APEX_ACCOUNTS (e.g. ``apex_100k``)."""
    start, drawdown, contracts = APEX_ACCOUNTS[name]
    return AccountConfig(
        name=name, start_balance=start, trailing_drawdown=drawdown, drawdown_lock_balance=start + 100.0,
        max_contracts=contracts, flat_time_et=flat_time_et,
    )


@dataclass(frozen=True)
class FlatSchedule:
    """Per-bar session facts derived from the flat time."""

    flat_at_close: np.ndarray
    """bool [T]: a position must be closed at this bar's close."""
    entry_allowed: np.ndarray
    """bool [T]: an entry decided at this bar (filled at the next bar's open) is allowed."""
    minutes_to_flat: np.ndarray
    """float64 [T]: minutes from this bar's close to the next flat time."""


def flat_schedule(index: pd.DatetimeIndex, flat_minute_of_day: int) -> FlatSchedule:
    et_ns = index.tz_convert("America/New_York").tz_localize(None).as_unit("ns").asi8
    n_bars = len(et_ns)
    steps = np.diff(et_ns)
    bar_ns = int(np.median(steps)) if n_bars > 1 else _MINUTE_NS
    minute = (et_ns // _MINUTE_NS) % 1440
    day_start = et_ns - et_ns % _DAY_NS
    deadline = day_start + flat_minute_of_day * _MINUTE_NS + np.where(minute >= flat_minute_of_day, _DAY_NS, 0)
    bar_close = et_ns + bar_ns
    next_start = np.concatenate((et_ns[1:], [np.iinfo(np.int64).max]))
    flat_at_close = (bar_close >= deadline) | (next_start >= deadline)
    flat_at_close[-1] = False  # the data simply ends; the episode end closes positions
    in_flat_window = (minute >= flat_minute_of_day) & (minute < max(_GLOBEX_REOPEN_MINUTE, flat_minute_of_day + 1))
    fill_bar_blocked = np.concatenate((flat_at_close[1:] | in_flat_window[1:], [True]))
    return FlatSchedule(
        flat_at_close=flat_at_close,
        entry_allowed=~fill_bar_blocked,
        minutes_to_flat=(deadline - bar_close) / _MINUTE_NS,
    )


class ApexAccount:
    """Balance, equity peak, trailing threshold and trade statistics of one episode."""

    __slots__ = ("config", "balance", "peak", "threshold", "breached", "consecutive_losses", "recent_wins", "daily_pnl", "session", "trades", "violations")

    def __init__(self, config: AccountConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        start = self.config.start_balance
        self.balance = start
        self.peak = start
        self.threshold = start - self.config.trailing_drawdown
        self.breached = False
        self.consecutive_losses = 0
        self.recent_wins: deque[bool] = deque(maxlen=10)
        self.daily_pnl = 0.0
        self.session = -1
        self.trades = 0
        self.violations = 0

    def new_bar(self, session: int) -> None:
        if session != self.session:
            self.session = session
            self.daily_pnl = 0.0
            if self.config.losing_streak_resets_daily:
                self.consecutive_losses = 0

    def pay(self, dollars: float) -> None:
        """Commission and other costs that are not a closed trade's P&L."""
        self.balance -= dollars
        self.daily_pnl -= dollars

    def close_trade(self, pnl_usd: float) -> None:
        """Book a closed trade's P&L (net of its exit commission; entry commission was paid at entry)."""
        self.balance += pnl_usd
        self.daily_pnl += pnl_usd

    def record_result(self, net_pnl_usd: float) -> None:
        """Trade statistics from a trade's full net P&L (both commissions included)."""
        self.trades += 1
        won = net_pnl_usd > 0
        self.recent_wins.append(won)
        self.consecutive_losses = 0 if won else self.consecutive_losses + 1

    def mark(self, equity: float) -> None:
        """Raise the peak (and the threshold with it) from a mark-to-market equity."""
        if equity > self.peak:
            self.peak = equity
            threshold = equity - self.config.trailing_drawdown
            lock = self.config.drawdown_lock_balance
            if lock > 0:
                threshold = min(threshold, max(lock, self.threshold))
            self.threshold = max(self.threshold, threshold)

    def breach(self) -> None:
        self.breached = True
        self.violations += 1

    @property
    def win_rate(self) -> float:
        return sum(self.recent_wins) / len(self.recent_wins) if self.recent_wins else 0.5

    @property
    def daily_loss_reached(self) -> bool:
        limit = self.config.daily_loss_limit
        return limit > 0 and self.daily_pnl <= -limit
