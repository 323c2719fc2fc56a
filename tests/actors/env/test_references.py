"""Reference policies: the oracle reads the hidden regime beside the bars, never through an observation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.env.dataset import Dataset
from actors.env.factory import build_dataset
from actors.env.env import FuturesTradingEnv
from actors.common.instruments import resolve_instrument
from actors.env.features import STATIC_FEATURES
from actors.env.references import MOMENTUM_LOOKBACKS, REGIME_RULE_BELIEF, reference_policies, toward
from actors.jobs.config import load_config


@pytest.fixture(scope="module")
def setting():
    config = load_config(None, {"data.synthetic_days": 20})
    dataset = build_dataset(config.data, config.account, 0, 0.25)
    return config, dataset


def make_env(config, dataset) -> FuturesTradingEnv:
    env = FuturesTradingEnv(dataset.split("train"), resolve_instrument(config.instrument), config.account, config.env)
    env.reset(seed=0)
    return env


def future_twin(dataset: Dataset, cut: int, flat_minute: int | None) -> Dataset:
    """``dataset`` with every bar after ``cut`` moved (prices x 0.9-1.1, volumes x 0.1-10) and its hidden regime scrambled
    there; the same regime HMM, so only the later bars differ."""
    frame = pd.DataFrame({name: getattr(dataset, name).copy() for name in ("open", "high", "low", "close", "volume")}, index=dataset.index)
    rng = np.random.default_rng(1)
    later = slice(cut + 1, None)
    scale = rng.uniform(0.9, 1.1, len(frame) - cut - 1)
    for name in ("open", "high", "low", "close"):
        frame.iloc[later, frame.columns.get_loc(name)] = np.round(frame[name].to_numpy()[later] * scale / 0.25) * 0.25
    frame.iloc[later, frame.columns.get_loc("volume")] = frame["volume"].to_numpy()[later] * rng.uniform(0.1, 10.0, len(scale))
    twin = Dataset.from_frame(frame, flat_minute, regime_model=dataset.regime_model)
    twin.hidden_regime = dataset.hidden_regime.copy()
    twin.hidden_regime[later] = rng.permutation(twin.hidden_regime[later])
    return twin


def test_no_later_bar_or_hidden_regime_reaches_an_observation_and_the_oracle_reads_the_regime(setting):
    """Two datasets, the same bars up to a cut and different bars and hidden regimes after it: the observations agree
    up to the cut and differ after it (so the comparison can fail), while the oracle's decisions follow the regime."""
    config, dataset = setting
    env_a = make_env(config, dataset)
    cut = env_a.bar + 150
    twin = future_twin(dataset, cut, config.account.flat_minute_of_day)
    env_b = make_env(config, twin)
    assert env_b.bar == env_a.bar
    oracle_a, oracle_b = (reference_policies(data.hidden_regime)["oracle"] for data in (dataset, twin))
    later_differs = oracle_differs = False
    while env_a.bar < cut + 100:
        same = np.array_equal(env_a.observe(), env_b.observe())
        if env_a.bar <= cut:
            assert same, f"bar {env_a.bar} (cut {cut}): a later bar changed this observation"
        later_differs |= not same
        oracle_differs |= env_a.bar > cut and oracle_a(env_a) != oracle_b(env_a)
        env_a.step(HOLD)
        env_b.step(HOLD)
    assert later_differs and oracle_differs


def test_toward_takes_one_step_at_a_time(setting):
    config, dataset = setting
    env = make_env(config, dataset)
    assert toward(env, 0) == HOLD
    assert toward(env, 1) == BUY
    env.step(BUY)
    assert toward(env, 1) == HOLD
    assert toward(env, -1) == SELL  # closes the long first
    env.step(SELL)
    assert env.position is None


def test_every_floor_is_there_and_files_have_no_oracle(setting):
    _, dataset = setting
    assert set(reference_policies(None)) == {"flat", "random", "buy_and_hold", "regime_rule", *(f"momentum_{n}" for n in MOMENTUM_LOOKBACKS)}
    assert "oracle" in reference_policies(dataset.hidden_regime)


def test_the_regime_rule_goes_the_way_of_a_confident_belief_and_stays_flat_in_doubt(setting):
    config, dataset = setting
    env = make_env(config, dataset)
    rule = reference_policies(None)["regime_rule"]
    column = STATIC_FEATURES.index("market_regime")
    seen = set()
    for _ in range(2_000):
        belief = float(dataset.features.static[env.bar, column])
        action = rule(env)
        if env.position is None and env.action_masks()[BUY] and env.action_masks()[SELL]:
            expected = BUY if belief > REGIME_RULE_BELIEF else SELL if belief < -REGIME_RULE_BELIEF else HOLD
            assert action == expected
            seen.add(expected)
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset(seed=1)
    assert seen == {BUY, SELL, HOLD}
