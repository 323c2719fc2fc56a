"""The names of the 261 observation columns: the contract between the env, which fills them, and the policy.

actors/env/features.py computes the values; this module only says which column is which, so that
the policy can choose what its network sees (``policy.features_seen``) without importing the env.

- [0, 220)   a 20-bar window (oldest first) of the 11 per-bar features ``BAR_FEATURES``
- [220, 225) 5 position features, [225, 228) 3 action-validity features (per step)
- [228, 256) 28 per-bar extended features: market context, timeframes, patterns, the session so far
- [256, 261) 5 risk-context features (per step)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from actors.common.actions import OBS_BAR_FEATURES, OBS_DIM, OBS_WINDOW_BARS

BAR_FEATURES = ("close_change", "volume", "sma5", "sma20", "rsi", "macd", "momentum", "atr", "time_sin", "time_cos", "session_progress")
POSITION_FEATURES = ("position", "entry_price_ratio", "sl_distance_atr", "tp_distance_atr", "time_in_position")
VALIDITY_FEATURES = ("can_enter", "can_move_sl_to_be", "trail_on")
MARKET_FEATURES = ("adx_slope", "vwap_distance", "volatility_regime", "volume_regime", "momentum_60m", "spread_ratio", "market_regime")
TIMEFRAME_FEATURES = ("sma50_slope", "rsi_15m", "rsi_60m")
PATTERN_FEATURES = ("higher_highs", "lower_lows", "double_top", "double_bottom", "support_distance", "resistance_distance", "breakout", "breakdown")
SESSION_FEATURES = (
    "return_since_open", "gap_return", "first_30m_return", "minutes_to_close", "minutes_to_break",
    "realized_vol_15", "realized_vol_60", "session_high_distance", "session_low_distance", "minutes_to_release",
)
"""The day so far, as traders read it intraday (actors/env/session_features.py computes them)."""
RISK_FEATURES = ("unrealized_pnl", "drawdown", "consecutive_losses", "win_rate_10", "mae_mfe_ratio")
STATIC_FEATURES = MARKET_FEATURES + TIMEFRAME_FEATURES + PATTERN_FEATURES + SESSION_FEATURES  # 28 per-bar extended features

OBSERVATION_LAYOUT = "261/2"
"""Which meaning the 261 columns have; a policy checkpoint records the layout it was trained on and a policy refuses
a checkpoint of another (actors/policy/checkpoint.py). "261/1" (before the session inputs; checkpoints without the key): the
28 extended columns had, in place of the ten ``SESSION_FEATURES``, ten that repeated other columns:
``REPLACED_IN_LAYOUT_2``. "261/2": the session inputs took their places (the column count is unchanged)."""
REPLACED_IN_LAYOUT_2 = {
    "momentum_20m": "the window's 10-bar momentum at t and t-10 add up to it (linear R2 0.999 from the other columns)",
    "volume_ratio_20": "the window's volume column at t: log volume over its 20-bar mean (R2 1.000)",
    "volume_ratio_5": "the window's volume column over its last 5 bars (R2 0.987)",
    "higher_lows": "the other three 10-bar high/low flags and the window (R2 0.961); the pattern word still reads it",
    "lower_highs": "as higher_lows (R2 0.960)",
    "price_change_60m": "momentum_60m in percent instead of ATRs (R2 0.935)",
    "sr_distance": "a function of support_distance and resistance_distance (R2 0.928)",
    "session_trend": "the return since the session's first close over sqrt(bars): now return_since_open (R2 0.760)",
    "sma200_slope": "a 200-bar drift read in 5-bar differences (R2 0.744)",
    "efficiency_ratio": "|sum| / sum of |.| of the window's 20 close changes: a function of the window (R2 0.407, not linear)",
}
"""Layout 1's columns that layout 2 replaced, and why each repeated what the observation has elsewhere. R2: how much of
each one's variance a linear fit on the other 250 market columns of layout 1 explains (60 days of ``realistic``,
seed 1; docs/experiments/features.md)."""

WINDOW_END = OBS_WINDOW_BARS * OBS_BAR_FEATURES  # 220

FEATURE_NAMES: tuple[str, ...] = (
    tuple(f"{name}[t-{lag}]" for lag in range(OBS_WINDOW_BARS - 1, -1, -1) for name in BAR_FEATURES)
    + POSITION_FEATURES
    + VALIDITY_FEATURES
    + STATIC_FEATURES
    + RISK_FEATURES
)
assert len(FEATURE_NAMES) == OBS_DIM and len(BAR_FEATURES) == OBS_BAR_FEATURES

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "window": BAR_FEATURES,
    "position": POSITION_FEATURES,
    "validity": VALIDITY_FEATURES,
    "market": MARKET_FEATURES,
    "timeframe": TIMEFRAME_FEATURES,
    "pattern": PATTERN_FEATURES,
    "session": SESSION_FEATURES,
    "risk": RISK_FEATURES,
}
"""Group names ``features_seen`` accepts beside single feature names."""


def observation_columns(entries: Sequence[str]) -> np.ndarray:
    """Sorted column indices named by ``entries``: group names, column names, or a bar feature (all its window lags).

    ValueError naming the first entry that is none of these, so a typo in the settings stops start-up."""
    columns: set[int] = set()
    for entry in entries:
        names = FEATURE_GROUPS.get(entry, (entry,))
        for name in names:
            matched = _columns_named(name)
            if not matched:
                groups = ", ".join(FEATURE_GROUPS)
                raise ValueError(f"unknown observation feature {entry!r}: give a group ({groups}) or a feature name from actors/common/observation.py")
            columns.update(matched)
    return np.array(sorted(columns), dtype=np.intp)


def _columns_named(name: str) -> list[int]:
    if name in BAR_FEATURES:
        return [index for index, column in enumerate(FEATURE_NAMES[:WINDOW_END]) if column.startswith(f"{name}[")]
    return [index for index, column in enumerate(FEATURE_NAMES) if column == name]


GROUP_NOTES: dict[str, str] = {
    "window": "20 bars, oldest first, of 11 per-bar values: close change and MACD in ATRs, log volume over its 20-bar "
              "mean, distance to SMA5 / SMA20 in ATRs, RSI(14) in [-1, 1], 10-bar momentum, ATR per mille of the close, "
              "the minute's sine and cosine, the minutes since 09:30 ET in sessions",
    "position": "the open position (side, entry over close, stop and target distance in ATRs, bars held), per step",
    "validity": "which actions the masks allow now, per step",
    "market": "market context of the bar",
    "timeframe": "slower timeframes",
    "pattern": "chart patterns as 0/1 flags and distances to the 60-bar support and resistance",
    "session": "the day so far, as traders read it intraday (issue 52)",
    "risk": "the account: unrealised P&L, drawdown, consecutive losses, win rate of the last 10, MAE/MFE, per step",
}
"""One line per group for the generated observation reference (docs/reference.py)."""

FEATURE_NOTES: dict[str, str] = {
    "adx_slope": "ADX(14) now minus 5 bars ago, / 10",
    "vwap_distance": "close - the session's VWAP, in ATRs / 5",
    "volatility_regime": "ATR(14) over its 100-bar mean, - 1",
    "volume_regime": "log of the 20-bar over the 100-bar mean volume",
    "momentum_60m": "close - close 60 bars ago, in ATRs / sqrt(60)",
    "spread_ratio": "the bar's range in ATRs, - 1",
    "market_regime": "the regime HMM's expected next change (fitted on the training days, filtered causally)",
    "sma50_slope": "SMA50 now minus 5 bars ago, in ATRs",
    "rsi_15m": "RSI of 15-bar changes (period 210) in [-1, 1]",
    "rsi_60m": "RSI of 60-bar changes (period 840) in [-1, 1]",
    "higher_highs": "the last 10 bars' high above the 10 before",
    "lower_lows": "the last 10 bars' low below the 10 before",
    "double_top": "a 15-bar peak within 0.3 ATR of the 45 bars' before it, close an ATR below",
    "double_bottom": "a 15-bar trough within 0.3 ATR of the 45 bars' before it, close an ATR above",
    "support_distance": "close - the 60-bar low, in ATRs / 5",
    "resistance_distance": "the 60-bar high - close, in ATRs / 5",
    "breakout": "close above the previous 60-bar high",
    "breakdown": "close below the previous 60-bar low",
    "return_since_open": "log(close / the session's first close) x 100 (percent)",
    "gap_return": "log(the session's first close / the prior session's last close) x 100; 0 on the data's first session",
    "first_30m_return": "log(the 10:00 ET close / the prior close) x 100 from 10:00 on; 0 before it is known",
    "minutes_to_close": "minutes from the bar's end to 16:00 ET, in sessions of 390 minutes",
    "minutes_to_break": "minutes from the bar's end to 17:00 ET (CME's daily halt), in sessions of 390 minutes",
    "realized_vol_15": "RMS of the session's last 15 one-bar log returns over the session's so far, - 1",
    "realized_vol_60": "RMS of the session's last 60 one-bar log returns over the session's so far, - 1",
    "session_high_distance": "the session's high so far - close, in ATRs / 10",
    "session_low_distance": "close - the session's low so far, in ATRs / 10",
    "minutes_to_release": "minutes to the next scheduled release (a news market's calendar) in sessions, capped at 1 "
                          "(1: a session or more away, or no calendar)",
}
"""One line per extended column (the per-bar market features) for the generated observation reference."""
assert set(FEATURE_NOTES) == set(STATIC_FEATURES) and set(GROUP_NOTES) == set(FEATURE_GROUPS)
