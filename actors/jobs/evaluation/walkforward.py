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

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import msgspec
import numpy as np

from actors.common.observation import STATIC_FEATURES
from actors.env.dataset import DataSplit, Dataset
from actors.env.regime_model import RegimeModel
from actors.common.statistics import TRADING_DAYS_PER_YEAR, sharpe_ratio
from actors.env.statistics import session_of
from actors.jobs.evaluation.chain import (InProcessTrainer, WindowResult, ensemble_decide, frozen_copy, frozen_policy_config,
                                          learner_decide, play_window)
from actors.jobs.evaluation.cadence import Candidate, PolicyChoice, choose_policy_settings, grid_for
from actors.jobs.evaluation.diagnostics import fold_diagnostics
from actors.jobs.evaluation.floors import FloorChoice, chosen_floors, fit_floors
from actors.jobs.evaluation.folds import Fold, walk_forward_folds
from actors.policy.checkpoint import Checkpoint
from actors.policy.learner import OnlineMaskablePPO
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
    day_trades: list[int] = field(default_factory=list)
    """Trades entered on each of ``daily_pnl``'s days, same order (a null market's target: a median of <= 2 a day)."""

    def add(self, result: WindowResult) -> None:
        self.daily_pnl.extend(result.daily_pnl.tolist())
        self.fold_days.append(len(result.daily_pnl))
        entered = Counter(session_of(np.array([t.entry_ns for t in result.trades], dtype=np.int64)).tolist())
        self.day_trades.extend(entered.get(int(day), 0) for day in result.session)
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
    diagnostics: list[dict] = field(default_factory=list)
    """Per fold, how the policies trade and what they do where the edges are (actors/jobs/evaluation/diagnostics.py)."""
    policy_choices: list[PolicyChoice] = field(default_factory=list)
    """Per fold, the policy settings chosen on its validation days (actors/jobs/evaluation/cadence.py); empty without a grid."""

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


@dataclass(frozen=True)
class WalkForwardPlan:
    """What every cell of one walk-forward shares (the payload of evaluate's cells, shipped once to each node)."""

    config: Config
    dataset: Dataset
    folds: list[Fold]
    seeds: list[int]
    budgets: list[int]
    checkpoints: dict[tuple[int, int, int], Checkpoint] = field(default_factory=dict)
    """(fold, seed, budget) -> the frozen policy: the ensemble cells' input, filled once the policy cells finished."""
    regimes: dict[int, FoldRegime] = field(default_factory=dict)
    """fold -> its regime fit (regime_cell): the other cells' input, filled once the regime cells finished."""
    policy_grid: tuple[Candidate, ...] = ()
    """The policy settings each fold chooses among on its validation days (choice_cell); () = the config as it is."""
    choices: dict[int, PolicyChoice] = field(default_factory=dict)
    """fold -> its choice (choice_cell): the policy and ensemble cells' input, filled once the choice cells finished."""
    stand_aside: bool = False
    """evaluate --stand-aside: a fold whose choice lost on its validation days (PolicyChoice.loses_on_validation) plays
    flat on its test days. Applied when the cells' results are gathered, so no cell depends on it (nor its cache key)."""

    def policy_config(self, fold: Fold) -> Config:
        """The config the fold's policies train and test with: the fold's chosen settings over the run's (the floors
        keep the run's)."""
        choice = self.choices.get(fold.index)
        return choice.chosen.apply(self.config) if choice is not None else self.config

    def fold_dataset(self, fold: Fold) -> Dataset:
        """The data with the regime HMM behind market_regime fitted on this fold's training days only
        (actors/env/regime_model.py): from the fold's regime cell, else fitted here (a minute on 400 days)."""
        regime = self.regimes.get(fold.index) or regime_cell(self, fold)
        column = STATIC_FEATURES.index("market_regime")
        static = self.dataset.features.static.copy()
        static[:, column] = regime.market_regime
        features = replace(self.dataset.features, static=static, trend_code=regime.trend_code)
        return replace(self.dataset, features=features, regime_model=regime.model, lists=self.dataset.lists)

    def splits(self, fold: Fold, dataset: Dataset) -> tuple[DataSplit, DataSplit]:
        return (day_split(dataset, f"fold{fold.index}_train", fold.train_start_day, fold.train_stop_day),
                day_split(dataset, f"fold{fold.index}_test", fold.test_start_day, fold.test_stop_day))


@dataclass(frozen=True)
class FoldRegime:
    """What refitting the regime HMM on a fold's training days changes in the data (Dataset.with_regime_fitted_on):
    the market_regime feature, the trend word and the model; a few MB a fold, not the whole market."""

    market_regime: np.ndarray
    trend_code: np.ndarray
    model: RegimeModel


def regime_cell(plan: WalkForwardPlan, fold: Fold) -> FoldRegime:
    """Fit the fold's regime HMM once; every other cell of the fold reads it (the fit costs as much as a small cell)."""
    fitted = plan.dataset.with_regime_fitted_on(int(plan.dataset.session_starts[fold.train_stop_day]))
    column = STATIC_FEATURES.index("market_regime")
    return FoldRegime(fitted.features.static[:, column].copy(), fitted.features.trend_code, fitted.regime_model)


def choice_cell(plan: WalkForwardPlan, fold: Fold) -> PolicyChoice:
    """The fold's policy settings, chosen on the last part of its training days (actors/jobs/evaluation/cadence.py)."""
    return choose_policy_settings(plan.config, plan.fold_dataset(fold), fold.index, (fold.train_start_day, fold.train_stop_day),
                                  plan.policy_grid, plan.budgets[0], plan.seeds[0])


@dataclass
class PolicyCellResult:
    """One seed trained on one fold's training days through every budget, each budget's policy tested frozen."""

    windows: dict[int, WindowResult]
    training: list[dict]
    checkpoints: dict[int, tuple[int, Checkpoint]]
    """budget -> (env steps, the checkpoint as tested)."""
    regime_model: dict = field(default_factory=dict)
    """The fold's regime HMM (fitted on its training days): the belief the policy was trained on."""
    regime_lines: list[str] = field(default_factory=list)


def seeded_config(config: Config, seed: int) -> Config:
    return msgspec.structs.replace(config, policy=msgspec.structs.replace(config.policy, seed=seed, learn=True))


@dataclass
class ReferenceCellResult:
    choice: FloorChoice
    """What the tunable floors chose on the fold's training days."""
    windows: dict[str, WindowResult]
    """Each floor (and, on a synthetic market, the oracle) on the fold's test window."""


def reference_cell(plan: WalkForwardPlan, fold: Fold) -> ReferenceCellResult:
    """The floors, their lookback and threshold chosen on the fold's training days (the test window is not seen),
    and the oracle, on the fold's test window."""
    dataset = plan.fold_dataset(fold)
    train, test = plan.splits(fold, dataset)
    choice = fit_floors(plan.config, train, (fold.train_start_day, fold.train_stop_day))
    policies = chosen_floors(choice, dataset.hidden_regime, seed=plan.config.run.seed + fold.index)
    return ReferenceCellResult(choice, {name: play_window(plan.config, test, decide) for name, decide in policies.items()})


def policy_cell(plan: WalkForwardPlan, fold: Fold, seed: int) -> PolicyCellResult:
    """Train one seed on the fold's training days, stopping at each budget to test a frozen copy on the test window."""
    dataset = plan.fold_dataset(fold)
    train, test = plan.splits(fold, dataset)
    seeded = seeded_config(plan.policy_config(fold), seed)
    trainer = InProcessTrainer(seeded, train)
    result = PolicyCellResult({}, [], {}, dataset.regime_model.to_dict(), list(dataset.regime_model.describe()))
    for budget in plan.budgets:
        learner = trainer.train_until(budget)
        checkpoint = learner.checkpoint()
        result.checkpoints[budget] = (learner.num_timesteps, checkpoint)
        result.windows[budget] = play_window(seeded, test, learner_decide(frozen_copy(learner, seeded)))
        figures = learner.latest_figures
        result.training.append({"fold": fold.index, "seed": seed, "budget": budget, "updates": learner.n_updates,
                                **{k: float(figures[k]) for k in ("approx_kl", "clip_fraction", "explained_variance") if k in figures}})
    return result


def ensemble_cell(plan: WalkForwardPlan, fold: Fold, budget: int) -> WindowResult:
    """The seeds' frozen policies at ``budget`` (plan.checkpoints) as one ensemble on the fold's test window."""
    _, test = plan.splits(fold, plan.fold_dataset(fold))
    config = plan.policy_config(fold)
    learners = [OnlineMaskablePPO(frozen_policy_config(seeded_config(config, seed)), 1,
                                  checkpoint=plan.checkpoints[(fold.index, seed, budget)]) for seed in plan.seeds]
    return play_window(config, test, ensemble_decide(learners))


def gather_walk_forward(plan: WalkForwardPlan, market: str, references: dict[int, ReferenceCellResult],
                        policies: dict[tuple[int, int], PolicyCellResult], ensembles: dict[tuple[int, int], WindowResult],
                        progress: Progress | None = None, choices: dict[int, PolicyChoice] | None = None) -> WalkForward:
    """The cells' results as one WalkForward, in the order one process would have added them (fold by fold:
    references, seeds x budgets, ensembles), so the report reads the same whatever ran the cells."""
    say = progress or (lambda _text: None)
    folds, seeds, budgets = plan.folds, plan.seeds, plan.budgets
    series: dict[str, VariantSeries] = {}
    result = WalkForward(market, folds, seeds, budgets, series)

    def add(name: str, window: WindowResult) -> None:
        series.setdefault(name, VariantSeries(name)).add(window)

    for fold in folds:
        aside = False
        if choices and fold.index in choices:
            aside = plan.stand_aside and choices[fold.index].loses_on_validation()
            choice = replace(choices[fold.index], stood_aside=aside)
            result.policy_choices.append(choice)
            say(f"fold {fold.index + 1}/{len(folds)} {choice.text()}")
        for line in policies[(fold.index, seeds[0])].regime_lines:
            say(f"fold {fold.index + 1}/{len(folds)} {line}")
        floors = references[fold.index]
        played = (lambda window: floors.windows["flat"]) if aside else (lambda window: window)  # the same test days, flat
        result.floor_choices.append(floors.choice)
        say(f"fold {fold.index + 1}/{len(folds)} floors: {floors.choice.text()}")
        for name, window in floors.windows.items():
            add(name, window)
        for seed in seeds:
            cell = policies[(fold.index, seed)]
            result.training.extend(cell.training)
            for budget in budgets:
                window = played(cell.windows[budget])
                add(policy_name(budget, seed), window)
                say(f"fold {fold.index + 1}/{len(folds)} seed {seed} {budget:,} steps: test days {fold.test_start_day}-"
                    f"{fold.test_stop_day - 1}, net ${window.net_pnl:,.0f}, {len(window.trades)} trades")
        _, test = plan.splits(fold, plan.dataset)
        result.diagnostics.append(fold_diagnostics(plan.config, plan.dataset, fold.index, test.start, test.stop,
                                                   [played(policies[(fold.index, seed)].windows[budgets[-1]]) for seed in seeds]))
        if fold is folds[-1]:
            first = policies[(fold.index, seeds[0])]
            steps, checkpoint = first.checkpoints[budgets[-1]]
            meta = {**checkpoint.meta, "regime_model": first.regime_model}  # the belief it was trained on
            result.last_policy = (steps, replace(checkpoint, meta=meta))
        for budget in budgets if len(seeds) > 1 else ():
            window = played(ensembles[(fold.index, budget)])
            add(ensemble_name(budget), window)
            say(f"fold {fold.index + 1}/{len(folds)} ensemble of {len(seeds)} seeds {budget:,} steps: net ${window.net_pnl:,.0f}, "
                f"{len(window.trades)} trades")
    return result


def plan_walk_forward(config: Config, dataset: Dataset, *, n_folds: int, seeds: list[int], budgets: list[int],
                      purge_days: int, embargo_days: int = 1, min_train_days: int = 10,
                      policy_grid: tuple[Candidate, ...] = (), stand_aside: bool = False) -> WalkForwardPlan:
    folds = walk_forward_folds(len(dataset.session_starts), n_folds, purge_days=purge_days, embargo_days=embargo_days,
                               min_train_days=min_train_days)
    grid = grid_for(config, tuple(policy_grid), min(budgets)) if budgets else ()
    return WalkForwardPlan(config, dataset, folds, list(seeds), list(budgets), policy_grid=grid, stand_aside=stand_aside)


def annualised_sharpe(daily_pnl: np.ndarray, capital: float) -> float:
    """Sharpe of daily returns on ``capital`` (the account's start balance), annualised with sqrt(252); NaN when undefined."""
    return sharpe_ratio(np.asarray(daily_pnl, dtype=np.float64) / capital, TRADING_DAYS_PER_YEAR, no_spread=float("nan"))
