"""The decision chain in one process: the env, the policy's learner and the risk rules, no bus.

The walk-forward evaluation trains and tests many policies; through the actor processes each
fold would pay their start-up and the bus for every step. Here the same pieces run in one
loop: ``FuturesTradingEnv`` (fills, costs, brackets, Apex account), ``OnlineMaskablePPO``
(the policy actor's learner, with its normaliser, masks and rollout chain) and the risk
actor's ``RiskRules`` with its ``Halts``. What the policy learns from and what risk changes
are the same as in ``bin/run train``; only the transport is missing.

``play_window`` walks a window of bars as consecutive evaluation accounts (a fresh account
after a pass or a breach, as backtests do) and returns the daily P&L, the trades and the
share of bars each risk rule halted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import msgspec
import numpy as np

from actors.common.actions import HOLD
from actors.env.cadence import is_forced
from actors.env.dataset import DataSplit
from actors.env.env import FuturesTradingEnv
from actors.common.instruments import resolve_instrument
from actors.env.statistics import session_of
from actors.env.trading import Trade
from actors.jobs.config import Config
from actors.policy.config import PolicyConfig
from actors.policy.learner import OnlineMaskablePPO
from actors.risk.actor import account_limits
from actors.risk.halts import Halts
from actors.risk.rules import RiskRules

Decide = Callable[[FuturesTradingEnv], int]


class RiskStage:
    """The risk actor's review of one env's action, in process (same rules, same halts).

    ``training``: the rules of an env in train mode (risk.vetoes_while_training decides the vetoes), else every rule.
    """

    def __init__(self, config: Config, enabled: bool = True, training: bool = False) -> None:
        self.enabled = enabled
        risk = config.risk.for_env_mode("train" if training else "backtest")
        self.rules = RiskRules(risk, account_limits(config))
        self.halts = Halts(risk, self.rules)
        self.halted_steps: Counter[str] = Counter()
        """Steps on which each entry rule was in force (a halt), whatever the policy proposed."""

    def review(self, env_id: int, step: int, env: FuturesTradingEnv, action: int) -> int:
        if not self.enabled:
            return action
        context = SimpleNamespace(**env.context())
        trades = len(env.trades)
        halt = self.halts.update(env_id, step, context, env.episode_id, trades)
        if halt:
            self.halted_steps[halt] += 1
        return int(self.rules.review(int(action), env.action_masks(), context, trades, halt).action)


def make_split_env(config: Config, split: DataSplit) -> FuturesTradingEnv:
    return FuturesTradingEnv(split, resolve_instrument(config.instrument), config.account, config.env)


@dataclass
class WindowResult:
    """One policy's walk over a window of bars."""

    session: np.ndarray
    """int64 [S]: the trading day of each row below."""
    daily_pnl: np.ndarray
    """float64 [S]: net P&L of each day (costs paid), summed over the accounts walked."""
    trades: list[Trade]
    steps: int
    halted_share: dict[str, float] = field(default_factory=dict)
    """Share of the window's bars on which each risk rule halted entries."""
    accounts: int = 1
    breaches: int = 0

    @property
    def net_pnl(self) -> float:
        return float(self.daily_pnl.sum())

    def summary(self) -> dict[str, float]:
        wins = sum(1 for trade in self.trades if trade.pnl_usd > 0)
        return {
            "net_pnl": self.net_pnl,
            "days": float(len(self.daily_pnl)),
            "trades": float(len(self.trades)),
            "win_rate": wins / len(self.trades) if self.trades else float("nan"),
            "breaches": float(self.breaches),
            "halted_share": float(sum(self.halted_share.values())),
        }


def play_window(config: Config, split: DataSplit, decide: Decide, *, risk: bool = True) -> WindowResult:
    """``decide`` trades every bar of ``split`` once, through the env and (``risk``) the risk rules."""
    env = make_split_env(config, split)
    env.end_episode_on_pass = True
    stage = RiskStage(config, enabled=risk)
    last = split.stop - 1
    env.reset(options={"start": split.start, "n_bars": last - split.start})
    times: list[int] = []
    pnl: list[float] = []
    trades: list[Trade] = []
    accounts, breaches, step = 1, 0, 0
    start_ns = split.dataset.start_ns
    skip_forced = config.policy.skip_forced_bars
    while True:
        equity_before = env.equity
        # A policy that learned from choices only is not asked on a bar that is none (its answer is HOLD anyway).
        action = stage.review(0, step, env, HOLD if skip_forced and is_forced(env.action_masks()) else decide(env))
        _, _, terminated, truncated, info = env.step(action)
        step += 1
        times.append(int(start_ns[env.bar]))
        pnl.append(env.equity - equity_before)
        trades.extend(info["closed_trades"])
        if terminated or truncated:
            breaches += int(terminated)
            remaining = last - env.bar
            if remaining < 1:
                break
            accounts += 1
            env.reset(options={"start": env.bar, "n_bars": remaining})
    sessions = session_of(np.asarray(times, dtype=np.int64))
    days, inverse = np.unique(sessions, return_inverse=True)
    daily = np.bincount(inverse, weights=np.asarray(pnl), minlength=len(days))
    halted = {rule: count / step for rule, count in stage.halted_steps.items()}
    return WindowResult(days, daily, trades, step, halted, accounts, breaches)


def learner_decide(learner: OnlineMaskablePPO) -> Decide:
    """A frozen learner as a ``Decide`` (one env, the most probable allowed action when configured so)."""
    step = [0]

    def decide(env: FuturesTradingEnv) -> int:
        obs = env.observe()[None, :]
        masks = env.action_masks()[None, :]
        step[0] += 1
        return int(learner.propose(obs, masks, step[0]).actions[0])

    return decide


def ensemble_decide(learners: list[OnlineMaskablePPO]) -> Decide:
    """Frozen learners (one per seed) as one ``Decide``: the allowed action with the highest mean probability.

    Seeds of the same settings learn the same market with different noise; averaging their distributions keeps
    what they agree on (a regime) and lets one seed's quirk be outvoted."""
    step = [0]

    def decide(env: FuturesTradingEnv) -> int:
        obs = env.observe()[None, :]
        masks = env.action_masks()[None, :]
        step[0] += 1
        mean = np.mean([learner.propose(obs, masks, step[0]).probs[0] for learner in learners], axis=0)
        return int(np.argmax(np.where(masks[0], mean, -1.0)))

    return decide


class InProcessTrainer:
    """The policy actor's learner trained in one process on random episodes of ``split``, step budget by budget.

    The same loop as ``bin/run train`` without the bus: ``config.env.n_envs`` envs step together, the risk rules of
    training review every proposal (``risk``; the vetoes only with risk.vetoes_while_training), and the learner
    stores what ``policy.learn_from`` says.
    ``train_until(n)`` can be called with growing ``n`` for a learning curve.
    """

    def __init__(self, config: Config, split: DataSplit, *, risk: bool = True) -> None:
        self.n_envs = config.env.n_envs
        self.envs = [make_split_env(config, split) for _ in range(self.n_envs)]
        for env_id, env in enumerate(self.envs):
            env.reset(seed=max(config.policy.seed, config.run.seed) * 1000 + env_id)
        self.stage = RiskStage(config, enabled=risk, training=True)
        self.learner = OnlineMaskablePPO(config.policy, self.n_envs)
        self.step = 0
        self.skip_forced = config.policy.skip_forced_bars
        self._bars = [0] * self.n_envs
        """Bars each env played: the risk rules' clock (their cooldowns count bars, whatever the learner stores)."""
        self._returns = [0.0] * self.n_envs
        self._lengths = [0] * self.n_envs
        if self.skip_forced:
            for env_id, env in enumerate(self.envs):
                self._play_forced(env_id, env)

    def _review(self, env_id: int, env: FuturesTradingEnv, action: int) -> int:
        action = self.stage.review(env_id, self._bars[env_id], env, action)
        self._bars[env_id] += 1
        return action

    def _play_forced(self, env_id: int, env: FuturesTradingEnv) -> tuple[float, bool, bool, np.ndarray | None]:
        """policy.skip_forced_bars: play the bars whose mask allows only HOLD (through the risk rules, as the actor
        loop would) until the policy has a choice or the episode ends; (their reward, terminated, truncated, the
        terminal observation when it ended)."""
        reward = 0.0
        while is_forced(env.action_masks()):
            _, bar_reward, terminated, truncated, _ = env.step(self._review(env_id, env, HOLD))
            reward += bar_reward
            if terminated or truncated:
                return reward, terminated, truncated, env.observe()
        return reward, False, False, None

    def train_until(self, timesteps: int, on_update: Callable[[int, dict], None] | None = None) -> OnlineMaskablePPO:
        learner, envs = self.learner, self.envs
        while learner.num_timesteps < timesteps:
            obs = np.stack([env.observe() for env in envs])
            masks = np.stack([env.action_masks() for env in envs])
            proposal = learner.propose(obs, masks, self.step)
            executed = np.array([self._review(i, env, int(a)) for i, (env, a) in enumerate(zip(envs, proposal.actions))])
            rewards = np.zeros(self.n_envs, dtype=np.float32)
            terminated = np.zeros(self.n_envs, dtype=bool)
            truncated = np.zeros(self.n_envs, dtype=bool)
            terminal_obs = np.zeros_like(obs)
            for i, env in enumerate(envs):
                next_obs, reward, terminated[i], truncated[i], _ = env.step(int(executed[i]))
                if self.skip_forced and not (terminated[i] or truncated[i]):
                    held_reward, terminated[i], truncated[i], held_terminal = self._play_forced(i, env)
                    reward += held_reward
                    next_obs = held_terminal if held_terminal is not None else next_obs
                rewards[i] = reward
                self._returns[i] += reward
                self._lengths[i] += 1
                if terminated[i] or truncated[i]:
                    terminal_obs[i] = next_obs
                    learner.note_episode(self._returns[i], self._lengths[i])
                    self._returns[i], self._lengths[i] = 0.0, 0
                    env.reset()
                    if self.skip_forced:
                        # A new episode starts flat: its held bars before the first choice earn exactly 0.
                        self._play_forced(i, env)
            learner.record(self.step, executed, rewards, terminated, truncated, terminal_obs)
            self.step += 1
            if learner.update_ready:
                learner.begin_update()
                learner.run_update()
                learner.finish_update()
                if on_update is not None:
                    on_update(learner.num_timesteps, dict(learner.latest_figures))
        return learner


def frozen_policy_config(config: Config) -> PolicyConfig:
    """The run's policy settings for a frozen, deterministic policy (what backtests serve)."""
    return msgspec.structs.replace(config.policy, learn=False, deterministic_when_frozen=True)


def frozen_copy(learner: OnlineMaskablePPO, config: Config) -> OnlineMaskablePPO:
    """The trained learner as a frozen, deterministic policy for one env (what backtests serve)."""
    return OnlineMaskablePPO(frozen_policy_config(config), 1, checkpoint=learner.checkpoint())


def frozen_checkpoint_decide(path: Path, config: Config) -> Decide:
    """A checkpoint file as a frozen, deterministic ``Decide`` for one env (what a backtest of it would serve)."""
    return learner_decide(OnlineMaskablePPO.from_checkpoint_file(path, frozen_policy_config(config), 1))
