"""The pandas implementation of ``compute_features`` as it was before the numpy rewrite: the test oracle.

tests/actors/env/test_features.py checks that actors.env.features.compute_features gives the
same numbers. Constants and the helpers that did not change are imported, not copied.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from actors.env.features import _ET, _RTH_OPEN_MINUTE, CLIP, PATTERNS, FeatureSet, _session_ids
from actors.env.regime_model import RegimeModel, regime_belief, trends_of


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


def _finish(columns: list[pd.Series | np.ndarray]) -> np.ndarray:
    matrix = np.column_stack([np.asarray(column, dtype=np.float64) for column in columns])
    matrix = np.nan_to_num(matrix, nan=0.0, posinf=CLIP, neginf=-CLIP)
    return np.clip(matrix, -CLIP, CLIP).astype(np.float32)


def reference_features(frame: pd.DataFrame, regime_model: RegimeModel | None = None) -> FeatureSet:
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
    market_regime = regime_belief(close.to_numpy(), (high - low).to_numpy(), atr.to_numpy(), np.asarray(session),
                                  regime_model or RegimeModel.uninformative())  # a recursion: the one definition

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
        trend_code=(trends_of(market_regime) + 1).astype(np.int8),
        volume_trend_code=volume_trend.astype(np.int8),
        pattern_code=pattern.astype(np.int8),
        session_id=session.astype(np.int64),
        minute_et=minute.astype(np.int16),
    )
