"""The policy's trading settings chosen inside each fold on validation days: cadence, minimum hold, turnover charge,
entropy.

A policy that may act on every bar trades often and short and pays its costs away (docs/experiments/features.md);
the env's decision cadence and minimum hold (actors/env/cadence.py), the training-only turnover charge
(env.entry_penalty_usd, actors/env/rewards.py) and PPO's entropy bonus (policy.ent_coef) change how dear trading is
to learn. Which setting suits a market is a fact about that market, so ``bin/run evaluate`` chooses it the way the
supervised floor chooses its threshold (actors/jobs/evaluation/supervised_floor.py): per fold, each candidate of a
small grid is trained (the first seed, the first budget of the learning curve) on the fold's training days less
their last ``VALIDATION_SHARE``, played frozen on those last days through the same env, costs and risk rules, and
the one with the best net P&L there (ties to the earlier, the settings as configured first) is what the fold's
policies train on and are tested with. Test days are never seen. Each candidate trained is a trial of the ledger
(variant ``candidate@<budget>:<name>``, its validation days as its returns), and the choice is in each policy
record's ``params`` and metrics.json's ``policy_choices``. The floors play with the env as configured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec
import numpy as np

from actors.env.dataset import DataSplit
from actors.jobs.config import Config

VALIDATION_SHARE = 0.25
"""The share of a fold's training days (its last ones) the candidates are scored on; they never train on them."""
MIN_FIT_DAYS = 2
CANDIDATE_PREFIX = "candidate@"


@dataclass(frozen=True)
class Candidate:
    """One setting of the grid: env and policy keys over the run's config (None = as configured)."""

    name: str
    decision_every_bars: int | None = None
    min_hold_bars: int | None = None
    entry_penalty_usd: float | None = None
    ent_coef: float | None = None
    skip_forced_bars: bool | None = None
    n_steps: int | None = None

    def apply(self, config: Config) -> Config:
        env = {k: v for k, v in (("decision_every_bars", self.decision_every_bars), ("min_hold_bars", self.min_hold_bars),
                                 ("entry_penalty_usd", self.entry_penalty_usd)) if v is not None}
        policy = {k: v for k, v in (("ent_coef", self.ent_coef), ("skip_forced_bars", self.skip_forced_bars),
                                    ("n_steps", self.n_steps)) if v is not None}
        return msgspec.structs.replace(config, env=msgspec.structs.replace(config.env, **env),
                                       policy=msgspec.structs.replace(config.policy, **policy))

    def params(self, config: Config) -> dict[str, float | int | str]:
        """The settings this candidate trains with over ``config`` (the ledger's params; names as in the config)."""
        applied = self.apply(config)
        return {"policy_setting": self.name, "env.decision_every_bars": applied.env.decision_every_bars,
                "env.min_hold_bars": applied.env.min_hold_bars, "env.entry_penalty_usd": applied.env.entry_penalty_usd,
                "policy.ent_coef": applied.policy.ent_coef, "policy.skip_forced_bars": applied.policy.skip_forced_bars,
                "policy.n_steps": applied.policy.n_steps}


DECISION_ROLLOUT_STEPS = 128
"""policy.n_steps of the gated settings, which learn from choices only (policy.skip_forced_bars): 128 decisions an
env, 512 over 4 envs, about 40 sessions at a decision every 30 bars (the default 2,048 bars would be 630 sessions a
rollout and two PPO updates in a 20,000-step budget)."""

GRID = (
    Candidate("as_configured"),
    Candidate("every_15", decision_every_bars=15, min_hold_bars=15, entry_penalty_usd=10.0,
              skip_forced_bars=True, n_steps=DECISION_ROLLOUT_STEPS),
    Candidate("every_30", decision_every_bars=30, min_hold_bars=30, entry_penalty_usd=10.0, ent_coef=0.02,
              skip_forced_bars=True, n_steps=DECISION_ROLLOUT_STEPS),
)
"""Every bar as configured (1 bar, no minimum hold, no turnover charge, ent_coef 0.01 by default); a decision every
15 minutes held at least 15; every 30 held at least 30 with more exploration. Both gated settings act at the 9:59
close (the first half hour known) and the 15:29 close (the last half hour's edge on ``realistic``), and learn from
their decisions only (policy.skip_forced_bars): their step budget counts decisions, so a budget covers 15-30 times
the days of the every-bar setting's and costs that much more CPU. The $10 charge is a fifth of NQ's round-trip costs
($5 commission + 2 ticks of slippage = $15) on top of them."""
QUICK_GRID = (GRID[0], GRID[2])
"""--quick: the settings as configured and the farthest from them."""


def grid_for(config: Config, grid: tuple[Candidate, ...], budget: int) -> tuple[Candidate, ...]:
    """``grid``, or () where choosing would mean nothing: one candidate, or a candidate budget below one PPO rollout
    (policy.n_steps x env.n_envs steps), where every candidate is its untrained initial policy."""
    return grid if len(grid) > 1 and budget >= config.policy.n_steps * config.env.n_envs else ()


@dataclass
class PolicyChoice:
    """One fold's choice: what each candidate netted on the validation days, and the winner."""

    fold: int
    chosen: Candidate
    params: dict[str, float | int | str]
    fit_days: tuple[int, int]
    validation_days: tuple[int, int]
    budget: int
    seed: int
    nets: dict[str, float] = field(default_factory=dict)
    trades: dict[str, int] = field(default_factory=dict)
    validation_daily_pnl: dict[str, list[float]] = field(default_factory=dict)
    candidate_params: dict[str, dict] = field(default_factory=dict)
    stood_aside: bool = False
    """evaluate --stand-aside: the chosen setting did not net above $0 on the validation days, so the fold's policies
    played flat on its test days (walkforward.gather_walk_forward)."""

    def loses_on_validation(self) -> bool:
        """The chosen setting netted $0 or less on the validation days (False when nothing was tried there)."""
        return bool(self.nets) and self.nets[self.chosen.name] <= 0

    def to_json(self) -> dict:
        return {"fold": self.fold, "chosen": self.chosen.name, "params": self.params, "fit_days": list(self.fit_days),
                "validation_days": list(self.validation_days), "budget": self.budget, "seed": self.seed,
                "validation_net_usd": self.nets, "validation_trades": self.trades, "stood_aside": self.stood_aside}

    def text(self) -> str:
        nets = ", ".join(f"{name} ${net:,.0f} ({self.trades[name]} trades)" for name, net in self.nets.items())
        aside = "; it stands aside (flat) on the test days: no setting netted above $0 on the validation days" if self.stood_aside else ""
        return (f"policy settings {self.chosen.name} (trained {self.budget:,} steps on days {self.fit_days[0]}-"
                f"{self.fit_days[1] - 1}, chosen on validation days {self.validation_days[0]}-{self.validation_days[1] - 1}: {nets}){aside}")


def as_configured(config: Config, fold: int, train_days: tuple[int, int], budget: int, seed: int) -> PolicyChoice:
    """No grid, or too few training days to hold some back: the settings as configured, nothing tried."""
    return PolicyChoice(fold, GRID[0], GRID[0].params(config), train_days, (train_days[1], train_days[1]), budget, seed)


def choose_policy_settings(config: Config, dataset, fold: int, train_days: tuple[int, int], grid: tuple[Candidate, ...],
                           budget: int, seed: int) -> PolicyChoice:
    """Train each candidate on ``train_days`` less the last VALIDATION_SHARE, pick by net P&L on those last days."""
    from actors.jobs.evaluation.chain import InProcessTrainer, frozen_copy, learner_decide, play_window

    first_day, stop_day = train_days
    n_validation = max(1, int(round((stop_day - first_day) * VALIDATION_SHARE)))
    if len(grid) < 2 or stop_day - first_day - n_validation < MIN_FIT_DAYS:
        return as_configured(config, fold, train_days, budget, seed)
    split_day = stop_day - n_validation
    fit = _day_split(dataset, f"fold{fold}_fit", first_day, split_day)
    validation = _day_split(dataset, f"fold{fold}_validation", split_day, stop_day)
    choice = PolicyChoice(fold, grid[0], {}, (first_day, split_day), (split_day, stop_day), budget, seed)
    for candidate in grid:
        tried = candidate.apply(msgspec.structs.replace(
            config, policy=msgspec.structs.replace(config.policy, seed=seed, learn=True)))
        learner = InProcessTrainer(tried, fit).train_until(budget)
        window = play_window(tried, validation, learner_decide(frozen_copy(learner, tried)))
        choice.nets[candidate.name] = window.net_pnl
        choice.trades[candidate.name] = len(window.trades)
        choice.validation_daily_pnl[candidate.name] = np.asarray(window.daily_pnl, dtype=np.float64).tolist()
        choice.candidate_params[candidate.name] = candidate.params(config)
    best = max(choice.nets.values())
    choice.chosen = next(c for c in grid if choice.nets[c.name] == best)  # ties to the earlier
    choice.params = choice.chosen.params(config)
    return choice


def _day_split(dataset, name: str, first_day: int, stop_day: int) -> DataSplit:
    """Trading days [first_day, stop_day) as a split (walkforward.day_split's, which imports this module)."""
    starts = dataset.session_starts
    stop = int(starts[stop_day]) if stop_day < len(starts) else len(dataset)
    return DataSplit(dataset, name, max(int(starts[first_day]), dataset.warmup_bars), stop)


def candidate_name(budget: int, candidate: str) -> str:
    return f"{CANDIDATE_PREFIX}{budget}:{candidate}"


def candidate_series(choices: list[PolicyChoice]) -> dict[str, np.ndarray]:
    """Each candidate's validation days over the folds, in fold order (one trial each, as the ledger joins them)."""
    joined: dict[str, list[float]] = {}
    for choice in choices:
        for name, days in choice.validation_daily_pnl.items():
            joined.setdefault(candidate_name(choice.budget, name), []).extend(days)
    return {name: np.asarray(days, dtype=np.float64) for name, days in joined.items()}
