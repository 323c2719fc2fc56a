"""N environments stepped together: the env actor's domain core (no bus, no I/O).

Train mode: each env plays random episodes of its split forever (reset on episode end).
Backtest mode: the split is cut into one equal contiguous chunk per env; each env plays
its chunk once, in order, starting a fresh account after a drawdown breach so the whole
chunk is covered (each breach is an Apex violation in the run metrics). An env whose
chunk is over is inactive: ``active_ids()`` leaves it out and its actions are ignored.

It also remembers, per env, which loop steps (and LLM query ids) opened, managed or
closed the open trade, so a closed trade can name the decisions behind it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from actors.env.env import HOLD, OBS_DIM, FuturesTradingEnv
from actors.env.metrics import RunMetrics
from actors.env.trading import Trade


@dataclass(frozen=True)
class ClosedTrade:
    env_id: int
    episode_id: int
    trade: Trade
    decision_steps: list[int]
    llm_query_ids: list[str]


@dataclass(frozen=True)
class FinishedEpisode:
    env_id: int
    episode_id: int
    steps: int
    episode_return: float
    metrics: dict[str, float]


@dataclass
class BatchStep:
    env_ids: list[int]
    actions: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    terminal_obs: np.ndarray
    closed_trades: list[ClosedTrade] = field(default_factory=list)
    finished_episodes: list[FinishedEpisode] = field(default_factory=list)
    illegal_actions: int = 0


class EnvBatch:
    def __init__(self, envs: list[FuturesTradingEnv], mode: str = "train", seed: int = 0) -> None:
        if not envs:
            raise ValueError("an EnvBatch needs at least one env")
        self.envs = envs
        self.mode = mode
        self.seed = seed
        self.active = [True] * len(envs)
        self.run_metrics = [RunMetrics(env.account_config.start_balance) for env in envs]
        self.episode_steps = [0] * len(envs)
        self.recent_returns: list[float] = []
        self._decisions: list[list[tuple[int, str]]] = [[] for _ in envs]
        self._chunk_end = [0] * len(envs)

    # ------------------------------------------------------------------ episodes

    def reset(self) -> None:
        for env_id, env in enumerate(self.envs):
            if self.mode == "backtest":
                start, stop = self._chunk(env_id)
                self._chunk_end[env_id] = stop
                if stop - start < 1:  # more envs than bars: this one has nothing to play
                    self.active[env_id] = False
                    continue
                env.reset(seed=self.seed + env_id, options={"start": start, "n_bars": stop - start})
            else:
                env.reset(seed=self.seed + env_id)
            self.episode_steps[env_id] = 0

    def _chunk(self, env_id: int) -> tuple[int, int]:
        """Equal chunks, so every env finishes on the same loop step and each env.obs always holds all envs
        (the policy expects a full batch); the last < n_envs bars of the split are left out."""
        split = self.envs[env_id].split
        length = (split.stop - 1 - split.start) // len(self.envs)
        start = split.start + env_id * length
        return start, start + length

    def active_ids(self) -> list[int]:
        return [env_id for env_id, active in enumerate(self.active) if active]

    @property
    def finished(self) -> bool:
        return not any(self.active)

    # ------------------------------------------------------------------ observing

    def observations(self, env_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        obs = np.empty((len(env_ids), OBS_DIM), dtype=np.float32)
        masks = np.empty((len(env_ids), 6), dtype=bool)
        for row, env_id in enumerate(env_ids):
            env = self.envs[env_id]
            obs[row] = env.observe()
            masks[row] = env.action_masks()
        return obs, masks

    def contexts(self, env_ids: list[int]) -> list[dict[str, Any]]:
        return [self.envs[env_id].context() for env_id in env_ids]

    def episode_ids(self, env_ids: list[int]) -> list[int]:
        return [self.envs[env_id].episode_id for env_id in env_ids]

    # ------------------------------------------------------------------ stepping

    def step(self, env_ids: list[int], actions: np.ndarray, loop_step: int, query_ids: list[str] | None = None) -> BatchStep:
        """Step the given (active) envs with their actions; finished episodes are reset or retired."""
        n = len(env_ids)
        result = BatchStep(
            env_ids=list(env_ids),
            actions=np.zeros(n, dtype=np.int64),
            rewards=np.zeros(n, dtype=np.float32),
            terminated=np.zeros(n, dtype=bool),
            truncated=np.zeros(n, dtype=bool),
            terminal_obs=np.zeros((n, OBS_DIM), dtype=np.float32),
        )
        for row, env_id in enumerate(env_ids):
            query_id = query_ids[row] if query_ids and row < len(query_ids) else ""
            self._step_one(row, env_id, int(actions[row]), loop_step, query_id, result)
        return result

    def _step_one(self, row: int, env_id: int, action: int, loop_step: int, query_id: str, result: BatchStep) -> None:
        env = self.envs[env_id]
        if not self.active[env_id]:
            return
        obs, reward, terminated, truncated, info = env.step(action)
        executed = info["executed_action"]
        result.illegal_actions += int(info["illegal_action"])
        result.actions[row] = executed
        result.rewards[row] = reward
        result.terminated[row] = terminated
        result.truncated[row] = truncated
        self.episode_steps[env_id] += 1
        if executed != HOLD:
            self._decisions[env_id].append((loop_step, query_id))
        for trade in info["closed_trades"]:
            decisions = self._decisions[env_id]
            result.closed_trades.append(ClosedTrade(
                env_id, env.episode_id, trade, [step for step, _ in decisions], [qid for _, qid in decisions if qid],
            ))
            self._decisions[env_id] = []
        if terminated or truncated:
            result.terminal_obs[row] = obs
            self._finish_episode(env_id, env, info, result)

    def _finish_episode(self, env_id: int, env: FuturesTradingEnv, info: dict[str, Any], result: BatchStep) -> None:
        metrics = info["episode_metrics"]
        result.finished_episodes.append(FinishedEpisode(env_id, env.episode_id, self.episode_steps[env_id], env.episode_return, metrics))
        self.run_metrics[env_id].add_episode(env.equity_curve, env.trades, env.account.violations, env.episode_return)
        self.recent_returns = (self.recent_returns + [env.episode_return])[-100:]
        self.episode_steps[env_id] = 0
        self._decisions[env_id] = []
        if self.mode == "train":
            env.reset()
            return
        remaining = self._chunk_end[env_id] - env.bar
        if remaining >= 1:  # breached before the chunk's end: a fresh account goes on from here
            env.reset(options={"start": env.bar, "n_bars": remaining})
        else:
            self.active[env_id] = False

    # ------------------------------------------------------------------ results

    def run_summary(self) -> tuple[dict[str, float], list[float], list[Trade]]:
        """Run metrics over all envs (chunks stitched in env order), the run equity curve and all trades."""
        combined = RunMetrics(self.envs[0].account_config.start_balance)
        for metrics in self.run_metrics:
            combined.add_episode(metrics.equity_curve, metrics.trades, metrics.apex_violations, 0.0)
        summary = combined.summary()
        summary["episodes"] = float(sum(metrics.episodes for metrics in self.run_metrics))
        returns = [value for metrics in self.run_metrics for value in metrics.episode_returns]
        summary["mean_episode_return"] = float(np.mean(returns)) if returns else 0.0
        return summary, combined.equity_curve, combined.trades
