"""Attach: ``bin/run paper`` (default actors, the reasoner included) and ``bin/feed`` in another process."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
from pathlib import Path

import pytest

from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
SMALL_PAPER = [
    "env.paper_warmup_bars=30", "env.paper_window_bars=240", "env.feed_silence_warn_secs=1.5", "env.feed_silence_flatten_secs=3.0",
    "policy.deterministic_when_frozen=false",  # an untrained policy that samples enters trades, so trades appear
    "reasoner.mode=\"single_shot\"",
    # Full speed on a busy test machine (as the other real-model tests): at nice 19 its model took 15 s to load and,
    # starved mid-thought at Ctrl-C, it outlived the grace period and the SIGTERM (10 s more) before its SIGKILL.
    "reasoner.process_nice=0",
]

WAIT_FOR_LOOP = [arg for actor in ("env", "policy", "reasoner", "fusion", "risk") for arg in ("--wait-for", actor)]
"""The first bar goes out once the whole loop answers (a live feed's first bars would only warm up)."""


def log_events(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [json.loads(line).get("event", "") for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_a_feed_attached_to_bin_run_paper_drives_decisions_trades_and_the_silence_warning(tmp_path):
    run_dir = tmp_path / "paper-run"
    overrides = [arg for setting in SMALL_PAPER for arg in ("--set", setting)]
    runtime = subprocess.Popen(
        [str(ROOT / "bin" / "run"), "paper", "--run-dir", str(run_dir), "--quiet", *overrides],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        wait_until(lambda: (run_dir / "bus.json").is_file(), 30, "the runtime's bus.json", poll_secs=0.2)
        feed = subprocess.run(
            [str(ROOT / "bin" / "feed"), "--run", str(run_dir), "--source", "synthetic", "--pace-secs", "0.05", "--max-bars", "90", *WAIT_FOR_LOOP],
            capture_output=True, text=True, timeout=90,
        )
        assert feed.returncode == 0, feed.stdout + feed.stderr
        env_log = run_dir / "logs" / "env.jsonl"
        wait_until(lambda: "feed_silent" in log_events(env_log), 15, "the feed_silent warning", poll_secs=0.2)

        runtime.send_signal(signal.SIGINT)
        output, _ = runtime.communicate(timeout=60)
    finally:
        if runtime.poll() is None:
            runtime.kill()

    paper = run_dir / "paper"
    decisions = (paper / "decisions.jsonl").read_text().splitlines()
    equity = list(csv.DictReader((paper / "equity.csv").open()))
    trades = [json.loads(line) for line in (paper / "trades.jsonl").read_text().splitlines()]
    assert runtime.returncode == 0, output
    assert len(decisions) >= 40 and len(equity) >= 40
    assert trades and all("entry_decision" in trade for trade in trades)
    assert (paper / "report" / "report.html").is_file()
    assert json.loads((paper / "summary.json").read_text())["decisions"] >= 40
    assert "paper trading stopped" in output and "LLM:" in output and "thoughts_arrived" in output
