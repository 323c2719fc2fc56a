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
    from actors.jobs.evaluation.ledger import read_trials

    space = tmp_path / "tiny.toml"
    space.write_text(SPACE)
    runs = tmp_path / "runs"
    assert main(["sweep", str(space), "--ray", two_nodes.address, "--run-dir", str(tmp_path / "run"),
                 "--set", f"run.runs_dir={runs}", "--quiet"]) == 0

    outcome = json.loads((tmp_path / "run" / "sweep" / "sweep.json").read_text())
    records = read_trials(runs / "trials.jsonl")
    assert all(r.job == "sweep" and r.market == "regimes" and r.daily_returns for r in records)
    assert len({r.run_id for r in records}) == 1  # appended trial by trial, one sweep is one run
    trials = [r for r in records if "-trial" in r.variant and "-best-" not in r.variant]
    # Every trial is in the ledger, each with the validation folds it was scored on (a pruned one: fewer).
    for entry in outcome["trials"]:
        mine = [r for r in trials if r.variant.startswith(f"tiny-trial{entry['trial']}@")]
        assert sorted(r.fold for r in mine) == list(range(entry["validation_folds_scored"])) and entry["state"] in ("complete", "pruned")
        assert mine[0].params["policy.net_arch"] in ("[16, 16]", "[32, 32]")
    assert len(outcome["trials"]) == 3 and {r.fold for r in trials} <= {0, 1}
    # The test fold: the best trial's policy, once, beside the floors and the oracle on the same days.
    tested = [r for r in records if r.fold == 2]
    best = outcome["best"]
    assert [r.variant for r in tested if r.role == "policy"] == [f"tiny-best-trial{best['trial']}@256#0"]
    assert {r.role for r in tested} == {"policy", "floor", "oracle"}
    assert outcome["test"]["folds"] == [2] and best["value_pnl_per_day"] == max(
        e["value_pnl_per_day"] for e in outcome["trials"] if e["state"] == "complete")

    # No trial's cell played the test fold: only the best configuration's did.
    cells = [pickle.loads(path.read_bytes()).cell for path in (tmp_path / "run" / "cells").glob("*.pkl")]
    on_test = {cell.config_hash for cell in cells if cell.fold == 2 and cell.kind != "regime"}  # a regime fit reads training days only
    best_hashes = {e["config_hash"] for e in outcome["trials"] if e["trial"] == best["trial"]}
    assert on_test == best_hashes
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


def test_a_sweep_without_a_space_says_how_to_give_one(tmp_path, capsys):
    assert main(["sweep", "--ray", "off", "--run-dir", str(tmp_path / "run")]) == 1
    assert "sweep needs a SPACE.toml" in capsys.readouterr().err
