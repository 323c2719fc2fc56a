"""``CellPool``: run cells as Ray tasks (a local Ray, or a cluster), or one after another in this process.

One path for both: a cell is submitted with its declared resources (num_cpus, num_gpus), Ray places it on a node
that has them, retries it on another worker when its worker dies (``max_retries``; finished cells are never rerun:
each is its own task), and reports a cell that raises by name with its error while the others finish. Finished
cells go to the cache as they finish, so Ctrl-C (which cancels the cells in flight) and a rerun lose nothing.

``address``: "local" starts a Ray on this machine's CPUs (no dashboard, quiet logs); "off" runs the cells in this
process, in order (what evaluate did before; what the tests compare Ray's results with); anything else is a
cluster's address (``ray start --head`` prints it), and "auto" finds the one this machine belongs to.
"""

from __future__ import annotations

import logging
import os
import resource
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from actors.jobs.cells.cache import CellCache
from actors.jobs.cells.cell import ROOT, Cell
from actors.jobs.cells.progress import CellProgress
from actors.jobs.cells.ray_auth import connect_error, use_token_if_found
from actors.jobs.common import JobError, JobStopped

Runner = Callable[[Any, Cell], Any]
"""A pure function of (payload, cell) -> the cell's result; module-level, so Ray ships it by reference."""
OFF, LOCAL = "off", "local"
WAIT_TICK_SECS = 1.0
"""How often the wait for the next finished cell wakes to refresh the progress bar (and to notice Ctrl-C)."""
SHIPPED_EXCLUDES = [".git", ".venv", "runs", "shared", "models", "*.gguf", "*.safetensors", "*.zip", "*.parquet"]
"""What the code shipped to a cluster's workers (runtime_env working_dir) leaves out: each node has its own
virtual environment and model cache, and run outputs never travel."""


@dataclass(frozen=True)
class Resources:
    num_cpus: float = 1.0
    num_gpus: float = 0.0


@dataclass
class CellRecord:
    """A finished cell: its result and what it cost, where."""

    cell: Cell
    result: Any
    cpu_secs: float
    """CPU time of the worker process (all its threads) and of the child processes it waited for."""
    wall_secs: float
    node_id: str
    pid: int
    cached: bool = False


@dataclass
class CellFailure:
    cell: Cell
    error: str
    """One line: the exception's type and message (or why the worker died)."""
    detail: str = ""
    """The traceback, for the log."""


@dataclass
class CellRun:
    """What a pool run ended with: every finished cell, every failed one, and whether Ctrl-C stopped it."""

    records: dict[Cell, CellRecord] = field(default_factory=dict)
    failures: list[CellFailure] = field(default_factory=list)
    stopped: bool = False

    def result(self, cell: Cell) -> Any:
        return self.records[cell].result

    def cost(self) -> dict[str, float]:
        """CPU-hours of the cells computed in this run and of the cached ones (computed before), and their wall time."""
        fresh = [r for r in self.records.values() if not r.cached]
        cached = [r for r in self.records.values() if r.cached]
        return {"cells": len(self.records), "cells_cached": len(cached), "cells_failed": len(self.failures),
                "cpu_hours": sum(r.cpu_secs for r in fresh) / 3600, "cpu_hours_cached": sum(r.cpu_secs for r in cached) / 3600,
                "cell_wall_hours": sum(r.wall_secs for r in fresh) / 3600,
                "nodes": len({r.node_id for r in fresh})}

    def failure_text(self) -> str:
        return "; ".join(f"{f.cell.name}: {f.error}" for f in self.failures)


def execute(runner: Runner, payload: Any, cell: Cell) -> CellRecord:
    """Run one cell and measure it (in the Ray worker, or in this process)."""
    cpu, children, wall = time.process_time(), _children_cpu(), time.monotonic()
    result = runner(payload, cell)
    return CellRecord(cell, result, time.process_time() - cpu + _children_cpu() - children, time.monotonic() - wall,
                      _node_id(), os.getpid())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _node_id() -> str:
    try:
        import ray

        if ray.is_initialized():
            return ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - no Ray context: this process is the only node
        pass
    return "local"


def resolve_address(flag: str | None, default: str) -> str:
    """--ray, else $RAY_ADDRESS (a cluster this shell was pointed at), else the job's default."""
    return flag or os.environ.get("RAY_ADDRESS") or default


class CellPool:
    """Submit cells, take them back as they finish; ``run`` does both for a whole grid."""

    def __init__(self, address: str = OFF, *, cache: CellCache | None = None, progress: CellProgress | None = None,
                 max_retries: int = 3) -> None:
        self.address = address
        self.cache = cache
        self.progress = progress or CellProgress("cells", enabled=False)
        self.max_retries = max_retries
        self._owns_ray = False
        self._ready: deque[CellRecord | CellFailure] = deque()
        self._queued: deque[tuple[Runner, Any, Cell]] = deque()
        self._in_flight: dict[Any, Cell] = {}
        self._remote = None
        self._interrupted = threading.Event()
        self.capacity_cpus = float(os.cpu_count() or 1)
        self.node_cpus = self.capacity_cpus
        """The most CPUs one node has: a cell asking more would never be placed, so it asks that many."""

    @property
    def on_ray(self) -> bool:
        return self.address != OFF

    def __enter__(self) -> CellPool:
        if self.on_ray:
            self._connect()
        return self

    def __exit__(self, *_exc) -> None:
        self.progress.close()
        if self._owns_ray:
            import ray

            ray.shutdown()
            self._owns_ray = False

    def _connect(self) -> None:
        import ray

        if not ray.is_initialized():
            quiet = {"include_dashboard": False, "logging_level": logging.ERROR, "log_to_driver": False}
            if self.address == LOCAL:
                # address="local": a Ray of its own even where one runs already (another job's `ray start`, or
                # $RAY_ADDRESS); without it ray.init joins that one and refuses num_cpus (ValueError).
                ray.init(address="local", num_cpus=os.cpu_count(), runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}}, **quiet)
            else:
                self._join_cluster({k: v for k, v in quiet.items() if k != "include_dashboard"})
            self._owns_ray = True
        self.capacity_cpus = float(ray.cluster_resources().get("CPU", self.capacity_cpus))
        self.node_cpus = max((node["Resources"].get("CPU", 0.0) for node in ray.nodes() if node["Alive"]), default=1.0)
        self._remote = ray.remote(execute)

    def _join_cluster(self, quiet: dict[str, Any]) -> None:
        """Join the cluster at self.address with the head's token where one is found (actors/jobs/cells/ray_auth.py);
        a failed join says what to set on this client and on each worker node."""
        import ray

        source = use_token_if_found()
        try:
            ray.init(address=self.address, runtime_env={"working_dir": str(ROOT), "excludes": SHIPPED_EXCLUDES}, **quiet)
        except (ConnectionError, ray.exceptions.AuthenticationError) as error:
            raise JobError(connect_error(self.address, error, source)) from None

    def put(self, payload: Any) -> Any:
        """The payload once in Ray's object store (shipped to each node that runs a cell), or as it is."""
        if not self.on_ray:
            return payload
        import ray

        return ray.put(payload)

    def submit(self, runner: Runner, payload: Any, cell: Cell, resources: Resources = Resources()) -> None:
        self.progress.start(1)
        cached = self.cache.get(cell) if self.cache else None
        if cached is not None:
            self._ready.append(CellRecord(cell, cached.result, cached.cpu_secs, cached.wall_secs, cached.node_id, cached.pid, True))
            return
        if not self.on_ray:
            self._queued.append((runner, payload, cell))
            return
        options = {"num_cpus": min(resources.num_cpus, self.node_cpus), "num_gpus": resources.num_gpus, "max_retries": self.max_retries,
                   "retry_exceptions": False, "name": cell.name}
        self._in_flight[self._remote.options(**options).remote(runner, payload, cell)] = cell
        self.progress.in_flight(self._running())

    def pending(self) -> int:
        return len(self._ready) + len(self._queued) + len(self._in_flight)

    def next_done(self) -> CellRecord | CellFailure:
        """The next finished (or failed) cell; cached cells first, then in the order they finish."""
        if self._ready:
            return self._note(self._ready.popleft())
        if self._queued:
            runner, payload, cell = self._queued.popleft()
            self.progress.in_flight(1)
            try:
                return self._note(execute(runner, payload, cell))
            except JobStopped:  # Ctrl-C inside a cell that runs the actors: the whole run stops, not just this cell
                raise KeyboardInterrupt from None
            except Exception as error:  # noqa: BLE001 - a cell's own error: reported by name, the others still run
                return self._note(CellFailure(cell, _one_line(error), traceback.format_exc()))
        return self._note(self._wait_ray())

    def _wait_ray(self) -> CellRecord | CellFailure:
        import ray
        from ray.exceptions import RayError, RayTaskError

        if not self._in_flight:
            raise RuntimeError("next_done() with no cell submitted")
        while True:
            if self._interrupted.is_set():
                raise KeyboardInterrupt
            done, _ = ray.wait(list(self._in_flight), num_returns=1, timeout=WAIT_TICK_SECS)
            if done:
                break
            self.progress.in_flight(self._running())
        ref = done[0]
        cell = self._in_flight.pop(ref)
        try:
            return ray.get(ref)
        except RayTaskError as error:  # the cell raised: its own exception, by name
            cause = error.cause if getattr(error, "cause", None) is not None else error
            return CellFailure(cell, _one_line(cause), str(error))
        except RayError as error:  # its worker or node died more than max_retries times
            return CellFailure(cell, f"{type(error).__name__} after {self.max_retries} retries: {_one_line(error)}", str(error))

    def _note(self, outcome: CellRecord | CellFailure) -> CellRecord | CellFailure:
        if isinstance(outcome, CellRecord):
            if not outcome.cached and self.cache is not None:
                self.cache.put(outcome.cell, outcome)
            self.progress.in_flight(self._running())
            self.progress.finished(outcome.cell.name, cached=outcome.cached, secs=outcome.wall_secs, cpu_secs=outcome.cpu_secs)
        else:
            self.progress.in_flight(self._running())
            self.progress.finished(outcome.cell.name, failed=outcome.error)
        return outcome

    def _running(self) -> int:
        return min(len(self._in_flight), int(self.capacity_cpus)) if self.on_ray else 0

    def cancel(self) -> None:
        """Cancel the cells in flight (Ctrl-C): their workers are stopped; the finished cells stay cached."""
        self._queued.clear()
        self._interrupted.clear()
        if self._in_flight:
            import ray

            for ref in list(self._in_flight):
                ray.cancel(ref, force=True)
            self._in_flight.clear()

    @contextmanager
    def interruptible(self):
        """While cells run on Ray, Ctrl-C sets a flag the wait loop reads each tick: a KeyboardInterrupt raised inside
        Ray's C++ wait comes out as a SystemError, and would leave the cells in flight uncancelled. In this process
        (off) a cell must stop at Ctrl-C itself, so the default handler stays."""
        if not self.on_ray or threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, lambda *_: self._interrupted.set())
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def run(self, runner: Runner, payload: Any, cells: Iterable[Cell],
            resources: Callable[[Cell], Resources] = lambda _cell: Resources(), into: CellRun | None = None) -> CellRun:
        """Every cell of ``cells``; Ctrl-C cancels the rest and returns what finished (``stopped``)."""
        outcome = into or CellRun()
        try:
            with self.interruptible():
                shared = self.put(payload)
                for cell in cells:
                    self.submit(runner, shared, cell, resources(cell))
                while self.pending():
                    done = self.next_done()
                    if isinstance(done, CellRecord):
                        outcome.records[done.cell] = done
                    else:
                        outcome.failures.append(done)
        except KeyboardInterrupt:
            self.cancel()
            outcome.stopped = True
        return outcome


def cost_markdown(cost: dict) -> str:
    """The report's line on what the evidence cost."""
    return (f"\n## Cost\n\n{cost['cells']} cells ({cost['cells_cached']} from the cache), {cost['cpu_hours']:.3f} CPU-hours "
            f"computed in this run on {cost['nodes']} node(s) ({cost['address']}), {cost['cpu_hours_cached']:.3f} CPU-hours "
            "read back from the cache; CPU time of each cell's process, its threads and waited-for children.\n")


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")
