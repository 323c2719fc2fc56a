"""The session inputs of the observation: what a trader reads off the day so far, batch and one bar at a time.

Ten columns of the 28 extended per-bar features (their names and places: ``SESSION_FEATURES`` in
actors/common/observation.py, which replaced ten columns that repeated others, layout ``OBSERVATION_LAYOUT``):

- ``return_since_open``: log(close / the session's first close) x 100 (percent).
- ``gap_return``: log(the session's first close / the prior session's last close) x 100, the whole session
  (0 on the first session of the data, which has no prior close).
- ``first_30m_return``: log(the close of the session's 10:00 ET bar (the bar starting 09:59) / the prior close)
  x 100 from that bar on, 0 before it is known: the signal of Gao, Han, Li and Zhou's intraday momentum.
- ``minutes_to_close``: minutes from the bar's end to 16:00 ET (the cash close), in sessions of 390 minutes.
- ``minutes_to_break``: minutes from the bar's end to 17:00 ET (CME's daily halt), in sessions of 390 minutes.
  On regular-hours bars both are straight lines in the time of day; they are given as a trader states them.
- ``realized_vol_15`` / ``realized_vol_60``: the root mean square of the last 15 (60) one-bar log returns of the
  session, over the session's own so far, minus 1 (0 = as volatile as the day so far). A session's first bar has
  return 0 (the gap is ``gap_return``'s), so the day's volatility is the session's alone.
- ``session_high_distance`` / ``session_low_distance``: (session high so far - close) and (close - session low so
  far) in ATRs / 10.
- ``minutes_to_release``: minutes from the bar's end to the next scheduled release (events of kind ``release``:
  the news market's calendar, actors/common/news_market.py), in sessions of 390 minutes, capped at 1 (a session
  or more away, or no calendar: 1).

All causal: a value at bar t reads bars <= t, and the release calendar, which is published ahead. A "session" is
the trading date of actors/env/features.py (``_session_ids``: a Globex session rolls at 18:00 ET), so on
round-the-clock files "the open" is the session's first bar; the synthetic markets are regular hours only.

``session_columns`` computes the columns for all bars (features.py's order of rows: sessions grouped); ``SessionState``
does the same arithmetic one bar at a time for actors/env/feature_stream.py, bit for bit (the logarithms go through
numpy as in the batch version; sums are running sums in time order, as ``np.cumsum`` adds).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from actors.common.observation import SESSION_FEATURES

CLOSE_MINUTE, BREAK_MINUTE = 16 * 60, 17 * 60
"""16:00 ET (the cash close) and 17:00 ET (CME's daily halt), as minutes of the day."""
FIRST_30M_MINUTE = 9 * 60 + 59
"""The start minute of the bar whose close ends the first half hour (09:59 ET, closing at 10:00)."""
SESSION_MINUTES = 390.0
"""The unit of the minutes columns: one regular-hours session."""
VOL_WINDOWS = (15, 60)
_ROLL_MINUTES = 6 * 60  # minutes are compared from the 18:00 ET session roll, so an evening bar comes before 09:59
_MINUTE_NS = 60_000_000_000
_RELEASE_CAP_NS = int(SESSION_MINUTES) * _MINUTE_NS

assert len(SESSION_FEATURES) == 10


def _session_minute(minute):
    """Minutes since the 18:00 ET roll (int or int array): the order of a Globex session's bars."""
    return (minute + _ROLL_MINUTES) % 1440


def minutes_to(minute, target: int):
    """Minutes from the end of the bar starting at ``minute`` to ``target`` (ET), in sessions (int or int array)."""
    return ((target - minute - 1) % 1440) / SESSION_MINUTES


def release_times_ns(events) -> np.ndarray:
    """Sorted UTC ns of the scheduled releases among ``events`` (MarketEvents; headlines are not scheduled)."""
    return np.array(sorted(event.time_ns for event in events if event.kind == "release"), dtype=np.int64)


def _release_wait(bar_end_ns: np.ndarray, releases: np.ndarray) -> np.ndarray:
    if len(releases) == 0:
        return np.ones(len(bar_end_ns))
    index = np.searchsorted(releases, bar_end_ns, side="left")
    ahead = index < len(releases)
    wait = np.where(ahead, releases[np.minimum(index, len(releases) - 1)] - bar_end_ns, _RELEASE_CAP_NS)
    return np.minimum(wait, _RELEASE_CAP_NS).astype(np.float64) / _MINUTE_NS / SESSION_MINUTES


@dataclass(frozen=True)
class Sessions:
    """Per-session running values (pandas ``groupby(session)``: cumsum, first, cumcount).

    Rows are grouped with a stable sort, so each session keeps its time order and the
    result does not depend on sessions being contiguous (the loader sorts, but a frame
    handed in directly might not be).
    """

    order: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def of(cls, session: np.ndarray) -> Sessions:
        order = np.argsort(session, kind="stable")
        grouped = session[order]
        changes = np.ones(len(grouped), dtype=bool)
        changes[1:] = grouped[1:] != grouped[:-1]
        starts = np.flatnonzero(changes)
        return cls(order, starts, np.diff(np.append(starts, len(session))))

    def _ungroup(self, grouped: np.ndarray) -> np.ndarray:
        values = np.empty_like(grouped)
        values[self.order] = grouped
        return values

    def cumsum(self, values: np.ndarray) -> np.ndarray:
        grouped = values[self.order]
        for start, length in zip(self.starts.tolist(), self.lengths.tolist()):
            np.cumsum(grouped[start : start + length], out=grouped[start : start + length])
        return self._ungroup(grouped)

    def first(self, values: np.ndarray) -> np.ndarray:
        """Each session's first value (pandas' "first" would skip NaN; prices are never NaN after loading)."""
        return self._ungroup(np.repeat(values[self.order][self.starts], self.lengths))

    def position(self) -> np.ndarray:
        """1 for a session's first bar, 2 for its second, ..."""
        return self._ungroup(np.arange(1, len(self.order) + 1) - np.repeat(self.starts, self.lengths))


def session_columns(close: np.ndarray, high: np.ndarray, low: np.ndarray, atr_safe: np.ndarray, minute: np.ndarray,
                    start_ns: np.ndarray, sessions: Sessions, releases: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The ten columns for every bar, unclipped (NaN where undefined; features.py's ``_finish`` clips and zeroes)."""
    order, starts, lengths = sessions.order, sessions.starts, sessions.lengths
    closes = close[order]
    first = np.repeat(closes[starts], lengths)
    prior_each = np.full(len(starts), np.nan)
    prior_each[1:] = closes[starts[1:] - 1]  # the previous session's last close (sessions grouped in id order)
    prior = np.repeat(prior_each, lengths)
    log_ratio = np.log(np.stack([closes / first, first / prior, closes / prior]))
    one_bar = np.zeros(len(closes))
    one_bar[1:] = np.log(closes[1:] / closes[:-1])
    one_bar[starts] = 0.0
    squared = one_bar * one_bar
    grouped_minute = _session_minute(minute[order])
    first30 = np.full(len(closes), np.nan)
    cumulative, high_so_far, low_so_far = squared.copy(), high[order].copy(), low[order].copy()
    for start, length in zip(starts.tolist(), lengths.tolist()):
        rows = slice(start, start + length)
        np.cumsum(squared[rows], out=cumulative[rows])
        np.maximum.accumulate(high_so_far[rows], out=high_so_far[rows])
        np.minimum.accumulate(low_so_far[rows], out=low_so_far[rows])
        known = np.flatnonzero(grouped_minute[rows] >= _session_minute(FIRST_30M_MINUTE))
        if len(known):
            first30[start + known[0] : start + length] = log_ratio[2, start + known[0]] * 100.0
    first30[np.isnan(prior)] = np.nan
    position = np.arange(1, len(closes) + 1) - np.repeat(starts, lengths)
    vols = []
    for window in VOL_WINDOWS:
        lagged = np.zeros(len(closes))
        lagged[window:] = cumulative[:-window]
        lagged[position <= window] = 0.0
        recent = np.sqrt((cumulative - lagged) / np.minimum(position, window))
        vols.append(recent / np.sqrt(cumulative / position) - 1.0)
    grouped = {
        "return_since_open": log_ratio[0] * 100.0, "gap_return": log_ratio[1] * 100.0, "first_30m_return": first30,
        "realized_vol_15": vols[0], "realized_vol_60": vols[1],
        "session_high_distance": (high_so_far - closes) / atr_safe[order] / 10.0,
        "session_low_distance": (closes - low_so_far) / atr_safe[order] / 10.0,
    }
    columns = {}
    for name, values in grouped.items():
        columns[name] = np.empty_like(values)
        columns[name][order] = values
    columns["minutes_to_close"] = minutes_to(minute, CLOSE_MINUTE)
    columns["minutes_to_break"] = minutes_to(minute, BREAK_MINUTE)
    empty = np.zeros(0, dtype=np.int64)
    columns["minutes_to_release"] = _release_wait(start_ns + _MINUTE_NS, empty if releases is None else releases)
    return {name: columns[name] for name in SESSION_FEATURES}


class SessionState:
    """``session_columns`` for the newest bar, from the session's running values (bars in time order)."""

    def __init__(self, releases: np.ndarray | None = None) -> None:
        self._releases = [] if releases is None else np.asarray(releases, dtype=np.int64).tolist()
        self._next_release = 0
        self._session = None
        self._last_close = self._prior = self._first = self._first30 = math.nan
        self._cumulative: deque[float] = deque(maxlen=max(VOL_WINDOWS) + 1)
        self._bars = 0
        self._high = self._low = math.nan

    def push(self, start_ns: int, minute: int, session: int, high: float, low: float, close: float,
             atr_safe: float) -> dict[str, float]:
        if session != self._session:
            self._session, self._prior, self._first, self._first30 = session, self._last_close, close, math.nan
            self._bars, self._high, self._low = 0, high, low
            self._cumulative.clear()
        previous = self._last_close if self._bars else close
        self._last_close = close
        self._bars += 1
        self._high, self._low = max(self._high, high), min(self._low, low)
        logs = np.log(np.array([close / self._first, _ratio(self._first, self._prior), _ratio(close, self._prior), close / previous]))
        one_bar = float(logs[3]) if self._bars > 1 else 0.0
        total = (self._cumulative[-1] if self._cumulative else 0.0) + one_bar * one_bar
        self._cumulative.append(total)
        if self._first30 != self._first30 and _session_minute(minute) >= _session_minute(FIRST_30M_MINUTE):
            self._first30 = float(logs[2]) * 100.0 if self._prior == self._prior else math.nan
        day = _div(total, self._bars)
        vols = []
        for window in VOL_WINDOWS:
            lagged = self._cumulative[-1 - window] if self._bars > window else 0.0
            vols.append(_div(math.sqrt(_div(total - lagged, min(self._bars, window))), math.sqrt(day) if day == day else day) - 1.0)
        values = {
            "return_since_open": float(logs[0]) * 100.0, "gap_return": float(logs[1]) * 100.0, "first_30m_return": self._first30,
            "minutes_to_close": minutes_to(minute, CLOSE_MINUTE), "minutes_to_break": minutes_to(minute, BREAK_MINUTE),
            "realized_vol_15": vols[0], "realized_vol_60": vols[1],
            "session_high_distance": _div(_div(self._high - close, atr_safe), 10.0),
            "session_low_distance": _div(_div(close - self._low, atr_safe), 10.0),
            "minutes_to_release": self._release_wait(start_ns + _MINUTE_NS),
        }
        return values

    def _release_wait(self, bar_end_ns: int) -> float:
        releases = self._releases
        if not releases:
            return 1.0
        while self._next_release < len(releases) and releases[self._next_release] < bar_end_ns:
            self._next_release += 1
        if self._next_release == len(releases):
            return float(_RELEASE_CAP_NS) / _MINUTE_NS / SESSION_MINUTES
        return float(min(releases[self._next_release] - bar_end_ns, _RELEASE_CAP_NS)) / _MINUTE_NS / SESSION_MINUTES


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator == denominator and denominator != 0.0 else math.nan


def _div(numerator: float, denominator: float) -> float:
    """numpy's float division on Python floats (x / 0 is ±inf, 0 / 0 and NaN are NaN)."""
    if denominator != denominator or numerator != numerator:
        return math.nan
    if denominator == 0.0:
        return math.nan if numerator == 0.0 else math.copysign(math.inf, numerator)
    return numerator / denominator
