"""bin/run train and the main job's phase 3 in the trials ledger: each adds its trial, and the main job's deflated
Sharpe counts every policy trial the ledger holds on its market, as evaluate's does."""

from __future__ import annotations

import numpy as np
import pytest

from actors.jobs.config import load_config
from actors.jobs.evaluate import evidence_lines
from actors.jobs.evaluation.backtest_evidence import backtest_evidence_rows
from actors.jobs.evaluation.ledger import TrialRecord, append_trials, read_trials
from actors.jobs.evaluation.trials import ledger_trials
from actors.jobs.main_ledger import record_phase3
from actors.jobs.train_ledger import record_training


def tiny_checkpoint(directory):
    from actors.policy.config import PolicyConfig
    from actors.policy.learner import OnlineMaskablePPO

    return OnlineMaskablePPO(PolicyConfig(n_steps=8, batch_size=8, net_arch=(8,), seed=0), 1).save_checkpoint(directory)


def earlier_trials(path, market: str, count: int, other_market_count: int) -> None:
    """Policy trials of an earlier configuration on ``market`` (and some on another market) already in the ledger."""
    rng = np.random.default_rng(3)
    append_trials(path, [TrialRecord(config_hash="earlier", market=m, seed=k, fold=0, variant=f"policy@1000#{k}",
                                     daily_returns=list(rng.normal(0.0, 0.01, 30)), date="2026-11-01T00:00:00Z", commit="c0")
                         for m, n in ((market, count), ("null", other_market_count)) for k in range(n)])


def test_a_training_run_records_its_policy_on_the_validation_days_it_never_trained_on(tmp_path):
    ledger = tmp_path / "trials.jsonl"
    config = load_config(None, {"data.synthetic_days": 20, "run.trials_path": str(ledger), "run.seed": 7})
    run_dir = tmp_path / "train"
    tiny_checkpoint(run_dir / "checkpoints")

    record = record_training(config, run_dir, "abc123")

    [written] = read_trials(ledger)
    assert written == record and written.job == "train" and written.role == "policy" and written.market == "regimes"
    assert written.variant == "policy@0#7" and written.seed == 7 and written.commit == "abc123"
    from actors.env.factory import load_dataset
    validation_days = len(load_dataset(config).split("validation").session_open_bars())
    assert validation_days > 0 and len(written.daily_returns) == written.params["days"] == validation_days
    assert written.params["scored"].startswith("validation days")
    assert ledger_trials(read_trials(ledger), "regimes").count == 1  # a trial of the deflated Sharpe from here on


def test_a_training_run_without_validation_days_says_so_and_is_not_counted_as_a_sharpe(tmp_path):
    ledger = tmp_path / "trials.jsonl"
    config = load_config(None, {"data.synthetic_days": 20, "run.trials_path": str(ledger), "data.validation_fraction": 0.0})
    tiny_checkpoint(tmp_path / "train" / "checkpoints")

    record_training(config, tmp_path / "train", "abc123")

    [written] = read_trials(ledger)
    assert written.daily_returns == [] and written.params["scored"].startswith("nothing")
    assert ledger_trials(read_trials(ledger), "regimes").count == 0  # no days: no made-up Sharpe of 0 in N or V


def test_a_training_run_that_left_no_checkpoint_records_nothing(tmp_path):
    config = load_config(None, {"data.synthetic_days": 20, "run.trials_path": str(tmp_path / "trials.jsonl")})
    assert record_training(config, tmp_path / "empty", "abc123") is None
    assert not (tmp_path / "trials.jsonl").exists()


def phase3(tmp_path, ledger):
    backtest = load_config(None, {"data.synthetic_days": 12, "env.split": "test", "run.trials_path": str(ledger)})
    policy = load_config(None, {"data.synthetic_days": 12, "policy.total_timesteps": 4096})
    session_pnl = list(40.0 + np.random.default_rng(0).normal(0, 100, 9))
    checkpoint = tmp_path / "policy_000000004120.zip"
    return backtest, record_phase3(backtest, policy, session_pnl, checkpoint, "phase 2 policy", "abc123"), session_pnl


def test_the_main_jobs_backtest_is_a_trial_and_its_deflated_sharpe_counts_the_earlier_ones_on_its_market(tmp_path):
    alone, crowded = tmp_path / "alone.jsonl", tmp_path / "crowded.jsonl"
    earlier_trials(crowded, "regimes", count=4, other_market_count=2)

    _, first, _ = phase3(tmp_path, alone)
    backtest, counted, session_pnl = phase3(tmp_path, crowded)

    [record] = read_trials(alone)
    assert record.job == "main" and record.market == "regimes" and record.variant == "policy@4120#0"
    assert record.daily_returns == [pnl / backtest.account.start_balance for pnl in session_pnl]
    assert record.params["policy"] == "phase 2 policy" and record.params["split"] == "test"
    assert len(read_trials(crowded)) == 4 + 2 + 1
    # N: the run's own trial alone, then with the 4 earlier ones on regimes (not the 2 on null); the lucky best rises
    assert (first.dsr_trials, first.dsr_runs) == (1, 1)
    assert (counted.dsr_trials, counted.dsr_trials_this_run, counted.dsr_runs) == (5, 1, 2)
    assert counted.dsr_benchmark_sharpe > first.dsr_benchmark_sharpe and counted.dsr < first.dsr
    sentence = evidence_lines(counted)[0]
    assert sentence.startswith(f"deflated Sharpe of policy@4120#0 {counted.dsr:.3f} (one of the N trials): 5 policy "
                               "trials on this market in the trials ledger "
                               f"(1 this run, 2 run(s) in all; {crowded})")
    rows = dict(backtest_evidence_rows(backtest, {"net_pnl_usd": 900.0}, session_pnl, deflation=counted))
    assert rows["deflated-Sharpe probability, 5 trials on this market in the ledger (target >= 0.95)"].startswith(f"{counted.dsr:.3f}: ")


def test_the_main_jobs_success_table_is_evaluates_table_with_the_ledgers_trials_and_the_oracle_played_once(tmp_path):
    from actors.jobs.evaluate import success_lines
    from actors.jobs.evaluation.backtest_evidence import play_floors
    from actors.jobs.main_evidence import phase3_success_rows, success_summary

    ledger = tmp_path / "trials.jsonl"
    earlier_trials(ledger, "regimes", count=4, other_market_count=0)
    backtest, counted, _ = phase3(tmp_path, ledger)
    choice, nets = play_floors(backtest)
    metrics = {"net_pnl_usd": nets["oracle"] / 4, "win_rate": 0.6, "win_rate_ci_low": 0.59, "win_rate_ci_high": 0.61,
               "sharpe": 4.0, "sharpe_ci_low": 3.5, "sharpe_ci_high": 7.0}

    rows = {row.figure: row for row in phase3_success_rows(metrics, nets["oracle"], counted)}
    lines = success_lines(success_summary(list(rows.values())))

    assert nets["oracle"] > 0 and rows["oracle share (net P&L / oracle's)"].value == 0.25
    assert rows["oracle share (net P&L / oracle's)"].verdict == "not evidence"  # one backtest: no interval
    assert (rows["win rate (RL + risk, OOS trades)"].verdict, rows["daily Sharpe (annualised, OOS)"].verdict) == ("met", "met")
    assert rows["deflated-Sharpe probability"].value == counted.dsr
    assert rows["deflated-Sharpe probability"].note.startswith("5 trials on this market in the ledger (1 this run)")
    assert lines[0] == "| figure | value | 95% interval | target | verdict | note |" and len(lines) == 2 + len(rows)
    assert phase3_success_rows(metrics, None, counted)[2].note.startswith("no oracle")
    # the evidence table reads the same floors' nets (played once by the main job), not a second play of its own
    evidence = dict(backtest_evidence_rows(backtest, metrics, [5.0], floors=(choice, {**nets, "oracle": 123_456.0})))
    assert evidence["oracle net P&L ($)"] == "123,456"


@pytest.mark.parametrize("job", ["train", "main"])
def test_a_corrupt_trials_ledger_stops_train_and_main_before_any_training_naming_the_line(tmp_path, capsys, job):
    from actors.jobs.cli import main

    ledger = tmp_path / "trials.jsonl"
    earlier_trials(ledger, "regimes", count=1, other_market_count=0)
    with open(ledger, "a") as handle:
        handle.write("{not json\n")

    code = main([job, "--run-dir", str(tmp_path / "r"), "--set", f"run.trials_path={ledger}"])

    assert code == 1
    err = capsys.readouterr().err
    assert f"{ledger}:2:" in err and "1 good records kept" in err and f"so {job} stops" in err
    assert not (tmp_path / "r").exists()  # stopped before the run directory, let alone the training
    assert len(ledger.read_text().splitlines()) == 2  # nothing lost
