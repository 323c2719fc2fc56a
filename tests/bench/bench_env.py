"""Env benchmark (``bin/bench env``): raw env speed beside a trivial Gymnasium env, measured in one run.

1. Steps/s of one ``FuturesTradingEnv`` with random legal actions (mask read every step),
   against the same loop over a trivial Gymnasium env (261-float Box, Discrete(6),
   constant observation) = the loop's own ceiling. Target: >= 20,000 steps/s.
2. Steps/s over 8 envs stepped in a plain Python loop over 8 env objects (no
   DummyVecEnv), total env steps per second.
3. Feature precomputation (261 features + session schedule) per 100k bars, against a
   single pandas rolling SMA20 over the same bars.
4. Features over a 600-bar window: what paper trading recomputes on every new bar.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from actors.env.account import flat_schedule
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.env.dataset import Dataset
from actors.env.env import FuturesTradingEnv
from actors.env.features import compute_features
from actors.common.instruments import resolve_instrument
from actors.common.synthetic import BARS_PER_SESSION, generate_bars
from tests.bench.common import print_table


class TrivialEnv(gym.Env):
    """The baseline: the cheapest env with the same spaces and an all-true mask."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-10.0, 10.0, shape=(261,), dtype=np.float32)
        self.action_space = spaces.Discrete(6)
        self._obs = np.zeros(261, dtype=np.float32)
        self._mask = np.ones(6, dtype=bool)
        self._t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return self._obs.copy(), {}

    def step(self, action):
        self._t += 1
        return self._obs.copy(), 0.0, False, self._t >= 390, {}

    def action_masks(self) -> np.ndarray:
        return self._mask


def random_legal_loop(envs: list, total_steps: int, seed: int = 0) -> float:
    """Env steps per second stepping ``envs`` round-robin with uniformly random legal actions."""
    rng = np.random.default_rng(seed)
    uniforms = rng.random(total_steps).tolist()
    for index, env in enumerate(envs):
        env.reset(seed=seed + index)
    n_envs = len(envs)
    started = time.perf_counter()
    for step in range(total_steps):
        env = envs[step % n_envs]
        legal = np.flatnonzero(env.action_masks())
        action = int(legal[int(uniforms[step] * len(legal))])
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return total_steps / (time.perf_counter() - started)


def build_env(dataset: Dataset) -> FuturesTradingEnv:
    return FuturesTradingEnv(dataset.train, resolve_instrument(InstrumentConfig()), AccountConfig(), EnvConfig())


def feature_timings(n_bars: int, repeats: int) -> tuple[float, float, int]:
    frame = generate_bars(max(2, -(-n_bars // BARS_PER_SESSION)), seed=0)
    flat_minute = AccountConfig().flat_minute_of_day
    features_secs, baseline_secs = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        compute_features(frame)
        flat_schedule(frame.index, flat_minute)
        features_secs.append(time.perf_counter() - started)
        started = time.perf_counter()
        frame["close"].rolling(20).mean().to_numpy()
        baseline_secs.append(time.perf_counter() - started)
    scale = 100_000 / len(frame)
    return min(features_secs) * scale, min(baseline_secs) * scale, len(frame)


def window_feature_ms(repeats: int, n_bars: int = 600) -> float:
    """Best milliseconds of one ``compute_features`` over the window paper trading rebuilds every bar."""
    frame = generate_bars(-(-n_bars // BARS_PER_SESSION), seed=0).iloc[:n_bars]
    compute_features(frame)
    timings = []
    for _ in range(repeats):
        started = time.perf_counter()
        compute_features(frame)
        timings.append(time.perf_counter() - started)
    return min(timings) * 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench env", description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="env steps per measurement (default 100000)")
    parser.add_argument("--bars", type=int, default=100_000, help="bars for the feature timing (default 100000)")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the feature timing; the best is reported")
    args = parser.parse_args(argv)

    dataset = Dataset.from_frame(generate_bars(60, seed=0), AccountConfig().flat_minute_of_day)
    trivial_one = random_legal_loop([TrivialEnv()], args.steps)
    project_one = random_legal_loop([build_env(dataset)], args.steps)
    trivial_eight = random_legal_loop([TrivialEnv() for _ in range(8)], args.steps)
    project_eight = random_legal_loop([build_env(dataset) for _ in range(8)], args.steps)
    features_secs, baseline_secs, n_bars = feature_timings(args.bars, args.repeats)
    window_ms = window_feature_ms(max(args.repeats, 20))

    print_table(
        f"env benchmark: {args.steps:,} random legal steps per row; features over {n_bars:,} synthetic bars (scaled to 100k)",
        [
            ("steps/s, 1 env", f"{project_one:,.0f}", f"{trivial_one:,.0f} (trivial env)", f"{project_one / trivial_one:.2f}", ">= 20,000"),
            ("steps/s, 8 envs (loop over 8 env objects)", f"{project_eight:,.0f}", f"{trivial_eight:,.0f} (trivial env)", f"{project_eight / trivial_eight:.2f}", "-"),
            ("feature precompute, s per 100k bars", f"{features_secs:.3f}", f"{baseline_secs:.4f} (one pandas SMA20)", f"{features_secs / baseline_secs:.0f}x", "once per dataset"),
            ("features over a 600-bar window, ms per call", f"{window_ms:.2f}", "-", "-", "every bar in paper trading"),
        ],
    )


if __name__ == "__main__":
    main()
