"""The supervisor: starts the broker and every actor as OS processes and keeps them alive.

- Liveness: every actor publishes ``sys.heartbeat`` each ``heartbeat_interval_secs``; an
  actor is silent when ``last beat + interval x liveness`` has passed (a new process gets
  ``startup_grace_secs`` first). A dead or silent actor is restarted with exponential
  backoff; more than ``max_restarts`` restarts of one actor within ``restart_window_secs``
  stops the runtime with an error (exit code 1).
- Orderly stop (SIGINT/SIGTERM, a job done, a duration): ``sys.shutdown``, wait
  ``shutdown_grace_secs``, SIGTERM, wait again, SIGKILL; then the broker. No orphans.
"""

from __future__ import annotations

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
from config.schema import Config
from runtime.entry import actor_log_name
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
    restarts: deque = field(default_factory=deque)
    restart_at: float | None = None
    """When a scheduled restart is due (backoff)."""


class Supervisor:
    def __init__(self, config: Config, run_dir: RunDir, log: Any) -> None:
        self.config = config
        self.run_dir = run_dir
        self.log = log
        self.rt = config.runtime
        self.actors = {actor_log_name(spec): ActorProcess(spec, actor_log_name(spec)) for spec in self.rt.actors}
        self.broker: subprocess.Popen | None = None
        self.client: SyncBus | None = None
        self.socket_dir: Path | None = None
        self._stop_reason: str | None = None
        self._failure: str | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ start

    def start(self) -> BusAddresses:
        if self.config.bus.transport == "ipc":
            self.socket_dir = make_socket_dir(self.config.bus.socket_dir)
        self.broker = self._spawn(["--broker"], "broker")
        addresses = self._wait_for_broker()
        self.client = SyncBus(addresses, sender=f"supervisor:{os.getpid()}")
        self.client.subscribe(Heartbeat, Done, Progress, Stats, settle_secs=0)
        for actor in self.actors.values():
            self._start_actor(actor)
        self.log.info("runtime_started", run_dir=str(self.run_dir.path), actors=list(self.actors), xsub=addresses.xsub, xpub=addresses.xpub)
        return addresses

    def _spawn(self, args: list[str], name: str) -> subprocess.Popen:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH", "")]))
        if self.socket_dir is not None:
            env["TT_SOCKET_DIR"] = str(self.socket_dir)
        stderr = open(self.run_dir.stderr_file(name), "ab")
        proc = subprocess.Popen(
            [sys.executable, "-m", "runtime.entry", "--run-dir", str(self.run_dir.path), *args],
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=stderr,
            start_new_session=True,  # Ctrl-C reaches only the supervisor, which then stops everyone in order
        )
        stderr.close()
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
        actor.proc = self._spawn(["--actor", actor.spec], actor.name)
        actor.started_at = time.monotonic()
        actor.last_beat = None
        actor.restart_at = None
        self.log.info("actor_spawned", child=actor.name, pid=actor.proc.pid)

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
                    actor.last_beat = time.monotonic()
            if on_message is not None:
                on_message(msg)
            if stop_when is not None and stop_when(msg):
                self.request_stop(f"done:{msg.actor}" if isinstance(msg, Done) else "done")
                return

    def _check_actors(self) -> None:
        if self.broker is not None and self.broker.poll() is not None:
            raise RuntimeFailure(f"broker exited with code {self.broker.returncode}; see {self.run_dir.stderr_file('broker')}")
        now = time.monotonic()
        rt = self.rt
        for actor in self.actors.values():
            if actor.restart_at is not None:
                if now >= actor.restart_at:
                    self._start_actor(actor)
                continue
            assert actor.proc is not None
            code = actor.proc.poll()
            if code is not None:
                self._schedule_restart(actor, f"exited with code {code}")
                continue
            since = actor.last_beat if actor.last_beat is not None else actor.started_at + rt.startup_grace_secs
            if now > since + rt.heartbeat_interval_secs * rt.heartbeat_liveness:
                actor.proc.kill()
                actor.proc.wait()
                self._schedule_restart(actor, "silent (no heartbeat)")

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
        delay = min(self.rt.restart_backoff_secs * 2 ** (len(actor.restarts) - 1), self.rt.restart_backoff_max_secs)
        actor.restart_at = now + delay
        self.log.warning("actor_restarting", child=actor.name, why=why, restart=len(actor.restarts), delay_secs=delay)

    # ------------------------------------------------------------------ stop

    def kill(self, name: str, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` to an actor's process (tests, chaos). Returns the pid."""
        proc = self.actors[name].proc
        assert proc is not None
        os.kill(proc.pid, sig)
        return proc.pid

    def shutdown(self) -> None:
        reason = self._stop_reason or "stop"
        self.log.info("runtime_stopping", reason=reason)
        grace = self.rt.shutdown_grace_secs
        procs = [a.proc for a in self.actors.values() if a.proc is not None and a.proc.poll() is None]
        if self.client is not None:
            self.client.publish(Shutdown(reason=reason))
        leftovers = _wait_all(procs, grace)
        for proc in leftovers:
            self.log.warning("actor_sigterm", pid=proc.pid)
            proc.terminate()
        for proc in _wait_all(leftovers, grace):
            self.log.warning("actor_sigkill", pid=proc.pid)
            proc.kill()
            proc.wait()
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
        self.log.info("runtime_stopped", reason=reason)


def _wait_all(procs: list[subprocess.Popen], timeout_secs: float) -> list[subprocess.Popen]:
    """Wait up to ``timeout_secs`` for every process; returns the ones still running."""
    deadline = time.monotonic() + timeout_secs
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    return [p for p in procs if p.poll() is None]
