"""bin/run sweep on the two-node cluster: every trial in the ledger, the test folds played only by the best trial,
once; a bad SPACE.toml is refused naming the file and key."""

from __future__ import annotations

import json
import pickle

import pytest

from actors.jobs.cli import main

SPACE = """
[sweep]
trials = 3
seed = 0
[walk_forward]
market = "regimes"
days = 30
train_days = 12
validation_folds = 2
test_folds = 1
seeds = 1
budgets = [256]
[fixed]
"policy.n_steps" = 128
"policy.batch_size" = 64
[space."policy.gamma"]
type = "float"
low = 0.9
high = 0.99
[space."policy.net_arch"]
type = "categorical"
choices = [[16, 16], [32, 32]]
"""


@pytest.mark.slow
def test_a_sweep_writes_every_trial_to_the_ledger_and_tests_only_the_best_once(two_nodes, tmp_path, capsys):
    pytest.importorskip("actors.jobs.evaluation.ledger")
    from actors.jobs.evaluation.ledger import read_trials

    space = tmp_path / "tiny.toml"
    space.write_text(SPACE)
    runs = tmp_path / "runs"
    assert main(["sweep", str(space), "--ray", two_nodes.address, "--run-dir", str(tmp_path / "run"),
                 "--set", f"run.runs_dir={runs}", "--quiet"]) == 0

    records = list(read_trials(runs / "trials.jsonl"))
    trials = [r for r in records if r["kind"] == "sweep-trial"]
    [test] = [r for r in records if r["kind"] == "sweep-test"]
    assert sorted(r["trial"] for r in trials) == [0, 1, 2]
    assert all(r["state"] in ("complete", "pruned") and r["params"]["policy.net_arch"] in ([16, 16], [32, 32]) for r in trials)
    assert all(r["validation_folds"] == [0, 1] for r in trials) and test["folds"] == [2]
    best = max((r for r in trials if r["state"] == "complete"), key=lambda r: r["value_pnl_per_day"])
    assert test["trial"] == best["trial"] and test["trials_tried"] == 3

    # Every cell that played the test fold was the best trial's: no trial saw the test days.
    cells = [pickle.loads(path.read_bytes()).cell for path in (tmp_path / "run" / "cells").glob("*.pkl")]
    on_test = {cell.config_hash for cell in cells if cell.fold == 2}
    assert on_test == {test["config_hash"]}
    assert {cell.fold for cell in cells if cell.config_hash != test["config_hash"]} <= {0, 1}
    assert "Best trial" in capsys.readouterr().out


def test_a_space_with_an_unknown_key_is_refused_naming_the_file_and_key(tmp_path, capsys):
    space = tmp_path / "bad.toml"
    space.write_text(SPACE.replace('type = "float"', 'type = "float"\nhigh_value = 3', 1))
    assert main(["sweep", str(space), "--ray", "off", "--run-dir", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "bad.toml" in err and "high_value" in err


def test_a_searched_data_setting_is_refused(tmp_path, capsys):
    space = tmp_path / "data.toml"
    space.write_text(SPACE.replace('[space."policy.gamma"]', '[space."data.seed"]'))
    assert main(["sweep", str(space), "--ray", "off", "--run-dir", str(tmp_path / "run")]) == 1
    assert "'data.seed'" in capsys.readouterr().err
