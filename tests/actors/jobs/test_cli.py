"""bin/run as a user runs it: the help, and errors that stop it before or at start (real processes)."""

import subprocess
from pathlib import Path

from actors.jobs.cli import build_parser

ROOT = Path(__file__).resolve().parents[3]


def bin_run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "run"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_help_explains_every_mode_and_option():
    text = build_parser().format_help()
    for word in ("main", "train", "backtest", "ablation", "--config", "--set", "--run-dir", "--duration-secs", "--timesteps", "--model", "--data", "--resume"):
        assert word in text


def test_unknown_config_key_stops_bin_run_with_the_key_named(tmp_path):
    done = bin_run("run", "--set", "env.n_env=2", "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 2 and "env.n_env" in done.stderr


def test_backtest_without_a_checkpoint_is_a_clear_error(tmp_path):
    done = bin_run("backtest", "--model", str(tmp_path), "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 1 and "no policy checkpoint" in done.stderr


def test_a_broken_data_file_stops_bin_run_before_any_process_with_file_row_and_column(tmp_path):
    bars = tmp_path / "bars.csv"
    bars.write_text("time,open,high,low,close,volume\n2024-01-02 09:30,1,2,0.5,1.5,10\nnot a time,x,2,1,1,1\n")
    done = bin_run("run", "--set", "data.source='file'", "--set", f"data.path='{bars}'", "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 1
    assert str(bars) in done.stderr and "row 2" in done.stderr and "'time'" in done.stderr
    assert not (tmp_path / "r").exists()
