"""Honest backtest statistics: daily (session) returns, per-trade figures, exposure, bootstrap intervals.

Plain numpy/pandas, no bus or runtime: the env actor hands in the run's per-bar arrays and trades.

Conventions (the report states them):
- A session is a US/Eastern trading day that starts at 18:00 ET (the Globex reopen): a bar starting at or
  after 18:00 belongs to the next date's session (actors/env/account.py ``trading_days``).
- Daily return = the session's P&L / equity at the end of the previous session (the first session: the
  first bar's equity). Sessions without any bar (weekends, holidays) do not exist; flat sessions count as 0.
- Sharpe = mean(daily) / std(daily, ddof=1) x sqrt(252). Sortino = mean(daily) / downside deviation x
  sqrt(252), downside deviation = sqrt(mean(min(daily, 0)^2)) over all sessions. 0 without spread; NaN
  (shown ``n/a`` with its reason in ``Statistics.warnings``) for fewer than two sessions, where it is undefined.
- Bootstrap: sessions are resampled with replacement (seeded); each resample gives net P&L (sum of session
  P&L), Sharpe, and win rate (of the trades that closed in the drawn sessions); the interval is the
  2.5th..97.5th percentile of the resamples. Over one session every resample is that session: the
  intervals are undefined (NaN, ``n/a``), not the zero-width [x, x].
- A trade-based figure from fewer than MIN_TRADES trades, or a session-based one from fewer than
  MIN_SESSIONS sessions, carries a warning (``Statistics.warnings``): it is noise, not evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from actors.common.statistics import TRADING_DAYS_PER_YEAR, bootstrap_interval, profit_factor, sharpe_ratio, sortino_ratio
from actors.env.account import trading_days

SESSION_START_MINUTE_ET = 18 * 60
"""18:00 US/Eastern, the Globex reopen: the start of a session."""
MIN_TRADES = 30
"""Below this many closed trades every trade-based figure carries a warning."""
MIN_SESSIONS = 20
"""Below this many sessions Sharpe, Sortino and their intervals carry a warning."""

TRADE_FIGURES = (
    "win_rate", "profit_factor", "avg_trade_usd", "median_trade_usd", "avg_win_usd", "avg_loss_usd",
    "expectancy_usd", "avg_bars_held", "win_rate_ci_low", "win_rate_ci_high",
)
SESSION_FIGURES = ("sharpe", "sortino", "sharpe_ci_low", "sharpe_ci_high", "net_pnl_usd_ci_low", "net_pnl_usd_ci_high")


@dataclass(frozen=True)
class SessionReturns:
    """One row per session, in time order."""

    session: np.ndarray
    """int64 [S]: the session's day number (days since 1970-01-01 of its ET date)."""
    pnl_usd: np.ndarray
    """float64 [S]: equity change over the session."""
    returns: np.ndarray
    """float64 [S]: pnl_usd / equity at the end of the previous session."""

    def dates(self) -> pd.DatetimeIndex:
        return pd.to_datetime(self.session, unit="D")


@dataclass(frozen=True)
class Statistics:
    metrics: dict[str, float]
    warnings: dict[str, str] = field(default_factory=dict)
    """metric name -> why it should not be trusted (few trades / sessions)."""
    sessions: SessionReturns | None = None


def session_of(times_ns: np.ndarray) -> np.ndarray:
    """int64 [T]: the session (ET trading day starting 18:00) of each bar start time (UTC ns)."""
    times = np.asarray(times_ns, dtype=np.int64)
    if not len(times):
        return np.zeros(0, dtype=np.int64)
    return trading_days(pd.DatetimeIndex(pd.to_datetime(times, unit="ns", utc=True)), SESSION_START_MINUTE_ET)


def session_returns(times_ns: np.ndarray, equity: np.ndarray) -> SessionReturns:
    """Daily P&L and returns from a per-bar equity series (equity at each bar's close)."""
    equity = np.asarray(equity, dtype=np.float64)
    sessions = session_of(times_ns)
    if len(equity) == 0:
        empty = np.zeros(0)
        return SessionReturns(np.zeros(0, dtype=np.int64), empty, empty)
    # The last bar of each session closes it; the session opens at the previous session's close.
    last = np.flatnonzero(np.append(sessions[1:] != sessions[:-1], True))
    close_equity = equity[last]
    open_equity = np.concatenate(([equity[0]], close_equity[:-1]))
    pnl = close_equity - open_equity
    returns = np.divide(pnl, open_equity, out=np.zeros_like(pnl), where=open_equity > 0)
    return SessionReturns(sessions[last], pnl, returns)


UNDEFINED_ONE_SESSION = "n/a: one session has no spread (Sharpe, Sortino and bootstrap intervals need at least two)"
UNDEFINED_INTERVAL_ONE_SESSION = "interval n/a: a bootstrap over one session has no spread"


def drawdown(equity: np.ndarray) -> dict[str, float]:
    """Largest fall from the running peak, in $ and (separately) in % of that peak."""
    equity = np.asarray(equity, dtype=np.float64)
    if not len(equity):
        return {"max_drawdown_usd": 0.0, "max_drawdown_pct": 0.0}
    peak = np.maximum.accumulate(equity)
    falls = peak - equity
    share = np.divide(falls, peak, out=np.zeros_like(falls), where=peak > 0)
    return {"max_drawdown_usd": float(falls.max()), "max_drawdown_pct": float(share.max() * 100.0)}


def exposure(position: np.ndarray) -> float:
    """Share of bars spent in a position."""
    position = np.asarray(position)
    return float(np.mean(position != 0)) if len(position) else 0.0


def trade_figures(trades: Sequence) -> dict[str, float]:
    """Per-trade figures from closed trades (objects with pnl_usd and bars_held)."""
    pnls = np.array([trade.pnl_usd for trade in trades], dtype=np.float64)
    if not len(pnls):
        return {"trades": 0.0, **{key: 0.0 for key in TRADE_FIGURES[:8]}}
    wins, losses = pnls[pnls > 0], pnls[pnls < 0]
    gross_profit, gross_loss = float(wins.sum()), float(-losses.sum())
    win_rate = len(wins) / len(pnls)
    avg_win = float(wins.mean()) if len(wins) else 0.0
    avg_loss = float(losses.mean()) if len(losses) else 0.0
    return {
        "trades": float(len(pnls)),
        "win_rate": float(win_rate),
        "profit_factor": profit_factor(gross_profit, gross_loss),
        "avg_trade_usd": float(pnls.mean()),
        "median_trade_usd": float(np.median(pnls)),
        "avg_win_usd": avg_win,
        "avg_loss_usd": avg_loss,
        # What one more trade is worth on these odds (break-even trades count as neither win nor loss).
        "expectancy_usd": float(win_rate * avg_win + (len(losses) / len(pnls)) * avg_loss),
        "avg_bars_held": float(np.mean([trade.bars_held for trade in trades])),
    }


def session_intervals(sessions: SessionReturns, trades: Sequence, seed: int = 0) -> dict[str, float]:
    """Bootstrap intervals over sessions for net P&L, Sharpe and win rate (one resampling, shared)."""
    if len(sessions.session) == 0:
        return {}
    n_sessions = len(sessions.session)
    if n_sessions < 2:  # every resample is the one session: no interval
        names = ("net_pnl_usd", "sharpe", *(("win_rate",) if len(trades) else ()))
        return {f"{name}_ci_{end}": float("nan") for name in names for end in ("low", "high")}
    # Per session: P&L, return, wins and trades closed in it; resampling rows keeps them together.
    trade_sessions = session_of(np.array([trade.exit_ns for trade in trades], dtype=np.int64))
    slot = np.searchsorted(sessions.session, trade_sessions).clip(0, n_sessions - 1)
    wins = np.bincount(slot, weights=[trade.pnl_usd > 0 for trade in trades], minlength=n_sessions) if len(trades) else np.zeros(n_sessions)
    counts = np.bincount(slot, minlength=n_sessions).astype(np.float64) if len(trades) else np.zeros(n_sessions)
    table = np.column_stack((sessions.pnl_usd, sessions.returns, wins, counts))
    intervals: dict[str, float] = {}
    figures: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "net_pnl_usd": lambda draws: draws[:, :, 0].sum(axis=1),
        "sharpe": lambda draws: sharpe_ratio(draws[:, :, 1], TRADING_DAYS_PER_YEAR, axis=1),
    }
    if len(trades):
        figures["win_rate"] = lambda draws: draws[:, :, 2].sum(axis=1) / np.maximum(draws[:, :, 3].sum(axis=1), 1.0)
    for name, statistic in figures.items():
        low, high = bootstrap_interval(table, statistic, seed=seed)
        intervals[f"{name}_ci_low"], intervals[f"{name}_ci_high"] = low, high
    return intervals


def few_data_warnings(n_trades: int, n_sessions: int) -> dict[str, str]:
    """A warning for each figure that rests on fewer than MIN_TRADES trades or MIN_SESSIONS sessions."""
    warnings: dict[str, str] = {}
    if n_trades < MIN_TRADES:
        text = f"only {n_trades} trade(s) (< {MIN_TRADES}): not evidence"
        warnings.update({key: text for key in TRADE_FIGURES})
    if n_sessions < MIN_SESSIONS:
        text = f"only {n_sessions} session(s) (< {MIN_SESSIONS}): not evidence"
        warnings.update({key: text for key in SESSION_FIGURES})
    return warnings


def compute_statistics(times_ns: np.ndarray, equity: np.ndarray, position: np.ndarray, trades: Sequence, seed: int = 0) -> Statistics:
    """Every figure of the report's statistics from the run's per-bar arrays (aligned) and closed trades."""
    equity = np.asarray(equity, dtype=np.float64)
    sessions = session_returns(times_ns, equity)
    start = float(equity[0]) if len(equity) else 0.0
    net = float(equity[-1] - start) if len(equity) else 0.0
    metrics = {
        "net_pnl_usd": net,
        "return_pct": net / start * 100.0 if start > 0 else 0.0,
        **drawdown(equity),
        "sharpe": sharpe_ratio(sessions.returns, TRADING_DAYS_PER_YEAR),
        "sortino": sortino_ratio(sessions.returns, TRADING_DAYS_PER_YEAR),
        "sessions": float(len(sessions.session)),
        "exposure": exposure(position),
        **trade_figures(trades),
        **session_intervals(sessions, trades, seed),
    }
    warnings = few_data_warnings(len(trades), len(sessions.session))
    if len(sessions.session) < 2:
        warnings.update({key: UNDEFINED_ONE_SESSION for key in ("sharpe", "sortino")})
        for key in ("net_pnl_usd", "win_rate"):  # defined figures whose interval is not
            if f"{key}_ci_low" in metrics:
                warnings[key] = "; ".join(filter(None, (warnings.get(key, ""), UNDEFINED_INTERVAL_ONE_SESSION)))
    return Statistics(metrics=metrics, warnings=warnings, sessions=sessions)
