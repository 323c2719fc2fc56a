"""The policy settings chosen inside each fold on validation days (actors/jobs/evaluation/cadence.py): the split, the
choice, the trials it adds to the ledger, and the chosen settings reaching the policy's play."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from actors.common.market_settings import AccountConfig
from actors.common.synthetic import generate_bars
from actors.env.dataset import Dataset
from actors.jobs.config import load_config
from actors.jobs.evaluation import chain
from actors.jobs.evaluation.cadence import GRID, QUICK_GRID, Candidate, PolicyChoice, choose_policy_settings, grid_for
from actors.jobs.evaluation.folds import Fold
from actors.jobs.evaluation.trials import ledger_trials, walk_forward_records
from actors.jobs.evaluation.walkforward import VariantSeries, WalkForward, WalkForwardPlan, day_split

TINY = {"policy.n_steps": 32, "env.n_envs": 1, "policy.batch_size": 32}


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return Dataset.from_frame(generate_bars(12, seed=5), AccountConfig().flat_minute_of_day, source="synthetic-12d")


def test_choosing_needs_two_candidates_and_a_budget_of_at_least_one_rollout():
    config = load_config(None, TINY)
    assert grid_for(config, GRID, 32) == GRID and grid_for(config, QUICK_GRID, 100) == QUICK_GRID
    assert grid_for(config, GRID, 31) == ()  # below one rollout every candidate is its untrained initial policy
    assert grid_for(config, GRID[:1], 10_000) == ()
    assert len(QUICK_GRID) < len(GRID) and QUICK_GRID[0] == GRID[0]


def test_a_candidate_changes_only_its_own_keys_and_the_first_is_the_config_as_it_is():
    config = load_config(None, {"env.entry_penalty_usd": 7.0, "policy.ent_coef": 0.03})
    assert GRID[0].apply(config) == config
    tried = Candidate("x", decision_every_bars=15, min_hold_bars=20).apply(config)
    assert (tried.env.decision_every_bars, tried.env.min_hold_bars, tried.env.entry_penalty_usd, tried.policy.ent_coef) == (15, 20, 7.0, 0.03)
    assert GRID[2].params(config)["policy.ent_coef"] == 0.02 and GRID[0].params(config)["env.entry_penalty_usd"] == 7.0


def test_the_best_validation_net_wins_on_the_last_quarter_of_the_training_days_ties_to_the_earlier(dataset, monkeypatch):
    """Candidates train on the training days less their last quarter and are scored on that quarter, never after it."""
    config = load_config(None, TINY)
    trained, played = [], []
    nets = {1: 50.0, 15: 120.0, 30: 120.0}  # every_15 and every_30 tie: the earlier wins

    class FakeTrainer:
        def __init__(self, tried, split):
            trained.append((tried.env.decision_every_bars, split.start, split.stop))

        def train_until(self, budget):
            return SimpleNamespace(budget=budget)

    def fake_play(tried, split, decide, **_):
        played.append((split.start, split.stop))
        return chain.WindowResult(np.arange(2), np.array([nets[tried.env.decision_every_bars], 0.0]), [], 10)

    monkeypatch.setattr(chain, "InProcessTrainer", FakeTrainer)
    monkeypatch.setattr(chain, "play_window", fake_play)
    monkeypatch.setattr(chain, "frozen_copy", lambda learner, tried: learner)
    monkeypatch.setattr(chain, "learner_decide", lambda learner: None)

    choice = choose_policy_settings(config, dataset, 0, (0, 9), GRID, 64, seed=3)

    assert choice.chosen.name == "every_15" and choice.params["env.decision_every_bars"] == 15
    assert choice.fit_days == (0, 7) and choice.validation_days == (7, 9)  # round(9 * 0.25) = 2 validation days
    validation = day_split(dataset, "v", 7, 9)
    assert played == [(validation.start, validation.stop)] * 3
    assert [t[0] for t in trained] == [1, 15, 30] and all(stop == validation.start for _, _, stop in trained)
    assert choice.nets == {"as_configured": 50.0, "every_15": 120.0, "every_30": 120.0}
    assert choice.to_json()["validation_net_usd"] == choice.nets


def test_too_few_training_days_keep_the_settings_as_configured(dataset):
    config = load_config(None, TINY)
    choice = choose_policy_settings(config, dataset, 0, (0, 2), GRID, 64, seed=0)
    assert choice.chosen is GRID[0] and choice.nets == {} and choice.validation_days == (2, 2)


def test_two_real_candidates_train_and_play_the_validation_days(dataset):
    config = load_config(None, TINY)
    choice = choose_policy_settings(config, dataset, 0, (1, 5), QUICK_GRID, 32, seed=1)
    assert set(choice.nets) == {"as_configured", "every_30"} and choice.validation_days == (4, 5)
    assert all(len(days) == 1 for days in choice.validation_daily_pnl.values())
    assert choice.chosen.name == max(choice.nets, key=choice.nets.get)


def fake_walk_forward() -> WalkForward:
    choice = PolicyChoice(0, GRID[2], GRID[2].params(load_config(None, {})), (0, 6), (6, 8), 64, 0,
                          nets={"as_configured": -10.0, "every_30": 5.0}, trades={"as_configured": 9, "every_30": 2},
                          validation_daily_pnl={"as_configured": [-5.0, -5.0], "every_30": [10.0, -5.0]},
                          candidate_params={c.name: c.params(load_config(None, {})) for c in QUICK_GRID})
    series = {name: VariantSeries(name, daily_pnl=[100.0, -50.0, 20.0], fold_days=[3]) for name in ("policy@64#0", "flat")}
    result = WalkForward("regimes", [Fold(0, 0, 8, 10, 13, 14)], [0], [64], series, policy_choices=[choice])
    result.floor_choices = [SimpleNamespace(params_of=lambda name: {})]
    return result


def test_each_candidate_is_a_policy_trial_of_the_ledger_and_the_policy_records_carry_the_choice():
    records = walk_forward_records(fake_walk_forward(), 50_000.0, config_hash="h", commit="c", date="2026-12-07T00:00:00Z")
    candidates = [r for r in records if r.variant.startswith("candidate@")]
    assert [r.variant for r in candidates] == ["candidate@64:as_configured", "candidate@64:every_30"]
    assert all(r.role == "policy" for r in candidates)
    assert candidates[1].daily_returns == [10.0 / 50_000, -5.0 / 50_000] and candidates[1].params["chosen"] is True
    assert candidates[0].params["env.decision_every_bars"] == 1 and candidates[0].params["validation_first_day"] == 6
    (policy,) = [r for r in records if r.variant == "policy@64#0"]
    assert policy.params["policy_setting"] == "every_30" and policy.params["env.min_hold_bars"] == 30
    assert [r.params for r in records if r.variant == "flat"] == [{}]
    assert ledger_trials(records, "regimes").count == 3  # the policy and both candidates


def test_the_fold_s_policy_plays_with_the_chosen_cadence_and_the_floors_with_the_config(dataset):
    config = load_config(None, TINY)
    fold = Fold(0, 0, 6, 7, 12, 12)
    choice = PolicyChoice(0, GRID[2], {}, (0, 5), (5, 6), 64, 0)
    plan = WalkForwardPlan(config, dataset, [fold], [0], [64], choices={0: choice})
    chosen = plan.policy_config(fold)
    assert (chosen.env.decision_every_bars, chosen.env.min_hold_bars) == (30, 30) and plan.config.env.decision_every_bars == 1
    rng = np.random.default_rng(0)
    window = chain.play_window(chosen, day_split(dataset, "t", 7, 10),
                               lambda env: int(rng.choice(np.flatnonzero(env.action_masks()))), risk=False)
    minutes = pd.to_datetime([t.entry_ns for t in window.trades]).tz_localize("UTC").tz_convert("America/New_York").minute
    assert len(window.trades) >= 3 and all(m % 30 == 0 for m in minutes)  # entries only at the open of a 30-minute bar


def gathered(dataset, validation_net: float, stand_aside: bool):
    """gather_walk_forward over one fold whose policy traded at random on the test days and whose chosen setting netted
    ``validation_net`` on its validation days."""
    from actors.jobs.evaluation.floors import FloorChoice
    from actors.jobs.evaluation.walkforward import PolicyCellResult, ReferenceCellResult, gather_walk_forward
    from actors.policy.checkpoint import Checkpoint

    config = load_config(None, TINY)
    fold = Fold(0, 0, 6, 7, 12, 12)
    choice = PolicyChoice(0, GRID[2], GRID[2].params(config), (0, 5), (5, 6), 64, 0,
                          nets={"as_configured": validation_net - 100.0, "every_30": validation_net},
                          trades={"as_configured": 9, "every_30": 2})
    plan = WalkForwardPlan(config, dataset, [fold], [0], [64], choices={0: choice}, stand_aside=stand_aside)
    test = day_split(dataset, "t", 7, 12)
    rng = np.random.default_rng(0)
    traded = chain.play_window(config, test, lambda env: int(rng.choice(np.flatnonzero(env.action_masks()))), risk=False)
    flat = chain.play_window(config, test, lambda env: 0, risk=False)
    floors = ReferenceCellResult(FloorChoice(momentum_lookback=60, regime_threshold=0.4, train_days=(0, 6)), {"flat": flat})
    policy = PolicyCellResult({64: traded}, [], {64: (64, Checkpoint(b"", b"", {}))})
    said: list[str] = []
    result = gather_walk_forward(plan, "regimes", {0: floors}, {(0, 0): policy}, {}, said.append, plan.choices)
    return result, traded, said


def test_stand_aside_plays_flat_only_on_a_fold_whose_choice_lost_on_its_validation_days(dataset):
    """evaluate --stand-aside: a chosen setting that netted $0 or less on validation plays flat on the test days (the
    same days, no trade), says so and records it; one that netted more plays as trained; without the switch, as trained."""
    result, traded, said = gathered(dataset, -5.0, stand_aside=True)
    assert len(traded.trades) > 0
    series = result.series["policy@64#0"]
    assert list(series.fold_days) == [len(traded.daily_pnl)] and not np.any(series.daily_pnl)
    assert result.policy_choices[0].stood_aside and result.policy_choices[0].to_json()["stood_aside"] is True
    assert any("stands aside" in line for line in said)
    from actors.jobs.evaluate import policy_choice_lines
    assert "stood aside (flat)" in "".join(policy_choice_lines(SimpleNamespace(policy_choices=[result.policy_choices[0].to_json()])))
    (record,) = [r for r in walk_forward_records(result, 50_000.0, config_hash="h", commit="c", date="d") if r.variant == "policy@64#0"]
    assert record.params["stood_aside"] is True and not any(record.daily_returns)
    for net, switch in ((5.0, True), (-5.0, False)):
        result, traded, said = gathered(dataset, net, stand_aside=switch)
        assert np.array_equal(result.series["policy@64#0"].daily_pnl, traded.daily_pnl)
        assert not result.policy_choices[0].stood_aside and not any("stands aside" in line for line in said)
