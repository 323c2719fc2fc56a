"""Is an actor that sends no heartbeat dead, or only slow? The supervisor's judgement, apart from its processes.

A heartbeat missing for ``heartbeat_interval_secs x heartbeat_liveness`` (or none within the start-up grace of a new
process) no longer means dead on its own. On a loaded machine (``stress-ng --cpu 4`` beside a run, a reniced
reasoner, an HMM fit in a start) a healthy process can be late: restarting it throws its work away and starts it again
on the same loaded machine, which is how a run once restarted actors 135 times in 17 minutes. So when a heartbeat is
due and missing, the supervisor reads the process itself (``/proc/<pid>/stat``):

- stopped (SIGSTOP, a debugger), a zombie, or gone: **silent**, restarted;
- its CPU time grew since the last look (it computes: imports, a model load, a fit), or one of its threads is
  runnable (R: it runs, or waits for a CPU that others hold: a reniced actor beside CPU hogs gains no CPU time for
  seconds) or waits on the disk (D): **slow**, left running, looked at again one window later;
- none of that (every thread asleep, no CPU time over a whole window, yet no heartbeat comes: a deadlock, a lost
  bus): **silent**, restarted;
- slow for longer than ``runtime.max_slow_secs`` past its deadline: **unresponsive**, restarted all the same (a busy
  loop that never yields to the heartbeat).

The start-up grace scales with what the actor loads: ``runtime.startup_grace_secs``, or the actor's own entry of
``runtime.startup_grace_by_actor``, and never less than ``STARTUP_GRACE_FACTOR`` times what its last start took
(a restart loads what the first start loaded, on a machine that may be busier now).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

OK, SLOW, SILENT, UNRESPONSIVE = "ok", "slow", "silent", "unresponsive"
"""What ``Liveness.judge`` says of an actor: fine, alive but late (left running), dead or hung (restart), and slow
for too long (restart)."""
STOPPED_STATES = frozenset("TtZX")
"""/proc states of a process that cannot make progress: stopped, traced-stopped, zombie, dead."""
BUSY_STATES = frozenset("RD")
"""A thread that runs or waits for a CPU (R), or waits on the disk (D: a checkpoint on a slow volume): the process is
alive and wants to go on. Counts as progress."""
STARTUP_GRACE_FACTOR = 3.0
"""A restart's grace is at least this many times the actor's previous start (spawn to first heartbeat)."""


@dataclass(frozen=True)
class ProcessSample:
    """One look at a process: its scheduler state, its CPU time (all threads, in clock ticks), and whether any of its
    threads is runnable or waiting on the disk right now."""

    state: str
    cpu_ticks: int
    busy_threads: int = 0
    """Threads in state R (running or waiting for a CPU) or D (waiting on the disk). A thread starved of CPU (the
    reasoner at nice 19 beside stress-ng loads its model in a worker thread) gains no CPU time for seconds, but is R."""


def _stat_fields(text: str) -> list[str]:
    # Field 2 (the command) is in parentheses and may hold spaces or ')': the fields after it follow the last ')'.
    return text[text.rindex(")") + 2:].split()


def read_process(pid: int, *, threads: bool = True) -> ProcessSample | None:
    """The process's state, CPU time and (``threads``) busy threads from /proc; None where it is gone (or there is no
    /proc). Without ``threads`` one file is read (what a heartbeat needs: the CPU time to judge the next window by)."""
    try:
        fields = _stat_fields(Path(f"/proc/{pid}/stat").read_text())
    except (OSError, ValueError):
        return None
    busy = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir()) if threads else []
    except OSError:
        tasks = []
    for task in tasks:
        try:
            busy += _stat_fields((task / "stat").read_text())[0] in BUSY_STATES
        except (OSError, ValueError, IndexError):  # the thread ended meanwhile
            pass
    return ProcessSample(state=fields[0], cpu_ticks=int(fields[11]) + int(fields[12]), busy_threads=busy)  # utime + stime


def restart_delay(restarts_in_window: int, first_secs: float, max_secs: float) -> float:
    """The backoff before restart number ``restarts_in_window`` (1-based) of one actor: first_secs, doubled with each
    restart inside runtime.restart_window_secs, at most max_secs."""
    return min(first_secs * 2 ** max(restarts_in_window - 1, 0), max_secs)


def startup_grace(configured_secs: float, last_start_secs: float | None) -> float:
    """A start's grace: the configured one, or STARTUP_GRACE_FACTOR x the actor's last start if that is longer."""
    if last_start_secs is None:
        return configured_secs
    return max(configured_secs, STARTUP_GRACE_FACTOR * last_start_secs)


class Liveness:
    """One actor process, from its spawn: when its next heartbeat is due, and what a missing one means."""

    def __init__(self, started_at: float, *, window_secs: float, grace_secs: float, max_slow_secs: float,
                 cpu_ticks: int = 0) -> None:
        """``window_secs``: heartbeat_interval_secs x heartbeat_liveness; ``cpu_ticks``: the process's CPU time at
        ``started_at`` (0 for a fresh process; a spare's imports for an activated one)."""
        self.window_secs = window_secs
        self.max_slow_secs = max_slow_secs
        self.started_at = started_at
        self.first_beat_at: float | None = None
        self.due_at = started_at + grace_secs
        """When the next heartbeat (the first: the end of the start-up grace) is late."""
        self.overdue_since: float | None = None
        """The first deadline missed in a row of slow looks (None while heartbeats come in time)."""
        self.slow_looks = 0
        """Slow verdicts since the last heartbeat (1: a late spell begins)."""
        self._baseline_ticks = cpu_ticks

    def beat(self, now: float, cpu_ticks: int | None) -> None:
        """A heartbeat came: the next is due one window later."""
        if self.first_beat_at is None:
            self.first_beat_at = now
        self.due_at = now + self.window_secs
        self.overdue_since = None
        self.slow_looks = 0
        if cpu_ticks is not None:
            self._baseline_ticks = cpu_ticks

    @property
    def start_secs(self) -> float | None:
        """Spawn to first heartbeat (None before it)."""
        return None if self.first_beat_at is None else self.first_beat_at - self.started_at

    def judge(self, now: float, sample: ProcessSample | None) -> str:
        """OK before the deadline; after it, SLOW (alive and progressing: looked at again one window later), SILENT
        (stopped, gone, or no progress over the window) or UNRESPONSIVE (slow for more than max_slow_secs)."""
        if now <= self.due_at:
            return OK
        if sample is None or sample.state in STOPPED_STATES:
            return SILENT
        if self.overdue_since is None:
            self.overdue_since = self.due_at
        progressed = sample.cpu_ticks > self._baseline_ticks or sample.busy_threads > 0 or sample.state in BUSY_STATES
        if not progressed:
            return SILENT
        if now - self.overdue_since > self.max_slow_secs:
            return UNRESPONSIVE
        self._baseline_ticks = sample.cpu_ticks
        self.due_at = now + self.window_secs
        self.slow_looks += 1
        return SLOW
