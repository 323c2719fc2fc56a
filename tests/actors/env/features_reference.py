"""The pandas implementation of ``compute_features`` as it was before the numpy rewrite: the test oracle.

tests/actors/env/test_features.py checks that actors.env.features.compute_features gives the
same numbers. Constants and the helpers that did not change are imported, not copied.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from actors.env.features import _ET, _RTH_OPEN_MINUTE, CLIP, PATTERNS, STATIC_FEATURES, FeatureSet, _session_ids
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


def reference_session_columns(frame, close, high, low, atr_safe, minute, session, releases) -> dict[str, pd.Series]:
    """The session features of actors/env/session_features.py written with pandas groupbys: an independent version."""
    by = pd.Series(session)
    grouped_close = close.groupby(by)
    first = grouped_close.transform("first")
    last_of = grouped_close.last()
    prior = by.map(last_of.shift(1))
    one_bar = np.log(close / grouped_close.shift(1)).fillna(0.0)
    squared = (one_bar * one_bar).groupby(by).cumsum()
    count = by.groupby(by).cumcount() + 1
    since_roll = (pd.Series(minute) + 360) % 1440
    known = since_roll >= (9 * 60 + 59 + 360) % 1440
    first_known = known & (known.astype(int).groupby(by).cumsum() == 1)
    first30_close = close.where(first_known).groupby(by).ffill()
    columns = {
        "return_since_open": np.log(close / first) * 100.0,
        "gap_return": np.log(first / prior) * 100.0,
        "first_30m_return": np.log(first30_close / prior) * 100.0,
        "minutes_to_close": ((960 - pd.Series(minute) - 1) % 1440) / 390.0,
        "minutes_to_break": ((1020 - pd.Series(minute) - 1) % 1440) / 390.0,
    }
    for window in (15, 60):
        recent = squared - squared.groupby(by).shift(window).fillna(0.0)
        columns[f"realized_vol_{window}"] = np.sqrt(recent / np.minimum(count, window)) / np.sqrt(squared / count) - 1.0
    columns["session_high_distance"] = (high.groupby(by).cummax() - close) / atr_safe / 10.0
    columns["session_low_distance"] = (close - low.groupby(by).cummin()) / atr_safe / 10.0
    bar_end = pd.Series(frame.index.as_unit("ns").asi8 + 60_000_000_000)
    ahead = [min((r - end for r in (releases if releases is not None else ()) if r >= end), default=390 * 60_000_000_000) for end in bar_end]
    columns["minutes_to_release"] = np.minimum(np.array(ahead, dtype=np.float64) / 60e9, 390.0) / 390.0
    return columns


def reference_features(frame: pd.DataFrame, regime_model: RegimeModel | None = None, releases=None) -> FeatureSet:
    """All per-bar features of ``frame`` (UTC index, columns open/high/low/close/volume)."""
    high, low, close, volume = (frame[name].astype(np.float64).reset_index(drop=True) for name in ("high", "low", "close", "volume"))
    et_naive_ns = frame.index.tz_convert(_ET).tz_localize(None).as_unit("ns").asi8
    minute = ((et_naive_ns // 60_000_000_000) % 1440).astype(np.int64)
    session = _session_ids(et_naive_ns)

    atr = wilder(true_range(high, low, close), 14)
    atr_safe = atr.where(atr > 0)
    sma5, sma20, sma50 = (close.rolling(n, min_periods=n).mean() for n in (5, 20, 50))
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
    market_regime = regime_belief(close.to_numpy(), (high - low).to_numpy(), atr.to_numpy(), np.asarray(session),
                                  regime_model or RegimeModel.uninformative())  # a recursion: the one definition

    # Multi-timeframe.
    rsi15 = rsi_from_changes(close.diff(15), 14 * 15, min_periods=30)
    rsi60 = rsi_from_changes(close.diff(60), 14 * 60, min_periods=120)
    support = low.rolling(60, min_periods=20).min()
    resistance = high.rolling(60, min_periods=20).max()

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

    extended = {
        "adx_slope": (adx14 - adx14.shift(5)) / 10.0,
        "vwap_distance": (close - vwap) / atr_safe / 5.0,
        "volatility_regime": volatility_regime - 1.0,
        "volume_regime": np.log(volume_mean20 / volume_mean100.where(volume_mean100 > 0)),
        "momentum_60m": (close - close.shift(60)) / atr_safe / np.sqrt(60),
        "spread_ratio": (high - low) / atr_safe - 1.0,
        "market_regime": market_regime,
        "sma50_slope": (sma50 - sma50.shift(5)) / atr_safe,
        "rsi_15m": rsi15 / 50.0 - 1.0,
        "rsi_60m": rsi60 / 50.0 - 1.0,
        "higher_highs": higher_highs, "lower_lows": lower_lows, "double_top": double_top, "double_bottom": double_bottom,
        "support_distance": (close - support) / atr_safe / 5.0,
        "resistance_distance": (resistance - close) / atr_safe / 5.0,
        "breakout": breakout, "breakdown": breakdown,
        **reference_session_columns(frame, close, high, low, atr_safe, minute, session, releases),
    }
    static = _finish([extended[name] for name in STATIC_FEATURES])

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
