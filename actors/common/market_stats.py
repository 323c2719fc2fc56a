"""The statistics that compare a market's 1-minute bars with real NQ (actors/common/README.md).

``market_statistics(frame)`` reads regular-hours bars (09:30-15:59 US/Eastern) of any
source (a file, the synthetic generator) and returns the figures of the calibration table:
1-minute log-return sigma at midday, median bar range in the first 15 minutes and at
midday (points and % of price), median daily range (% of the open), kurtosis of 1-minute
returns, and the autocorrelation of |r| (lags 1, 5) and of r (lag 1). Returns that cross
a session boundary (the overnight gap) are left out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

REAL_NQ = {
    "sigma_midday_pct": 0.025,
    "range_first15_points": 12.5,
    "range_midday_points": 5.1,
    "daily_range_pct": 1.04,
    "kurtosis": 163.0,
    "acf_abs_r_lag1": 0.13,
    "acf_abs_r_lag5": 0.16,
    "acf_r_lag1": 0.04,
}
"""Real NQ, 11 regular sessions 2023-11-20 .. 2023-12-04 (price ~16,000), as measured in issue 18."""

MIDDAY = (11 * 60 + 30, 13 * 60 + 30)
FIRST_15 = (9 * 60 + 30, 9 * 60 + 45)


def _autocorrelation(values: np.ndarray, lag: int) -> float:
    if len(values) <= lag + 1:
        return float("nan")
    return float(np.corrcoef(values[:-lag], values[lag:])[0, 1])


def market_statistics(frame: pd.DataFrame) -> dict[str, float]:
    """The calibration figures of ``frame`` (UTC-indexed OHLCV bars), regular hours only."""
    et = pd.DatetimeIndex(frame.index).tz_convert("America/New_York")
    minute = et.hour * 60 + et.minute
    rth = (minute >= 9 * 60 + 30) & (minute < 16 * 60)
    bars = frame.loc[rth]
    minute = np.asarray(minute[rth])
    day = np.asarray(et[rth].date)
    close = bars["close"].to_numpy(dtype=np.float64)
    log_return = np.diff(np.log(close))
    same_day = day[1:] == day[:-1]
    r = log_return[same_day]
    r_minute = minute[1:][same_day]
    bar_range = (bars["high"] - bars["low"]).to_numpy(dtype=np.float64)

    def between(values: np.ndarray, minutes: np.ndarray, window: tuple[int, int]) -> np.ndarray:
        return values[(minutes >= window[0]) & (minutes < window[1])]

    daily = bars.groupby(day).agg(high=("high", "max"), low=("low", "min"), open=("open", "first"))
    centred = r - r.mean()
    return {
        "sigma_midday_pct": float(between(r, r_minute, MIDDAY).std(ddof=1) * 100.0),
        "range_first15_points": float(np.median(between(bar_range, minute, FIRST_15))),
        "range_midday_points": float(np.median(between(bar_range, minute, MIDDAY))),
        "daily_range_pct": float(np.median((daily["high"] - daily["low"]) / daily["open"]) * 100.0),
        "kurtosis": float(np.mean(centred**4) / np.mean(centred**2) ** 2),
        "acf_abs_r_lag1": _autocorrelation(np.abs(r), 1),
        "acf_abs_r_lag5": _autocorrelation(np.abs(r), 5),
        "acf_r_lag1": _autocorrelation(r, 1),
        "price": float(np.median(close)),
    }
