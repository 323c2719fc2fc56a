"""The main job's evidence rows: the backtest beside the floors and the oracle, with its own verdicts."""

from __future__ import annotations

import math

import numpy as np

from actors.jobs.config import load_config
from actors.jobs.evaluation.backtest_evidence import backtest_evidence_rows, choose_on_validation, decisions_alone_rows
from actors.jobs.evaluation.evidence import verdict_at_least, verdict_between


def small_test_split():
    return load_config(None, {"data.synthetic_days": 12, "env.split": "test"})


def test_a_steadily_profitable_backtest_meets_the_sharpe_probability_and_a_losing_one_does_not():
    config = small_test_split()
    metrics = {"net_pnl_usd": 900.0, "win_rate": 0.6, "win_rate_ci_low": 0.59, "win_rate_ci_high": 0.61,
               "sharpe": 4.0, "sharpe_ci_low": 1.0, "sharpe_ci_high": 7.0}
    steady = list(100.0 + np.random.default_rng(0).normal(0, 20, 9))
    rows = dict(backtest_evidence_rows(config, metrics, steady))

    assert rows["policy net P&L ($)"] == "900"
    assert rows["deflated-Sharpe probability, 1 trial (target >= 0.95)"].endswith(": met")
    assert rows["win rate 0.60 [0.59, 0.61] (target 0.58-0.62)"] == "met"
    assert rows["daily Sharpe 4.00 [1.00, 7.00] (target >= 3)"] == "not evidence"  # the interval straddles 3
    assert "oracle net P&L ($)" in rows and "momentum net P&L ($)" in rows

    losing = dict(backtest_evidence_rows(config, {"net_pnl_usd": -500.0}, [-60.0, 10.0, -80.0, -40.0]))
    assert losing["deflated-Sharpe probability, 1 trial (target >= 0.95)"].endswith(": not met")
    assert losing["win rate n/a (target 0.58-0.62)"] == "not evidence"


def test_beating_the_momentum_rule_is_said_only_when_the_policy_nets_more_than_it():
    """The row compares the policy's net with the momentum floor's on the same bars: a policy netting far more says
    yes, far less says no, and the floor's own net sits between them."""
    config = small_test_split()
    rich = dict(backtest_evidence_rows(config, {"net_pnl_usd": 1e9}, [5.0]))
    poor = dict(backtest_evidence_rows(config, {"net_pnl_usd": -1e9}, [5.0]))
    momentum = float(rich["momentum net P&L ($)"].replace(",", ""))
    assert -1e9 < momentum < 1e9
    assert rich["beats the momentum rule"] == "yes" and poor["beats the momentum rule"] == "no"
    assert rich["floors chosen on the training days"] == poor["floors chosen on the training days"]


def test_the_main_jobs_floors_are_chosen_on_the_training_split_not_the_test_bars():
    """The momentum lookback the row names is the one that nets most on the train split's decisions alone."""
    from actors.env.factory import load_dataset
    from actors.env.references import MOMENTUM_LOOKBACKS, momentum_policy
    from actors.jobs.evaluation.chain import play_window

    config = small_test_split()
    train = load_dataset(config).split("train")
    nets = {n: play_window(config, train, momentum_policy(n), risk=False).net_pnl for n in MOMENTUM_LOOKBACKS}
    chosen = dict(backtest_evidence_rows(config, {"net_pnl_usd": 0.0}, [5.0]))["floors chosen on the training days"]
    assert chosen.startswith(f"momentum {max(nets, key=nets.get)} bars")


def test_too_few_sessions_give_no_probability_rather_than_a_number():
    rows = dict(backtest_evidence_rows(small_test_split(), {"net_pnl_usd": 0.0}, [5.0]))
    assert rows["deflated-Sharpe probability, 1 trial (target >= 0.95)"].startswith("n/a")


def test_verdicts_need_the_whole_interval_on_one_side():
    assert verdict_at_least(4.0, 3.5, 5.0, 3.0) == "met"
    assert verdict_at_least(1.0, 0.5, 2.0, 3.0) == "not met"
    assert verdict_between(0.6, 0.5, 0.7, 0.58, 0.62) == "not evidence"


def test_a_win_rate_outside_the_band_says_on_which_side():
    """0.66 [0.63, 0.69] misses the seeds' 0.58-0.62 from above: a reader should not take it for a losing policy."""
    from actors.jobs.evaluation.evidence import band_side

    assert band_side(0.63, 0.69, 0.58, 0.62) == "above the band"
    assert band_side(0.40, 0.50, 0.58, 0.62) == "below the band"
    assert band_side(0.55, 0.61, 0.58, 0.62) == ""
    high = {"net_pnl_usd": 900.0, "win_rate": 0.66, "win_rate_ci_low": 0.63, "win_rate_ci_high": 0.69}
    rows = dict(backtest_evidence_rows(small_test_split(), high, [5.0]))
    assert rows["win rate 0.66 [0.63, 0.69] (target 0.58-0.62)"] == "not met (above the band)"


def test_a_share_of_the_oracle_is_given_only_where_the_oracle_earns():
    import numpy as np

    from actors.jobs.evaluation.evidence import _oracle_share, oracle_has_an_edge

    rng = np.random.default_rng(0)
    earning = 800 + 100 * rng.standard_normal(60)
    noise = 4 + 300 * rng.standard_normal(60)  # null: the regime drives only the volatility
    policy = 300 + 100 * rng.standard_normal(60)
    assert oracle_has_an_edge(earning) and 0.3 < _oracle_share(policy, earning) < 0.45
    assert not oracle_has_an_edge(noise) and np.isnan(_oracle_share(policy, noise))
    assert not oracle_has_an_edge(None) and not oracle_has_an_edge(np.array([5.0]))


def test_the_candidate_not_chosen_is_played_on_the_same_bars(tmp_path):
    """Phase 1's checkpoint beside the backtest of phase 2's: what the choice was worth is one row away."""
    checkpoint = tiny_checkpoint(tmp_path, seed=0)
    rows = dict(backtest_evidence_rows(small_test_split(), {"net_pnl_usd": 0.0}, [5.0], other_policy=("phase 1 policy", checkpoint)))
    assert list(rows)[:2] == ["policy net P&L ($)", "phase 1 policy (not chosen) net P&L ($)"]
    assert math.isfinite(float(rows["phase 1 policy (not chosen) net P&L ($)"].replace(",", "")))  # played through env and risk


def test_the_validation_days_choose_the_checkpoint_that_nets_more_there(tmp_path):
    config = load_config(None, {"data.synthetic_days": 12})
    candidates = {"a": tiny_checkpoint(tmp_path / "a", seed=0), "b": tiny_checkpoint(tmp_path / "b", seed=1)}
    chosen, rows = choose_on_validation(config, candidates)
    nets = {label.split(":")[0]: float(value.split()[0].replace(",", "")) for label, value in rows}
    assert set(nets) == {"a", "b"} and chosen == max(nets, key=nets.get)
    assert [value.endswith("<- backtested") for _, value in rows] == [name == chosen for name in nets]
    assert all("on 2 validation days" in label for label, _ in rows)  # 15 % of 12 days


def test_the_validation_choice_plays_the_decisions_without_the_risk_stage(tmp_path):
    """The risk rules' halts depend on the path, so the choice is made on the decisions alone (issue 18)."""
    from actors.env.factory import load_dataset
    from actors.jobs.evaluation.chain import frozen_checkpoint_decide, play_window

    config = load_config(None, {"data.synthetic_days": 12})
    path = tiny_checkpoint(tmp_path, seed=0)
    _, rows = choose_on_validation(config, {"a": path})
    split = load_dataset(config).split("validation")
    without_risk = play_window(config, split, frozen_checkpoint_decide(path, config), risk=False).net_pnl
    assert rows[0][0].endswith("decisions alone ($)") and rows[0][1].split()[0] == f"{without_risk:,.0f}"


def test_decisions_alone_say_yes_only_when_the_whole_daily_interval_is_above_the_rule():
    from actors.env.factory import load_dataset
    from actors.env.references import reference_policies

    config = small_test_split()
    dataset = load_dataset(config)
    split = dataset.split("test")
    references = reference_policies(dataset.hidden_regime)

    oracle = dict(decisions_alone_rows(config, split, references["oracle"], "flat"))
    assert oracle["decisions alone: beats flat"].startswith("yes")
    assert float(oracle["decisions alone: flat net P&L ($)"]) == 0.0
    assert float(oracle["decisions alone (no risk stage): policy net P&L ($)"].replace(",", "")) > 0

    itself = dict(decisions_alone_rows(config, split, references["momentum_60"], "momentum_60"))
    assert itself["decisions alone: policy - momentum_60, $ a day [95 %]"] == "+0 [+0, +0]"
    assert itself["decisions alone: beats momentum_60"].startswith("not evidence")

    flat = dict(decisions_alone_rows(config, split, references["flat"], "flat"))
    assert flat["decisions alone: beats flat"].startswith("not evidence")


def test_the_backtested_checkpoint_adds_the_decisions_alone_rows(tmp_path):
    rows = dict(backtest_evidence_rows(small_test_split(), {"net_pnl_usd": 0.0}, [5.0], policy_checkpoint=tiny_checkpoint(tmp_path, 0)))
    assert "decisions alone (no risk stage): policy net P&L ($)" in rows
    lookback = rows["floors chosen on the training days"].split()[1]
    assert f"decisions alone: beats momentum_{lookback}" in rows  # beside the momentum rule chosen on the training days
    assert "decisions alone (no risk stage): policy net P&L ($)" not in dict(backtest_evidence_rows(small_test_split(), {"net_pnl_usd": 0.0}, [5.0]))


def tiny_checkpoint(directory, seed: int):
    from actors.policy.config import PolicyConfig
    from actors.policy.learner import OnlineMaskablePPO

    return OnlineMaskablePPO(PolicyConfig(n_steps=8, batch_size=8, net_arch=(8,), seed=seed), 1).save_checkpoint(directory)
