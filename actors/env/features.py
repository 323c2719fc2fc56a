"""The 261 observation features of docs/architecture.md (environment facts), computed vectorised once per dataset.

Layout of one observation (offsets are module constants; the names live in actors/common/observation.py):

- [0, 220)   a 20-bar window (oldest first) of 11 per-bar features ``BAR_FEATURES``
- [220, 225) 5 position features ``POSITION_FEATURES`` (filled by the env per step)
- [225, 228) 3 action-validity features ``VALIDITY_FEATURES`` (per step)
- [228, 235) 7 market-context features ``MARKET_FEATURES``
- [235, 238) 3 multi-timeframe features ``TIMEFRAME_FEATURES``
- [238, 246) 8 pattern features ``PATTERN_FEATURES``
- [246, 256) 10 session features ``SESSION_FEATURES`` (actors/env/session_features.py: the day so far)
- [256, 261) 5 risk-context features ``RISK_FEATURES`` (per step)

This is layout ``OBSERVATION_LAYOUT`` "261/2": the session features took the places of ten columns that
repeated others (``REPLACED_IN_LAYOUT_2`` says which and why), so the observation stays 261 wide.

Everything market-derived is computed here for all bars at once (``compute_features``);
the env only slices rows and adds the per-step position, validity and risk values. The
arithmetic runs on numpy arrays (paper trading recomputes a 600-bar window every bar) and
gives the numbers of the pandas version kept in tests/actors/env/features_reference.py.

No look-ahead: every indicator is a causal recursion or a trailing rolling window, and
normalisation never uses dataset-wide statistics: prices are expressed relative to the
bar's own ATR(14) or close, volumes relative to their own trailing means, bounded
oscillators are rescaled to [-1, 1]. Values are clipped to [-CLIP, CLIP]; the warm-up
bars where an indicator is undefined are 0. So a feature at bar t depends on bars <= t
only (tests/actors/env/test_features.py changes later bars and checks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from actors.common.actions import OBS_BAR_FEATURES, OBS_WINDOW_BARS
from actors.common.observation import (  # the layout's names are the shared vocabulary (the policy reads them too)
    BAR_FEATURES, FEATURE_NAMES, MARKET_FEATURES, PATTERN_FEATURES, POSITION_FEATURES, RISK_FEATURES,
    STATIC_FEATURES, TIMEFRAME_FEATURES, VALIDITY_FEATURES, WINDOW_END,
)
from actors.env.regime_model import RegimeModel, fit_regime_model, regime_belief, trends_of
from actors.env.session_features import Sessions, session_columns

WINDOW = 20
CLIP = 10.0

N_BAR = len(BAR_FEATURES)
POSITION_START, POSITION_END = WINDOW_END, WINDOW_END + len(POSITION_FEATURES)  # 220, 225
VALIDITY_START, VALIDITY_END = POSITION_END, POSITION_END + len(VALIDITY_FEATURES)  # 225, 228
STATIC_START, STATIC_END = VALIDITY_END, VALIDITY_END + len(STATIC_FEATURES)  # 228, 256
RISK_START, RISK_END = STATIC_END, STATIC_END + len(RISK_FEATURES)  # 256, 261

assert len(FEATURE_NAMES) == RISK_END == 261
assert (WINDOW, N_BAR) == (OBS_WINDOW_BARS, OBS_BAR_FEATURES), "the shared vocabulary's window shape must match the layout"

TRENDS = ("down", "sideways", "up")  # context code -1, 0, 1 -> index code + 1
VOLUME_TRENDS = ("falling", "flat", "rising")
PATTERNS = ("none", "higher_highs", "lower_lows", "double_top", "double_bottom", "breakout", "breakdown")

_ET = "America/New_York"
_RTH_OPEN_MINUTE = 9 * 60 + 30
_SESSION_ROLL_HOURS = 6  # a Globex session opening at 18:00 ET belongs to the next trading date


@dataclass(frozen=True)
class FeatureSet:
    """Per-bar feature matrices and the raw values the named market context needs."""

    bar: np.ndarray
    """float32 [T, 11] per-bar window features."""
    static: np.ndarray
    """float32 [T, 28] market, multi-timeframe and pattern features."""
    atr: np.ndarray
    """float64 [T] ATR(14) in points."""
    rsi: np.ndarray
    adx: np.ndarray
    momentum: np.ndarray
    """close - close 10 bars earlier, points."""
    vwap_distance_pct: np.ndarray
    support: np.ndarray
    resistance: np.ndarray
    volatility_regime: np.ndarray
    trend_code: np.ndarray
    """int8 [T]: index into TRENDS, the regime belief read as a word (actors/env/regime_model.py)."""
    volume_trend_code: np.ndarray
    pattern_code: np.ndarray
    """int8 [T]: index into PATTERNS."""
    session_id: np.ndarray
    """int64 [T]: trading date (days since the epoch), for daily P&L and VWAP resets."""
    minute_et: np.ndarray
    """int16 [T]: bar start minute of day in US/Eastern."""


# --------------------------------------------------------------------------- array building blocks
# pandas costs ~100 µs per Series operation whatever the length, which made one call ~23 ms
# on the 600-bar window paper trading rebuilds every bar; these do the same arithmetic on
# plain float64 arrays. NaN plays pandas' "missing" role throughout (leading warm-up rows).


def _shift(values: np.ndarray, periods: int) -> np.ndarray:
    """``values`` moved ``periods`` rows later, NaN in front (pandas ``shift``)."""
    shifted = np.full(values.shape, np.nan)
    shifted[periods:] = values[: max(len(values) - periods, 0)]
    return shifted


def _diff(values: np.ndarray, periods: int = 1) -> np.ndarray:
    return values - _shift(values, periods)


def _window_counts(values: np.ndarray, window: int) -> np.ndarray:
    """How many non-NaN values each row's trailing ``window`` holds (integers, so exact)."""
    seen = np.concatenate((np.zeros(window, dtype=np.int64), np.cumsum(~np.isnan(values))))
    return seen[window:] - seen[: len(values)]


def _rolling(values: np.ndarray, window: int, min_periods: int | None, statistic: str) -> np.ndarray:
    """pandas ``rolling(window, min_periods).<statistic>()`` for sum, mean, max and min: over the
    non-NaN values of each trailing window, NaN where fewer than ``min_periods`` (default ``window``)."""
    counts = _window_counts(values, window)
    if statistic in ("sum", "mean"):
        result = _trailing_reduce(_fill(values, 0.0), window, np.add, 0.0)
        if statistic == "mean":
            result = result / np.maximum(counts, 1)
    else:  # fmax / fmin skip NaN, as pandas does
        result = _trailing_reduce(values, window, np.fmax if statistic == "max" else np.fmin, np.nan)
    return np.where(counts >= max(window if min_periods is None else min_periods, 1), result, np.nan)


def _trailing_reduce(values: np.ndarray, window: int, combine: np.ufunc, pad: float) -> np.ndarray:
    """``combine`` (np.add, np.fmax, np.fmin) over each row's trailing ``window``, rows before the first taken as ``pad``.

    By binary decomposition: ``level[i]`` combines the ``size`` values from ``i`` on, and doubles
    each round; the window is covered by the levels of its set bits, placed end to end. That is
    ~2 log2(window) whole-array operations, where a [T, window] reduction runs slowly along short
    rows. Sums are exact when the values are (tick-sized prices, whole volumes), as pandas' are.
    """
    level = np.concatenate((np.full(window - 1, pad), values))
    result, covered, size = None, 0, 1
    while size <= window:
        if window & size:
            part = level[covered : covered + len(values)]
            result = part if result is None else combine(result, part)
            covered += size
        if size * 2 <= window:
            level = combine(level[:-size], level[size:])
        size *= 2
    return result


def _ewm_mean(values: np.ndarray, *, alpha: float | None = None, span: float | None = None, min_periods: int = 0) -> np.ndarray:
    """pandas ``ewm(alpha= or span=, adjust=False, min_periods=).mean()``, bit for bit.

    It follows pandas' Cython loop (window/aggregations.pyx ``ewm``): alpha goes through the
    centre of mass, each step divides by old + new weight, a value equal to the running mean
    leaves it as it is, and a missing value decays the old weight. A Python loop over floats
    costs ~0.1 µs a row, far less than pandas' fixed cost on the short windows this runs on.
    """
    com = (1.0 - alpha) / alpha if span is None else (span - 1.0) / 2.0
    new_weight = 1.0 / (1.0 + com)
    present = ~np.isnan(values)
    first = int(present.argmax()) if present.any() else len(values)
    if not present[first:].all():
        return _ewm_mean_with_gaps(values, new_weight, max(min_periods, 1))
    means = np.full(len(values), np.nan)
    if first < len(values):
        means[first:] = _ewm_recursion(values[first:].tolist(), new_weight)
    means[: first + max(min_periods, 1) - 1] = np.nan  # fewer than min_periods observations so far
    return means


def _ewm_recursion(values: list[float], new_weight: float) -> list[float]:
    """The running mean over values without gaps: the old weight is back to 1 every step."""
    old_weight = 1.0 * (1.0 - new_weight)
    total_weight = old_weight + new_weight
    weighted = values[0]
    means = [weighted]
    for value in values[1:]:
        if weighted != value:
            weighted = (old_weight * weighted + new_weight * value) / total_weight
        means.append(weighted)
    return means


def _ewm_mean_with_gaps(values: np.ndarray, new_weight: float, needed: int) -> np.ndarray:
    """The same running mean when NaN also appears after the first value (not in loaded bars)."""
    decay = 1.0 - new_weight
    weighted, old_weight, observations = np.nan, 1.0, 0
    means = []
    for value in values.tolist():
        if value == value:
            observations += 1
            if weighted != weighted:
                weighted = value
            else:
                old_weight *= decay
                if weighted != value:
                    weighted = (old_weight * weighted + new_weight * value) / (old_weight + new_weight)
                old_weight = 1.0
        elif weighted == weighted:
            old_weight *= decay
        means.append(weighted if observations >= needed else np.nan)
    return np.array(means, dtype=np.float64)


def _positive_or_nan(values: np.ndarray) -> np.ndarray:
    """``values`` where > 0, else NaN: the denominators that must not be zero (pandas ``where(x > 0)``)."""
    return np.where(values > 0, values, np.nan)


def _fill(values: np.ndarray, fill: float | np.ndarray) -> np.ndarray:
    return np.where(np.isnan(values), fill, values)


# --------------------------------------------------------------------------- indicators (all causal)


def wilder(values: np.ndarray, period: int) -> np.ndarray:
    return _ewm_mean(values, alpha=1.0 / period, min_periods=period)


def true_range(high: np.ndarray, low: np.ndarray, close: np.ndarray) -> np.ndarray:
    previous = _shift(close, 1)
    return np.fmax(np.fmax(high - low, np.abs(high - previous)), np.abs(low - previous))


def rsi_from_changes(change: np.ndarray, period: float, min_periods: int | None = None) -> np.ndarray:
    needed = int(period) if min_periods is None else min_periods
    gain = _ewm_mean(np.maximum(change, 0.0), alpha=1.0 / period, min_periods=needed)
    loss = _ewm_mean(-np.minimum(change, 0.0), alpha=1.0 / period, min_periods=needed)
    rsi = _fill(100.0 * gain / _positive_or_nan(gain + loss), 50.0)
    return np.where(np.isnan(gain), np.nan, rsi)


def adx(high: np.ndarray, low: np.ndarray, close: np.ndarray, period: int = 14, smoothed_tr: np.ndarray | None = None) -> np.ndarray:
    """ADX; ``smoothed_tr`` is ``wilder(true_range(...), period)`` when the caller has it already."""
    up = _diff(high)
    down = -_diff(low)
    plus_dm = np.where((up > down) & (up > 0), up, 0.0)
    minus_dm = np.where((down > up) & (down > 0), down, 0.0)
    if smoothed_tr is None:
        smoothed_tr = wilder(true_range(high, low, close), period)
    plus_di = 100.0 * wilder(plus_dm, period) / smoothed_tr
    minus_di = 100.0 * wilder(minus_dm, period) / smoothed_tr
    dx = 100.0 * np.abs(plus_di - minus_di) / _positive_or_nan(plus_di + minus_di)
    return wilder(_fill(dx, 0.0), period)


def _session_ids(et_naive_ns: np.ndarray) -> np.ndarray:
    day_ns = 86_400_000_000_000
    return (et_naive_ns + _SESSION_ROLL_HOURS * 3_600_000_000_000) // day_ns


# --------------------------------------------------------------------------- assembly


def _finish(columns: list[np.ndarray]) -> np.ndarray:
    """The float32 [T, len(columns)] matrix: clipped to [-CLIP, CLIP] (infinities too), warm-up NaN as 0."""
    matrix = np.clip(np.stack(columns, axis=1).astype(np.float64, copy=False), -CLIP, CLIP)
    matrix[np.isnan(matrix)] = 0.0
    return matrix.astype(np.float32)


def compute_features(frame: pd.DataFrame, regime_model: RegimeModel | None = None, releases: np.ndarray | None = None) -> FeatureSet:
    """All per-bar features of ``frame`` (UTC index, columns open/high/low/close/volume).

    ``regime_model`` is the HMM behind ``market_regime`` (actors/env/regime_model.py), fitted on the training days
    by the caller (``Dataset.from_frame``); None: an unfitted one, whose belief is 0 on every bar. ``releases``: the
    sorted UTC ns of scheduled releases behind ``minutes_to_release`` (actors/env/session_features.py); None: none."""
    with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 and log(0) are handled as inf / NaN, as pandas did
        return _compute(frame, regime_model or RegimeModel.uninformative(), releases)


def regime_model_of(frame: pd.DataFrame, seed: int = 0) -> RegimeModel:
    """The regime HMM fitted on every bar of ``frame``: the caller hands in the training days only."""
    high, low, close = (frame[name].to_numpy(dtype=np.float64) for name in ("high", "low", "close"))
    session = _session_ids(frame.index.tz_convert(_ET).tz_localize(None).as_unit("ns").asi8)
    with np.errstate(divide="ignore", invalid="ignore"):
        atr = wilder(true_range(high, low, close), 14)
    return fit_regime_model(close, high - low, atr, session, seed)


def _compute(frame: pd.DataFrame, regime_model: RegimeModel, releases: np.ndarray | None) -> FeatureSet:
    high, low, close, volume = (frame[name].to_numpy(dtype=np.float64) for name in ("high", "low", "close", "volume"))
    et_naive_ns = frame.index.tz_convert(_ET).tz_localize(None).as_unit("ns").asi8
    minute = ((et_naive_ns // 60_000_000_000) % 1440).astype(np.int64)
    session = _session_ids(et_naive_ns)

    atr = wilder(true_range(high, low, close), 14)
    atr_safe = _positive_or_nan(atr)
    sma5, sma20, sma50 = (_rolling(close, n, None, "mean") for n in (5, 20, 50))
    change = _diff(close)
    rsi = rsi_from_changes(change, 14)
    macd = _ewm_mean(close, span=12) - _ewm_mean(close, span=26)
    momentum = _diff(close, 10)
    volume_mean5, volume_mean20, volume_mean100 = (_rolling(volume, n, None, "mean") for n in (5, 20, 100))
    minute_angle = 2 * np.pi * minute / 1440.0

    bar = _finish([
        change / atr_safe, np.log1p(volume) - np.log1p(volume_mean20),
        (close - sma5) / atr_safe, (close - sma20) / atr_safe,
        rsi / 50.0 - 1.0, macd / atr_safe, momentum / atr_safe / np.sqrt(10),
        atr / close * 1000.0, np.sin(minute_angle), np.cos(minute_angle),
        np.clip((minute - _RTH_OPEN_MINUTE) / 390.0, -1.5, 1.5),
    ])

    # Market context.
    adx14 = adx(high, low, close, 14, smoothed_tr=atr)
    sessions = Sessions.of(session)
    cumulative_volume = sessions.cumsum(volume)
    vwap = _fill(sessions.cumsum((high + low + close) / 3.0 * volume) / _positive_or_nan(cumulative_volume), close)
    volatility_regime = atr / _rolling(atr, 100, 20, "mean")
    belief = regime_belief(close, high - low, atr, session, regime_model)

    # Multi-timeframe.
    support = _rolling(low, 60, 20, "min")
    resistance = _rolling(high, 60, 20, "max")

    # Patterns (10-bar halves, 60-bar levels).
    recent_high, recent_low = _rolling(high, 10, None, "max"), _rolling(low, 10, None, "min")
    earlier_high, earlier_low = _shift(recent_high, 10), _shift(recent_low, 10)  # the window 10 bars back
    peak_recent, trough_recent = _rolling(high, 15, None, "max"), _rolling(low, 15, None, "min")
    peak_before, trough_before = _rolling(_shift(high, 15), 45, None, "max"), _rolling(_shift(low, 15), 45, None, "min")
    flags = {
        "higher_highs": recent_high > earlier_high, "higher_lows": recent_low > earlier_low,
        "lower_highs": recent_high < earlier_high, "lower_lows": recent_low < earlier_low,
        "double_top": (np.abs(peak_recent - peak_before) < 0.3 * atr) & (close < peak_recent - atr),
        "double_bottom": (np.abs(trough_recent - trough_before) < 0.3 * atr) & (close > trough_recent + atr),
        "breakout": close > _shift(_rolling(high, 60, 20, "max"), 1),
        "breakdown": close < _shift(_rolling(low, 60, 20, "min"), 1),
    }

    extended = {
        "adx_slope": _diff(adx14, 5) / 10.0,
        "vwap_distance": (close - vwap) / atr_safe / 5.0,
        "volatility_regime": volatility_regime - 1.0,
        "volume_regime": np.log(volume_mean20 / _positive_or_nan(volume_mean100)),
        "momentum_60m": _diff(close, 60) / atr_safe / np.sqrt(60),
        "spread_ratio": (high - low) / atr_safe - 1.0,
        "market_regime": belief,  # the fitted HMM's expected next change, actors/env/regime_model.py
        "sma50_slope": _diff(sma50, 5) / atr_safe,
        "rsi_15m": rsi_from_changes(_diff(close, 15), 14 * 15, min_periods=30) / 50.0 - 1.0,
        "rsi_60m": rsi_from_changes(_diff(close, 60), 14 * 60, min_periods=120) / 50.0 - 1.0,
        **{name: flags[name] for name in ("higher_highs", "lower_lows", "double_top", "double_bottom")},
        "support_distance": (close - support) / atr_safe / 5.0,
        "resistance_distance": (resistance - close) / atr_safe / 5.0,
        "breakout": flags["breakout"], "breakdown": flags["breakdown"],
        **session_columns(close, high, low, atr_safe, minute, frame.index.as_unit("ns").asi8, sessions, releases),
    }
    static = _finish([extended[name] for name in STATIC_FEATURES])  # the layout's order (actors/common/observation.py)

    volume_ratio = volume_mean5 / volume_mean20
    return FeatureSet(
        bar=bar,
        static=static,
        atr=_fill(atr, np.cumsum(high - low) / np.arange(1, len(high) + 1)),  # warm-up: mean range so far (no back-fill from the future)
        rsi=_fill(rsi, 50.0),
        adx=_fill(adx14, 0.0),
        momentum=_fill(momentum, 0.0),
        vwap_distance_pct=_fill((close - vwap) / vwap * 100.0, 0.0),
        support=_fill(support, np.fmin.accumulate(low)),
        resistance=_fill(resistance, np.fmax.accumulate(high)),
        volatility_regime=_fill(volatility_regime, 1.0),
        trend_code=(trends_of(belief) + 1).astype(np.int8),
        volume_trend_code=np.where(volume_ratio > 1.15, 2, np.where(volume_ratio < 0.85, 0, 1)).astype(np.int8),
        pattern_code=_pattern_codes(flags).astype(np.int8),
        session_id=session.astype(np.int64),
        minute_et=minute.astype(np.int16),
    )


def _pattern_codes(flags: dict[str, np.ndarray]) -> np.ndarray:
    """Index into PATTERNS of each bar's most telling pattern (the first that holds, in this order)."""
    ranked = ("breakout", "breakdown", "double_top", "double_bottom", "higher_highs", "lower_lows")
    conditions = [flags[name] for name in ranked[:4]]
    conditions += [flags["higher_highs"] & flags["higher_lows"], flags["lower_highs"] & flags["lower_lows"]]
    return np.select(conditions, [PATTERNS.index(name) for name in ranked], default=0)
