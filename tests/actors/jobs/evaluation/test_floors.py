"""Floors are chosen like the policy: on each fold's training days, the test window played once with the choice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.synthetic import generate_market
from actors.env.dataset import Dataset
from actors.env.references import MOMENTUM_LOOKBACKS, momentum_policy, regime_rule_policy
from actors.jobs.evaluation import walkforward
from actors.jobs.evaluation.chain import play_window
from actors.jobs.evaluation.floors import REGIME_THRESHOLDS, fit_floors
from actors.jobs.evaluation.walkforward import day_split, plan_walk_forward, reference_cell
from actors.jobs.config import load_config

DAYS, TRAIN_DAYS = 22, 12


def dataset_from(frame: pd.DataFrame) -> Dataset:
    return Dataset.from_frame(frame, load_config(None, {}).account.flat_minute_of_day)


def market_with_another_future(seed: int, other_seed: int) -> tuple[Dataset, Dataset]:
    """The same first TRAIN_DAYS days, then two different futures (the second scaled to join the first's last close)."""
    first = generate_market(DAYS, seed=seed).bars
    other = generate_market(DAYS, seed=other_seed).bars
    boundary = int(dataset_from(first).session_starts[TRAIN_DAYS])
    tail = first.iloc[boundary:].copy()
    prices = ["open", "high", "low", "close"]
    tail[prices] = other[prices].to_numpy()[:len(tail)] * first["close"].iloc[boundary - 1] / other["close"].iloc[0]
    # The regime HMM refitted on the training days, as the walk-forward does for each fold (so its feature is the same).
    return tuple(dataset_from(frame).with_regime_fitted_on(boundary) for frame in (first, pd.concat([first.iloc[:boundary], tail])))


def test_the_choice_made_on_the_training_days_ignores_whatever_comes_after_them():
    """Two markets that share their training days and differ afterwards: a fit that read past the training days (the
    test window) would net differently on them, or choose differently."""
    config = load_config(None, {})
    same_past, other_future = market_with_another_future(seed=3, other_seed=11)
    assert not np.allclose(same_past.close[-500:], other_future.close[-500:])  # the futures differ

    choices = [fit_floors(config, day_split(d, "train", 0, TRAIN_DAYS), (0, TRAIN_DAYS)) for d in (same_past, other_future)]

    assert choices[0] == choices[1]
    assert set(choices[0].momentum_nets) == set(MOMENTUM_LOOKBACKS) and set(choices[0].regime_nets) == set(REGIME_THRESHOLDS)


def test_each_tunable_floor_takes_the_setting_that_nets_most_on_the_training_days():
    config = load_config(None, {})
    dataset, _ = market_with_another_future(seed=5, other_seed=6)
    train = day_split(dataset, "train", 0, TRAIN_DAYS)

    choice = fit_floors(config, train, (0, TRAIN_DAYS))

    momentum = {n: play_window(config, train, momentum_policy(n), risk=False).net_pnl for n in MOMENTUM_LOOKBACKS}
    regime = {t: play_window(config, train, regime_rule_policy(t), risk=False).net_pnl for t in REGIME_THRESHOLDS}
    assert choice.momentum_nets == momentum and choice.regime_nets == regime
    assert choice.momentum_lookback == max(momentum, key=momentum.get)
    assert choice.regime_threshold == max(regime, key=regime.get)


@pytest.mark.slow
def test_the_walk_forward_fits_each_fold_s_floors_before_its_purge_and_plays_the_choice_on_its_test_window(monkeypatch):
    """Every split the floors were fitted on ends before its fold's purge and test window; the test window's momentum
    and regime rule are the ones chosen there (the walk-forward's reference cell, no policy trained)."""
    config = load_config(None, {"data.synthetic_days": DAYS})
    dataset, _ = market_with_another_future(seed=7, other_seed=8)
    fitted = []

    def recording_fit(config, train, train_days):
        fitted.append((train.start, train.stop, train_days))
        return fit_floors(config, train, train_days)

    monkeypatch.setattr(walkforward, "fit_floors", recording_fit)
    plan = plan_walk_forward(config, dataset, n_folds=2, seeds=[0], budgets=[1], purge_days=2, min_train_days=TRAIN_DAYS)
    cells = [reference_cell(plan, fold) for fold in plan.folds]

    assert len(fitted) == len(plan.folds) == 2
    for (start, stop, days), fold, cell in zip(fitted, plan.folds, cells):
        assert days == (fold.train_start_day, fold.train_stop_day) == cell.choice.train_days
        assert stop <= int(dataset.session_starts[fold.train_stop_day])  # nothing of the purge or the test window
        _, test = plan.splits(fold, plan.fold_dataset(fold))
        played = play_window(config, test, momentum_policy(cell.choice.momentum_lookback)).daily_pnl.tolist()
        assert cell.windows["momentum"].daily_pnl.tolist() == played
        assert {"flat", "random", "buy_and_hold", "momentum", "regime_rule", "supervised"} <= set(cell.windows)
        assert not any(name.startswith("momentum_") for name in cell.windows)  # no fixed lookback plays the test days
