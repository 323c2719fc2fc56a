"""The tape line (actors/common/llm/tape.py) of every bar of one data set, for the env's market context.

Every env.obs carries each env's context, and its tape was the largest part of the env's step (about 30 µs an env:
a Python loop over 60 bars). The tape reads only the data set's bars, never the account, so its numbers are computed
here for all bars at once with numpy (a few ms for a year of minutes), and a bar's line is formatted on first use and
kept. The same float64 operations in the same order as ``market_tape``, rounded half to even as Python's ``round``,
formatted by the same ``tape_line``: the text is identical (tests/actors/env/test_tape_table.py compares every bar).
A bar whose numbers are not all finite, or with no usable ATR, is left to ``market_tape`` itself.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from actors.common.llm.tape import MAX_BUCKET, SHORT_BARS, STEP_BARS, TAPE_BARS, TAPE_STEPS, market_tape, tape_line


class TapeTable:
    """Tape lines of one data set's bars (``line(t)`` is ``market_tape`` of bar ``t``)."""

    def __init__(self, high: np.ndarray, low: np.ndarray, close: np.ndarray, atr: np.ndarray, tick_size: float,
                 vwap_distance_pct: np.ndarray, minutes_to_flat: np.ndarray) -> None:
        self._high, self._low, self._close = (np.asarray(a, dtype=np.float64) for a in (high, low, close))
        self._atr = np.asarray(atr, dtype=np.float64)
        self._vwap = np.asarray(vwap_distance_pct, dtype=np.float64)
        self._minutes = np.asarray(minutes_to_flat, dtype=np.float64)
        self._tick_size = float(tick_size)
        n = len(self._close)
        self._lines: list[str | None] = [None] * n
        self._numbers: tuple[list, ...] | None = None
        self._first = TAPE_BARS
        """Bars before it have no table row (``market_tape`` returns "" there)."""
        if n > TAPE_BARS and self._tick_size > 0:
            self._numbers = self._compute()

    @classmethod
    def of(cls, data, tick_size: float) -> TapeTable:
        """The table of a Dataset (actors/env/dataset.py)."""
        features = data.features
        return cls(data.high, data.low, data.close, features.atr, tick_size, features.vwap_distance_pct, data.schedule.minutes_to_flat)

    def _compute(self) -> tuple[list, ...]:
        c, atr = self._close, self._atr
        t = np.arange(TAPE_BARS, len(c))
        a = atr[t]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # Block b (TAPE_STEPS .. 1, oldest first) is the close's move from t - b*STEP_BARS to t - (b-1)*STEP_BARS.
            moves = np.stack([(c[t - (b - 1) * STEP_BARS] - c[t - b * STEP_BARS]) / a for b in range(TAPE_STEPS, 0, -1)], axis=1)
            close = c[t]
            high = sliding_window_view(self._high, TAPE_BARS).max(axis=1)[t - TAPE_BARS + 1]
            low = sliding_window_view(self._low, TAPE_BARS).min(axis=1)[t - TAPE_BARS + 1]
            position = np.where(high <= low, 50.0, np.rint(100 * (close - low) / (high - low)))
            short = (close - c[t - SHORT_BARS]) / a
            long = (close - c[t - TAPE_BARS]) / a
            vwap = self._vwap[t] / 100.0 * close / a
            ticks = np.rint(a / self._tick_size)
            minutes = np.maximum(np.rint(self._minutes[t]), 0.0)
            finite = (np.isfinite(moves).all(axis=1) & np.isfinite(position) & np.isfinite(short) & np.isfinite(long)
                      & np.isfinite(vwap) & np.isfinite(ticks) & np.isfinite(minutes) & (a > 0))
            buckets = np.clip(np.rint(np.where(finite[:, None], moves, 0.0)), -MAX_BUCKET, MAX_BUCKET).astype(np.int64)
        as_int = lambda x: np.where(finite, x, 0.0).astype(np.int64).tolist()  # noqa: E731 - rows left to market_tape are never read
        return (finite.tolist(), buckets.tolist(), short.tolist(), long.tolist(), as_int(position), as_int(ticks), vwap.tolist(), as_int(minutes))

    def line(self, t: int) -> str:
        """The tape of bar ``t`` (its text computed once)."""
        text = self._lines[t]
        if text is None:
            text = self._lines[t] = self._format(t)
        return text

    def _format(self, t: int) -> str:
        numbers = self._numbers
        row = t - self._first
        if numbers is None or row < 0 or not numbers[0][row]:
            return market_tape(self._high, self._low, self._close, t, float(self._atr[t]), self._tick_size, float(self._vwap[t]),
                               float(self._minutes[t]))
        _, moves, short, long, position, ticks, vwap, minutes = numbers
        return tape_line(moves[row], short[row], long[row], position[row], ticks[row], vwap[row], minutes[row])
