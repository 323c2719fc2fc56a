"""The names of the 261 observation columns: the contract between the env, which fills them, and the policy.

actors/env/features.py computes the values; this module only says which column is which, so that
the policy can choose what its network sees (``policy.features_seen``) without importing the env.

- [0, 220)   a 20-bar window (oldest first) of the 11 per-bar features ``BAR_FEATURES``
- [220, 225) 5 position features, [225, 228) 3 action-validity features (per step)
- [228, 256) 28 per-bar extended features: market context, timeframes, patterns
- [256, 261) 5 risk-context features (per step)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from actors.common.actions import OBS_BAR_FEATURES, OBS_DIM, OBS_WINDOW_BARS

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
