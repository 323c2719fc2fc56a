"""`bin/run evaluate --ray HOST:PORT` against a head started as a user starts one: `ray start --head --port P`, nothing
else set, on a machine that has a Ray token (~/.ray/auth_token, which any local ray.init writes): Ray 2.59+ then turns
token authentication on. The client finds the token and its figures equal the one-process run's; a client without the
token is told what to set. (The other cluster tests use ray.cluster_utils.Cluster, which never meets authentication.)"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from actors.jobs.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[4]
RAY = ROOT / ".venv" / "bin" / "ray"
TINY = ["evaluate", "--market", "null", "--quick", "--days", "24", "--train-days", "10", "--folds", "1", "--seeds", "1",
        "--budgets", "256", "--set", "policy.n_steps=128", "--set", "policy.batch_size=64", "--quiet"]
"""One fold, one seed, one budget: a regime, a reference and a policy cell."""
HEAD_START_SECS = 240.0
"""Only stops a broken test from hanging: the head is waited for by its output, not by the clock."""
RAY_VARIABLES = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A shell of a user whose home is ``home``, with no Ray variable set."""
    env = {k: v for k, v in os.environ.items() if k not in RAY_VARIABLES}
    return {**env, "HOME": str(home), "PYTHONPATH": str(ROOT), **extra}


@pytest.fixture(scope="module")
def head():
    """`ray start --head --port P` in a home that holds a token; stopped by its own process (SIGTERM to `ray start
    --block`, then SIGKILL to its process group): `ray stop` would stop every Ray on the machine, other jobs' too."""
    home = Path(tempfile.mkdtemp(prefix="rayhome"))
    temp_dir = Path(tempfile.mkdtemp(prefix="rh", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))  # what `ray get-auth-token --generate` writes
    port = free_port()
    command = [str(RAY), "start", "--head", "--port", str(port), "--num-cpus", "2", "--include-dashboard", "false",
               "--disable-usage-stats", "--temp-dir", str(temp_dir), "--dashboard-port", str(free_port()),
               "--ray-client-server-port", str(free_port()), "--dashboard-agent-listen-port", str(free_port()), "--block"]
    log = home / "head.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, env=user_env(home), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + HEAD_START_SECS
        while "Ray runtime started" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        yield {"address": f"127.0.0.1:{port}", "home": home, "log": log.read_text(errors="replace")}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever the head started and left behind
        except ProcessLookupError:
            pass
        proc.wait()
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(temp_dir, ignore_errors=True)


def figures(run_dir: Path) -> tuple[dict, dict]:
    data = json.loads((run_dir / "evaluate" / "metrics.json").read_text())
    return data.pop("cells"), {k: v for k, v in data.items() if k not in ("elapsed_secs", "ledger")}


def bin_run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "run"), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def test_evaluate_on_a_ray_start_head_with_token_auth_gives_the_one_process_figures(head, tmp_path):
    assert "Token authentication is enabled" in head["log"]  # the case a user meets
    ledger = ["--set", f"run.trials_path={tmp_path / 'trials.jsonl'}"]
    on_ray = subprocess.Popen([str(ROOT / "bin" / "run"), *TINY, "--ray", head["address"], "--run-dir", str(tmp_path / "ray"), *ledger],
                              cwd=ROOT, env=user_env(head["home"]), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Meanwhile (the Ray run mostly waits: joining, shipping the code, its workers' start) the same grid in this process.
    assert main([*TINY, "--ray", "off", "--run-dir", str(tmp_path / "off"), "--set", f"run.trials_path={tmp_path / 'off.jsonl'}"]) == 0
    _, err = on_ray.communicate(timeout=900)
    assert on_ray.returncode == 0, err[-3000:]

    ray_cost, ray_figures = figures(tmp_path / "ray")
    off_cost, off_figures = figures(tmp_path / "off")
    assert ray_figures == off_figures  # every figure, to the last digit
    assert ray_cost["cells"] == off_cost["cells"] == 3 and ray_cost["address"] == head["address"]


def test_a_client_without_the_token_is_told_what_to_set_on_it_and_on_each_worker_node(head, tmp_path):
    no_token = tmp_path / "home"
    no_token.mkdir()
    env = user_env(no_token, RAY_gcs_server_port_wait_time_s="2")  # Ray's join retries: 2 s instead of 20
    refused = bin_run([*TINY, "--ray", head["address"], "--run-dir", str(tmp_path / "run")], env)
    assert refused.returncode == 1
    error = refused.stderr.strip().splitlines()[-1]
    assert error.startswith(f"bin/run: cannot join the Ray cluster at {head['address']}")
    assert "refused" in error and "no token was found here" in error and str(no_token / ".ray" / "auth_token") in error
    assert "RAY_AUTH_TOKEN_PATH=FILE" in error and f"RAY_AUTH_MODE=token .venv/bin/ray start --address {head['address']}" in error
