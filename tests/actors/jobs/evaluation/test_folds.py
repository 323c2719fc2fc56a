"""Walk-forward folds: no test day is ever trained on; purge and embargo hold on the indices."""

from __future__ import annotations

import numpy as np
import pytest

from actors.jobs.evaluation.folds import purge_days_for, walk_forward_folds


@pytest.mark.parametrize("n_days,n_folds,purge,embargo", [(60, 3, 1, 1), (120, 4, 2, 1), (30, 5, 3, 2)])
def test_no_fold_trains_on_its_test_days_its_purge_or_its_embargo(n_days, n_folds, purge, embargo):
    folds = walk_forward_folds(n_days, n_folds, purge_days=purge, embargo_days=embargo, min_train_days=5)
    assert len(folds) == n_folds
    for fold in folds:
        train, test = fold.training_days(), fold.test_days()
        assert len(train) >= 5 and len(test) >= 1
        assert train.max() < test.min() - purge  # the purge: `purge` days between training and test
        banned = np.arange(test.min() - purge, min(test.max() + 1 + embargo, n_days))
        assert not np.intersect1d(train, banned).size


def test_test_windows_follow_each_other_without_overlap_and_end_at_the_last_day():
    folds = walk_forward_folds(60, 3, purge_days=1, min_train_days=10)
    tests = np.concatenate([f.test_days() for f in folds])
    assert len(np.unique(tests)) == len(tests)
    assert np.all(np.diff(tests) == 1)
    assert tests[-1] == 59


def test_too_few_days_for_the_folds_is_a_clear_error():
    with pytest.raises(ValueError, match="use fewer folds or more days"):
        walk_forward_folds(12, 5, purge_days=1, min_train_days=10)


def test_purge_covers_the_holding_time_and_the_hindsight_horizon():
    assert purge_days_for(hindsight_bars=20, bars_per_day=390) == 2
    assert purge_days_for(hindsight_bars=0, bars_per_day=390) == 1
    assert purge_days_for(hindsight_bars=800, bars_per_day=390) == 4
