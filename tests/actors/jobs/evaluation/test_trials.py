"""From the ledger to the deflated Sharpe's trials: every policy trial on the market counted, every rerun and code change
its own trials, floors never."""

from __future__ import annotations

import numpy as np
import pytest

from actors.jobs.evaluation.floors import FloorChoice
from actors.jobs.evaluation.ledger import TrialRecord
from actors.jobs.evaluation.trials import deflated_variant, ledger_trials, per_day_sharpe, role_of, walk_forward_records
from actors.jobs.evaluation.walkforward import VariantSeries, WalkForward


def trial(variant: str, fold: int, returns, *, config: str = "c1", market: str = "regimes", seed: int = 0, role: str = "policy",
          date: str = "2026-11-28T00:00:00Z", code: str = "code1", run: str = "run1", commit: str = "abc") -> TrialRecord:
    return TrialRecord(config_hash=config, market=market, seed=seed, fold=fold, variant=variant, daily_returns=list(returns),
                       date=date, commit=commit, role=role, code=code, run_id=run)


def test_a_trial_joins_its_folds_and_only_policy_trials_of_the_market_count():
    records = [
        trial("policy@100#0", 0, [0.01, 0.02]), trial("policy@100#0", 1, [-0.01, 0.03]),
        trial("policy@100#1", 0, [0.02, -0.01], seed=1), trial("policy@100#1", 1, [0.0, 0.01], seed=1),
        trial("policy@100#0", 0, [0.05, 0.05], config="c2", run="run2"),  # another configuration: another trial
        trial("momentum", 0, [0.1, 0.2], role="floor"),  # a floor is not a trial of the policy
        trial("policy@100#0", 0, [0.3, 0.1], market="null"),  # another market
    ]

    trials = ledger_trials(records, "regimes")

    assert trials.count == 3 and trials.runs == 2
    assert trials.sharpes[0] == pytest.approx(per_day_sharpe(np.array([0.01, 0.02, -0.01, 0.03])))
    assert trials.variance == pytest.approx(np.var(trials.sharpes, ddof=1))


def test_the_same_configuration_and_code_run_again_adds_its_trials_and_replaces_none():
    first = [trial("policy@100#0", 0, [0.01, 0.02]), trial("policy@100#0", 1, [0.0, 0.01])]
    again = [trial("policy@100#0", 0, [0.02, 0.03], run="run2"), trial("policy@100#0", 1, [0.01, -0.01], run="run2")]

    trials = ledger_trials(first + again, "regimes")

    assert (trials.count, trials.runs) == (2, 2)  # N rises by the rerun's trials: rerunning for luck is counted
    assert trials.sharpes == [pytest.approx(per_day_sharpe(np.array([0.01, 0.02, 0.0, 0.01]))),
                              pytest.approx(per_day_sharpe(np.array([0.02, 0.03, 0.01, -0.01])))]  # both kept whole


def test_the_code_is_part_of_a_trials_identity():
    # One run id seen under two code fingerprints (a run id reused across a code change) is still two trials.
    records = [trial("policy@100#0", 0, [0.01, 0.02], code="before"), trial("policy@100#0", 0, [0.03, 0.01], code="after")]
    trials = ledger_trials(records, "regimes")
    assert trials.count == 2 and trials.runs == 1


def test_old_lines_without_code_or_run_id_count_each_rerun_by_its_repeated_folds():
    old = [trial("policy@100#0", fold, days, code="", run="", date=date)
           for date in ("2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z")
           for fold, days in ((0, [0.01, 0.02]), (1, [0.0, 0.01]))]
    trials = ledger_trials(old + [trial("policy@100#0", 0, [0.04, 0.01])], "regimes")
    assert (trials.count, trials.runs) == (3 + 1, 3 + 1)  # three old runs, each whole, and one new
    assert all(len(days) == 4 for days in trials.returns[:3])


def test_the_trials_deflated_sharpe_is_one_of_the_counted_trials():
    one_seed = WalkForward("regimes", [], [3], [100, 200], {})
    three_seeds = WalkForward("regimes", [], [0, 1, 2], [100, 200], {})
    assert deflated_variant(one_seed) == "policy@200#3" and role_of("policy@200#3") == "policy"
    assert deflated_variant(three_seeds) == "seeds-mean@200" and role_of("seeds-mean@200") == "policy"


def test_with_several_seeds_a_walk_forward_records_their_mean_as_a_trial_of_its_own():
    series = {}
    for name, folds in {"policy@100#0": ([100.0, -50.0], [20.0]), "policy@100#1": ([300.0, 50.0], [-20.0]),
                        "momentum": ([10.0, 20.0], [30.0])}.items():
        s = VariantSeries(name)
        for days in folds:
            s.daily_pnl.extend(days)
            s.fold_days.append(len(days))
        series[name] = s
    result = WalkForward("regimes", [], [0, 1], [100], series, floor_choices=[FloorChoice(60, 0.4, (0, 10))] * 2)

    records = walk_forward_records(result, 1000.0, config_hash="h", commit="c", date="d", market="regimes")

    mean = {r.fold: r for r in records if r.variant == "seeds-mean@100"}
    assert mean[0].daily_returns == pytest.approx([0.2, 0.0]) and mean[1].daily_returns == pytest.approx([0.0])
    assert mean[0].role == "policy" and mean[0].params == {"seeds": 2}
    assert ledger_trials(records, "regimes").count == 3  # the two seeds and their mean


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
