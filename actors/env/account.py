"""Prop-firm account rules (presets in actors/common/market_settings.py): trailing drawdown, forced flat, daily loss limit.

Trailing drawdown (``account.trailing``): the threshold is ``peak - trailing_drawdown`` and only
ever rises; once it reaches ``drawdown_lock_balance`` (Apex: start + $100) it stops trailing.
- intraday: the peak is equity including unrealised profit, marked at every fill, every bar
  close and, while in a position, at the bar's favourable extreme (the high for a long, the
  low for a short): an excursion that gives back is enough to raise the threshold.
- end_of_day: the peak is the closing balance, taken at each trading-day reset
  (``trading_day_reset_et``); the threshold does not move during the day.
- none: no trailing; the threshold is 0 (an account that loses everything fails).
Equity touching the threshold at any time, intrabar included, is a breach: the env
liquidates there and the evaluation fails.

Daily loss limit: when the day's P&L including the open position reaches -limit, the
position is closed and entries pause until the next trading day; the account does not fail.

Forced flat: every position is closed at the close of the last bar that ends by the
flat time (16:59 US/Eastern), or of the last bar of a session that ends earlier (RTH
data closes at 16:00); no entries are allowed from the flat time until the next session.
The schedule reads the session calendar from bar timestamps (whether the next bar starts
after the deadline), never from prices, so it leaks nothing about the market.
``flat_time_et = "none"`` (24/7 markets) has no forced flat.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import pandas as pd

from actors.common.market_settings import AccountConfig

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
_NO_FLAT_MINUTES = 24 * 60.0
"""minutes_to_flat without a flat time: a full day ahead, always."""


def trading_days(index: pd.DatetimeIndex, reset_minute_of_day: int) -> np.ndarray:
    """int64 [T]: the trading day of each bar; a bar starting at or after the reset time (US/Eastern)
    belongs to the next day (Globex: the day starting at 18:00 is the next date's session)."""
    et_ns = index.tz_convert("America/New_York").tz_localize(None).as_unit("ns").asi8
    return (et_ns - reset_minute_of_day * _MINUTE_NS + _DAY_NS) // _DAY_NS


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


def flat_schedule(index: pd.DatetimeIndex, flat_minute_of_day: int | None) -> FlatSchedule:
    """``flat_minute_of_day`` None: no flat time (24/7 markets); entries allowed but on the last bar."""
    et_ns = index.tz_convert("America/New_York").tz_localize(None).as_unit("ns").asi8
    n_bars = len(et_ns)
    if flat_minute_of_day is None:
        return FlatSchedule(
            flat_at_close=np.zeros(n_bars, dtype=bool),
            entry_allowed=np.arange(n_bars) < n_bars - 1,
            minutes_to_flat=np.full(n_bars, _NO_FLAT_MINUTES),
        )
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
    """Balance, equity peak, trailing threshold, daily P&L and trade statistics of one evaluation."""

    __slots__ = (
        "config", "balance", "peak", "threshold", "breached", "consecutive_losses", "recent_wins", "recent_pnls", "daily_pnl",
        "session", "trades", "violations", "paused_today", "trading_days",
    )

    def __init__(self, config: AccountConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        start = self.config.start_balance
        self.balance = start
        self.peak = start
        self.threshold = start - self.config.trailing_drawdown if self.config.has_trailing_drawdown else 0.0
        self.breached = False
        self.consecutive_losses = 0
        self.recent_wins: deque[bool] = deque(maxlen=10)
        self.recent_pnls: deque[float] = deque(maxlen=10)
        """Net P&L of the last 10 closed trades (the win-rate halt asks whether they lost money in sum)."""
        self.daily_pnl = 0.0
        self.session = -1
        """The current trading day (see ``trading_days``)."""
        self.trades = 0
        self.violations = 0
        self.paused_today = False
        """The daily loss limit was reached: no entries until the next trading day."""
        self.trading_days = 0

    def new_bar(self, session: int) -> None:
        """A bar of trading day ``session``: a new day settles end-of-day trailing and resets the day."""
        if session == self.session:
            return
        if self.session >= 0 and self.config.trailing == "end_of_day":
            self._raise_peak(self.balance)  # the closing balance of the day that just ended
        self.session = session
        self.trading_days += 1
        self.daily_pnl = 0.0
        self.paused_today = False
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
        self.recent_pnls.append(float(net_pnl_usd))
        self.consecutive_losses = 0 if won else self.consecutive_losses + 1

    def mark(self, equity: float) -> None:
        """An intraday equity mark (a fill, a close, a favourable extreme): raises the peak under intraday trailing."""
        if self.config.trailing == "intraday":
            self._raise_peak(equity)

    def _raise_peak(self, value: float) -> None:
        if value <= self.peak or not self.config.has_trailing_drawdown:
            return
        self.peak = value
        threshold = value - self.config.trailing_drawdown
        lock = self.config.drawdown_lock_balance
        if lock > 0:
            threshold = min(threshold, max(lock, self.threshold))
        self.threshold = max(self.threshold, threshold)

    def breach(self) -> None:
        self.breached = True
        self.violations += 1

    def daily_loss_hit(self, unrealized_usd: float) -> bool:
        """True when the day's P&L including ``unrealized_usd`` reached the daily loss limit (pauses the day)."""
        limit = self.config.daily_loss_limit
        if limit > 0 and self.daily_pnl + unrealized_usd <= -limit:
            self.paused_today = True
        return self.paused_today

    @property
    def win_rate(self) -> float:
        return sum(self.recent_wins) / len(self.recent_wins) if self.recent_wins else 0.5

    @property
    def recent_net_pnl(self) -> float:
        """Net P&L of the last 10 closed trades, dollars (0 when none yet)."""
        return float(sum(self.recent_pnls))

    @property
    def daily_loss_reached(self) -> bool:
        return self.paused_today or self.daily_loss_hit(0.0)

    @property
    def target_reached(self) -> bool:
        target = self.config.profit_target
        return target > 0 and self.balance - self.config.start_balance >= target
