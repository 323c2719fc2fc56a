"""Issue 51: the data-snooping tests on overlapping labels resample blocks at least as long as the labels' horizon.

A lockstep decision's hindsight $ is a 60-bar label: neighbouring decisions share 59 bars of their future, and a
bootstrap with shorter blocks resamples them as if they were independent (optimistic p-values)."""

from __future__ import annotations

import numpy as np
import pytest

from actors.jobs.evaluation.lockstep_evidence import fused_against_floors
from actors.jobs.evaluation.significance import data_snooping_tests

HORIZON = 60


def overlapping_labels(seed: int, decisions: int = 900) -> np.ndarray:
    """Each decision's label: the sum of the next HORIZON bars of pure noise (no edge anywhere)."""
    bars = np.random.default_rng(seed).normal(0.0, 1.0, decisions + HORIZON)
    path = np.cumsum(np.r_[0.0, bars])
    return path[HORIZON:HORIZON + decisions] - path[:decisions]


@pytest.mark.parametrize("block", [1, 30, HORIZON - 1])
def test_a_block_shorter_than_the_labels_horizon_is_refused(block):
    labels = overlapping_labels(0, 100)
    with pytest.raises(ValueError, match=f"shorter than the labels' horizon of {HORIZON}"):
        data_snooping_tests({"f": labels}, np.zeros(100), block_size=block, label_horizon=HORIZON)


def test_a_horizon_below_one_period_is_refused():
    with pytest.raises(ValueError, match="label_horizon must be >= 1"):
        data_snooping_tests({"f": np.ones(20)}, np.zeros(20), label_horizon=0)


def test_without_a_block_the_horizon_sets_it_where_sqrt_t_is_shorter():
    labels = overlapping_labels(3)  # 900 decisions: sqrt(T) = 30 < 60
    plain = data_snooping_tests({"f": labels}, np.zeros(900), reps=300, seed=0)
    overlapping = data_snooping_tests({"f": labels}, np.zeros(900), reps=300, seed=0, label_horizon=HORIZON)
    assert (plain["block_size"], overlapping["block_size"]) == (30, HORIZON)
    # this noise, read as independent at the 30-block, nearly passes at 5 %; with the horizon's block it is far from it
    assert plain["p_value_spa"] < 0.06 and overlapping["p_value_spa"] > 0.1
    assert data_snooping_tests({"f": np.ones(9)}, np.zeros(9), label_horizon=HORIZON)["block_size"] == HORIZON


def test_the_lockstep_spa_uses_the_labels_horizon():
    labels = overlapping_labels(1, 400)
    tests = fused_against_floors({"fused": labels, "rl": labels[::-1].copy(), "trend": np.zeros(400)}, HORIZON, reps=100)
    assert {floor: test["block_size"] for floor, test in tests.items()} == {"rl": HORIZON, "flat": HORIZON, "trend": HORIZON}
