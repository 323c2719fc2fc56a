"""From the ledger to the deflated Sharpe's trials: every policy trial on the market counted once, floors never."""

from __future__ import annotations

import numpy as np
import pytest

from actors.jobs.evaluation.floors import FloorChoice
from actors.jobs.evaluation.ledger import TrialRecord
from actors.jobs.evaluation.trials import ledger_trials, per_day_sharpe, walk_forward_records
from actors.jobs.evaluation.walkforward import VariantSeries, WalkForward


def trial(variant: str, fold: int, returns, *, config: str = "c1", market: str = "regimes", seed: int = 0, role: str = "policy",
          date: str = "2026-11-28T00:00:00Z") -> TrialRecord:
    return TrialRecord(config_hash=config, market=market, seed=seed, fold=fold, variant=variant, daily_returns=list(returns),
                       date=date, commit="abc", role=role)


def test_a_trial_joins_its_folds_and_only_policy_trials_of_the_market_count():
    records = [
        trial("policy@100#0", 0, [0.01, 0.02]), trial("policy@100#0", 1, [-0.01, 0.03]),
        trial("policy@100#1", 0, [0.02, -0.01], seed=1), trial("policy@100#1", 1, [0.0, 0.01], seed=1),
        trial("policy@100#0", 0, [0.05, 0.05], config="c2", date="2026-11-29T00:00:00Z"),  # another configuration: another trial
        trial("momentum", 0, [0.1, 0.2], role="floor"),  # a floor is not a trial of the policy
        trial("policy@100#0", 0, [0.3, 0.1], market="null"),  # another market
    ]

    trials = ledger_trials(records, "regimes")

    assert trials.count == 3 and trials.runs == 2
    assert trials.sharpes[0] == pytest.approx(per_day_sharpe(np.array([0.01, 0.02, -0.01, 0.03])))
    assert trials.variance == pytest.approx(np.var(trials.sharpes, ddof=1))


def test_the_same_configuration_run_again_is_one_trial_not_two():
    first = [trial("policy@100#0", 0, [0.01, 0.02]), trial("policy@100#0", 1, [0.0, 0.01])]
    again = [trial("policy@100#0", 0, [0.02, 0.02], date="2026-11-29T00:00:00Z")]
    trials = ledger_trials(first + again, "regimes")
    assert trials.count == 1
    assert trials.sharpes[0] == pytest.approx(per_day_sharpe(np.array([0.02, 0.02, 0.0, 0.01])))  # the latest fold 0


def test_a_walk_forward_gives_one_record_per_variant_and_fold_with_its_own_days():
    series = {}
    for name, folds in {"policy@100#3": ([100.0, -50.0], [25.0]), "momentum": ([10.0, 20.0], [30.0]), "flat": ([0.0, 0.0], [0.0])}.items():
        s = VariantSeries(name)
        for days in folds:
            s.daily_pnl.extend(days)
            s.fold_days.append(len(days))
        series[name] = s
    choices = [FloorChoice(60, 0.4, (0, 10)), FloorChoice(120, 0.2, (0, 12))]
    result = WalkForward("regimes", [], [3], [100], series, floor_choices=choices)

    records = walk_forward_records(result, 1000.0, config_hash="h", commit="c", date="d", market="regimes")

    by = {(r.variant, r.fold): r for r in records}
    assert len(records) == 6
    assert by[("policy@100#3", 0)].daily_returns == [0.1, -0.05] and by[("policy@100#3", 1)].daily_returns == [0.025]
    assert by[("policy@100#3", 1)].seed == 3 and by[("policy@100#3", 1)].role == "policy"
    assert by[("momentum", 1)].role == "floor" and by[("momentum", 1)].params == {"momentum_lookback": 120}
    assert by[("flat", 0)].params == {} and by[("policy@100#3", 0)].params == {}
