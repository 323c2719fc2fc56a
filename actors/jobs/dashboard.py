"""``bin/run dashboard`` and ``bin/run main|train|backtest|paper --dashboard``.

Beside a job the dashboard is its own process (``python -m actors.dashboard --follow``) watching the job's
run directory, so a busy page never slows the job's process; it stops when the job ends.
"""

from __future__ import annotations

import argparse
import os
import secrets
import select
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from actors.jobs.common import JobError, configure

WITH_DASHBOARD = ("main", "train", "backtest", "paper")


def dashboard_settings(args: argparse.Namespace):
    """The job's [dashboard] section (default.toml, --config, --set) with --host and --port over it."""
    from actors.dashboard.server import with_flags

    return with_flags(configure(args).dashboard, args.host, args.port)


def mode_dashboard(args: argparse.Namespace) -> int:
    from actors.dashboard.server import run_dashboard

    runs_dir = Path(configure(args).run.runs_dir)
    return run_dashboard(args.run, args.bus, dashboard_settings(args), runs_dir=runs_dir)


def job_run_dir(args: argparse.Namespace) -> Path:
    """The directory the job will write (--run-dir, else the name it would make), so the dashboard can wait for it."""
    if args.run_dir is not None:
        return Path(args.run_dir).resolve()
    config = configure(args)
    name = config.run.name or args.mode
    return (Path(config.run.runs_dir) / f"{time.strftime('%Y%m%d-%H%M%S')}-{name}-{secrets.token_hex(2)}").resolve()


@contextmanager
def dashboard_beside(args: argparse.Namespace) -> Iterator[str]:
    """Start the dashboard on the job's run directory; yields its address; stops it when the job ends."""
    if args.mode not in WITH_DASHBOARD:
        raise JobError(f"--dashboard goes with {', '.join(WITH_DASHBOARD)} (or run bin/run dashboard --run DIR beside any run)")
    import msgspec

    settings = dashboard_settings(args)
    args.run_dir = job_run_dir(args)
    args.run_dir.mkdir(parents=True, exist_ok=True)
    stderr_file = args.run_dir / "dashboard.stderr"
    command = [sys.executable, "-m", "actors.dashboard", "--run", str(args.run_dir), "--follow",
               "--settings", msgspec.json.encode(settings).decode(), "--parent-pid", str(os.getpid())]
    with open(stderr_file, "w") as stderr:  # the child keeps its own handle; a file never fills up and blocks it
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        url = _wait_ready(process, stderr_file, settings.ready_timeout_secs)
        threading.Thread(target=_drain, args=(process.stdout,), name="dashboard-stdout", daemon=True).start()
        print(f"dashboard:     {url}  (live; stops with this job; reopen later with bin/run dashboard --run {args.run_dir})",
              file=sys.stderr, flush=True)
        yield url
    finally:
        _stop(process)


def _drain(stream) -> None:
    for _ in stream:
        pass


def _wait_ready(process: subprocess.Popen, stderr_file: Path, timeout_secs: float) -> str:
    """The page's address once the dashboard prints it ([dashboard] ready_timeout_secs: Bokeh's first import takes a few
    seconds on a busy 2-core machine)."""
    from actors.dashboard.server import READY_PREFIX

    deadline = time.monotonic() + timeout_secs
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            line = process.stdout.readline()
            if line.startswith(READY_PREFIX):
                return line[len(READY_PREFIX):].strip()
        if process.poll() is not None:
            error = stderr_file.read_text(errors="replace").strip().splitlines()
            raise JobError(error[-1] if error else f"the dashboard exited with code {process.returncode}")
    _stop(process)
    raise JobError(f"the dashboard did not start within {timeout_secs:g} s ([dashboard] ready_timeout_secs)")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
