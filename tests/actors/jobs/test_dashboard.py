"""bin/run JOB --dashboard: the dashboard starts beside the job, prints its address and stops with it."""

import re
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
def test_a_job_with_the_dashboard_prints_its_address_and_stops_it_at_the_end(tmp_path):
    result = subprocess.run(
        [str(ROOT / "bin" / "run"), "train", "--dashboard", "--port", "0", "--timesteps", "256", "--run-dir", str(tmp_path / "run"),
         "--quiet", "--set", "env.n_envs=1", "--set", "policy.n_steps=128", "--set", "runtime.actors=['env','policy','fusion','risk']",
         "--set", f"run.trials_path={tmp_path / 'trials.jsonl'}"],  # not the repository's runs/trials.jsonl
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    match = re.search(r"dashboard: +http://127\.0\.0\.1:(\d+)/", result.stderr)
    assert match, result.stderr[-2000:]
    assert not port_open(int(match.group(1)))  # it stopped with the job
    assert (tmp_path / "run" / "dashboard.stderr").is_file()


@pytest.mark.slow
def test_a_port_in_use_stops_the_job_before_it_starts(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([str(ROOT / "bin" / "run"), "train", "--dashboard", "--port", str(port), "--run-dir", str(tmp_path / "run")],
                                capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 1
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert not (tmp_path / "run" / "config.toml").exists()  # no runtime was started
