"""Mode soak: run the decision loop with the reasoner for --minutes and watch every process's memory.

The loop: env, policy, reasoner, fusion, risk (and the broker). ``env.mode = backtest`` plays the test
split once and stops, so the soak runs the env in train mode on the test split with learning off
(``policy.learn = fusion.learn = false``): a frozen policy plays random episodes of the held-out data
again and again until the time is up. That is the backtest's work minus its report, which grows with
the pass by design (every trade kept for the HTML report) and would hide a leak behind expected growth.

Every ``SAMPLE_SECS`` the RSS of each process (``VmRSS`` in /proc/<pid>/status; the pids come from the
supervisor, so a restarted actor is followed and its restart counted) goes into <run_dir>/soak.csv.
At the end, per process: RSS after the warm-up, at the end, the maximum, and the growth per hour from a
least-squares line over the second half of the samples (the first half still fills caches, pools,
allocator arenas). Bound: growth < ``MAX_GROWTH_MB_PER_HOUR`` and < ``MAX_GROWTH_FRACTION_PER_HOUR`` of
the warm RSS per hour, and no restart.
"""

from __future__ import annotations

import argparse
import csv
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from actors.jobs.config import load_config
from actors.jobs.presets import FROZEN_LEARNERS, SINGLE_SHOT, preset_settings
from bus.client import SyncBus
from bus.messages import EnvObs, LlmThought

SOAK_PRESETS = (FROZEN_LEARNERS, SINGLE_SHOT)
SOAK_RUN: dict[str, Any] = {"env.mode": "train", "env.split": "test", "env.n_envs": 2, "env.step_interval_ms": 20.0,
                            "fusion.method": "rules"}
"""Paced endless episodes on the test days, over SOAK_PRESETS: a frozen policy on the held-out split, paced at <= 50
loop steps/s so the soak leaves CPU to others; the reasoner thinks at its own pace (no lockstep) and fusion uses its
latest thought."""
SOAK_ACTORS = ["env", "policy", "reasoner", "fusion", "risk"]
SAMPLE_SECS = 10.0
WARMUP_SECS = 120.0
"""Not judged: model loads, first episodes, allocator warm-up."""
MAX_GROWTH_MB_PER_HOUR = 50.0
MAX_GROWTH_FRACTION_PER_HOUR = 0.20
BROKER = "broker"


def soak_settings(config_path: str | None = None) -> dict[str, Any]:
    """SOAK_PRESETS and SOAK_RUN as the dotted keys runtime.testing.running_actors lays over ``config_path``."""
    return {**preset_settings(SOAK_PRESETS, load_config(config_path)), **SOAK_RUN}


def read_rss_kb(pid: int, proc_root: Path = Path("/proc")) -> int | None:
    """VmRSS of ``pid`` in kB, or None when the process is gone (or a kernel thread without one)."""
    try:
        text = (proc_root / str(pid) / "status").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def growth_mb_per_hour(elapsed_secs: list[float], rss_mb: list[float]) -> float:
    """Slope of the least-squares line over the second half of the samples, in MB per hour."""
    half = len(elapsed_secs) // 2
    t, y = np.asarray(elapsed_secs[half:], float), np.asarray(rss_mb[half:], float)
    if len(t) < 2 or np.ptp(t) == 0:
        return float("nan")
    slope_mb_per_sec = np.polyfit(t, y, 1)[0]
    return float(slope_mb_per_sec * 3600.0)


@dataclass
class ProcessMemory:
    """The RSS samples of one process (after the warm-up) and its verdict."""

    name: str
    elapsed_secs: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)

    def add(self, elapsed_secs: float, pid: int, rss_mb: float) -> None:
        if not self.pids or self.pids[-1] != pid:
            self.pids.append(pid)
        self.elapsed_secs.append(elapsed_secs)
        self.rss_mb.append(rss_mb)

    @property
    def restarts(self) -> int:
        return max(0, len(self.pids) - 1)

    @property
    def warm_mb(self) -> float:
        return self.rss_mb[0] if self.rss_mb else float("nan")

    @property
    def growth_mb_per_hour(self) -> float:
        return growth_mb_per_hour(self.elapsed_secs, self.rss_mb)

    @property
    def bound_mb_per_hour(self) -> float:
        return min(MAX_GROWTH_MB_PER_HOUR, MAX_GROWTH_FRACTION_PER_HOUR * self.warm_mb)

    @property
    def passed(self) -> bool:
        growth = self.growth_mb_per_hour
        return growth == growth and growth < self.bound_mb_per_hour and self.restarts == 0


def sample(pids: dict[str, int], read: Callable[[int], int | None] = read_rss_kb) -> dict[str, tuple[int, float]]:
    """{process: (pid, RSS MB)} for the processes alive now."""
    out = {}
    for name, pid in pids.items():
        kb = read(pid)
        if kb is not None:
            out[name] = (pid, kb / 1024.0)
    return out


def _pids(rt: Any) -> dict[str, int]:
    pids = {name: actor.proc.pid for name, actor in rt.supervisor.actors.items() if actor.proc is not None}
    if rt.supervisor.broker is not None:
        pids[BROKER] = rt.supervisor.broker.pid
    return pids


@dataclass
class LoopCounts:
    steps: int = 0
    thoughts: int = 0


def _drain(client: SyncBus, until: float, counts: LoopCounts) -> None:
    """Read the loop's env.obs and thoughts until ``until`` (shows the loop and the reasoner kept working)."""
    while (left := until - time.monotonic()) > 0:
        try:
            msg = client.recv(timeout_secs=min(left, 1.0))
        except TimeoutError:
            continue
        if isinstance(msg, EnvObs):
            counts.steps += 1
        elif isinstance(msg, LlmThought):
            counts.thoughts += 1


def run_soak(rt: Any, minutes: float, csv_path: Path, *, sample_secs: float = SAMPLE_SECS,
             warmup_secs: float = WARMUP_SECS) -> tuple[dict[str, ProcessMemory], LoopCounts]:
    memory: dict[str, ProcessMemory] = {}
    counts = LoopCounts()
    started = time.monotonic()
    end = started + minutes * 60.0
    with SyncBus(rt.addresses, sender="soak") as client, csv_path.open("w", newline="") as fh:
        client.subscribe(EnvObs, LlmThought, settle_secs=0.3)
        writer = csv.writer(fh)
        writer.writerow(["elapsed_secs", "process", "pid", "rss_mb", "warm"])
        next_sample = started
        while True:
            now = time.monotonic()
            elapsed = now - started
            warm = elapsed >= warmup_secs
            for name, (pid, rss_mb) in sample(_pids(rt)).items():
                writer.writerow([f"{elapsed:.1f}", name, pid, f"{rss_mb:.2f}", int(warm)])
                if warm:
                    memory.setdefault(name, ProcessMemory(name)).add(elapsed, pid, rss_mb)
            fh.flush()
            if rt.supervisor.failure:
                raise RuntimeError(f"runtime failed during the soak: {rt.supervisor.failure}")
            if now >= end:
                break
            next_sample += sample_secs
            _drain(client, min(next_sample, end), counts)
    return memory, counts


def table(memory: dict[str, ProcessMemory], counts: LoopCounts, minutes: float, warmup_secs: float = WARMUP_SECS) -> str:
    lines = [f"{'process':<10}{'warm MB':>9}{'end MB':>9}{'max MB':>9}{'MB/hour':>9}{'bound':>8}{'restarts':>9}  verdict",
             "-" * 72]
    for m in memory.values():
        lines.append(f"{m.name:<10}{m.warm_mb:>9.1f}{m.rss_mb[-1]:>9.1f}{max(m.rss_mb):>9.1f}{m.growth_mb_per_hour:>9.1f}"
                     f"{m.bound_mb_per_hour:>8.1f}{m.restarts:>9}  {'PASS' if m.passed else 'FAIL'}")
    lines += ["", f"{minutes:g} min, warm-up {warmup_secs:g} s not judged; loop steps seen {counts.steps}, reasoner thoughts {counts.thoughts}",
              f"MB/hour: least-squares slope over the second half of the samples; bound: < {MAX_GROWTH_MB_PER_HOUR:g} MB/hour "
              f"and < {MAX_GROWTH_FRACTION_PER_HOUR:.0%} of the warm RSS per hour, no restart"]
    return "\n".join(lines)


def mode_soak(args: argparse.Namespace) -> int:
    from actors.jobs.common import check_run_files, user_settings
    from runtime.testing import running_actors

    settings = {**soak_settings(args.config), **user_settings(args.overrides)}
    actors = list(settings.pop("runtime.actors", SOAK_ACTORS))
    check_run_files(load_config(args.config, {**settings, "runtime.actors": actors}))  # a bad file: one line, no actor crash loop
    with running_actors(actors, settings, config_path=args.config, keep_run_dir=True, wait_started_secs=300) as rt:
        print(f"run directory: {rt.run_dir}", flush=True)
        csv_path = rt.run_dir / "soak.csv"
        warmup_secs = min(WARMUP_SECS, args.minutes * 60.0 / 4)  # a short soak still judges three quarters of its run
        memory, counts = run_soak(rt, args.minutes, csv_path, warmup_secs=warmup_secs)
    print(table(memory, counts, args.minutes, warmup_secs))
    print(f"samples: {csv_path}")
    return 0 if memory and all(m.passed for m in memory.values()) else 1
