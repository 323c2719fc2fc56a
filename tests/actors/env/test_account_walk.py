"""The evaluation state machine and the backtest's walk of consecutive evaluation accounts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.env.batch import EnvBatch
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.env.env import FuturesTradingEnv
from actors.env.account_walk import Evaluation, EvaluationRecord, evaluation_summary
from actors.common.instruments import resolve_instrument

NQ = resolve_instrument(InstrumentConfig(symbol="NQ"))


def test_an_evaluation_passes_only_flat_at_the_target_and_stays_passed():
    evaluation = Evaluation(0, start_ns=100, start_balance=50_000.0, profit_target_usd=3_000.0)

    open_profit = evaluation.on_bar(200, trading_day=1, balance=53_500.0, flat=False, breached=False)
    passed = evaluation.on_bar(300, trading_day=2, balance=53_000.0, flat=True, breached=False)
    later = evaluation.on_bar(400, trading_day=3, balance=40_000.0, flat=True, breached=True)

    assert (open_profit, passed, later) == ("open", "passed", "passed")
    assert evaluation.record() == EvaluationRecord(0, 100, 300, "passed", "profit_target", 2, 3_000.0)


def test_an_evaluation_fails_on_a_breach_and_one_still_running_at_the_end_of_data_stays_open():
    failed = Evaluation(1, 0, 50_000.0, 3_000.0)
    running = Evaluation(2, 0, 50_000.0, 0.0)

    failed.on_bar(10, 5, 47_400.0, True, breached=True)
    running.on_bar(10, 5, 60_000.0, True, breached=False)  # no target: it cannot pass
    running.end_of_data()

    assert (failed.record().outcome, failed.record().reason) == ("failed", "trailing_drawdown")
    assert (running.record().outcome, running.record().reason) == ("open", "data_end")


def test_the_summary_counts_outcomes_and_the_days_to_pass():
    records = [
        EvaluationRecord(0, 0, 1, "failed", "trailing_drawdown", 2, -2_500.0),
        EvaluationRecord(1, 1, 2, "passed", "profit_target", 4, 3_100.0),
        EvaluationRecord(2, 2, 3, "passed", "profit_target", 6, 3_050.0),
        EvaluationRecord(3, 3, 4, "open", "data_end", 1, 10.0),
    ]

    summary = evaluation_summary(records)

    assert (summary["evaluations"], summary["passed"], summary["failed"], summary["open"]) == (4, 2, 1, 1)
    assert summary["pass_rate"] == pytest.approx(2 / 3)
    assert summary["mean_days_to_pass"] == 5.0
    assert math.isnan(evaluation_summary([])["pass_rate"])


def backtest_batch(synthetic_dataset, policy) -> EnvBatch:
    env = FuturesTradingEnv(synthetic_dataset.split("all"), NQ, AccountConfig(profit_target=300.0), EnvConfig(stop_loss_atr=1.0, take_profit_atr=2.0))
    batch = EnvBatch([env], mode="backtest")
    batch.reset()
    step = 0
    while not batch.finished:
        _, masks = batch.observations([0])
        batch.step([0], np.array([policy(env, masks[0])]), step)
        step += 1
    return batch


def enter_when_flat(env, mask) -> int:
    return BUY if env.position is None and mask[BUY] else HOLD


def test_a_backtest_walks_consecutive_evaluations_and_starts_a_new_account_after_each_outcome(synthetic_dataset):
    batch = backtest_batch(synthetic_dataset, enter_when_flat)

    records = batch.evaluations(0)

    assert len(records) >= 2 and {record.outcome for record in records[:-1]} <= {"passed", "failed"}
    assert [record.index for record in records] == list(range(len(records)))
    for before, after in zip(records, records[1:]):
        assert after.start_ns == before.end_ns  # the next account starts where the last one ended: the data goes on
    assert records[-1].outcome == "open" or records[-1].end_ns == batch.history(0).times_ns[-1]
    summary = batch.evaluation_summary()
    assert summary["evaluations"] == len(records)
    assert summary["passed"] == sum(record.outcome == "passed" for record in records)


def test_the_history_is_one_row_per_bar_aligned_in_time(synthetic_dataset):
    batch = backtest_batch(synthetic_dataset, enter_when_flat)

    history = batch.history(0)

    n = len(history.times_ns)
    assert n == sum(len(a) for a in [history.times_ns]) and all(
        len(column) == n for column in (history.close, history.high, history.low, history.equity, history.position, history.evaluation)
    )
    assert np.all(np.diff(history.times_ns) > 0)
    assert np.all(history.low <= history.close) and np.all(history.close <= history.high)
    assert set(np.unique(history.evaluation)) == {record.index for record in batch.evaluations(0)}
    assert np.any(history.position != 0) and history.equity[0] == 50_000.0


def test_training_mode_keeps_no_history_and_does_not_end_episodes_on_a_pass(synthetic_dataset):
    env = FuturesTradingEnv(synthetic_dataset.split("train"), NQ, AccountConfig(), EnvConfig())
    batch = EnvBatch([env], mode="train")
    batch.reset()

    batch.step([0], np.array([SELL]), 0)

    assert not env.end_episode_on_pass and len(batch.history(0).times_ns) == 0 and batch.evaluations(0) == []
