"""The 261 features one bar at a time: rolling state updated with each new bar, for paper and live trading.

``FeatureStream.push`` takes one closed bar and returns that bar's row of every ``FeatureSet`` field, the
same numbers, bit for bit, as ``compute_features`` (actors/env/features.py, the batch version and the
test oracle) gives for the last row of all the bars pushed so far. So a paper session sees what a
backtest over the same bars sees, at a cost that does not grow with the window (about 0.1 ms a bar on
2 busy cores, where the batch version over a 600-bar window took 12 ms: ``bin/bench feed``).

How it stays identical rather than close:

- EWMs (ATR, RSI, ADX, MACD) are the batch code's recursion, carried from bar to bar (``_Ewm``);
- rolling sums and means add the window in the batch code's order (``_tree_sum``: the binary
  decomposition of ``_trailing_reduce``), since float sums depend on their order; maxima and minima
  do not, so they are plain ``max`` / ``min`` over the window;
- transcendental functions (log, log1p, sin, cos) go through numpy, as in the batch code;
- the float32 rows are clipped and cast as ``_finish`` does.

Bars must come in time order (a live feed's; ``PaperSession`` drops older ones), so a trading session's
bars are contiguous and its running sums (VWAP) reset when the session id changes.

It is over 400 lines because it mirrors features.py indicator by indicator: one file keeps each rolling
version beside the others, in the batch version's order, so a reader can check them against it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import numpy as np

from actors.env.features import CLIP, N_BAR, PATTERNS, STATIC_FEATURES, _RTH_OPEN_MINUTE, _SESSION_ROLL_HOURS
from actors.env.regime_model import RegimeBelief, RegimeModel, trend_of
from actors.env.session_features import SessionState

_NAN = math.nan
_ET = ZoneInfo("America/New_York")
_MINUTE_NS = 60_000_000_000
_DAY_NS = 86_400_000_000_000
_MINUTES = np.arange(1440)
_MINUTE_ANGLE = 2 * np.pi * _MINUTES / 1440.0
# Per minute of day, computed on arrays as the batch code does (numpy's sin/cos may differ from libm's in the last bit).
_TIME_SIN, _TIME_COS = np.sin(_MINUTE_ANGLE).tolist(), np.cos(_MINUTE_ANGLE).tolist()
_SESSION_PROGRESS = np.clip((_MINUTES - _RTH_OPEN_MINUTE) / 390.0, -1.5, 1.5).tolist()
_SQRT10, _SQRT60 = float(np.sqrt(10)), float(np.sqrt(60))
_PATTERN_INDEX = {name: PATTERNS.index(name) for name in PATTERNS}


@dataclass(frozen=True)
class FeatureRow:
    """One bar's value of every ``FeatureSet`` field (actors/env/features.py documents them)."""

    bar: np.ndarray
    """float32 [11]."""
    static: np.ndarray
    """float32 [28]."""
    atr: float
    rsi: float
    adx: float
    momentum: float
    vwap_distance_pct: float
    support: float
    resistance: float
    volatility_regime: float
    trend_code: int
    volume_trend_code: int
    pattern_code: int
    session_id: int
    minute_et: int


# --------------------------------------------------------------------------- IEEE helpers (numpy's answers on Python floats)


def _isnan(value: float) -> bool:
    return value != value


def _div(numerator: float, denominator: float) -> float:
    """numpy's float division: x / 0 is ±inf, 0 / 0 and NaN / 0 are NaN (Python would raise)."""
    if denominator == 0.0:
        if numerator != numerator or numerator == 0.0:
            return _NAN
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
    return numerator / denominator


def _fmax(a: float, b: float) -> float:
    """np.fmax: the larger, NaN only when both are NaN."""
    if a != a:
        return b
    if b != b:
        return a
    return a if a >= b else b


def _positive_or_nan(value: float) -> float:
    return value if value > 0 else _NAN


def _fill(value: float, fill: float) -> float:
    return fill if value != value else value


# --------------------------------------------------------------------------- rolling state


class _Ewm:
    """``_ewm_mean`` (pandas ``ewm(adjust=False).mean()``) one value at a time: the batch recursion, carried."""

    __slots__ = ("new_weight", "decay", "needed", "weighted", "old_weight", "observations")

    def __init__(self, *, alpha: float | None = None, span: float | None = None, min_periods: int = 0) -> None:
        com = (1.0 - alpha) / alpha if span is None else (span - 1.0) / 2.0
        self.new_weight = 1.0 / (1.0 + com)
        self.decay = 1.0 - self.new_weight
        self.needed = max(min_periods, 1)
        self.weighted, self.old_weight, self.observations = _NAN, 1.0, 0

    def push(self, value: float) -> float:
        weighted = self.weighted
        if value == value:
            self.observations += 1
            if weighted != weighted:
                weighted = value
            else:
                old_weight = self.old_weight * self.decay
                if weighted != value:
                    weighted = (old_weight * weighted + self.new_weight * value) / (old_weight + self.new_weight)
                self.old_weight = 1.0
            self.weighted = weighted
        elif weighted == weighted:
            self.old_weight *= self.decay
        return weighted if self.observations >= self.needed else _NAN


class _TreeSum:
    """The sum ``_trailing_reduce`` gives for the newest row, kept up to date in O(log window) additions a value.

    The batch code adds a row's window as blocks, one per set bit of the window (smallest first, oldest
    values first), each block added pairwise: ``level[s][j]`` = ``level[s/2][j] + level[s/2][j + s/2]``.
    Here each level keeps its newest values, so a new value adds one entry per level, and the row's sum
    reads one entry per set bit. Rows before the first value are padding 0.0, as in the batch code.
    """

    __slots__ = ("sizes", "levels", "parts")

    def __init__(self, window: int) -> None:
        self.sizes = [1 << k for k in range(window.bit_length())]
        self.levels = [deque([0.0] * (window + 1), maxlen=window + 1) for _ in self.sizes]
        self.parts, covered = [], 0
        for k, size in enumerate(self.sizes):
            if window & size:  # the block of this bit starts ``covered`` values into the window
                self.parts.append((k, window - size - covered))
                covered += size

    def push(self, value: float) -> None:
        levels, sizes = self.levels, self.sizes
        levels[0].append(value)
        for k in range(1, len(levels)):  # the block of 2 * size values that ends with this one
            lower, size = levels[k - 1], sizes[k - 1]
            levels[k].append(lower[-1 - size] + lower[-1])

    def total(self) -> float:
        result = None
        for k, offset in self.parts:
            part = self.levels[k][-1 - offset]
            result = part if result is None else result + part
        return result


class _Rolling:
    """``_rolling(values, window, min_periods, statistic)`` for the newest row: the count of non-NaN values
    in the window, and their sum or mean in the batch order (``sums``) or their max and min."""

    __slots__ = ("window", "needed", "values", "present", "tree")

    def __init__(self, window: int, min_periods: int | None = None, *, sums: bool = False) -> None:
        self.window = window
        self.needed = max(window if min_periods is None else min_periods, 1)
        self.values: deque[float] = deque([_NAN] * window, maxlen=window)
        self.present = 0
        self.tree = _TreeSum(window) if sums else None

    def push(self, value: float) -> None:
        if self.values[0] == self.values[0]:
            self.present -= 1
        self.values.append(value)
        if value == value:
            self.present += 1
        if self.tree is not None:
            self.tree.push(value if value == value else 0.0)

    def sum(self) -> float:
        return self.tree.total() if self.present >= self.needed else _NAN

    def mean(self) -> float:
        return self.tree.total() / max(self.present, 1) if self.present >= self.needed else _NAN

    def max(self) -> float:
        if self.present < self.needed:
            return _NAN
        return max(self.values) if self.present == self.window else max(v for v in self.values if v == v)

    def min(self) -> float:
        if self.present < self.needed:
            return _NAN
        return min(self.values) if self.present == self.window else min(v for v in self.values if v == v)


class _Lag:
    """The value ``lag`` pushes ago (NaN before that many): ``_shift``."""

    __slots__ = ("values",)

    def __init__(self, lag: int) -> None:
        self.values: deque[float] = deque([_NAN] * (lag + 1), maxlen=lag + 1)

    def push(self, value: float) -> float:
        self.values.append(value)
        return self.values[0]


class _Rsi:
    """``rsi_from_changes`` one change at a time."""

    __slots__ = ("gain", "loss")

    def __init__(self, period: float, min_periods: int | None = None) -> None:
        needed = int(period) if min_periods is None else min_periods
        self.gain = _Ewm(alpha=1.0 / period, min_periods=needed)
        self.loss = _Ewm(alpha=1.0 / period, min_periods=needed)

    def push(self, change: float) -> float:
        if change != change:
            gain, loss = self.gain.push(_NAN), self.loss.push(_NAN)
        else:
            gain, loss = self.gain.push(change if change > 0.0 else 0.0), self.loss.push(-(change if change < 0.0 else 0.0))
        if gain != gain:
            return _NAN
        return _fill(_div(100.0 * gain, _positive_or_nan(gain + loss)), 50.0)


# --------------------------------------------------------------------------- the stream


def et_minute_and_session(start_ns: int) -> tuple[int, int]:
    """(minute of day in US/Eastern, trading session id) of a bar start, as ``compute_features`` derives them."""
    offset = datetime.fromtimestamp(start_ns // 1_000_000_000, tz=timezone.utc).astimezone(_ET).utcoffset()
    et_naive_ns = start_ns + (offset.days * 86_400 + offset.seconds) * 1_000_000_000
    return (et_naive_ns // _MINUTE_NS) % 1440, (et_naive_ns + _SESSION_ROLL_HOURS * 3_600_000_000_000) // _DAY_NS


class FeatureStream:
    """Every feature of ``compute_features`` for the newest bar, from state carried over the bars before it."""

    def __init__(self, regime_model: RegimeModel | None = None, releases: np.ndarray | None = None) -> None:
        """``regime_model``: the HMM the batch features were computed with (None: unfitted, belief 0); ``releases``:
        the scheduled releases' sorted UTC ns the batch features had (None: none)."""
        self.bars = 0
        self._prev_close = self._prev_high = self._prev_low = _NAN
        self._atr = _Ewm(alpha=1.0 / 14, min_periods=14)
        self._plus_dm = _Ewm(alpha=1.0 / 14, min_periods=14)
        self._minus_dm = _Ewm(alpha=1.0 / 14, min_periods=14)
        self._adx = _Ewm(alpha=1.0 / 14, min_periods=14)
        self._ema12, self._ema26 = _Ewm(span=12), _Ewm(span=26)
        self._rsi, self._rsi15, self._rsi60 = _Rsi(14), _Rsi(14 * 15, min_periods=30), _Rsi(14 * 60, min_periods=120)
        self._close = {n: _Rolling(n, sums=True) for n in (5, 20, 50)}
        self._volume = {n: _Rolling(n, sums=True) for n in (5, 20, 100)}
        self._atr_mean = _Rolling(100, 20, sums=True)
        self._lows60, self._highs60 = _Rolling(60, 20), _Rolling(60, 20)
        self._highs10, self._lows10 = _Rolling(10), _Rolling(10)
        self._highs15, self._lows15 = _Rolling(15), _Rolling(15)
        self._highs_before, self._lows_before = _Rolling(45), _Rolling(45)  # of highs / lows 15 bars back
        self._high_lag15, self._low_lag15 = _Lag(15), _Lag(15)
        self._close_lags = _Lag(60)  # the last 61 closes: lags 10, 15, 20, 60 read from it
        self._adx_lag, self._sma50_lag = _Lag(5), _Lag(5)
        self._recent_high_lag, self._recent_low_lag = _Lag(10), _Lag(10)
        self._support_before = self._resistance_before = _NAN
        self._session = None
        self._regime = RegimeBelief(regime_model or RegimeModel.uninformative())
        self._session_volume = self._session_pv = 0.0
        self._day = SessionState(releases)
        self._range_sum = 0.0
        self._lowest = self._highest = _NAN

    def push(self, start_ns: int, high: float, low: float, close: float, volume: float) -> FeatureRow:
        """The newest bar (UTC start in ns): its features, given every bar pushed before it."""
        self.bars += 1
        minute, session = et_minute_and_session(start_ns)
        prev_close, prev_high, prev_low = self._prev_close, self._prev_high, self._prev_low
        self._prev_close, self._prev_high, self._prev_low = close, high, low

        # Trend and oscillators.
        true_range = _fmax(_fmax(high - low, abs(high - prev_close)), abs(low - prev_close))
        atr = self._atr.push(true_range)
        atr_safe = _positive_or_nan(atr)
        for rolling in self._close.values():
            rolling.push(close)
        sma5, sma20, sma50 = (self._close[n].mean() for n in (5, 20, 50))
        change = close - prev_close
        rsi = self._rsi.push(change)
        macd = self._ema12.push(close) - self._ema26.push(close)
        self._close_lags.push(close)
        closes = self._close_lags.values  # closes[60] is this bar's, closes[60 - k] k bars back
        momentum = close - closes[50]
        for rolling in self._volume.values():
            rolling.push(volume)
        volume_mean5, volume_mean20, volume_mean100 = (self._volume[n].mean() for n in (5, 20, 100))

        # ADX (smoothed true range = ATR, as compute_features passes it).
        up, down = high - prev_high, -(low - prev_low)
        plus_dm = up if (up > down and up > 0) else 0.0
        minus_dm = down if (down > up and down > 0) else 0.0
        plus_di = _div(100.0 * self._plus_dm.push(plus_dm), atr)
        minus_di = _div(100.0 * self._minus_dm.push(minus_dm), atr)
        dx = _div(100.0 * abs(plus_di - minus_di), _positive_or_nan(plus_di + minus_di))
        adx14 = self._adx.push(_fill(dx, 0.0))

        # Session running values.
        new_session = session != self._session
        belief = self._regime.push(close, high - low, atr, new_session)
        if new_session:
            self._session, self._session_volume, self._session_pv = session, 0.0, 0.0
        self._session_volume += volume
        self._session_pv += (high + low + close) / 3.0 * volume
        vwap = _fill(_div(self._session_pv, _positive_or_nan(self._session_volume)), close)
        self._atr_mean.push(atr)
        volatility_regime = _div(atr, self._atr_mean.mean())

        # Levels and patterns.
        self._lows60.push(low)
        self._highs60.push(high)
        support, resistance = self._lows60.min(), self._highs60.max()
        for rolling, value in ((self._highs10, high), (self._lows10, low), (self._highs15, high), (self._lows15, low)):
            rolling.push(value)
        recent_high, recent_low = self._highs10.max(), self._lows10.min()
        earlier_high, earlier_low = self._recent_high_lag.push(recent_high), self._recent_low_lag.push(recent_low)
        peak_recent, trough_recent = self._highs15.max(), self._lows15.min()
        self._highs_before.push(self._high_lag15.push(high))
        self._lows_before.push(self._low_lag15.push(low))
        peak_before, trough_before = self._highs_before.max(), self._lows_before.min()
        flags = {
            "higher_highs": recent_high > earlier_high, "higher_lows": recent_low > earlier_low,
            "lower_highs": recent_high < earlier_high, "lower_lows": recent_low < earlier_low,
            "double_top": abs(peak_recent - peak_before) < 0.3 * atr and close < peak_recent - atr,
            "double_bottom": abs(trough_recent - trough_before) < 0.3 * atr and close > trough_recent + atr,
            "breakout": close > self._resistance_before, "breakdown": close < self._support_before,
        }
        self._support_before, self._resistance_before = support, resistance

        adx_before, sma50_before = self._adx_lag.push(adx14), self._sma50_lag.push(sma50)
        change15, change60 = close - closes[45], close - closes[0]
        rsi15, rsi60 = self._rsi15.push(change15), self._rsi60.push(change60)
        # The logarithms through numpy, as the batch code takes them (log(0) of a bar without volume is -inf, clipped).
        log1p = np.log1p(np.array([volume, volume_mean20]))
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log(np.array([_div(volume_mean20, _positive_or_nan(volume_mean100))]))

        bar = _finish([
            _div(change, atr_safe), float(log1p[0] - log1p[1]),
            _div(close - sma5, atr_safe), _div(close - sma20, atr_safe),
            rsi / 50.0 - 1.0, _div(macd, atr_safe), _div(_div(momentum, atr_safe), _SQRT10),
            _div(atr, close) * 1000.0, _TIME_SIN[minute], _TIME_COS[minute], _SESSION_PROGRESS[minute],
        ], N_BAR)
        extended = {
            "adx_slope": (adx14 - adx_before) / 10.0,
            "vwap_distance": _div(close - vwap, atr_safe) / 5.0,
            "volatility_regime": volatility_regime - 1.0,
            "volume_regime": float(logs[0]),
            "momentum_60m": _div(change60, atr_safe) / _SQRT60,
            "spread_ratio": _div(high - low, atr_safe) - 1.0,
            "market_regime": belief,
            "sma50_slope": _div(sma50 - sma50_before, atr_safe),
            "rsi_15m": rsi15 / 50.0 - 1.0,
            "rsi_60m": rsi60 / 50.0 - 1.0,
            **{name: float(flags[name]) for name in ("higher_highs", "lower_lows", "double_top", "double_bottom")},
            "support_distance": _div(close - support, atr_safe) / 5.0,
            "resistance_distance": _div(resistance - close, atr_safe) / 5.0,
            "breakout": float(flags["breakout"]), "breakdown": float(flags["breakdown"]),
            **self._day.push(start_ns, minute, session, high, low, close, atr_safe),
        }
        static = _finish([extended[name] for name in STATIC_FEATURES], len(STATIC_FEATURES))

        self._range_sum += high - low
        self._lowest = low if _isnan(self._lowest) else min(self._lowest, low)
        self._highest = high if _isnan(self._highest) else max(self._highest, high)
        volume_ratio = _div(volume_mean5, volume_mean20)
        return FeatureRow(
            bar=bar,
            static=static,
            atr=_fill(atr, self._range_sum / self.bars),
            rsi=_fill(rsi, 50.0),
            adx=_fill(adx14, 0.0),
            momentum=_fill(momentum, 0.0),
            vwap_distance_pct=_fill(_div(close - vwap, vwap) * 100.0, 0.0),
            support=_fill(support, self._lowest),
            resistance=_fill(resistance, self._highest),
            volatility_regime=_fill(volatility_regime, 1.0),
            trend_code=trend_of(belief) + 1,
            volume_trend_code=2 if volume_ratio > 1.15 else (0 if volume_ratio < 0.85 else 1),
            pattern_code=_pattern_code(flags),
            session_id=int(session),
            minute_et=int(minute),
        )


def _finish(values: list[float], width: int) -> np.ndarray:
    """``_finish`` of the batch code for one row: clipped (infinities too), NaN as 0, float32."""
    row = np.clip(np.array(values, dtype=np.float64), -CLIP, CLIP)
    row[np.isnan(row)] = 0.0
    assert len(row) == width
    return row.astype(np.float32)


def _pattern_code(flags: dict[str, bool]) -> int:
    """``_pattern_codes`` for one bar."""
    if flags["breakout"]:
        return _PATTERN_INDEX["breakout"]
    if flags["breakdown"]:
        return _PATTERN_INDEX["breakdown"]
    if flags["double_top"]:
        return _PATTERN_INDEX["double_top"]
    if flags["double_bottom"]:
        return _PATTERN_INDEX["double_bottom"]
    if flags["higher_highs"] and flags["higher_lows"]:
        return _PATTERN_INDEX["higher_highs"]
    if flags["lower_highs"] and flags["lower_lows"]:
        return _PATTERN_INDEX["lower_lows"]
    return 0
