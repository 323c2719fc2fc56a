"""Seeded synthetic NQ-like 1-minute bars: the embedded default data.

Regular trading hours only (09:30-15:59 US/Eastern, 390 bars a session, weekends
skipped). Prices follow a random walk whose drift and volatility come from regimes that
switch every 30-300 bars (trend up, trend down, mean-reverting range, volatile), with a
U-shaped intraday volatility and volume curve and an overnight gap at each open. Same
seed, same bars.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

BARS_PER_SESSION = 390
SESSION_OPEN_ET = "09:30"
REGIMES = ("trend_up", "trend_down", "range", "volatile")

_PER_MINUTE_SIGMA = 0.0005  # ~1% daily move for NQ over 390 bars
_OVERNIGHT_SIGMA = 0.004
_TREND_DRIFT_SIGMAS = 0.12  # drift per bar as a share of sigma in a trend regime
_RANGE_PULL = 0.02  # share of the distance to the range anchor recovered per bar
_VOLATILE_SIGMA_FACTOR = 2.2
_BASE_VOLUME = 900.0


def session_timestamps(days: int, start_date: str) -> pd.DatetimeIndex:
    """UTC bar start times of ``days`` RTH sessions from ``start_date`` (business days)."""
    dates = pd.bdate_range(start=start_date, periods=days)
    opens = (pd.DatetimeIndex(dates) + pd.Timedelta(SESSION_OPEN_ET + ":00")).tz_localize("America/New_York")
    open_ns = opens.tz_convert("UTC").as_unit("ns").asi8.astype(np.int64)
    minute_ns = np.arange(BARS_PER_SESSION, dtype=np.int64) * 60_000_000_000
    stamps = (open_ns[:, None] + minute_ns[None, :]).ravel()
    return pd.DatetimeIndex(pd.to_datetime(stamps, unit="ns", utc=True), name="timestamp")


def _regime_per_bar(n_bars: int, rng: np.random.Generator) -> np.ndarray:
    regime = np.empty(n_bars, dtype=np.int8)
    position = 0
    while position < n_bars:
        length = int(rng.integers(30, 300))
        regime[position : position + length] = rng.choice(len(REGIMES), p=(0.25, 0.25, 0.35, 0.15))
        position += length
    return regime


def _intraday_curve(minute: np.ndarray, open_boost: float, close_boost: float) -> np.ndarray:
    return 1.0 + open_boost * np.exp(-minute / 30.0) + close_boost * np.exp(-(BARS_PER_SESSION - 1 - minute) / 30.0)


def _close_path(regime: np.ndarray, sigma: np.ndarray, shocks: np.ndarray, gaps: np.ndarray, start_price: float) -> np.ndarray:
    """Log-price path; a loop because the range regime pulls towards an anchor (a recursion)."""
    n_bars = len(regime)
    log_price = np.empty(n_bars)
    level = float(np.log(start_price))
    anchor = level
    previous_regime = -1
    range_id = REGIMES.index("range")
    for t in range(n_bars):
        current = int(regime[t])
        if current != previous_regime:
            anchor = level
            previous_regime = current
        step_sigma = float(sigma[t])
        if current == 0:
            drift = _TREND_DRIFT_SIGMAS * step_sigma
        elif current == 1:
            drift = -_TREND_DRIFT_SIGMAS * step_sigma
        elif current == range_id:
            drift = -_RANGE_PULL * (level - anchor)
        else:
            drift = 0.0
        level += float(gaps[t]) + drift + step_sigma * float(shocks[t])
        log_price[t] = level
    return log_price


def generate_bars(days: int = 60, seed: int = 0, start_price: float = 18_000.0, start_date: str = "2024-01-02", tick_size: float = 0.25) -> pd.DataFrame:
    """``days`` sessions of 1-minute OHLCV bars, indexed by UTC bar start time."""
    if days < 1:
        raise ValueError(f"days must be >= 1, got {days}")
    rng = np.random.default_rng(seed)
    index = session_timestamps(days, start_date)
    n_bars = len(index)
    minute = np.tile(np.arange(BARS_PER_SESSION), days).astype(np.float64)
    session_start = minute == 0

    regime = _regime_per_bar(n_bars, rng)
    sigma = _PER_MINUTE_SIGMA * _intraday_curve(minute, 1.2, 0.6)
    sigma = np.where(regime == REGIMES.index("volatile"), sigma * _VOLATILE_SIGMA_FACTOR, sigma)
    # Fat tails: a normal scaled by a random variance (Student-t like, variance kept near 1).
    shocks = rng.standard_normal(n_bars) * np.sqrt(rng.gamma(4.0, 0.25, n_bars))
    gaps = np.where(session_start, rng.normal(0.0, _OVERNIGHT_SIGMA, n_bars), 0.0)
    gaps[0] = 0.0
    close = np.exp(_close_path(regime, sigma, shocks, gaps, start_price))

    previous_close = np.concatenate(([start_price], close[:-1]))
    open_ = np.where(session_start, close / np.exp(sigma * shocks), previous_close * np.exp(rng.normal(0, 0.1, n_bars) * sigma))
    wick = np.abs(rng.standard_normal((2, n_bars))) * 0.6 * sigma * close
    high = np.maximum(open_, close) + wick[0]
    low = np.minimum(open_, close) - wick[1]

    def to_tick(values: np.ndarray) -> np.ndarray:
        return np.round(values / tick_size) * tick_size

    open_, close = to_tick(open_), to_tick(close)
    high = np.maximum(to_tick(high), np.maximum(open_, close))
    low = np.minimum(to_tick(low), np.minimum(open_, close))

    surprise = np.abs(shocks)
    volume = _BASE_VOLUME * _intraday_curve(minute, 2.5, 1.8) * rng.lognormal(0.0, 0.35, n_bars) * (1.0 + 0.3 * surprise)
    volume = np.where(regime == REGIMES.index("volatile"), volume * 1.6, volume)
    return pd.DataFrame(
        {"open": open_, "high": high, "low": low, "close": close, "volume": np.round(volume)},
        index=index,
    )
