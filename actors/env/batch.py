"""N environments stepped together: the env actor's domain core (no bus, no I/O).

Train mode: each env plays random episodes of its split forever (reset on episode end).
Backtest mode: the split is cut into one equal contiguous chunk per env; each env plays
its chunk once, in order, as a walk of consecutive evaluation accounts: after a pass or a
fail a fresh account starts at the next bar, so the whole chunk is covered (each breach is
an Apex violation in the run metrics). ``evaluations(env_id)`` lists the accounts and
``history(env_id)`` the per-bar series (time, prices, equity, position) the report draws.
An env whose chunk is over is inactive: ``active_ids()`` leaves it out and its actions are ignored.

It also remembers, per env, which loop steps (and LLM query ids) opened, managed or
closed the open trade, so a closed trade can name the decisions behind it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from actors.common.actions import HOLD, OBS_DIM
from actors.env.env import FuturesTradingEnv
from actors.env.account_walk import EvaluationRecord, evaluation_summary
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


@dataclass(frozen=True)
class BarHistory:
    """One env's backtest, bar by bar, aligned in time (index i of every array is the same bar)."""

    times_ns: np.ndarray
    """int64 [T]: bar start, UTC ns."""
    close: np.ndarray
    high: np.ndarray
    low: np.ndarray
    equity: np.ndarray
    """float64 [T]: account equity at the bar's close (a new evaluation starts at its start balance)."""
    position: np.ndarray
    """int64 [T]: contracts held after the bar (+ long, - short, 0 flat)."""
    evaluation: np.ndarray
    """int64 [T]: index of the evaluation account (EvaluationRecord.index) the bar belongs to."""


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
        self._windows: list[list[tuple[int, int]]] | None = None
        """env.backtest_window = events: each env's windows still to play, (start, stop) (event_windows)."""
        self._evaluations: list[list[EvaluationRecord]] = [[] for _ in envs]
        self._history: list[list[tuple[int, float, float, float, float, int, int]]] = [[] for _ in envs]
        for env in envs:
            env.end_episode_on_pass = mode == "backtest"

    # ------------------------------------------------------------------ episodes

    def reset(self) -> None:
        if self.mode == "backtest" and self.envs[0].config.backtest_window == "events":
            self._windows = event_windows(self.envs[0], len(self.envs))
        for env_id, env in enumerate(self.envs):
            if self.mode == "backtest":
                start, stop = self._windows[env_id].pop(0) if self._windows is not None else self._chunk(env_id)
                self._chunk_end[env_id] = stop
                if stop - start < 1:  # more envs than bars: this one has nothing to play
                    self.active[env_id] = False
                    continue
                env.reset(seed=self.seed + env_id, options={"start": start, "n_bars": stop - start})
                self._evaluations[env_id] = []
                self._history[env_id] = []
                self._record_bar(env_id, env)
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
        reward, terminated, truncated, info = env.play(action)  # the observation is read when it is published
        executed = info["executed_action"]
        result.illegal_actions += int(info["illegal_action"])
        result.actions[row] = executed
        result.rewards[row] = reward
        result.terminated[row] = terminated
        result.truncated[row] = truncated
        self.episode_steps[env_id] += 1
        if self.mode == "backtest":
            self._record_bar(env_id, env)
        if executed != HOLD:
            self._decisions[env_id].append((loop_step, query_id))
        for trade in info["closed_trades"]:
            decisions = self._decisions[env_id]
            result.closed_trades.append(ClosedTrade(
                env_id, env.episode_id, trade, [step for step, _ in decisions], [qid for _, qid in decisions if qid],
            ))
            self._decisions[env_id] = []
        if terminated or truncated:
            result.terminal_obs[row] = env.observe()
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
        self._evaluations[env_id].append(env.evaluation.record())
        remaining = self._chunk_end[env_id] - env.bar
        if remaining >= 1:  # passed or failed before the chunk's end: a fresh account goes on from here
            env.reset(options={"start": env.bar, "n_bars": remaining})
        elif self._windows is not None and self._windows[env_id]:  # the next event window, a fresh account
            start, stop = self._windows[env_id].pop(0)
            self._chunk_end[env_id] = stop
            env.reset(options={"start": start, "n_bars": stop - start})
        else:
            self.active[env_id] = False

    def _record_bar(self, env_id: int, env: FuturesTradingEnv) -> None:
        data = env.split.dataset
        bar = env.bar
        position = env.position
        held = 0 if position is None else position.side * position.contracts
        self._history[env_id].append(
            (int(data.start_ns[bar]), float(data.close[bar]), float(data.high[bar]), float(data.low[bar]), env.equity, held, env.evaluation.index)
        )

    # ------------------------------------------------------------------ results

    def evaluations(self, env_id: int) -> list[EvaluationRecord]:
        """The evaluation accounts env ``env_id`` walked through so far (backtest mode; the running one last, open)."""
        records = list(self._evaluations[env_id])
        env = self.envs[env_id]
        if self.mode == "backtest" and self.active[env_id] and env.episode_id >= 0:
            records.append(env.evaluation.record())
        return records

    def history(self, env_id: int) -> BarHistory:
        """Env ``env_id``'s bars so far (backtest mode; empty in training)."""
        rows = self._history[env_id]
        columns = list(zip(*rows)) if rows else [()] * 7
        return BarHistory(
            times_ns=np.array(columns[0], dtype=np.int64),
            close=np.array(columns[1], dtype=np.float64),
            high=np.array(columns[2], dtype=np.float64),
            low=np.array(columns[3], dtype=np.float64),
            equity=np.array(columns[4], dtype=np.float64),
            position=np.array(columns[5], dtype=np.int64),
            evaluation=np.array(columns[6], dtype=np.int64),
        )

    def evaluation_summary(self) -> dict[str, float]:
        """evaluations, passed, failed, open, pass_rate, mean_days_to_pass over every env's walk."""
        return evaluation_summary([record for env_id in range(len(self.envs)) for record in self.evaluations(env_id)])

    def run_summary(self) -> tuple[dict[str, float], Sequence[float], list[Trade]]:
        """Run metrics over all envs (chunks stitched in env order), the run equity curve and all trades."""
        combined = RunMetrics(self.envs[0].account_config.start_balance)
        for metrics in self.run_metrics:
            combined.add_episode(metrics.equity_curve, metrics.trades, metrics.apex_violations, 0.0)
        summary = combined.summary()
        summary["episodes"] = float(sum(metrics.episodes for metrics in self.run_metrics))
        returns = [value for metrics in self.run_metrics for value in metrics.episode_returns]
        summary["mean_episode_return"] = float(np.mean(returns)) if returns else 0.0
        return summary, combined.equity_curve, combined.trades


def event_windows(env: FuturesTradingEnv, n_envs: int) -> list[list[tuple[int, int]]]:
    """env.backtest_window = events: per env, the (start, stop) bars it plays: from event_window_before_bars before
    each bar that makes an event public to event_window_after_bars after. An event inside the previous window is
    played there (not twice); a window the split cuts is left out; the windows are dealt out in turn and each env gets
    as many (the remainder, fewer than n_envs, is left out), so every env ends on the same loop step and each env.obs
    holds all envs, as _chunk's equal chunks do."""
    split, config = env.split, env.config
    truth = getattr(split.dataset, "event_truth", None)
    if truth is None:
        raise ValueError("env.backtest_window = events needs a market with events (news, news_null, news_drift)")
    before, length = config.event_window_before_bars, config.event_window_before_bars + config.event_window_after_bars
    windows: list[tuple[int, int]] = []
    for bar in sorted(set(np.asarray(truth["event_bar"], dtype=np.int64).tolist())):
        start = bar - before
        if start < split.start or start + length > split.stop - 1 or (windows and bar < windows[-1][1]):
            continue
        windows.append((start, start + length))
    per_env = len(windows) // n_envs
    if per_env == 0:
        raise ValueError(f"env.backtest_window = events: {len(windows)} event windows in split {split.name!r}, fewer than "
                         f"the {n_envs} envs")
    return [windows[env_id::n_envs][:per_env] for env_id in range(n_envs)]
