"""TT_PROFILE=hops (runtime/hops.py): each actor times its side of every message and logs it at stop."""

from __future__ import annotations

import json

from runtime.hops import HopTimer
from runtime.testing import running_actors
from tests.waiting import wait_until

RECEIVER_STAGES = {"transit", "decode", "validate", "handler"}
SENDER_STAGES = {"encode", "send"}


def hop_profile(log_file) -> dict:
    events = [json.loads(line) for line in log_file.read_text().splitlines() if '"hop_profile"' in line]
    assert len(events) == 1, f"{log_file.name}: {len(events)} hop_profile events"
    return events[0]["hops"]


def test_the_timer_summarises_each_topic_and_stage_in_microseconds():
    timer = HopTimer()
    for ns in (1_000, 2_000, 3_000):
        timer.add("probe", "decode", ns)
    timer.add("probe", "send", 500)

    summary = timer.summary()

    assert summary["probe"]["decode"] == {"count": 3.0, "p50_us": 2.0, "p90_us": 2.8, "p99_us": 2.98}
    assert summary["probe"]["send"]["p50_us"] == 0.5


def test_with_tt_profile_hops_real_actors_log_every_stage_of_the_messages_they_relay(monkeypatch):
    monkeypatch.setenv("TT_PROFILE", "hops")
    monkeypatch.setenv("TT_PROBE_COUNT", "50")
    monkeypatch.setenv("TT_PROBE_WARMUP", "5")
    monkeypatch.setenv("TT_PROBE_HOPS", "2")
    with running_actors(["runtime.probes:Pinger", "runtime.probes:Relay1"], {"runtime.stats_interval_secs": 60.0}) as rt:
        wait_until(lambda: (rt.run_dir / "probe.json").exists(), 180, "the pinger's round trips")
        rt.stop()
        logs = rt.run_dir / "logs"
        pinger, relay = hop_profile(logs / "pinger.jsonl"), hop_profile(logs / "relay1.jsonl")

    for profile in (pinger, relay):
        stages = profile["probe"]
        assert RECEIVER_STAGES | SENDER_STAGES <= set(stages)
        assert stages["handler"]["count"] >= 50 and stages["send"]["count"] >= 50
        assert all(figures["p50_us"] >= 0 for figures in stages.values())
        assert stages["transit"]["p50_us"] > 0  # the other process's send time is on the same monotonic clock


def test_without_tt_profile_hops_no_actor_logs_a_profile(monkeypatch):
    monkeypatch.delenv("TT_PROFILE", raising=False)
    monkeypatch.setenv("TT_PROBE_COUNT", "5")
    monkeypatch.setenv("TT_PROBE_WARMUP", "0")
    with running_actors(["runtime.probes:Pinger", "runtime.probes:Relay1"], {"runtime.stats_interval_secs": 60.0}) as rt:
        wait_until(lambda: (rt.run_dir / "probe.json").exists(), 180, "the pinger's round trips")
        rt.stop()
        assert '"hop_profile"' not in (rt.run_dir / "logs" / "relay1.jsonl").read_text()
