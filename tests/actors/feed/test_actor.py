"""The feed actor in a real process on a real bus, started by the runtime and attached by bin/feed."""

import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bus.messages import Bar, Done, Heartbeat
from runtime.testing import running_actors

ROOT = Path(__file__).resolve().parents[3]
N_BARS = 40


def write_bars_csv(path: Path, n: int = N_BARS) -> pd.DataFrame:
    index = pd.date_range("2024-03-04 14:30", periods=n, freq="1min", tz="UTC")
    close = 18_000 + np.arange(n, dtype=float)
    frame = pd.DataFrame({"open": close - 0.5, "high": close + 1, "low": close - 1, "close": close, "volume": 100.0 + np.arange(n)}, index=index)
    frame.index.name = "timestamp"
    frame.to_csv(path)
    return frame


def announce_test_client(client) -> None:
    """The feed waits for a heartbeat of the actors named in feed.wait_for_actors: this test client's."""
    client.publish(Heartbeat(actor="test", pid=os.getpid(), uptime_secs=0.0))


def receive_bars(client, n: int, timeout_secs: float = 30.0) -> list[Bar]:
    bars, deadline = [], time.monotonic() + timeout_secs
    while len(bars) < n:
        try:
            bars.append(client.recv(Bar, timeout_secs=max(0.1, min(1.0, deadline - time.monotonic()))))
        except TimeoutError:
            if time.monotonic() > deadline:
                break
            announce_test_client(client)  # in case the first heartbeat went out before the feed subscribed
    return bars


@pytest.mark.slow
def test_replay_at_speed_zero_delivers_every_bar_once_in_order_closed(tmp_path):
    frame = write_bars_csv(tmp_path / "bars.csv")
    overrides = {
        "feed.source": "replay", "feed.replay_path": str(tmp_path / "bars.csv"), "feed.replay_speed": 0.0,
        "feed.replay_timezone": "UTC", "feed.wait_for_actors": ["test"], "feed.symbol": "NQ",
    }
    with running_actors(["feed"], overrides) as rt:
        rt.client.subscribe(Bar, Done)
        announce_test_client(rt.client)

        bars = receive_bars(rt.client, N_BARS)
        done = rt.client.recv(Done, timeout_secs=10)
        with pytest.raises(TimeoutError):
            rt.client.recv(Bar, timeout_secs=0.5)  # nothing after the last bar

    starts = [b.start_ns for b in bars]
    assert starts == list(frame.index.as_unit("ns").asi8)  # every bar, once, in order
    assert [b.close for b in bars] == list(frame["close"])  # each one complete, as in the file
    assert all(b.source == "replay" and b.symbol == "NQ" for b in bars)
    assert done.actor == "feed" and done.summary["bars"] == N_BARS


@pytest.mark.slow
def test_bin_feed_attaches_a_synthetic_feed_to_a_running_runtime_and_exits_after_max_bars():
    with running_actors(["actors.env.random_verdicts"]) as rt:
        rt.client.subscribe(Bar)
        feed = subprocess.Popen(
            [str(ROOT / "bin" / "feed"), "--run", str(rt.run_dir), "--source", "synthetic", "--days", "1",
             "--pace-secs", "0", "--max-bars", "25", "--wait-for", "test"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        try:
            announce_test_client(rt.client)
            bars = receive_bars(rt.client, 25)
            output, _ = feed.communicate(timeout=30)
        finally:
            if feed.poll() is None:
                feed.kill()

    assert feed.returncode == 0, output
    assert len(bars) == 25 and all(b.source == "synthetic" for b in bars)
    assert np.all(np.diff([b.start_ns for b in bars]) == 60 * 10**9)


def test_bin_feed_help_documents_every_source():
    result = subprocess.run([str(ROOT / "bin" / "feed"), "--help"], capture_output=True, text=True, timeout=60)

    assert result.returncode == 0
    for word in ("replay", "synthetic", "ccxt", "--speed", "--pace-secs", "--exchange", "--timeframe", "TT_CCXT_API_KEY",
                 "--calendar", "--headlines", "--rss", "md.event"):
        assert word in result.stdout


def test_bin_feed_without_a_running_runtime_says_so(tmp_path):
    result = subprocess.run([str(ROOT / "bin" / "feed"), "--run", str(tmp_path), "--source", "synthetic"], capture_output=True, text=True, timeout=60)

    assert result.returncode == 2 and "is the runtime running" in result.stderr
