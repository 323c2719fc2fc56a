"""The observation/reward normaliser gives what SB3's VecNormalize gives on the same stream."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

from actors.policy.normalizer import ObsRewardNormalizer


class ScriptedEnv(gym.Env):
    """Replays fixed observations and rewards; ends an episode every 5 steps."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(3,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, offset: int) -> None:
        self.rng = np.random.default_rng(offset)
        self.t = 0

    def _obs(self):
        return (self.rng.normal(size=3) * [1.0, 10.0, 100.0] + [0.0, 5.0, -50.0]).astype(np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action):
        self.t += 1
        return self._obs(), float(self.rng.normal() * 3 + 1), False, self.t % 5 == 0, {}


def test_normalised_observations_and_rewards_match_vecnormalize():
    venv = VecNormalize(DummyVecEnv([lambda i=i: ScriptedEnv(i) for i in range(2)]), gamma=0.9)
    twin = DummyVecEnv([lambda i=i: ScriptedEnv(i) for i in range(2)])  # same stream, raw
    ours = ObsRewardNormalizer(3, 2, gamma=0.9)

    np.testing.assert_allclose(ours.observe(twin.reset()), venv.reset(), rtol=1e-5)
    for _ in range(30):
        actions = np.zeros(2, dtype=np.int64)
        expected_obs, expected_rewards, dones, _ = venv.step(actions)
        raw_obs, raw_rewards, raw_dones, _ = twin.step(actions)
        np.testing.assert_array_equal(dones, raw_dones)
        np.testing.assert_allclose(ours.observe_rewards(raw_rewards, raw_dones), expected_rewards, rtol=1e-5)
        np.testing.assert_allclose(ours.observe(raw_obs), expected_obs, rtol=1e-4, atol=1e-5)


def test_the_normaliser_survives_a_round_trip_through_bytes():
    ours = ObsRewardNormalizer(3, 2, gamma=0.99)
    ours.observe(np.arange(6, dtype=np.float32).reshape(2, 3))
    ours.observe_rewards(np.array([1.0, 2.0]), np.array([False, True]))
    copy = ObsRewardNormalizer(3, 2, gamma=0.99)

    copy.load_bytes(ours.to_bytes())

    probe = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(copy.normalize_obs(probe), ours.normalize_obs(probe))
    np.testing.assert_array_equal(copy.normalize_reward(np.array([1.0])), ours.normalize_reward(np.array([1.0])))
