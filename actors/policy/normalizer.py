"""Observation and reward normalisation, equivalent to SB3's VecNormalize.

VecNormalize wraps a VecEnv; here there is no VecEnv to wrap (observations arrive on the
bus), so the same arithmetic is applied to the arrays as they arrive, with SB3's own
RunningMeanStd. Saved with every checkpoint so a frozen or resumed policy sees inputs on
the scale it was trained on.
"""

from __future__ import annotations

import io

import numpy as np
from stable_baselines3.common.running_mean_std import RunningMeanStd


class ObsRewardNormalizer:
    """Running mean/std of observations and of discounted returns, as VecNormalize keeps them."""

    def __init__(
        self,
        obs_dim: int,
        n_envs: int,
        *,
        gamma: float,
        norm_obs: bool = True,
        norm_reward: bool = True,
        clip_obs: float = 10.0,
        clip_reward: float = 10.0,
        epsilon: float = 1e-8,
    ) -> None:
        self.obs_rms = RunningMeanStd(shape=(obs_dim,))
        self.ret_rms = RunningMeanStd(shape=())
        self.returns = np.zeros(n_envs, dtype=np.float64)
        self.gamma = gamma
        self.norm_obs = norm_obs
        self.norm_reward = norm_reward
        self.clip_obs = clip_obs
        self.clip_reward = clip_reward
        self.epsilon = epsilon

    # ------------------------------------------------------------------ observations

    def observe(self, obs: np.ndarray) -> np.ndarray:
        """Update the statistics with a batch of fresh observations, then normalise it."""
        if self.norm_obs:
            self.obs_rms.update(obs)
        return self.normalize_obs(obs)

    def normalize_obs(self, obs: np.ndarray) -> np.ndarray:
        """Normalise without touching the statistics (terminal observations, frozen policy)."""
        if not self.norm_obs:
            return obs.astype(np.float32, copy=False)
        scaled = (obs - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + self.epsilon)
        return np.clip(scaled, -self.clip_obs, self.clip_obs).astype(np.float32)

    # ------------------------------------------------------------------ rewards

    def observe_rewards(self, rewards: np.ndarray, dones: np.ndarray) -> np.ndarray:
        """VecNormalize.step_wait's reward path: update the return statistics, scale, reset at dones."""
        self.returns = self.returns * self.gamma + rewards
        if self.norm_reward:
            self.ret_rms.update(self.returns)
        scaled = self.normalize_reward(rewards)
        self.returns[dones] = 0.0
        return scaled

    def normalize_reward(self, rewards: np.ndarray) -> np.ndarray:
        if not self.norm_reward:
            return rewards.astype(np.float32, copy=False)
        scaled = rewards / np.sqrt(self.ret_rms.var + self.epsilon)
        return np.clip(scaled, -self.clip_reward, self.clip_reward).astype(np.float32)

    # ------------------------------------------------------------------ persistence

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez(
            buffer,
            obs_mean=self.obs_rms.mean,
            obs_var=self.obs_rms.var,
            obs_count=np.float64(self.obs_rms.count),
            ret_mean=self.ret_rms.mean,
            ret_var=self.ret_rms.var,
            ret_count=np.float64(self.ret_rms.count),
        )
        return buffer.getvalue()

    def load_bytes(self, data: bytes) -> None:
        with np.load(io.BytesIO(data)) as arrays:
            if arrays["obs_mean"].shape != self.obs_rms.mean.shape:
                raise ValueError(
                    f"normaliser shape {arrays['obs_mean'].shape} does not match observations {self.obs_rms.mean.shape}"
                )
            self.obs_rms.mean = arrays["obs_mean"].copy()
            self.obs_rms.var = arrays["obs_var"].copy()
            self.obs_rms.count = float(arrays["obs_count"])
            self.ret_rms.mean = arrays["ret_mean"].copy()
            self.ret_rms.var = arrays["ret_var"].copy()
            self.ret_rms.count = float(arrays["ret_count"])
