"""Does a bars file fit the env's rules? Warnings a user sees before any trading starts.

The env is built for intraday 1-minute futures bars under a prop-firm account's session
rules. Data that runs without error can still be meaningless under those rules: daily
bars (every bar is past the flat time, so nothing ever trades), prices that move less
than a tick per bar (every move rounds away), or a 24/7 market where a share of the bars
falls in the window the account preset keeps flat. Each check returns a plain sentence
that names the file and the setting to change; nothing here stops a run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

_MINUTE_NS = 60_000_000_000
_ET = "America/New_York"
_GLOBEX_REOPEN_MINUTE = 18 * 60

EXPECTED_BAR_SECS = 60.0
"""The bar interval the features (20/60-minute momentum, time-of-day) and the session rules assume."""
MIN_TICKS_PER_BAR = 1.0
"""Below this median |close - previous close| in ticks, stops, targets and P&L round to nothing."""
MAX_FLAT_WINDOW_SHARE = 0.02
"""Above this share of bars inside the no-entry window the preset's session rules do not fit the market."""


@dataclass(frozen=True)
class FitReport:
    bar_secs: float
    """Median interval between consecutive bars, seconds."""
    ticks_per_bar: float
    """Median |close change| per bar in ticks of the configured instrument."""
    flat_window_share: float
    """Share of bars that fall between the flat time and the next session open (18:00 ET)."""
    warnings: tuple[str, ...]


def median_bar_secs(index: pd.DatetimeIndex) -> float:
    steps = np.diff(index.as_unit("ns").asi8)  # the index's own unit may be us or s (pandas >= 2)
    steps = steps[steps > 0]
    return float(np.median(steps)) / 1e9 if steps.size else 0.0


def median_ticks_per_bar(close: np.ndarray, tick_size: float) -> float:
    moves = np.abs(np.diff(np.asarray(close, dtype=np.float64)))
    return float(np.median(moves)) / tick_size if moves.size and tick_size > 0 else 0.0


def flat_window_share(index: pd.DatetimeIndex, flat_minute_of_day: int | None) -> float:
    """Share of bars stamped in [flat time, 18:00 ET): no entries are allowed there. None = no flat time."""
    if flat_minute_of_day is None or not len(index):
        return 0.0
    local = index.tz_convert(_ET)
    minute = local.hour * 60 + local.minute
    return float(np.mean((minute >= flat_minute_of_day) & (minute < _GLOBEX_REOPEN_MINUTE)))


def _describe_interval(secs: float) -> str:
    if secs >= 86_400 * 0.9:
        return f"{secs / 86_400:.0f}-day"
    if secs >= 3_600:
        return f"{secs / 3_600:.0f}-hour"
    if secs >= 60:
        return f"{secs / 60:.0f}-minute"
    return f"{secs:.0f}-second"


def check_fit(
    frame: pd.DataFrame,
    *,
    source: str,
    symbol: str,
    tick_size: float,
    flat_minute_of_day: int | None,
) -> FitReport:
    """Warnings for bars (a DatetimeIndex'ed OHLCV frame) that do not fit the env's rules.

    ``source`` names the file in the messages; ``flat_minute_of_day`` is the account
    preset's flat time in minutes after midnight ET (None when the preset has none)."""
    index = pd.DatetimeIndex(frame.index)
    bar_secs = median_bar_secs(index)
    ticks = median_ticks_per_bar(frame["close"].to_numpy(), tick_size)
    flat_share = flat_window_share(index, flat_minute_of_day)
    warnings: list[str] = []
    if bar_secs > 1.5 * EXPECTED_BAR_SECS:
        warnings.append(
            f"{source}: bars are {_describe_interval(bar_secs)} bars (median interval {bar_secs:.0f} s) but the env's "
            "features and the account's intraday session rules assume 1-minute bars; expect few or no trades. "
            "Use 1-minute bars (resample finer data) for this account preset."
        )
    if ticks < MIN_TICKS_PER_BAR:
        warnings.append(
            f"{source}: prices move {ticks:.3g} ticks per bar (median) for instrument {symbol} (tick {tick_size:g}); "
            "stops, targets and P&L round to nothing. Set instrument.symbol to the market of this file, "
            "or instrument.tick_size and instrument.multiplier for a custom one."
        )
    if flat_share > MAX_FLAT_WINDOW_SHARE:
        warnings.append(
            f"{source}: {flat_share:.0%} of bars fall between the flat time and the 18:00 ET reopen, where the account "
            "preset allows no entries (a 24/7 market?). Use account.preset = \"none\" for markets without "
            "prop-firm session rules, or change account.flat_time_et."
        )
    return FitReport(bar_secs=bar_secs, ticks_per_bar=ticks, flat_window_share=flat_share, warnings=tuple(warnings))
