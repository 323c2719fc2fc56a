"""bin/feed in a real process publishing bars and file events to a running runtime's bus: each event arrives
right after the bar whose close passes its time, at speed 0 and at agent pace (the test answers each bar)."""

import json
import subprocess
import time

import numpy as np
import pandas as pd
import pytest

from actors.feed.cli import main as feed_main
from bus.messages import Bar, Done, Event, RiskVerdict
from runtime.tail import main as tail_main
from runtime.testing import running_actors
from tests.actors.feed.test_actor import ROOT, announce_test_client, write_bars_csv

MINUTE = 60 * 10**9
CALENDAR = """time,name,importance,actual,consensus
2024-03-04T14:40:00Z,ISM Services,high,52.6,53.0
2024-03-04T09:55:30-05:00,Factory Orders,medium,-3.6%,-2.9%
2024-03-04T16:00:00Z,After the last bar,high,,
"""
HEADLINES = """{"time": "2024-03-04T14:29:00Z", "text": "Before the first bar"}
{"time": "2024-03-04T14:35:10Z", "text": "Powell testimony moved up", "source": "Wire", "importance": "high"}
"""


def answer(client, bar: Bar, step: int) -> None:
    """Stand in for the runtime's decision on a bar: the feed at agent pace waits for a risk.verdict."""
    client.publish(RiskVerdict(env_ids=[0], step=step, actions=np.zeros(1, dtype=np.int64), vetoed=[False], reasons=[""], degraded=[False]))


def receive_until_done(client, agent: bool, timeout_secs: float = 60.0) -> list:
    messages, deadline, step = [], time.monotonic() + timeout_secs, 0
    while time.monotonic() < deadline:
        try:
            msg = client.recv_decoded(timeout_secs=1.0).msg
        except TimeoutError:
            announce_test_client(client)
            continue
        if isinstance(msg, Done):
            return messages
        if isinstance(msg, (Bar, Event)):
            messages.append(msg)
        if isinstance(msg, Bar) and agent:
            step += 1
            answer(client, msg, step)
    raise TimeoutError(f"no Done from the feed; got {len(messages)} messages")


@pytest.mark.slow
@pytest.mark.parametrize("speed", ["0", "agent"])
def test_file_events_reach_a_subscriber_in_bar_time_order(tmp_path, speed, capsys):
    write_bars_csv(tmp_path / "bars.csv")  # 40 one-minute bars from 2024-03-04 14:30 UTC
    (tmp_path / "cal.csv").write_text(CALENDAR)
    (tmp_path / "news.jsonl").write_text(HEADLINES)
    with running_actors(["actors.env.random_verdicts"]) as rt:
        rt.client.subscribe(Bar, Event, Done)
        feed = subprocess.Popen(
            [str(ROOT / "bin" / "feed"), "--run", str(rt.run_dir), "--source", "replay", "--path", str(tmp_path / "bars.csv"),
             "--timezone", "UTC", "--speed", speed, "--wait-for", "test", "--calendar", str(tmp_path / "cal.csv"),
             "--headlines", str(tmp_path / "news.jsonl"), "--event-ahead-mins", "5", "--set", "env.paper_warmup_bars=20"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        try:
            announce_test_client(rt.client)
            messages = receive_until_done(rt.client, agent=speed == "agent")
            output, _ = feed.communicate(timeout=30)
        finally:
            if feed.poll() is None:
                feed.kill()
        log = (rt.run_dir / "logs" / "feed.jsonl").read_text()
        tailed = tail_events(rt.run_dir, capsys)
    assert feed.returncode == 0, output

    bars = [m for m in messages if isinstance(m, Bar)]
    assert len(bars) == 40
    clock, previous_clock, seen = None, -1, []
    for msg in messages:
        if isinstance(msg, Bar):
            previous_clock, clock = clock if clock is not None else -1, msg.start_ns + MINUTE
            continue
        due = msg.time_ns if msg.time_ns <= clock else msg.time_ns - 5 * MINUTE  # an announcement goes out 5 min ahead
        # Right after the first bar whose close passes it: not before, not a bar later.
        assert previous_clock < due <= clock, f"{msg.text} went out at bar clock {pd.Timestamp(clock, tz='UTC')}"
        seen.append((msg.text, msg.time_ns <= clock, msg.source.split(":")[0]))
    assert seen == [
        ("Before the first bar", True, "headlines"),
        ("ISM Services", False, "calendar"),  # announced at 14:35 ...
        ("Wire: Powell testimony moved up", True, "headlines"),
        ("ISM Services", True, "calendar"),  # ... and out at 14:40
        ("Factory Orders", False, "calendar"),
        ("Factory Orders", True, "calendar"),
    ]
    ism = [m for m in messages if isinstance(m, Event) and m.name == "ISM Services"]
    assert np.isnan(ism[0].actual) and ism[1].actual == 52.6 and ism[1].importance == "high"
    assert log.count('"event": "md_event"') == 6 and "feed_events_unplayed" in log
    # bin/tail --event md.event follows them: the feed's md_event lines, with the event's fields.
    assert [(r["actor"], r.get("name") or r["text"], r["ahead"]) for r in tailed] == [(a, b, not c) for a, b, c in
            [("feed", t, due) for t, due, _ in seen]]
    assert tailed[3]["actual"] == 52.6 and "actual" not in tailed[1] and tailed[3]["source"].startswith("calendar:")


def tail_events(run_dir, capsys) -> list[dict]:
    capsys.readouterr()
    assert tail_main([str(run_dir), "--event", "md.event", "--no-follow", "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_bin_feed_refuses_a_bad_calendar_naming_file_row_and_field(tmp_path, capsys):
    bad = tmp_path / "cal.csv"
    bad.write_text("time,name,importance\n2024-03-04T14:40:00Z,ISM,high\n2024-03-04T14:50:00Z,PMI,urgent\n")
    code = feed_main(["--bus", "tcp://127.0.0.1:1,tcp://127.0.0.1:2", "--source", "synthetic", "--calendar", str(bad)])
    stderr = capsys.readouterr().err
    assert code == 2
    assert f"{bad}, row 2, field 'importance'" in stderr and "urgent" in stderr
