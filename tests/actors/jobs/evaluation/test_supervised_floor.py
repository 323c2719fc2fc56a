"""The supervised floor (actors/jobs/evaluation/supervised_floor.py): labels, a fit that reads only the training days
and chooses its threshold on their last quarter, determinism, and the threshold rule through the env."""

from __future__ import annotations

import numpy as np

from actors.jobs.config import load_config
from actors.jobs.evaluation.chain import play_window
from actors.jobs.evaluation.floors import FloorChoice, chosen_floors
from actors.jobs.evaluation.supervised_floor import (
    HORIZON_BARS, SUPERVISED, THRESHOLDS, _threshold_policy, fit_supervised, inputs, labels,
)
from actors.jobs.evaluation.walkforward import day_split

from .test_floors import TRAIN_DAYS, market_with_another_future

CONFIG = load_config(None, {})
DATASET, _ = market_with_another_future(seed=5, other_seed=6)


def test_the_label_is_the_side_of_the_next_30_bars_and_0_where_they_cross_the_session_end():
    split = day_split(DATASET, "train", 0, TRAIN_DAYS)
    last_of_day = int(DATASET.session_starts[3]) - 1
    bars = np.array([split.start, last_of_day - HORIZON_BARS, last_of_day - HORIZON_BARS + 1])
    side = labels(split, bars)
    assert side[0] == np.sign(DATASET.close[bars[0] + HORIZON_BARS] - DATASET.close[bars[0]])
    assert side[1] == np.sign(DATASET.close[last_of_day] - DATASET.close[bars[1]])
    assert side[2] == 0  # its 30 bars run into the next session
    assert inputs(split, bars).shape == (3, 11 + 28)


def test_the_fit_chooses_its_threshold_on_the_last_quarter_of_the_training_days_and_is_deterministic():
    train = day_split(DATASET, "train", 0, TRAIN_DAYS)
    choice = fit_supervised(CONFIG, train, (0, TRAIN_DAYS), seed=0)
    again = fit_supervised(CONFIG, train, (0, TRAIN_DAYS), seed=0)
    assert choice == again
    assert choice.fit_days == (0, 9) and choice.validation_days == (9, TRAIN_DAYS)  # 12 days: 9 to fit, 3 to choose
    validation = day_split(DATASET, "validation", 9, TRAIN_DAYS)
    assert choice.nets == {t: play_window(CONFIG, validation, _threshold_policy(choice.model, t), risk=False).net_pnl for t in THRESHOLDS}
    assert choice.threshold == max(choice.nets, key=choice.nets.get)
    rows = inputs(train, np.arange(train.start, train.start + 500))
    assert np.array_equal(choice.model.predict_proba(rows), again.model.predict_proba(rows))


def test_too_few_training_days_leave_the_supervised_floor_out():
    assert fit_supervised(CONFIG, day_split(DATASET, "train", 0, 2), (0, 2), seed=0) is None
    choice = FloorChoice(momentum_lookback=60, regime_threshold=0.4, train_days=(0, 2))
    assert SUPERVISED not in chosen_floors(choice, None, seed=0) and choice.params_of(SUPERVISED) == {}


class FixedModel:
    """A classifier whose P(up) is the same on every bar."""

    def __init__(self, p_up: float) -> None:
        self.p_up = p_up

    def predict_proba(self, rows: np.ndarray) -> np.ndarray:
        return np.column_stack([np.full(len(rows), 1 - self.p_up), np.full(len(rows), self.p_up)])


def test_it_goes_long_above_the_threshold_short_below_one_minus_it_and_stays_flat_between():
    window = day_split(DATASET, "window", TRAIN_DAYS, TRAIN_DAYS + 2)
    sides = {}
    for p_up in (0.7, 0.3, 0.5):
        trades = play_window(CONFIG, window, _threshold_policy(FixedModel(p_up), 0.6), risk=False).trades
        sides[p_up] = {trade.side for trade in trades}
    assert sides == {0.7: {1}, 0.3: {-1}, 0.5: set()}
