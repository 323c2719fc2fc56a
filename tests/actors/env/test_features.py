"""The 261 features: layout, no look-ahead, finite values, and the same numbers as the pandas oracle."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.env.dataset import Dataset
from actors.env.env import FuturesTradingEnv
from actors.env.features import FEATURE_NAMES, STATIC_FEATURES, FeatureSet, compute_features, regime_model_of, wilder
from actors.common.instruments import resolve_instrument
from actors.common.synthetic import BARS_PER_SESSION, generate_bars
from bus.messages import OBS_DIM

from .conftest import bars_frame
from .features_reference import reference_features

MODEL = regime_model_of(generate_bars(days=10, seed=99))
"""A fitted regime HMM (on bars of its own), so the market_regime column is checked as a moving value, not a constant 0."""

RAW_FEATURES = ("atr", "rsi", "adx", "momentum", "vwap_distance_pct", "support", "resistance", "volatility_regime")
CODE_FEATURES = ("trend_code", "volume_trend_code", "pattern_code", "session_id", "minute_et")


def test_there_are_261_named_features_228_base_and_33_extended():
    assert len(FEATURE_NAMES) == OBS_DIM == 261
    assert len(set(FEATURE_NAMES)) == 261
    assert FEATURE_NAMES.index("position") == 220 and FEATURE_NAMES.index("can_enter") == 225
    assert FEATURE_NAMES.index("adx_slope") == 228 and FEATURE_NAMES[-1] == "mae_mfe_ratio"
    assert len(STATIC_FEATURES) == 28


def test_features_at_bar_t_do_not_change_when_later_bars_change():
    frame = generate_bars(3, seed=11)
    cut = 500
    changed = frame.copy()
    rng = np.random.default_rng(0)
    later = changed.index[cut + 1 :]
    scale = rng.uniform(0.9, 1.1, len(later))
    for column in ("open", "high", "low", "close"):
        changed.loc[later, column] = changed.loc[later, column].to_numpy() * scale
    changed.loc[later, "volume"] = changed.loc[later, "volume"].to_numpy() * rng.uniform(0.1, 10.0, len(later))

    original, altered = compute_features(frame, MODEL), compute_features(changed, MODEL)

    assert np.array_equal(original.bar[: cut + 1], altered.bar[: cut + 1])
    assert np.array_equal(original.static[: cut + 1], altered.static[: cut + 1])
    for name in ("atr", "rsi", "adx", "momentum", "vwap_distance_pct", "support", "resistance", "volatility_regime", "pattern_code", "trend_code"):
        assert np.array_equal(getattr(original, name)[: cut + 1], getattr(altered, name)[: cut + 1]), name
    # and the change is visible after the cut, so the comparison could fail
    assert not np.array_equal(original.static[cut + 1 :], altered.static[cut + 1 :])


def test_the_observation_at_a_bar_does_not_change_when_later_bars_change():
    frame = generate_bars(3, seed=5)
    cut = 600
    changed = frame.copy()
    changed.iloc[cut + 1 :, :4] = changed.iloc[cut + 1 :, :4].to_numpy() * 1.05
    observations = []
    for bars in (frame, changed):
        dataset = Dataset.from_frame(bars, AccountConfig().flat_minute_of_day)
        env = FuturesTradingEnv(dataset.split("all"), resolve_instrument(InstrumentConfig()), AccountConfig(), EnvConfig())
        obs, _ = env.reset(options={"start": cut, "n_bars": 10})
        observations.append(obs)
    assert np.array_equal(observations[0], observations[1])


def test_features_are_finite_and_clipped_after_warm_up():
    features = compute_features(generate_bars(4, seed=2), MODEL)
    assert np.isfinite(features.bar).all() and np.isfinite(features.static).all()
    assert np.abs(features.bar).max() <= 10 and np.abs(features.static).max() <= 10
    # after warm-up the market features carry information (not all zeros)
    assert (np.abs(features.static[300:]).mean(axis=0) > 0).all()
    assert features.bar.dtype == np.float32 and features.static.dtype == np.float32


# --------------------------------------------------------------------------- same numbers as the pandas oracle


def assert_same_features(frame: pd.DataFrame) -> None:
    """compute_features agrees with the pandas implementation it replaced (tests/actors/env/features_reference.py)."""
    new = compute_features(frame, MODEL)
    with np.errstate(divide="ignore", invalid="ignore"):  # the oracle takes log(0) on bars without volume
        old = reference_features(frame, MODEL)
    for name in ("bar", "static"):
        assert getattr(new, name).dtype == np.float32 and getattr(new, name).shape == getattr(old, name).shape, name
        assert np.abs(getattr(new, name) - getattr(old, name)).max(initial=0.0) <= 1e-5, name
    for name in RAW_FEATURES:
        got, expected = getattr(new, name), getattr(old, name)
        assert got.dtype == np.float64 and np.array_equal(np.isnan(got), np.isnan(expected)), name
        close = np.abs(got - expected) <= np.maximum(1e-9 * np.abs(expected), 1e-9)
        assert (close | np.isnan(expected)).all(), name
    for name in CODE_FEATURES:
        got, expected = getattr(new, name), getattr(old, name)
        assert got.dtype == expected.dtype and np.array_equal(got, expected), name


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_bars", [600, 2_000])
def test_features_match_the_pandas_oracle_on_synthetic_bars(seed, n_bars):
    assert_same_features(generate_bars(days=-(-n_bars // BARS_PER_SESSION), seed=seed).iloc[:n_bars])


def test_features_match_the_pandas_oracle_on_a_window_starting_mid_session():
    frame = generate_bars(days=6, seed=4)
    start = 2 * BARS_PER_SESSION + 157
    assert_same_features(frame.iloc[start : start + 600])


def test_features_match_the_pandas_oracle_when_sessions_are_not_in_time_order():
    frame = generate_bars(days=3, seed=6)
    sessions = [frame.iloc[day * BARS_PER_SESSION : (day + 1) * BARS_PER_SESSION] for day in range(3)]
    assert_same_features(pd.concat([sessions[1], sessions[0], sessions[2]]))


def edge_case_frame() -> pd.DataFrame:
    """Flat bars (high == low, ATR exactly 0) with no volume, then moves that close on their high
    or low, a 60-point gap, a dead stretch, a time gap, and bars across the 18:00 ET session roll."""
    rng = np.random.default_rng(3)
    rows = [(20_000.0,) * 4] * 80
    price = 20_000.0
    for index in range(220):
        price += 60.0 if index == 120 else 0.25 * int(rng.integers(-8, 9))
        high, low = price + 0.25 * int(rng.integers(0, 6)), price - 0.25 * int(rng.integers(0, 6))
        close = (high, low, price)[index % 3]
        rows.append((price, high, low, close))
    rows += [(price,) * 4] * 30
    first = bars_frame(rows, start_et="2024-03-04 09:30")
    first.iloc[:30, first.columns.get_loc("volume")] = 0.0
    first.iloc[250:270, first.columns.get_loc("volume")] = 0.0
    second = bars_frame([(row[0] + 30.0, row[1] + 30.0, row[2] + 30.0, row[3] + 30.0) for row in rows[80:200]], start_et="2024-03-05 17:00", volume=500.0)
    return pd.concat([first, second])


def test_features_match_the_pandas_oracle_on_flat_bars_gaps_and_a_session_roll():
    frame = edge_case_frame()
    features = compute_features(frame, MODEL)
    assert (features.atr[14:80] == 0).all() and len(np.unique(features.session_id)) == 3  # the cases are really there
    assert_same_features(frame)


def test_features_match_the_pandas_oracle_where_thresholds_tie():
    # A constant 7.75-point range keeps pandas' ATR at exactly 7.75 (its EWM leaves a mean equal
    # to the new value alone); closing on the low, then on the high, puts the double-top and
    # double-bottom tests (close vs extreme -/+ ATR) exactly on their threshold.
    high, low = 20_007.75, 20_000.0
    frame = bars_frame([(low, high, low, low)] * 100 + [(high, high, low, high)] * 100)
    assert (compute_features(frame, MODEL).atr[13:] == 7.75).all()
    assert_same_features(frame)


@pytest.mark.parametrize("n_bars", [0, 1, 6, 40, 119])  # shorter than the lags and windows
def test_features_match_the_pandas_oracle_on_tiny_frames(n_bars):
    assert_same_features(generate_bars(days=1, seed=0).iloc[:n_bars])


def test_wilder_matches_pandas_ewm_with_missing_values_inside():
    values = np.random.default_rng(1).normal(size=80)
    values[[0, 1, 30, 31, 32, 60]] = np.nan
    values[40:45] = values[39]  # a constant run: pandas leaves the mean unrounded there
    expected = pd.Series(values).ewm(alpha=1.0 / 14, adjust=False, min_periods=14).mean().to_numpy()
    assert np.array_equal(wilder(values, 14), expected, equal_nan=True)


def test_feature_set_fields_are_the_ones_the_oracle_fills():
    assert set(FeatureSet.__dataclass_fields__) == {"bar", "static", *RAW_FEATURES, *CODE_FEATURES}
