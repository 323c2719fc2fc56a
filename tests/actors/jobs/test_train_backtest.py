"""bin/run train then backtest as a user runs them: real processes, real training, real report files."""

import json
import subprocess
from pathlib import Path

import pytest

from actors.common.figures import label_of
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
SMALL = ["--set", "env.n_envs=1", "--set", "policy.n_steps=128", "--set", "policy.batch_size=32", "--set", "policy.n_epochs=2",
         "--set", "data.synthetic_days=20", "--quiet"]


def bin_run(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "run"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_train_then_backtest_writes_checkpoint_and_report(tmp_path):
    from actors.jobs.evaluation.ledger import read_trials

    train_dir, ledger = tmp_path / "train", tmp_path / "trials.jsonl"
    done = bin_run("train", "--timesteps", "512", "--run-dir", str(train_dir), *SMALL, "--set", 'runtime.actors=["env","policy","fusion","risk"]',
                   "--set", f"run.trials_path={ledger}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "training summary" in done.stdout and label_of("approx_kl") in done.stdout
    assert list((train_dir / "checkpoints").glob("*.zip"))
    [trial] = read_trials(ledger)  # the trained policy, scored on the validation days it never saw
    assert trial.job == "train" and trial.market == "regimes" and len(trial.daily_returns) == trial.params["days"] > 0
    assert f"trials ledger {ledger}: {trial.variant}" in done.stdout
    test_dir = tmp_path / "backtest"
    done = bin_run("backtest", "--model", str(train_dir), "--run-dir", str(test_dir), *SMALL, "--set", 'runtime.actors=["env","policy","fusion","risk"]',
                   "--set", f"run.trials_path={ledger}")
    assert done.returncode == 0, done.stderr[-2000:]
    _, backtest = read_trials(ledger)  # the test days it played: one more trial, in a run of its own
    assert backtest.job == "backtest" and backtest.params["split"] == "test" and backtest.run_id != trial.run_id
    assert len(backtest.daily_returns) == backtest.params["days"] > 0 and f"trials ledger {ledger}: " in done.stdout
    metrics = json.loads((test_dir / "backtest" / "metrics.json").read_text())
    assert metrics["loop_steps"] > 100 and "win_rate" in metrics and "sharpe" in metrics
    assert (test_dir / "backtest" / "equity.png").stat().st_size > 10_000
    assert "Win rate" in done.stdout


@pytest.mark.slow
def test_ctrl_c_during_a_job_is_a_clean_stop_with_exit_code_zero(tmp_path):
    import signal

    run_dir = tmp_path / "train"
    proc = subprocess.Popen([str(ROOT / "bin" / "run"), "train", "--timesteps", "1000000", "--run-dir", str(run_dir), *SMALL,
                             "--set", 'runtime.actors=["env","policy","fusion","risk"]', "--set", "runtime.stats_interval_secs=0.5"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: policy_updates(run_dir) >= 1, timeout_secs=120, what="the policy's first PPO update",
                   poll_secs=0.2)  # mid-training
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=90)
    finally:
        proc.kill()

    assert proc.returncode == 0, stderr[-2000:]
    assert "stopped by the user (sigint)" in stderr and str(run_dir.resolve()) in stderr
    assert "training stopped before the policy finished" not in stderr


def policy_updates(run_dir: Path) -> float:
    """The PPO updates of the policy's last stats line (0 before its first)."""
    updates = 0.0
    for log in (run_dir / "logs").glob("policy*.jsonl"):
        for line in log.read_text().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line still being written
            if entry.get("event") == "stats":
                updates = max(updates, float(entry.get("updates", 0.0)))
    return updates
