"""bin/run evaluate end to end on a tiny walk-forward: files, success table, verdict, and clear errors."""

from __future__ import annotations

import json

import pytest

from actors.jobs.cli import main


@pytest.mark.slow
@pytest.mark.parametrize("market", ["regimes", "null"])
def test_a_tiny_walk_forward_writes_the_success_table_and_a_verdict(tmp_path, market, capsys):
    run_dir = tmp_path / market
    code = main(["evaluate", "--market", market, "--quick", "--budgets", "2048", "--folds", "2", "--days", "30", "--seeds", "2",
                 "--run-dir", str(run_dir), "--quiet"])
    assert code == 0
    metrics = json.loads((run_dir / "evaluate" / "metrics.json").read_text())
    figures = [row["figure"] for row in metrics["success_table"]]
    assert len(figures) == 7 and any("oracle share" in f for f in figures) and any("deflated" in f for f in figures)
    assert all(row["verdict"] in ("met", "not met", "not evidence") for row in metrics["success_table"])
    assert {"flat", "random", "buy_and_hold", "momentum_60", "oracle"} <= set(metrics["variants"])
    assert metrics["variants"]["flat"]["net_pnl"] == 0
    assert metrics["variants"]["oracle"]["net_pnl"] > 0 if market == "regimes" else True
    assert metrics["test_days"] == sum(f["test_days"][1] - f["test_days"][0] + 1 for f in metrics["folds_days"])
    assert (run_dir / "evaluate" / "learning_curve.png").stat().st_size > 1000
    assert "ensemble@2048" in metrics["variants"] and metrics["ensemble"]["seeds"] == 2  # two seeds: their ensemble plays too
    assert metrics["dsr_trials"] == 3  # the two seeds and their ensemble
    out = capsys.readouterr().out
    assert market in out and "ensemble" in out


def test_an_unknown_market_file_is_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--market", str(tmp_path / "missing.csv"), "--run-dir", str(tmp_path / "r")]) == 1
    assert "no file" in capsys.readouterr().err


def test_bad_budgets_are_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--budgets", "10k", "--run-dir", str(tmp_path / "r")]) == 1
    assert "--budgets" in capsys.readouterr().err


def test_the_first_fold_trains_on_the_presets_share_of_the_days_unless_train_days_says_otherwise():
    from argparse import Namespace

    from actors.jobs.evaluate import first_train_days, plan

    def settings(**given):
        return plan(Namespace(**{"quick": False, "folds": None, "seeds": None, "budgets": None, "days": None, "train_days": None, **given}))

    assert first_train_days(settings(quick=True), 400, 2) == 250  # two test windows of 74 days after the purge
    assert first_train_days(settings(), 700, 2) == 398
    assert first_train_days(settings(quick=True), 120, 2) == 75  # a file's own days, not the synthetic preset's
    assert first_train_days(settings(quick=True), 12, 2) == 10  # the floor
    assert first_train_days(settings(quick=True, train_days=300), 400, 2) == 300


def test_train_days_that_leave_no_test_day_are_a_clear_error(tmp_path, capsys):
    code = main(["evaluate", "--market", "null", "--quick", "--days", "20", "--train-days", "19", "--run-dir", str(tmp_path / "r")])
    assert code == 1
    err = capsys.readouterr().err
    assert "--train-days 19 leaves no test days" in err and "20 days" in err
