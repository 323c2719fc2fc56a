"""bin/run evaluate end to end on a tiny walk-forward: files, success table, verdict, and clear errors."""

from __future__ import annotations

import json

import pytest

from actors.jobs.cli import main


@pytest.mark.slow
@pytest.mark.parametrize("market", ["regimes", "null"])
def test_a_tiny_walk_forward_writes_the_success_table_and_a_verdict(tmp_path, market, capsys):
    run_dir = tmp_path / market
    code = main(["evaluate", "--market", market, "--quick", "--budgets", "2048", "--folds", "2", "--days", "30",
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
    assert market in capsys.readouterr().out


def test_an_unknown_market_file_is_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--market", str(tmp_path / "missing.csv"), "--run-dir", str(tmp_path / "r")]) == 1
    assert "no file" in capsys.readouterr().err


def test_bad_budgets_are_a_clear_error(tmp_path, capsys):
    assert main(["evaluate", "--budgets", "10k", "--run-dir", str(tmp_path / "r")]) == 1
    assert "--budgets" in capsys.readouterr().err


def test_the_first_fold_trains_on_a_quarter_of_the_days_unless_the_folds_need_the_room():
    from actors.jobs.evaluate import min_train_days

    assert min_train_days(150, 3, 2) == 37
    assert min_train_days(30, 2, 2) == 10  # the floor
    assert min_train_days(16, 4, 2) == 10 and min_train_days(60, 3, 2) == 15
