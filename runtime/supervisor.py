"""The supervisor: starts the broker and every actor as OS processes and keeps them alive.

- Liveness: every actor publishes ``sys.heartbeat`` each ``heartbeat_interval_secs``; a heartbeat is due
  ``interval x liveness`` after the last (a new process gets its start-up grace first). A missing one is judged
  from the process itself (runtime/liveness.py): a process that computes or waits on the disk is slow and left
  running; a stopped one, or one that made no progress over the window, is silent. A dead or silent actor is
  restarted with exponential backoff; more than ``max_restarts`` restarts of one actor within
  ``restart_window_secs`` stops the runtime with an error (exit code 1). ``restart_counts()`` and
  ``supervision_figures()`` count what happened, for the run's figures; ``supervision.json`` in the run
  directory holds the same at the end.
- Orderly stop (SIGINT/SIGTERM, a job done, a duration): ``sys.shutdown``, wait
  ``shutdown_grace_secs``, SIGTERM, wait again, SIGKILL; then the broker. No orphans.
- Joined host (``join=`` the addresses of a broker on another host, ``bin/run join``): no broker of
  its own; it starts and watches only its configured actors, stops when the main runtime's
  ``sys.shutdown`` arrives, and stops its own actors with SIGTERM (never a ``sys.shutdown`` on the
  shared bus, which would stop every host's actors).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from bus.broker import ADDRESSES_FILE, BusAddresses, make_socket_dir
from bus.client import SyncBus
from bus.messages import Done, Heartbeat, Message, Progress, Shutdown, Stats
from runtime.settings import RuntimeSettings
from runtime.entry import REBIND_ENV, STANDBY_GO, actor_log_name
from runtime.liveness import OK, SLOW, UNRESPONSIVE, Liveness, read_process, restart_delay, startup_grace
from runtime.rundir import RunDir

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BROKER_START_TIMEOUT_SECS = 15.0
POLL_SECS = 0.1

# Exit codes of Supervisor.run
EXIT_OK = 0
EXIT_FAILED = 1


class RuntimeFailure(RuntimeError):
    """The runtime had to stop because something could not be kept alive."""


@dataclass
class ActorProcess:
    spec: str
    """As configured: ``env`` or a dotted module path."""
    name: str
    """Short name used in logs and heartbeats."""
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    last_beat: float | None = None
    liveness: Liveness | None = None
    """When the running process's next heartbeat is due and what a missing one means (runtime/liveness.py)."""
    restarts: deque = field(default_factory=deque)
    """When each restart inside runtime.restart_window_secs happened (the limit and the backoff count these)."""
    restarts_total: int = 0
    """Every restart of this actor in the run (the run's figures)."""
    slow_total: int = 0
    """How many times its heartbeat was late while the process was alive and progressing (left running)."""
    last_start_secs: float | None = None
    """Spawn to first heartbeat of its latest start that beat: a restart's grace scales with it."""
    restart_at: float | None = None
    """When a scheduled restart is due (backoff)."""
    spare: subprocess.Popen | None = None
    """A standby process with the actor's imports done (runtime.spare_actors): a restart activates it."""


@dataclass(frozen=True)
class SupervisorEvent:
    """What the supervisor saw happen to a child, when (time.monotonic()): for chaos measurements and tests."""

    at: float
    actor: str
    kind: str
    """``spawned`` | ``exited`` (the process ended: noticed by poll) | ``silent`` (no heartbeat, no progress: killed) |
    ``slow`` (no heartbeat, alive and progressing: left running)."""
    pid: int


MAX_EVENTS = 1000
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
"""Clock ticks a second: the unit of a process's CPU time in /proc."""
SUPERVISION_FILE = "supervision.json"
"""In the run directory at the end: Supervisor.supervision_figures()."""


class Supervisor:
    def __init__(self, config: RuntimeSettings, run_dir: RunDir, log: Any, *, join: BusAddresses | None = None) -> None:
        self.config = config
        self.join = join
        """The remote broker this supervisor's actors connect to (a joined host), or None: start our own."""
        self.run_dir = run_dir
        self.log = log
        self.rt = config.runtime
        self.actors = {actor_log_name(spec): ActorProcess(spec, actor_log_name(spec)) for spec in self.rt.actors}
        self.broker: subprocess.Popen | None = None
        self._broker_restarts: list[float] = []
        self.client: SyncBus | None = None
        self.socket_dir: Path | None = None
        self._stop_reason: str | None = None
        self._failure: str | None = None
        self._lock = threading.Lock()
        self.events: deque[SupervisorEvent] = deque(maxlen=MAX_EVENTS)
        """Spawns, deaths and silences of the actors, oldest first (bounded)."""
        self._broker_restarts_total = 0
        self._spares_from: float | None = None
        """When spares may start (every actor ran, plus runtime.spare_start_delay_secs); None before every actor ran."""

    # ------------------------------------------------------------------ start

    def start(self) -> BusAddresses:
        addresses = self._use_remote_broker(self.join) if self.join is not None else self._start_broker()
        self.client = SyncBus(addresses, sender=f"supervisor:{os.getpid()}")
        self.client.subscribe(Heartbeat, Done, Progress, Stats, *([Shutdown] if self.join is not None else []), settle_secs=0)
        for actor in self.actors.values():
            self._start_actor(actor)
        self.log.info("runtime_started", run_dir=str(self.run_dir.path), actors=list(self.actors), xsub=addresses.xsub, xpub=addresses.xpub)
        return addresses

    def _start_broker(self) -> BusAddresses:
        if self.config.bus.transport == "ipc":
            self.socket_dir = make_socket_dir(self.config.bus.socket_dir)
        self.broker = self._spawn(["--broker"], "broker")
        return self._wait_for_broker()

    def _use_remote_broker(self, addresses: BusAddresses) -> BusAddresses:
        """A joined host: our actors read the remote broker's addresses from our own run directory's bus.json."""
        addresses.write(self.run_dir.path)
        return addresses

    def _spawn(self, args: list[str], name: str, extra_env: dict[str, str] | None = None, standby: bool = False) -> subprocess.Popen:
        env = {**os.environ, **(extra_env or {})}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH", "")]))
        if self.socket_dir is not None:
            env["TT_SOCKET_DIR"] = str(self.socket_dir)
        stderr = open(self.run_dir.stderr_file(name), "ab")
        proc = subprocess.Popen(
            [sys.executable, "-m", "runtime.entry", "--run-dir", str(self.run_dir.path), *args],
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.PIPE if standby else subprocess.DEVNULL,
            stdout=stderr,
            stderr=stderr,
            start_new_session=True,  # Ctrl-C reaches only the supervisor, which then stops everyone in order
        )
        stderr.close()
        if not standby:
            self.run_dir.write_pid(name, proc.pid)
        return proc

    def _wait_for_broker(self) -> BusAddresses:
        deadline = time.monotonic() + BROKER_START_TIMEOUT_SECS
        path = self.run_dir.path / ADDRESSES_FILE
        while time.monotonic() < deadline:
            if path.exists():
                return BusAddresses.read(self.run_dir.path)
            if self.broker is not None and self.broker.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeFailure(f"broker did not start; see {self.run_dir.stderr_file('broker')}")

    def _start_actor(self, actor: ActorProcess) -> None:
        actor.proc = self._activate_spare(actor) or self._spawn(["--actor", actor.spec], actor.name)
        actor.started_at = time.monotonic()
        actor.last_beat = None
        actor.restart_at = None
        sample = read_process(actor.proc.pid, threads=False)  # a spare's imports are CPU time spent before this start
        rt = self.rt
        grace = startup_grace(rt.startup_grace_by_actor.get(actor.name, rt.startup_grace_secs), actor.last_start_secs)
        actor.liveness = Liveness(actor.started_at, window_secs=rt.heartbeat_interval_secs * rt.heartbeat_liveness,
                                  grace_secs=grace, max_slow_secs=rt.max_slow_secs, cpu_ticks=sample.cpu_ticks if sample else 0)
        self.events.append(SupervisorEvent(actor.started_at, actor.name, "spawned", actor.proc.pid))
        self.log.info("actor_spawned", child=actor.name, pid=actor.proc.pid)

    def _activate_spare(self, actor: ActorProcess) -> subprocess.Popen | None:
        """The actor's spare, told to run (its imports are done: a restart costs only on_start), or None."""
        spare, actor.spare = actor.spare, None
        if spare is None or spare.poll() is not None:
            return None
        try:
            spare.stdin.write(STANDBY_GO)
            spare.stdin.close()
        except OSError:  # it died meanwhile: start from scratch
            spare.kill()
            spare.wait()
            return None
        self.run_dir.write_pid(actor.name, spare.pid)
        self.log.info("spare_activated", child=actor.name, pid=spare.pid)
        return spare

    def _start_spares(self, now: float) -> None:
        """Spares start runtime.spare_start_delay_secs after every actor first ran (a short run, a test, never pays
        their imports; a spare's imports never slow the runtime's start), then again whenever every actor runs and
        one was used."""
        if not self.rt.spare_actors or not all(actor.last_beat is not None for actor in self.actors.values()):
            return
        if self._spares_from is None:
            self._spares_from = now + self.rt.spare_start_delay_secs
        if now >= self._spares_from:
            for actor in self.actors.values():
                self._start_spare(actor)

    def _start_spare(self, actor: ActorProcess) -> None:
        """A standby process for an actor of runtime.spare_actors (see _start_spares)."""
        if actor.name in self.rt.spare_actors and actor.spare is None and self._stop_reason is None:
            actor.spare = self._spawn(["--actor", actor.spec, "--standby"], actor.name, standby=True)
            self.log.info("spare_started", child=actor.name, pid=actor.spare.pid)

    def _stop_spares(self) -> None:
        for actor in self.actors.values():
            spare, actor.spare = actor.spare, None
            if spare is not None and spare.poll() is None:
                spare.stdin.close()  # end of input: a spare exits on its own; killed if it is still importing
                spare.kill()
                spare.wait()

    # ------------------------------------------------------------------ run

    def request_stop(self, reason: str) -> None:
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = reason

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, _frame: self.request_stop(signal.Signals(signum).name.lower()))

    def run(
        self,
        *,
        on_message: Callable[[Message], None] | None = None,
        stop_when: Callable[[Message], bool] | None = None,
        duration_secs: float = 0.0,
    ) -> int:
        """Watch the actors until asked to stop; then stop everything. Returns the exit code."""
        assert self.client is not None, "start() first"
        deadline = time.monotonic() + duration_secs if duration_secs > 0 else None
        try:
            while self._stop_reason is None:
                self._pump(on_message, stop_when)
                self._check_actors()
                if deadline is not None and time.monotonic() >= deadline:
                    self.request_stop("duration")
        except RuntimeFailure as exc:
            self._failure = str(exc)
            self.request_stop("failure")
        finally:
            self.shutdown()
        if self._failure:
            self.log.error("runtime_failed", error=self._failure)
            return EXIT_FAILED
        return EXIT_OK

    @property
    def failure(self) -> str | None:
        return self._failure

    @property
    def stop_reason(self) -> str | None:
        """Why the run stopped: ``sigint`` / ``sigterm`` (the user), ``duration``, ``done``, ... (None while running)."""
        return self._stop_reason

    def _pump(self, on_message, stop_when) -> None:
        """Receive bus messages for up to POLL_SECS."""
        end = time.monotonic() + POLL_SECS
        while True:
            remaining = end - time.monotonic()
            if remaining <= 0:
                return
            try:
                decoded = self.client.recv_decoded(remaining)
            except TimeoutError:
                return
            msg = decoded.msg
            if isinstance(msg, Heartbeat):
                actor = self.actors.get(msg.actor)
                if actor is not None and actor.proc is not None and actor.proc.pid == msg.pid:
                    self._note_beat(actor)
            if self.join is not None and isinstance(msg, Shutdown):  # the main runtime stops: so do we
                self.request_stop("remote_shutdown")
                return
            if on_message is not None:
                on_message(msg)
            if stop_when is not None and stop_when(msg):
                self.request_stop(f"done:{msg.actor}" if isinstance(msg, Done) else "done")
                return

    def _restart_broker(self) -> None:
        """A dead broker is started again on the same addresses: every actor's sockets reconnect on their own
        (libzmq retries and re-sends subscriptions), so the loop pauses while it is down and resumes after.
        More than max_restarts within restart_window_secs stops the runtime, as for an actor."""
        now = time.monotonic()
        code = self.broker.returncode if self.broker is not None else None
        self._broker_restarts = [t for t in self._broker_restarts if now - t < self.rt.restart_window_secs] + [now]
        if len(self._broker_restarts) > self.rt.max_restarts:
            raise RuntimeFailure(f"broker exited with code {code} and was restarted more than {self.rt.max_restarts} times "
                                 f"in {self.rt.restart_window_secs:g} s; see {self.run_dir.stderr_file('broker')}")
        self._broker_restarts_total += 1
        self.log.warning("broker_died", exit_code=code)
        self.events.append(SupervisorEvent(now, "broker", "exited", self.broker.pid if self.broker is not None else -1))
        self.broker = self._spawn(["--broker"], "broker", {REBIND_ENV: "1"})
        self.events.append(SupervisorEvent(time.monotonic(), "broker", "spawned", self.broker.pid))
        self.log.info("broker_restarted", pid=self.broker.pid, restarts=len(self._broker_restarts))

    def _note_beat(self, actor: ActorProcess) -> None:
        actor.last_beat = time.monotonic()
        first = actor.liveness.first_beat_at is None
        sample = read_process(actor.proc.pid, threads=False)
        actor.liveness.beat(actor.last_beat, sample.cpu_ticks if sample else None)
        if first:
            actor.last_start_secs = actor.liveness.start_secs

    def _check_actors(self) -> None:
        if self.broker is not None and self.broker.poll() is not None:
            self._restart_broker()
        now = time.monotonic()
        for actor in self.actors.values():
            if actor.restart_at is not None:
                if now >= actor.restart_at:
                    self._start_actor(actor)
                continue
            assert actor.proc is not None
            # A process that ended is seen here within one POLL_SECS (waitpid through poll()), long before
            # its heartbeats would be missed; heartbeats are for the hung ones.
            code = actor.proc.poll()
            if code is not None:
                self.events.append(SupervisorEvent(time.monotonic(), actor.name, "exited", actor.proc.pid))
                self._schedule_restart(actor, f"exited with code {code}")
                continue
            if now > actor.liveness.due_at:  # /proc is read only when a heartbeat is late
                self._judge_late(actor, now)
        self._start_spares(now)

    def _judge_late(self, actor: ActorProcess, now: float) -> None:
        """A heartbeat is late: leave a slow actor running, restart a silent or unresponsive one (runtime/liveness.py)."""
        liveness = actor.liveness
        sample = read_process(actor.proc.pid)
        verdict = liveness.judge(now, sample)
        if verdict == OK:
            return
        if verdict == SLOW:
            if liveness.slow_looks == 1:  # a late spell begins: logged and counted once
                actor.slow_total += 1
                self.events.append(SupervisorEvent(now, actor.name, "slow", actor.proc.pid))
                self.log.warning("actor_slow", child=actor.name, pid=actor.proc.pid, state=sample.state, busy_threads=sample.busy_threads,
                                 starting=liveness.first_beat_at is None, cpu_secs=round(sample.cpu_ticks / CLOCK_TICKS, 2))
            return
        self.events.append(SupervisorEvent(now, actor.name, "silent", actor.proc.pid))
        actor.proc.kill()
        actor.proc.wait()
        state = sample.state if sample is not None else "gone"
        why = "silent (no heartbeat, " + ("no progress" if verdict != UNRESPONSIVE else f"slow over {self.rt.max_slow_secs:g} s")
        self._schedule_restart(actor, f"{why}, process state {state})")

    def _schedule_restart(self, actor: ActorProcess, why: str) -> None:
        now = time.monotonic()
        window = self.rt.restart_window_secs
        while actor.restarts and now - actor.restarts[0] > window:
            actor.restarts.popleft()
        actor.restarts.append(now)
        if len(actor.restarts) > self.rt.max_restarts:
            raise RuntimeFailure(
                f"actor '{actor.name}' {why} and was restarted more than {self.rt.max_restarts} times in "
                f"{window:g} s; giving up (see {self.run_dir.log_file(actor.name)} and {self.run_dir.stderr_file(actor.name)})"
            )
        actor.restarts_total += 1
        delay = restart_delay(len(actor.restarts), self.rt.restart_backoff_secs, self.rt.restart_backoff_max_secs)
        actor.restart_at = now + delay
        self.log.warning("actor_restarting", child=actor.name, why=why, restart=len(actor.restarts), delay_secs=delay)

    # ------------------------------------------------------------------ figures

    def restart_counts(self) -> dict[str, int]:
        """Restarts of each actor (and of the broker, as ``broker``) since start(): what a run's figures report. A
        run whose count is not 0 was disturbed (its data may differ from a quiet run's)."""
        return {**{name: actor.restarts_total for name, actor in self.actors.items()}, "broker": self._broker_restarts_total}

    def supervision_figures(self) -> dict[str, Any]:
        """What the supervisor did in this run: restarts in all and per process, and how often a late heartbeat came
        from a slow (alive, progressing) actor that was left running."""
        counts = self.restart_counts()
        return {"restarts": sum(counts.values()), "restarts_by_process": counts,
                "slow": sum(actor.slow_total for actor in self.actors.values()),
                "slow_by_actor": {name: actor.slow_total for name, actor in self.actors.items()}}

    # ------------------------------------------------------------------ stop

    def kill(self, name: str, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` to an actor's process, or the broker's (``name = "broker"``; tests, chaos). Returns the pid."""
        proc = self.broker if name == "broker" else self.actors[name].proc
        assert proc is not None
        os.kill(proc.pid, sig)
        return proc.pid

    def shutdown(self) -> None:
        reason = self._stop_reason or "stop"
        self.log.info("runtime_stopping", reason=reason)
        self._stop_spares()
        grace = self.rt.shutdown_grace_secs
        names = {a.proc.pid: a.name for a in self.actors.values() if a.proc is not None}
        procs = [a.proc for a in self.actors.values() if a.proc is not None and a.proc.poll() is None]
        stop_started = time.monotonic()
        leftovers = self._ask_actors_to_stop(procs, reason, grace)
        for proc in leftovers:  # did not stop within the grace period: an actor busy in a worker it cannot abort
            self.log.warning("actor_sigterm", child=names.get(proc.pid), pid=proc.pid, grace_secs=grace)
            proc.terminate()
        for proc in _wait_all(leftovers, grace):
            self.log.warning("actor_sigkill", child=names.get(proc.pid), pid=proc.pid)
            proc.kill()
            proc.wait()
        self.log.info("actors_stopped", secs=round(time.monotonic() - stop_started, 3), sigterm=len(leftovers))
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.broker is not None and self.broker.poll() is None:
            self.broker.terminate()
            for proc in _wait_all([self.broker], grace):
                proc.kill()
                proc.wait()
        if self.socket_dir is not None and not self.config.bus.socket_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)
        figures = self.supervision_figures()
        (self.run_dir.path / SUPERVISION_FILE).write_text(json.dumps(figures, indent=1) + "\n")
        self.log.info("runtime_stopped", reason=reason, restarts=figures["restarts"], slow=figures["slow"])

    def _ask_actors_to_stop(self, procs: list[subprocess.Popen], reason: str, grace: float) -> list[subprocess.Popen]:
        """``sys.shutdown``, then the grace period; returns the actors still running. A joined host sends its
        own actors SIGTERM instead (an actor stops the same way): a ``sys.shutdown`` on the shared bus
        would stop every host's actors."""
        if self.join is not None:
            for proc in procs:
                proc.terminate()
        elif self.client is not None:
            self.client.publish(Shutdown(reason=reason))
        return _wait_all(procs, grace)


def _wait_all(procs: list[subprocess.Popen], timeout_secs: float) -> list[subprocess.Popen]:
    """Wait up to ``timeout_secs`` for every process; returns the ones still running."""
    deadline = time.monotonic() + timeout_secs
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    return [p for p in procs if p.poll() is None]
