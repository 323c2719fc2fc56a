"""Every bin/run mode given a bad file: one line naming the file (and its row and column where it has them), a
non-zero exit, no traceback, and nothing started (the check comes before any training or process)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from actors.jobs.cli import main

ROOT = Path(__file__).resolve().parents[3]
BAD_BARS = "timestamp,open,high,low,close,volume\n2024-01-02 09:30,1,2,0.5,1.5,10\n2024-01-02 09:31,abc,2,0.5,1.5,10\n"
BARS_SAYS = "bad.csv, row 2, column 'open': 'abc' is not a number"


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    (tmp_path / "bad.csv").write_text(BAD_BARS)
    (tmp_path / "bad.zip").write_text("not a zip")
    (tmp_path / "bad.gguf").write_text("junk")
    (tmp_path / "bad.jsonl").write_text('{"a": 1}\n')
    (tmp_path / "bad.toml").write_text("[space\nx=")
    (tmp_path / "bus.json").write_text('{"xsub": 1')
    (tmp_path / "empty").mkdir()
    return tmp_path


CASES = {
    "main --data": (["main", "--data", "{B}/bad.csv"], BARS_SAYS),
    "run data.path": (["run", "--set", "data.source='file'", "--set", "data.path='{B}/bad.csv'"], BARS_SAYS),
    "train --resume": (["train", "--resume", "{B}/bad.zip"], "bad.zip: not a policy checkpoint"),
    "backtest --model": (["backtest", "--model", "{B}/bad.zip"], "bad.zip: not a policy checkpoint"),
    "ablation --data": (["ablation", "--data", "{B}/bad.csv"], BARS_SAYS),
    "paper --model": (["paper", "--model", "{B}/bad.zip"], "bad.zip: not a policy checkpoint"),
    "paper history": (["paper", "--set", "env.paper_history_path='{B}/bad.csv'"], BARS_SAYS),
    "evaluate --market": (["evaluate", "--market", "{B}/bad.csv"], BARS_SAYS),
    "evaluate --adapter": (["evaluate", "--lockstep-decisions", "2", "--adapter", "{B}/bad.gguf"], "bad.gguf is not a GGUF file"),
    "lora --experiences": (["lora", "--experiences", "{B}/bad.jsonl"], "bad.jsonl, line 1, field 'id': missing"),
    "sweep SPACE": (["sweep", "{B}/bad.toml"], "bad.toml: cannot read"),
    "join --join": (["join", "--join", "{B}/bus.json"], "bus.json: not a bus.json"),
    "soak data.path": (["soak", "--set", "data.source='file'", "--set", "data.path='{B}/bad.csv'"], BARS_SAYS),
    "chaos data.path": (["chaos", "--set", "data.source='file'", "--set", "data.path='{B}/bad.csv'"], BARS_SAYS),
    "fuzz --config": (["fuzz", "--config", "{B}/bad.toml"], "bad.toml"),
    "run reasoner.model_path": (["run", "--set", "reasoner.model_path='{B}/bad.gguf'"], "bad.gguf is not a GGUF file"),
    "trials --ledger": (["trials", "--ledger", "{B}/bad.jsonl"], "bad.jsonl: 1 unreadable line(s)"),
    "keys --dir": (["keys", "--dir", "{B}/bad.csv"], "bad.csv: Not a directory"),
    "grid VARIANTS": (["grid", "{B}/bad.toml", "--", "--quick"], "bad.toml: cannot read"),
    "run policy.skip_forced_bars": (["run", "--set", "policy.skip_forced_bars=true"],
                                      "policy.skip_forced_bars: only bin/run evaluate's in-process trainer"),
    "run risk.oracle_gate_enabled": (["run", "--set", "risk.oracle_gate_enabled=true"],
                                     "risk.oracle_gate_enabled: the oracle gate knows each event's true surprise size"),
    "paper risk.oracle_gate_enabled": (["paper", "--set", "risk.oracle_gate_enabled=true"],
                                       "risk.oracle_gate_enabled: the oracle gate knows each event's true surprise size"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_file_in_any_mode_is_one_line_and_a_non_zero_exit_before_any_work(case, bad, capsys):
    argv, says = CASES[case]
    run_dir = bad / "run"
    code = main([part.replace("{B}", str(bad)) for part in argv] + ["--run-dir", str(run_dir)])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code != 0
    assert len(err) == 1 and says in err[0] and err[0].startswith("bin/run"), err
    assert not run_dir.exists()


def test_a_dashboard_of_a_folder_that_is_no_run_is_one_line(bad, capsys):
    code = main(["dashboard", "--run", str(bad / "empty")])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 2 and len(err) == 1 and "empty: not a run directory" in err[0]


def test_bin_run_evaluate_with_a_bad_bars_file_prints_one_line_from_a_real_process(bad):
    done = subprocess.run([str(ROOT / "bin" / "run"), "evaluate", "--market", str(bad / "bad.csv"), "--run-dir", str(bad / "run")],
                          cwd=bad, capture_output=True, text=True, timeout=240)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"bin/run: {bad}/{BARS_SAYS}"]
    assert not (bad / "run").exists()
