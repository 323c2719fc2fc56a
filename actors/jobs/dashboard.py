"""``bin/run dashboard`` and ``bin/run main|train|backtest|paper|evaluate|ablation|sweep --dashboard``.

Beside a job the dashboard is its own process (``python -m actors.jobs.dashboard --follow``) watching the job's
run directory, so a busy page never slows the job's process; it stops when the job ends. This module is the
dashboard's composition root: it gives it ``market_history``, which rebuilds a finished backtest's bars from the
env's data and the run's whole config (the dashboard package itself may load neither).
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
from typing import Any, Iterator

from actors.jobs.common import JobError, configure

WITH_DASHBOARD = ("main", "train", "backtest", "paper", "evaluate", "ablation", "sweep")
"""The modes with --dashboard; evaluate, ablation and sweep show their cells' progress (actors/dashboard/cells.py)."""


def dashboard_settings(args: argparse.Namespace):
    """The job's [dashboard] section (default.toml, --config, --set) with --host and --port over it."""
    from actors.dashboard.server import with_flags

    return with_flags(configure(args).dashboard, args.host, args.port)


def mode_dashboard(args: argparse.Namespace) -> int:
    from actors.dashboard.server import run_dashboard

    runs_dir = Path(configure(args).run.runs_dir)
    return run_dashboard(args.run, args.bus, dashboard_settings(args), runs_dir=runs_dir, bars=market_history)


def market_history(run_dir: Path):
    """Env 0's bars over a finished backtest's loop steps (a ``MarketHistory``), or None and why not.

    A run's logs and report hold no prices (the loop's prices travel only on the bus), so the bars are rebuilt from
    the data the run's config.toml names (the same dataset the env actor loaded: a file, or the seeded synthetic
    market) and placed on loop steps by the report's trades: an entry decided at step s fills at the next bar's
    open, so the decision bar of step s is the entry bar minus one (without trades: the split's first bar,
    where a backtest's env 0 starts)."""
    import json

    from actors.dashboard.model import MarketHistory
    from actors.dashboard.report import METRICS_FILE
    from runtime.rundir import CONFIG_FILE

    try:
        import pandas as pd

        from actors.env.factory import load_dataset
        from actors.jobs.config import load_resolved
        from config.tree import ConfigError

        config = load_resolved(run_dir / CONFIG_FILE)
        report = run_dir / config.env.report_dir / METRICS_FILE
        if not report.is_file():
            return None, ("no price: only a finished backtest's bars can be rebuilt (a training run's episodes start at random bars; "
                          "a paper run's came from its feed)")
        if config.env.mode != "backtest":
            return None, f"no price: the run's env.mode is {config.env.mode}, not backtest"
        dataset = load_dataset(config)
        split = dataset.split(config.env.split)
        document = json.loads(report.read_text())
    except (OSError, ValueError, KeyError, ImportError, ConfigError) as exc:
        return None, f"no price: the run's bars could not be rebuilt ({type(exc).__name__}: {exc})"
    minutes = pd.DatetimeIndex(dataset.index).tz_convert("America/New_York").strftime("%Y-%m-%d %H:%M")
    first = bar_offset(document.get("trade_list", []), {text: i for i, text in enumerate(minutes)})
    first = split.start if first is None else first
    steps = int(document.get("loop_steps") or (split.stop - first))
    stop = min(split.stop, first + steps + 1, len(dataset.close))
    if stop - first < 1:
        return None, "no price: the report's steps lie outside the run's data"
    bars = slice(first, stop)
    return MarketHistory(0, dataset.open[bars].tolist(), dataset.high[bars].tolist(), dataset.low[bars].tolist(),
                         dataset.close[bars].tolist(), f"({dataset.source}, bars {first}-{stop - 1})"), ""


def bar_offset(trades: list[Any], bar_of_minute: dict[str, int]) -> int | None:
    """The bar of loop step 0 that most of env 0's trades agree on (entry bar - 1 - entry step), or None without trades."""
    votes: dict[int, int] = {}
    for trade in trades:
        entry = trade.get("entry_decision") if isinstance(trade, dict) else None
        if not entry or trade.get("env_id", 0) != 0 or trade.get("entry_time_et") not in bar_of_minute:
            continue
        first = bar_of_minute[trade["entry_time_et"]] - 1 - int(entry.get("step", 0))
        votes[first] = votes.get(first, 0) + 1
    return max(votes, key=votes.__getitem__) if votes else None


def run_dir_given(args: argparse.Namespace) -> bool:
    """Whether the user gave --run-dir (a cell job then caches its cells in the run's own cells/, to resume it), not
    --dashboard, which names the run directory up front only so the page can wait for it (the shared cache stays)."""
    return args.run_dir is not None and not getattr(args, "run_dir_named_for_dashboard", False)


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
    args.run_dir_named_for_dashboard = args.run_dir is None
    args.run_dir = job_run_dir(args)
    args.run_dir.mkdir(parents=True, exist_ok=True)
    stderr_file = args.run_dir / "dashboard.stderr"
    command = [sys.executable, "-m", "actors.jobs.dashboard", "--run", str(args.run_dir), "--follow",
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
        stop_dashboard(process)


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
    stop_dashboard(process)
    raise JobError(f"the dashboard did not start within {timeout_secs:g} s ([dashboard] ready_timeout_secs)")


def stop_dashboard(process: subprocess.Popen, timeout_secs: float = 5.0) -> None:
    """Stop a dashboard process: SIGTERM, then SIGKILL when it has not exited within ``timeout_secs``."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout_secs)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> int:
    """``python -m actors.jobs.dashboard``: ``python -m actors.dashboard`` with a finished backtest's bars rebuilt."""
    from actors.dashboard.server import main as dashboard_main

    return dashboard_main(argv, bars=market_history)


if __name__ == "__main__":
    sys.exit(main())
