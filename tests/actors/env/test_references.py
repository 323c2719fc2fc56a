"""Reference policies: the oracle reads the hidden regime beside the bars, never through an observation."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
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


def test_the_oracle_sees_the_regime_and_the_observation_does_not(setting):
    config, dataset = setting
    env_a, env_b = make_env(config, dataset), make_env(config, dataset)
    scrambled = np.random.default_rng(0).permutation(dataset.hidden_regime)
    oracle_a = reference_policies(dataset.hidden_regime)["oracle"]
    oracle_b = reference_policies(scrambled)["oracle"]
    decisions_differ = False
    for _ in range(300):
        assert np.array_equal(env_a.observe(), env_b.observe())  # same bars: same observation, whatever the regime
        decisions_differ |= oracle_a(env_a) != oracle_b(env_a)
        env_a.step(HOLD)
        env_b.step(HOLD)
    assert decisions_differ


def test_features_are_computed_from_the_bars_alone(setting):
    config, dataset = setting
    twin = build_dataset(config.data, config.account, 0, 0.25)
    twin.hidden_regime = np.zeros_like(twin.hidden_regime)
    assert np.array_equal(twin.features.bar, dataset.features.bar)
    assert np.array_equal(twin.features.static, dataset.features.static)


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
