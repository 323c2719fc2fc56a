"""Mode fuzz: bad frames against a running decision loop; every actor must stay up and keep deciding.

Starts env, policy, fusion and risk (train mode, small batches), captures a few hundred valid
frames, then sends ``--frames`` frames of every kind in bus/fuzz.py (random bytes, truncated
msgpack, huge declared lengths, wrong types, NaN/inf, wrong shapes, unknown topics, replays) at
``FUZZ_RATE_PER_SEC``, while it counts the risk.verdicts that keep flowing. At the end it compares
every actor's pid and its sys.stats dropped_* counters with their values before the fuzz.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bus.client import SyncBus
from bus.fuzz import FrameFuzzer, is_replayable
from bus.messages import EnvObs, FusionDecision, PolicyProposal, RiskVerdict, Stats

LOOP_ACTORS = ["env", "policy", "fusion", "risk"]
LOOP_SETTINGS: dict[str, Any] = {
    "env.n_envs": 2, "env.episode_bars": 40, "data.synthetic_days": 5, "env.mode": "train",
    "risk.fusion_deadline_ms": 2000.0, "runtime.stats_interval_secs": 0.5,
}
FUZZ_RATE_PER_SEC = 5000.0
"""Frames per second: fast enough to hurt, slow enough that ZMQ's high-water marks do not drop the loop's own traffic."""
BURST_FRAMES = 100
CAPTURE_FRAMES = 200
STATS_SETTLE_SECS = 2.0


@dataclass
class FuzzReport:
    sent: Counter = field(default_factory=Counter)
    """Frames sent, by fuzz kind."""
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per actor, dropped_<kind> counters gained during the fuzz."""
    pids_before: dict[str, int] = field(default_factory=dict)
    pids_after: dict[str, int] = field(default_factory=dict)
    verdicts_during: int = 0
    """risk.verdicts seen while fuzzing: the valid traffic kept flowing."""
    verdicts_after: int = 0
    elapsed_secs: float = 0.0

    @property
    def survived(self) -> dict[str, bool]:
        return {name: self.pids_after.get(name) == pid for name, pid in self.pids_before.items()}

    @property
    def ok(self) -> bool:
        return all(self.survived.values()) and self.verdicts_during > 0 and self.verdicts_after > 0

    def table(self) -> str:
        lines = [f"fuzz: {sum(self.sent.values()):,} frames in {self.elapsed_secs:.1f} s", "", f"{'kind':<16}{'sent':>10}"]
        lines += [f"{kind:<16}{count:>10,}" for kind, count in sorted(self.sent.items())]
        kinds = sorted({k for counters in self.dropped.values() for k in counters})
        lines += ["", f"{'actor':<10}{'survived':>9}{'dropped':>9}  " + "  ".join(kinds)]
        for name in self.pids_before:
            counters = self.dropped.get(name, {})
            cells = "  ".join(f"{counters.get(k, 0):>{len(k)}}" for k in kinds)
            lines.append(f"{name:<10}{'yes' if self.survived[name] else 'NO':>9}{sum(counters.values()):>9}  {cells}")
        lines += ["", f"risk.verdicts during fuzz: {self.verdicts_during}, after: {self.verdicts_after}",
                  f"result: {'PASS' if self.ok else 'FAIL'}"]
        return "\n".join(lines)


def latest_drops(stats: dict[str, Stats]) -> dict[str, dict[str, int]]:
    return {name: {k: v for k, v in s.counters.items() if k.startswith("dropped_")} for name, s in stats.items()}


def _pump(client: SyncBus, stats: dict[str, Stats], fuzzer: FrameFuzzer | None, seconds: float) -> int:
    """Read the bus for ``seconds``: keep the last sys.stats per actor, capture replayable frames. Returns verdicts seen."""
    verdicts = 0
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        if not client.poller.poll(max(1, int(remaining * 1000))):
            continue
        frames = client.sub.recv_multipart()
        decoded = client.decode(frames)
        if decoded is None:
            continue
        if isinstance(decoded.msg, Stats):
            stats[decoded.msg.actor] = decoded.msg
        elif isinstance(decoded.msg, RiskVerdict):
            verdicts += 1
        if fuzzer is not None and is_replayable(frames):
            fuzzer.capture(frames)
    return verdicts


def fuzz_loop(client: SyncBus, pids: dict[str, Any], frames: int, *, seed: int = 0,
              rate_per_sec: float = FUZZ_RATE_PER_SEC) -> FuzzReport:
    """Fuzz a running loop through ``client`` (subscribed to nothing yet); ``pids()`` gives the actors' pids now."""
    report = FuzzReport(pids_before=dict(pids()))
    fuzzer = FrameFuzzer(seed)
    client.subscribe(Stats, RiskVerdict, EnvObs, PolicyProposal, FusionDecision, settle_secs=0.2)
    stats: dict[str, Stats] = {}
    deadline = time.monotonic() + 30
    while len(fuzzer.captured) < CAPTURE_FRAMES or set(stats) < set(report.pids_before):
        _pump(client, stats, fuzzer, 0.2)
        if time.monotonic() > deadline:
            break
    before = latest_drops(stats)
    started = time.monotonic()
    burst_secs = BURST_FRAMES / rate_per_sec
    for index, (kind, fuzz_frames) in enumerate(fuzzer.frames(frames)):
        client.send_raw(fuzz_frames)
        report.sent[kind] += 1
        if index % BURST_FRAMES == BURST_FRAMES - 1:  # pace, and read what the loop does meanwhile
            report.verdicts_during += _pump(client, stats, None, burst_secs)
    report.elapsed_secs = time.monotonic() - started
    report.verdicts_after = _pump(client, stats, None, STATS_SETTLE_SECS)
    after = latest_drops(stats)
    report.dropped = {name: {k[len("dropped_"):]: v - before.get(name, {}).get(k, 0) for k, v in counters.items()
                             if v - before.get(name, {}).get(k, 0)} for name, counters in after.items()}
    report.pids_after = dict(pids())
    return report


def mode_fuzz(args: argparse.Namespace) -> int:
    from actors.jobs.common import check_run_files, user_settings
    from actors.jobs.config import load_config
    from runtime.testing import running_actors

    settings = {**LOOP_SETTINGS, **user_settings(args.overrides)}
    actors = list(settings.pop("runtime.actors", LOOP_ACTORS))
    check_run_files(load_config(args.config, {**settings, "runtime.actors": actors}))  # a bad file: one line, no actor crash loop
    with running_actors(actors, settings, config_path=args.config, keep_run_dir=True) as rt:
        print(f"run directory: {rt.run_dir}", flush=True)
        with SyncBus(rt.addresses, sender="fuzz-watch") as client:
            report = fuzz_loop(client, lambda: {name: rt.pid(name) for name in rt.supervisor.actors}, args.frames,
                               seed=int(settings.get("run.seed", 0)))
    print(report.table())
    return 0 if report.ok else 1
