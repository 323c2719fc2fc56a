"""Walk-forward evidence: train on the days before each window, test frozen on it, against floors and a ceiling.

For each fold (actors/jobs/evaluation/folds.py) and each seed, the policy actor's learner is
trained in process (actors/jobs/evaluation/chain.py) on the fold's training days, stopping at
each budget of the learning curve to play the fold's test window frozen. The floors (flat,
random, buy-and-hold, the momentum rule and the regime rule, their lookback and threshold
chosen on the fold's training days: actors/jobs/evaluation/floors.py) and, on a synthetic
market, the oracle play the same windows through the same env and risk rules.

Every variant ends as one out-of-sample daily P&L series over all test days in time order;
``summarise`` turns them into the figures the report and the success table read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import msgspec
import numpy as np

from actors.env.dataset import DataSplit, Dataset
from actors.env.statistics import TRADING_DAYS_PER_YEAR
from actors.jobs.evaluation.chain import InProcessTrainer, WindowResult, ensemble_decide, frozen_copy, learner_decide, play_window
from actors.jobs.evaluation.floors import FloorChoice, chosen_floors, fit_floors
from actors.jobs.evaluation.folds import Fold, walk_forward_folds
from actors.policy.checkpoint import Checkpoint
from actors.jobs.config import Config

Progress = Callable[[str], None]


@dataclass
class VariantSeries:
    """One variant's out-of-sample days, concatenated over the folds."""

    name: str
    daily_pnl: list[float] = field(default_factory=list)
    trades: int = 0
    wins: int = 0
    halted_bars: float = 0.0
    bars: int = 0
    breaches: int = 0
    fold_days: list[int] = field(default_factory=list)
    """How many of ``daily_pnl``'s days each fold added, in fold order (the trials ledger keeps one line a fold)."""

    def add(self, result: WindowResult) -> None:
        self.daily_pnl.extend(result.daily_pnl.tolist())
        self.fold_days.append(len(result.daily_pnl))
        self.trades += len(result.trades)
        self.wins += sum(1 for trade in result.trades if trade.pnl_usd > 0)
        self.halted_bars += sum(result.halted_share.values()) * result.steps
        self.bars += result.steps
        self.breaches += result.breaches


@dataclass
class WalkForward:
    market: str
    folds: list[Fold]
    seeds: list[int]
    budgets: list[int]
    series: dict[str, VariantSeries]
    """'policy@<budget>#<seed>', 'ensemble@<budget>' (two seeds or more) and the reference names -> their OOS days."""
    training: list[dict] = field(default_factory=list)
    """One row per (fold, seed, budget): the learner's last PPO figures."""
    last_policy: tuple[int, Checkpoint] | None = None
    """(env steps, checkpoint) of the last fold's first seed at the last budget, frozen as tested: what
    ``bin/run evaluate --lockstep-decisions`` plays through the actors at the start of that fold's test window."""
    floor_choices: list[FloorChoice] = field(default_factory=list)
    """Per fold, what the tunable floors chose on its training days (actors/jobs/evaluation/floors.py)."""

    def policy_names(self, budget: int | None = None) -> list[str]:
        budget = self.budgets[-1] if budget is None else budget
        return [policy_name(budget, seed) for seed in self.seeds]


def policy_name(budget: int, seed: int) -> str:
    return f"policy@{budget}#{seed}"


def ensemble_name(budget: int) -> str:
    return f"ensemble@{budget}"


def day_split(dataset: Dataset, name: str, first_day: int, stop_day: int) -> DataSplit:
    """The bars of trading days [first_day, stop_day) as a split (episodes never start in the warm-up)."""
    starts = dataset.session_starts
    start = int(starts[first_day])
    stop = int(starts[stop_day]) if stop_day < len(starts) else len(dataset)
    return DataSplit(dataset, name, max(start, dataset.warmup_bars), stop)


def run_walk_forward(config: Config, dataset: Dataset, market: str, *, n_folds: int, seeds: list[int], budgets: list[int],
                     purge_days: int, embargo_days: int = 1, min_train_days: int = 10,
                     progress: Progress | None = None) -> WalkForward:
    say = progress or (lambda _text: None)
    folds = walk_forward_folds(len(dataset.session_starts), n_folds, purge_days=purge_days, embargo_days=embargo_days,
                               min_train_days=min_train_days)
    series: dict[str, VariantSeries] = {}
    result = WalkForward(market, folds, seeds, budgets, series)

    def add(name: str, window: WindowResult) -> None:
        series.setdefault(name, VariantSeries(name)).add(window)

    full_data = dataset
    for fold in folds:
        # The regime HMM behind market_regime is refitted on this fold's training days only (actors/env/regime_model.py).
        dataset = full_data.with_regime_fitted_on(int(full_data.session_starts[fold.train_stop_day]))
        for line in dataset.regime_model.describe():
            say(f"fold {fold.index + 1}/{len(folds)} {line}")
        train = day_split(dataset, f"fold{fold.index}_train", fold.train_start_day, fold.train_stop_day)
        test = day_split(dataset, f"fold{fold.index}_test", fold.test_start_day, fold.test_stop_day)
        choice = fit_floors(config, train, (fold.train_start_day, fold.train_stop_day))  # the test window is not seen
        result.floor_choices.append(choice)
        say(f"fold {fold.index + 1}/{len(folds)} floors: {choice.text()}")
        for name, decide in chosen_floors(choice, dataset.hidden_regime, seed=config.run.seed + fold.index).items():
            add(name, play_window(config, test, decide))
        frozen: dict[int, list] = {budget: [] for budget in budgets}
        for seed in seeds:
            seeded = msgspec.structs.replace(config, policy=msgspec.structs.replace(config.policy, seed=seed, learn=True))
            trainer = InProcessTrainer(seeded, train)
            for budget in budgets:
                learner = trainer.train_until(budget)
                if fold is folds[-1] and seed == seeds[0] and budget == budgets[-1]:
                    checkpoint = learner.checkpoint()
                    meta = {**checkpoint.meta, "regime_model": dataset.regime_model.to_dict()}  # the belief it was trained on
                    result.last_policy = (learner.num_timesteps, replace(checkpoint, meta=meta))
                frozen[budget].append(frozen_copy(learner, seeded))
                window = play_window(seeded, test, learner_decide(frozen[budget][-1]))
                add(policy_name(budget, seed), window)
                figures = learner.latest_figures
                result.training.append({"fold": fold.index, "seed": seed, "budget": budget, "updates": learner.n_updates,
                                        **{k: float(figures[k]) for k in ("approx_kl", "clip_fraction", "explained_variance") if k in figures}})
                say(f"fold {fold.index + 1}/{len(folds)} seed {seed} {budget:,} steps: test days {fold.test_start_day}-"
                    f"{fold.test_stop_day - 1}, net ${window.net_pnl:,.0f}, {len(window.trades)} trades")
        for budget, learners in frozen.items() if len(seeds) > 1 else ():
            window = play_window(config, test, ensemble_decide(learners))
            add(ensemble_name(budget), window)
            say(f"fold {fold.index + 1}/{len(folds)} ensemble of {len(learners)} seeds {budget:,} steps: net ${window.net_pnl:,.0f}, "
                f"{len(window.trades)} trades")
    return result


def annualised_sharpe(daily_pnl: np.ndarray, capital: float) -> float:
    """Sharpe of daily returns on ``capital`` (the account's start balance), annualised with sqrt(252); NaN when undefined."""
    values = np.asarray(daily_pnl, dtype=np.float64) / capital
    if len(values) < 2 or values.std(ddof=1) <= 1e-15:
        return float("nan")
    return float(values.mean() / values.std(ddof=1) * np.sqrt(TRADING_DAYS_PER_YEAR))
