"""The trials ledger: records go in whole and come back whole; a corrupt line is named and loses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from actors.jobs.config import load_config
from actors.jobs.evaluation.ledger import (
    LedgerError, TrialRecord, append_trial, append_trials, config_hash, ledger_path, read_trials,
)


def record(variant: str = "policy@50000#0", seed: int = 0, fold: int = 0, **changes) -> TrialRecord:
    fields = {"config_hash": "abc123", "market": "regimes", "seed": seed, "fold": fold, "variant": variant,
              "daily_returns": [0.001, -0.002, 0.0005], "date": "2026-11-28T23:00:00Z", "commit": "deadbeef",
              "code": "c0de", "run_id": "run-1"}
    return TrialRecord(**(fields | changes))


def test_each_append_stamps_the_cells_code_fingerprint_and_a_fresh_run_id_unless_given_one(tmp_path):
    from actors.jobs.cells.cell import code_fingerprint

    path = tmp_path / "trials.jsonl"
    bare = record(code="", run_id="")
    append_trials(path, [bare, record("policy@50000#1", seed=1, code="", run_id="")])  # one call: one run
    append_trial(path, bare)  # the same configuration again: another run
    append_trials(path, [bare], run_id="sweep-7")  # a job appending in several calls names its run

    first, second, again, named = read_trials(path)
    assert {r.code for r in (first, second, again, named)} == {code_fingerprint()[:16]}
    assert first.run_id == second.run_id and again.run_id != first.run_id and named.run_id == "sweep-7"
    assert first.run_id and again.run_id


def test_a_line_written_before_code_and_run_ids_were_recorded_still_reads(tmp_path):
    path = tmp_path / "trials.jsonl"
    path.write_text('{"config_hash":"abc123","market":"regimes","seed":0,"fold":0,"variant":"policy@50000#0",'
                    '"daily_returns":[0.001],"date":"2026-11-28T23:00:00Z","commit":"deadbeef","job":"evaluate","role":"policy","params":{}}\n')
    [old] = read_trials(path)
    assert (old.code, old.run_id, old.daily_returns) == ("", "", [0.001])


def test_appended_records_read_back_equal_and_in_order(tmp_path):
    path = tmp_path / "deep" / "trials.jsonl"
    first, second = record(), record("momentum@fit", seed=1, fold=2, role="floor", params={"window": 60})
    append_trial(path, first)
    append_trials(path, [second, record(job="sweep")])

    back = read_trials(path)

    assert back == [first, second, record(job="sweep")]
    assert back[1].params == {"window": 60} and back[1].role == "floor"
    assert len(path.read_text().splitlines()) == 3  # one line each


def test_numpy_numbers_are_written_as_plain_numbers(tmp_path):
    import numpy as np

    path = tmp_path / "trials.jsonl"
    append_trial(path, record(daily_returns=list(np.array([0.25, -0.5])), seed=np.int64(4)))
    assert read_trials(path) == [record(daily_returns=[0.25, -0.5], seed=4)]


def test_no_ledger_yet_reads_as_no_trials(tmp_path):
    assert read_trials(tmp_path / "absent.jsonl") == []


def test_a_corrupt_line_is_named_by_file_and_line_and_every_other_record_survives(tmp_path):
    path = tmp_path / "trials.jsonl"
    append_trial(path, record(seed=0))
    with open(path, "a") as handle:
        handle.write('{"config_hash": "x", "market": "regimes"\n')  # torn JSON
        handle.write('{"config_hash": "x"}\n')  # valid JSON, not a record
    append_trial(path, record(seed=3))

    with pytest.raises(LedgerError) as caught:
        read_trials(path)

    message = str(caught.value)
    assert f"{path}:2:" in message and f"{path}:3:" in message and f"{path}:1:" not in message
    assert [r.seed for r in caught.value.records] == [0, 3]
    assert len(path.read_text().splitlines()) == 4  # nothing rewritten on disk


def test_a_torn_last_line_does_not_swallow_the_next_record(tmp_path):
    """A run killed mid-write leaves a line without its newline; the next append must start a fresh line."""
    path = tmp_path / "trials.jsonl"
    append_trial(path, record(seed=0))
    with open(path, "a") as handle:
        handle.write('{"config_hash": "torn')
    append_trial(path, record(seed=5))

    with pytest.raises(LedgerError, match=r"trials.jsonl:2:") as caught:
        read_trials(path)
    assert [r.seed for r in caught.value.records] == [0, 5]


def test_an_unknown_role_is_refused_on_write_and_on_read(tmp_path):
    with pytest.raises(ValueError, match="role"):
        record(role="guess")
    path = tmp_path / "trials.jsonl"
    path.write_text('{"config_hash":"a","market":"m","seed":0,"fold":0,"variant":"v",'
                    '"daily_returns":[0.1],"date":"d","commit":"c","role":"guess"}\n')
    with pytest.raises(LedgerError, match=r":1: .*role"):
        read_trials(path)


def test_the_config_hash_ignores_the_seed_and_the_run_folder_but_not_the_settings():
    base = load_config(None, {})
    assert config_hash(base) == config_hash(load_config(None, {"run.seed": 7, "run.runs_dir": "elsewhere"}))
    assert config_hash(base) != config_hash(load_config(None, {"policy.gamma": 0.97}))


def test_the_ledger_lives_in_the_runs_folder_unless_the_config_names_a_file(tmp_path):
    assert ledger_path(load_config(None, {"run.runs_dir": str(tmp_path)}).run) == tmp_path / "trials.jsonl"
    relative = ledger_path(load_config(None, {"run.runs_dir": "runs"}).run)  # what runs print: an absolute path
    assert relative.is_absolute() and relative == Path.cwd() / "runs" / "trials.jsonl"
    named = tmp_path / "mine.jsonl"
    assert ledger_path(load_config(None, {"run.trials_path": str(named)}).run) == named
