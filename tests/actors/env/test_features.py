"""The 261 features: layout, no look-ahead, finite values."""

from __future__ import annotations

import numpy as np

from actors.env.config import AccountConfig, EnvConfig, InstrumentConfig
from actors.env.dataset import Dataset
from actors.env.env import FuturesTradingEnv
from actors.env.features import FEATURE_NAMES, STATIC_FEATURES, compute_features
from actors.env.instruments import resolve_instrument
from actors.common.synthetic import generate_bars
from bus.messages import OBS_DIM


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

    original, altered = compute_features(frame), compute_features(changed)

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
    features = compute_features(generate_bars(4, seed=2))
    assert np.isfinite(features.bar).all() and np.isfinite(features.static).all()
    assert np.abs(features.bar).max() <= 10 and np.abs(features.static).max() <= 10
    # after warm-up the market features carry information (not all zeros)
    assert (np.abs(features.static[300:]).mean(axis=0) > 0).all()
    assert features.bar.dtype == np.float32 and features.static.dtype == np.float32
