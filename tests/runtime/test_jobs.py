"""The bin/run jobs as a user runs them: real processes, real training, real report files."""

import json
import subprocess
from pathlib import Path

import pytest

from runtime.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--set", "env.n_envs=1", "--set", "policy.n_steps=128", "--set", "policy.batch_size=32", "--set", "policy.n_epochs=2",
         "--set", "data.synthetic_days=20", "--quiet"]


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


@pytest.mark.slow
def test_train_then_backtest_writes_checkpoint_and_report(tmp_path):
    train_dir = tmp_path / "train"
    done = bin_run("train", "--timesteps", "512", "--run-dir", str(train_dir), *SMALL, "--set", 'runtime.actors=["env","policy","fusion","risk"]')
    assert done.returncode == 0, done.stderr[-2000:]
    assert "training summary" in done.stdout and "approx_kl" in done.stdout
    assert list((train_dir / "checkpoints").glob("*.zip"))
    test_dir = tmp_path / "backtest"
    done = bin_run("backtest", "--model", str(train_dir), "--run-dir", str(test_dir), *SMALL, "--set", 'runtime.actors=["env","policy","fusion","risk"]')
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads((test_dir / "backtest" / "metrics.json").read_text())
    assert metrics["loop_steps"] > 100 and "win_rate" in metrics and "sharpe" in metrics
    assert (test_dir / "backtest" / "equity.png").stat().st_size > 10_000
    assert "Win rate" in done.stdout


def test_ablation_table_has_a_row_per_variant_and_every_column_the_issue_names():
    from runtime.jobs import ABLATION_VARIANTS, ablation_markdown

    rows = [{"variant": name, "metrics": {"win_rate": 0.5, "sharpe": 1.25, "trades": 10.0}} for name, _ in ABLATION_VARIANTS]
    table = ablation_markdown(rows, "notes on data and seeds")
    lines = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    assert len(lines) == 1 + len(ABLATION_VARIANTS)  # header + one row each
    for label in ("win rate", "Sharpe", "max DD $", "profit factor", "trades", "Apex violations", "agreement", "veto rate", "query rate", "LLM staleness (steps)"):
        assert label in lines[0]
    assert "| RL only | 0.500 | 1.250 | - | - | 10 |" in table and "notes on data and seeds" in table
    methods = {settings.get("fusion.method") for _, settings in ABLATION_VARIANTS}
    assert methods == {"rl_only", "rules", "network"}


def test_a_thought_is_printed_as_its_four_steps_and_the_action():
    from bus.messages import LlmThought
    from runtime.jobs import format_thought

    thought = LlmThought(env_id=0, episode_id=0, step_seen=5, query_id="1-1", action=1, confidence=0.8, mode="four_step",
                         analysis="Up  trend.", options="BUY or HOLD", risks="a reversal", decision="BUY | 0.8 | trend")
    text = format_thought(thought)
    assert "analyse: Up trend." in text and "risks: a reversal" in text and "-> BUY with confidence 0.80" in text


def test_a_broken_data_file_stops_bin_run_before_any_process_with_file_row_and_column(tmp_path):
    bars = tmp_path / "bars.csv"
    bars.write_text("time,open,high,low,close,volume\n2024-01-02 09:30,1,2,0.5,1.5,10\nnot a time,x,2,1,1,1\n")
    done = bin_run("run", "--set", "data.source='file'", "--set", f"data.path='{bars}'", "--run-dir", str(tmp_path / "r"))
    assert done.returncode == 1
    assert str(bars) in done.stderr and "row 2" in done.stderr and "'time'" in done.stderr
    assert not (tmp_path / "r").exists()
