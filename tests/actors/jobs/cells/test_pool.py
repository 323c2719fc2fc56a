"""CellPool on a two-node Ray cluster with cheap cells: a worker killed mid-cell, a cell that raises, the cache, Ctrl-C."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from actors.jobs.cells.cache import CellCache
from actors.jobs.cells.cell import Cell
from actors.jobs.cells.pool import OFF, CellPool, CellRecord
from tests.waiting import wait_until

pytestmark = pytest.mark.slow


def cheap_cell(folder: str, cell: Cell):
    """Records each execution; 'hold' records its pid and waits for the test's go; 'boom' raises."""
    folder = Path(folder)
    with open(folder / f"{cell.variant}.runs", "a") as log:
        log.write(f"{os.getpid()}\n")
    if cell.variant == "boom":
        raise ValueError("boom: this cell's data is broken")
    if cell.variant.startswith("hold"):
        (folder / f"{cell.variant}.pid").write_text(str(os.getpid()))
        while not (folder / "go").exists():
            threading.Event().wait(0.05)
    return cell.variant


@pytest.fixture(autouse=True)
def _ship_this_module():
    """The cluster's workers cannot import a test module by its pytest name: ship its functions by value."""
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def cells(*names: str) -> list[Cell]:
    return [Cell("cheap", "h", variant=name) for name in names]


def runs(folder: Path, name: str) -> int:
    path = folder / f"{name}.runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_killed_worker_is_retried_and_no_finished_cell_runs_again(two_nodes, tmp_path):
    pid_file = tmp_path / "hold.pid"

    def kill_then_go():
        wait_until(pid_file.exists, timeout_secs=60)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        wait_until(lambda: runs(tmp_path, "hold") >= 2, timeout_secs=60)  # the retry started
        (tmp_path / "go").touch()

    killer = threading.Thread(target=kill_then_go, daemon=True)
    killer.start()
    with CellPool("cluster", max_retries=2) as pool:
        run = pool.run(cheap_cell, str(tmp_path), cells("hold", "a", "b", "c"))
    killer.join(timeout=5)

    assert not run.failures and not run.stopped
    assert sorted(r.result for r in run.records.values()) == ["a", "b", "c", "hold"]  # the full table
    assert runs(tmp_path, "hold") == 2  # killed once, retried once
    assert [runs(tmp_path, n) for n in "abc"] == [1, 1, 1]  # the finished cells never ran again


def test_a_cell_that_raises_is_reported_by_name_and_the_rest_finish(two_nodes, tmp_path):
    with CellPool("cluster") as pool:
        run = pool.run(cheap_cell, str(tmp_path), cells("a", "boom", "b"))
    assert sorted(r.result for r in run.records.values()) == ["a", "b"]
    [failure] = run.failures
    assert failure.cell.name == "cheap 'boom'"
    assert failure.error == "ValueError: boom: this cell's data is broken"
    assert "cheap 'boom': ValueError: boom" in run.failure_text()
    assert runs(tmp_path, "boom") == 1  # an application error is not retried


def test_both_nodes_run_cells_and_the_cache_makes_a_rerun_skip_finished_cells(two_nodes, tmp_path):
    cache = CellCache(tmp_path / "cells")

    def go_once_both_held():
        wait_until(lambda: (tmp_path / "hold1.pid").exists() and (tmp_path / "hold2.pid").exists(), timeout_secs=60)
        (tmp_path / "go").touch()

    threading.Thread(target=go_once_both_held, daemon=True).start()
    with CellPool("cluster", cache=cache) as pool:
        first = pool.run(cheap_cell, str(tmp_path), cells("hold1", "hold2", "a"))
    # Two 1-CPU cells held at once until the go: one on each node.
    assert len({r.node_id for r in first.records.values()}) == 2
    with CellPool("cluster", cache=cache) as pool:
        second = pool.run(cheap_cell, str(tmp_path), cells("hold1", "hold2", "a", "new"))
    cached = {r.cell.variant: r.cached for r in second.records.values()}
    assert cached == {"hold1": True, "hold2": True, "a": True, "new": False}
    assert [runs(tmp_path, n) for n in ("hold1", "hold2", "a", "new")] == [1, 1, 1, 1]
    assert second.cost()["cells_cached"] == 3


def test_ctrl_c_cancels_the_cells_in_flight_and_keeps_the_finished_ones(two_nodes, tmp_path):
    cache = CellCache(tmp_path / "cells")
    pid_file = tmp_path / "hold.pid"

    def interrupt_once_held():
        finished = cache.path(Cell("cheap", "h", variant="a"))
        wait_until(lambda: pid_file.exists() and finished.exists(), timeout_secs=60)  # 'a' taken back, 'hold' in flight
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_once_held, daemon=True).start()
    with CellPool("cluster", cache=cache) as pool:
        run = pool.run(cheap_cell, str(tmp_path), cells("a", "hold"))
    assert run.stopped
    assert [r.cell.variant for r in run.records.values()] == ["a"]
    assert cache.get(Cell("cheap", "h", variant="a")) is not None and cache.get(Cell("cheap", "h", variant="hold")) is None


def test_off_runs_every_cell_in_this_process_in_order(tmp_path):
    (tmp_path / "go").touch()
    run = CellPool(OFF).run(cheap_cell, str(tmp_path), cells("a", "boom", "hold"))
    assert [r.result for r in run.records.values()] == ["a", "hold"]
    assert all(isinstance(r, CellRecord) and r.pid == os.getpid() for r in run.records.values())
    assert [f.cell.variant for f in run.failures] == ["boom"]
