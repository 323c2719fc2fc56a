"""The 261 observation features of DESIGN.md section 6, computed vectorised once per dataset.

Layout of one observation (offsets are module constants, names in ``FEATURE_NAMES``):

- [0, 220)   a 20-bar window (oldest first) of 11 per-bar features ``BAR_FEATURES``
- [220, 225) 5 position features ``POSITION_FEATURES`` (filled by the env per step)
- [225, 228) 3 action-validity features ``VALIDITY_FEATURES`` (per step)
- [228, 238) 10 market-context features ``MARKET_FEATURES``
- [238, 246) 8 multi-timeframe features ``TIMEFRAME_FEATURES``
- [246, 256) 10 pattern features ``PATTERN_FEATURES``
- [256, 261) 5 risk-context features ``RISK_FEATURES`` (per step)

Everything market-derived is computed here for all bars at once (``compute_features``);
the env only slices rows and adds the per-step position, validity and risk values.

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

WINDOW = 20
CLIP = 10.0
BAR_FEATURES = ("close_change", "volume", "sma5", "sma20", "rsi", "macd", "momentum", "atr", "time_sin", "time_cos", "session_progress")
POSITION_FEATURES = ("position", "entry_price_ratio", "sl_distance_atr", "tp_distance_atr", "time_in_position")
VALIDITY_FEATURES = ("can_enter", "can_move_sl_to_be", "trail_on")
MARKET_FEATURES = (
    "adx_slope", "vwap_distance", "volatility_regime", "volume_regime", "momentum_20m",
    "momentum_60m", "efficiency_ratio", "spread_ratio", "session_trend", "market_regime",
)
TIMEFRAME_FEATURES = ("sma50_slope", "sma200_slope", "rsi_15m", "rsi_60m", "volume_ratio_5", "volume_ratio_20", "price_change_60m", "sr_distance")
PATTERN_FEATURES = (
    "higher_highs", "higher_lows", "lower_highs", "lower_lows", "double_top",
    "double_bottom", "support_distance", "resistance_distance", "breakout", "breakdown",
)
RISK_FEATURES = ("unrealized_pnl", "drawdown", "consecutive_losses", "win_rate_10", "mae_mfe_ratio")
STATIC_FEATURES = MARKET_FEATURES + TIMEFRAME_FEATURES + PATTERN_FEATURES  # 28 per-bar extended features

N_BAR = len(BAR_FEATURES)
WINDOW_END = WINDOW * N_BAR  # 220
POSITION_START, POSITION_END = WINDOW_END, WINDOW_END + len(POSITION_FEATURES)  # 220, 225
VALIDITY_START, VALIDITY_END = POSITION_END, POSITION_END + len(VALIDITY_FEATURES)  # 225, 228
STATIC_START, STATIC_END = VALIDITY_END, VALIDITY_END + len(STATIC_FEATURES)  # 228, 256
RISK_START, RISK_END = STATIC_END, STATIC_END + len(RISK_FEATURES)  # 256, 261

FEATURE_NAMES: tuple[str, ...] = (
    tuple(f"{name}[t-{lag}]" for lag in range(WINDOW - 1, -1, -1) for name in BAR_FEATURES)
    + POSITION_FEATURES
    + VALIDITY_FEATURES
    + STATIC_FEATURES
    + RISK_FEATURES
)
assert len(FEATURE_NAMES) == RISK_END == 261

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
    """int8 [T]: index into TRENDS."""
    volume_trend_code: np.ndarray
    pattern_code: np.ndarray
    """int8 [T]: index into PATTERNS."""
    session_id: np.ndarray
    """int64 [T]: trading date (days since the epoch), for daily P&L and VWAP resets."""
    minute_et: np.ndarray
    """int16 [T]: bar start minute of day in US/Eastern."""


# --------------------------------------------------------------------------- indicators (all causal)


def wilder(series: pd.Series, period: int) -> pd.Series:
    return series.ewm(alpha=1.0 / period, adjust=False, min_periods=period).mean()


def true_range(high: pd.Series, low: pd.Series, close: pd.Series) -> pd.Series:
    previous = close.shift(1)
    return pd.concat([high - low, (high - previous).abs(), (low - previous).abs()], axis=1).max(axis=1)


def rsi_from_changes(change: pd.Series, period: float, min_periods: int | None = None) -> pd.Series:
    needed = int(period) if min_periods is None else min_periods
    gain = change.clip(lower=0).ewm(alpha=1.0 / period, adjust=False, min_periods=needed).mean()
    loss = (-change.clip(upper=0)).ewm(alpha=1.0 / period, adjust=False, min_periods=needed).mean()
    total = gain + loss
    return (100.0 * gain / total.where(total > 0)).fillna(50.0).where(gain.notna())


def adx(high: pd.Series, low: pd.Series, close: pd.Series, period: int = 14) -> pd.Series:
    up = high.diff()
    down = -low.diff()
    plus_dm = up.where((up > down) & (up > 0), 0.0)
    minus_dm = down.where((down > up) & (down > 0), 0.0)
    smoothed_tr = wilder(true_range(high, low, close), period)
    plus_di = 100.0 * wilder(plus_dm, period) / smoothed_tr
    minus_di = 100.0 * wilder(minus_dm, period) / smoothed_tr
    denominator = (plus_di + minus_di).where(lambda value: value > 0)
    dx = 100.0 * (plus_di - minus_di).abs() / denominator
    return wilder(dx.fillna(0.0), period)


def _session_ids(et_naive_ns: np.ndarray) -> np.ndarray:
    day_ns = 86_400_000_000_000
    return (et_naive_ns + _SESSION_ROLL_HOURS * 3_600_000_000_000) // day_ns


# --------------------------------------------------------------------------- assembly


def _finish(columns: list[pd.Series | np.ndarray]) -> np.ndarray:
    matrix = np.column_stack([np.asarray(column, dtype=np.float64) for column in columns])
    matrix = np.nan_to_num(matrix, nan=0.0, posinf=CLIP, neginf=-CLIP)
    return np.clip(matrix, -CLIP, CLIP).astype(np.float32)


def compute_features(frame: pd.DataFrame) -> FeatureSet:
    """All per-bar features of ``frame`` (UTC index, columns open/high/low/close/volume)."""
    high, low, close, volume = (frame[name].astype(np.float64).reset_index(drop=True) for name in ("high", "low", "close", "volume"))
    et_naive_ns = frame.index.tz_convert(_ET).tz_localize(None).as_unit("ns").asi8
    minute = ((et_naive_ns // 60_000_000_000) % 1440).astype(np.int64)
    session = _session_ids(et_naive_ns)

    atr = wilder(true_range(high, low, close), 14)
    atr_safe = atr.where(atr > 0)
    sma5, sma20, sma50, sma200 = (close.rolling(n, min_periods=n).mean() for n in (5, 20, 50, 200))
    rsi = rsi_from_changes(close.diff(), 14)
    macd = close.ewm(span=12, adjust=False).mean() - close.ewm(span=26, adjust=False).mean()
    momentum = close - close.shift(10)
    log_volume = np.log1p(volume)
    volume_mean5, volume_mean20, volume_mean100 = (volume.rolling(n, min_periods=n).mean() for n in (5, 20, 100))

    bar = _finish([
        close.diff() / atr_safe,
        log_volume - np.log1p(volume_mean20),
        (close - sma5) / atr_safe,
        (close - sma20) / atr_safe,
        rsi / 50.0 - 1.0,
        macd / atr_safe,
        momentum / atr_safe / np.sqrt(10),
        atr / close * 1000.0,
        np.sin(2 * np.pi * minute / 1440.0),
        np.cos(2 * np.pi * minute / 1440.0),
        np.clip((minute - _RTH_OPEN_MINUTE) / 390.0, -1.5, 1.5),
    ])

    # Market context.
    adx14 = adx(high, low, close, 14)
    session_series = pd.Series(session)
    typical = (high + low + close) / 3.0
    cumulative_pv = (typical * volume).groupby(session_series).cumsum()
    cumulative_volume = volume.groupby(session_series).cumsum()
    vwap = (cumulative_pv / cumulative_volume.where(cumulative_volume > 0)).fillna(close)
    atr_mean100 = atr.rolling(100, min_periods=20).mean()
    volatility_regime = atr / atr_mean100
    path_length = close.diff().abs().rolling(20, min_periods=20).sum()
    efficiency = (close - close.shift(20)).abs() / path_length.where(path_length > 0)
    session_open = close.groupby(session_series).transform("first")
    bars_into_session = session_series.groupby(session_series).cumcount() + 1
    trend_strength = (sma20 - sma50) / atr_safe
    trend = np.where(trend_strength > 0.25, 1, np.where(trend_strength < -0.25, -1, 0))
    market_regime = np.where(adx14 > 25, trend, 0)

    # Multi-timeframe.
    rsi15 = rsi_from_changes(close.diff(15), 14 * 15, min_periods=30)
    rsi60 = rsi_from_changes(close.diff(60), 14 * 60, min_periods=120)
    support = low.rolling(60, min_periods=20).min()
    resistance = high.rolling(60, min_periods=20).max()
    band = (resistance - support).where(lambda width: width > 0)

    # Patterns (10-bar halves, 60-bar levels).
    recent_high, earlier_high = high.rolling(10).max(), high.shift(10).rolling(10).max()
    recent_low, earlier_low = low.rolling(10).min(), low.shift(10).rolling(10).min()
    higher_highs, higher_lows = recent_high > earlier_high, recent_low > earlier_low
    lower_highs, lower_lows = recent_high < earlier_high, recent_low < earlier_low
    peak_recent, peak_before = high.rolling(15).max(), high.shift(15).rolling(45).max()
    trough_recent, trough_before = low.rolling(15).min(), low.shift(15).rolling(45).min()
    double_top = ((peak_recent - peak_before).abs() < 0.3 * atr) & (close < peak_recent - atr)
    double_bottom = ((trough_recent - trough_before).abs() < 0.3 * atr) & (close > trough_recent + atr)
    breakout = close > high.shift(1).rolling(60, min_periods=20).max()
    breakdown = close < low.shift(1).rolling(60, min_periods=20).min()

    static = _finish([
        (adx14 - adx14.shift(5)) / 10.0,
        (close - vwap) / atr_safe / 5.0,
        volatility_regime - 1.0,
        np.log(volume_mean20 / volume_mean100.where(volume_mean100 > 0)),
        (close - close.shift(20)) / atr_safe / np.sqrt(20),
        (close - close.shift(60)) / atr_safe / np.sqrt(60),
        efficiency,
        (high - low) / atr_safe - 1.0,
        (close - session_open) / atr_safe / np.sqrt(bars_into_session),
        market_regime,
        (sma50 - sma50.shift(5)) / atr_safe,
        (sma200 - sma200.shift(5)) / atr_safe,
        rsi15 / 50.0 - 1.0,
        rsi60 / 50.0 - 1.0,
        np.log(volume / volume_mean5.where(volume_mean5 > 0)),
        np.log(volume / volume_mean20.where(volume_mean20 > 0)),
        np.log(close / close.shift(60)) * 100.0,
        (close - support) / band * 2.0 - 1.0,
        higher_highs, higher_lows, lower_highs, lower_lows, double_top, double_bottom,
        (close - support) / atr_safe / 5.0,
        (resistance - close) / atr_safe / 5.0,
        breakout, breakdown,
    ])

    pattern = np.select(
        [breakout, breakdown, double_top, double_bottom, higher_highs & higher_lows, lower_highs & lower_lows],
        [PATTERNS.index(name) for name in ("breakout", "breakdown", "double_top", "double_bottom", "higher_highs", "lower_lows")],
        default=0,
    )
    volume_ratio = volume_mean5 / volume_mean20
    volume_trend = np.where(volume_ratio > 1.15, 2, np.where(volume_ratio < 0.85, 0, 1))

    def raw(series: pd.Series, fill: float) -> np.ndarray:
        return series.to_numpy(dtype=np.float64, na_value=fill)

    return FeatureSet(
        bar=bar,
        static=static,
        atr=raw(atr.fillna((high - low).expanding().mean()), 0.0),  # warm-up: mean range so far (no back-fill from the future)
        rsi=raw(rsi, 50.0),
        adx=raw(adx14, 0.0),
        momentum=raw(momentum, 0.0),
        vwap_distance_pct=raw((close - vwap) / vwap * 100.0, 0.0),
        support=raw(support.fillna(low.cummin()), 0.0),
        resistance=raw(resistance.fillna(high.cummax()), 0.0),
        volatility_regime=raw(volatility_regime, 1.0),
        trend_code=(trend + 1).astype(np.int8),
        volume_trend_code=volume_trend.astype(np.int8),
        pattern_code=pattern.astype(np.int8),
        session_id=session.astype(np.int64),
        minute_et=minute.astype(np.int16),
    )
