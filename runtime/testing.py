"""Run real actors in real processes from a test: ``with running_actors([...]) as rt: ...``."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from bus.broker import BusAddresses
from bus.client import SyncBus
from config.loader import load_config
from runtime.logs import configure_logging
from runtime.rundir import RunDir, create_run_dir
from runtime.supervisor import Supervisor


@dataclass
class RunningRuntime:
    supervisor: Supervisor
    client: SyncBus
    run_dir: Path
    addresses: BusAddresses
    thread: threading.Thread
    exit_code: list

    def kill(self, name: str) -> int:
        """SIGKILL one actor's process; returns its pid."""
        return self.supervisor.kill(name)

    def pid(self, name: str) -> int:
        proc = self.supervisor.actors[name].proc
        assert proc is not None
        return proc.pid

    def wait_started(self, timeout_secs: float = 60.0) -> None:
        """Block until every actor has sent a heartbeat (started and subscribed)."""
        import time

        from bus.messages import Heartbeat

        names = set(self.supervisor.actors)
        self.client.subscribe(Heartbeat, settle_secs=0)
        deadline = time.monotonic() + timeout_secs
        try:
            while names:
                if self.supervisor.failure:
                    raise RuntimeError(self.supervisor.failure)
                try:
                    beat = self.client.recv(Heartbeat, timeout_secs=max(0.01, min(1.0, deadline - time.monotonic())))
                    names.discard(beat.actor)
                except TimeoutError:
                    if time.monotonic() >= deadline:
                        raise TimeoutError(f"actors not started within {timeout_secs} s: {sorted(names)}") from None
        finally:
            self.client.unsubscribe(Heartbeat)
        time.sleep(0.1)  # let the last subscriptions propagate through the broker

    def stop(self, timeout_secs: float = 30.0) -> int:
        self.supervisor.request_stop("test")
        self.thread.join(timeout_secs)
        return self.exit_code[0] if self.exit_code else -1


@contextlib.contextmanager
def running_actors(
    actors: list[str],
    overrides: Mapping[str, Any] | None = None,
    *,
    config_path: str | Path | None = None,
    keep_run_dir: bool = False,
    wait_started_secs: float = 60.0,
) -> Iterator[RunningRuntime]:
    """Start a broker and ``actors`` (names or dotted module paths) in real processes, with a tmp run dir.

    Waits (up to ``wait_started_secs``; 0 = not at all) until every actor has sent its first heartbeat,
    which it does after on_start, when its subscriptions are in place."""
    settings = {"runtime.actors": list(actors), "logging.console": "off", **dict(overrides or {})}
    config = load_config(config_path, settings)
    tmp = Path(tempfile.mkdtemp(prefix="tt-run-"))
    run_dir: RunDir = create_run_dir(config, "test", tmp / "run")
    log = configure_logging(log_file=run_dir.log_file("supervisor"), level=config.logging.level, actor="supervisor", run=run_dir.run_id)
    supervisor = Supervisor(config, run_dir, log)
    addresses = supervisor.start()
    exit_code: list[int] = []
    thread = threading.Thread(target=lambda: exit_code.append(supervisor.run()), name="supervisor", daemon=True)
    thread.start()
    client = SyncBus(addresses, sender="test")
    rt = RunningRuntime(supervisor, client, run_dir.path, addresses, thread, exit_code)
    try:
        if wait_started_secs:
            rt.wait_started(wait_started_secs)
        yield rt
    finally:
        client.close()
        rt.stop()
        if not keep_run_dir:
            shutil.rmtree(tmp, ignore_errors=True)
