"""The cells panel: a cell job's progress file, read by the reader's pass into the state and drawn by the page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actors.dashboard.cells import PROGRESS_FILE, CellsView, cells_lines
from actors.dashboard.config import DashboardConfig
from actors.dashboard.page import DashboardView
from actors.dashboard.source import DashboardError, Reader, resolve_target
from actors.dashboard.state import DashboardState
from actors.jobs.cells.progress import CellProgress


def grid_in_flight(run_dir: Path) -> CellProgress:
    """What a job's progress writes with 5 cells: 2 done (1 of them cached), 1 failed, 2 running."""
    progress = CellProgress("evaluate cells", enabled=False, file=run_dir / PROGRESS_FILE)
    progress.expect(5)
    progress.start(5)
    progress.in_flight(2)
    progress.finished("policy fold 0 seed 0", cached=True)
    progress.finished("policy fold 1 seed 0", secs=3.0, cpu_secs=2.5)
    progress.finished("policy fold 2 seed 0", failed="ValueError: fold 2 has no test days")
    return progress


def test_the_page_shows_the_counts_and_failed_cells_of_a_runs_progress_file(tmp_path):
    progress = grid_in_flight(tmp_path / "run")  # no config.toml yet: an ablation's root before its first stage
    state = DashboardState()
    reader = Reader(resolve_target(tmp_path / "run", None), state, DashboardConfig(attach_timeout_secs=0.2))
    view = DashboardView(state)
    reader._pass()
    view.update()

    assert view.cells.visible
    assert "3/5 cells  done 2 (cached 1)  running 2  failed 1  ETA" in view.cells.text
    assert "FAILED policy fold 2 seed 0: ValueError: fold 2 has no test days" in view.cells.text
    assert "CPU 2 s in this run" in view.cells.text  # 2.5 s rounded: the cached cell's CPU is not this run's
    assert "width:20.00%;background:#2ca02c" in view.cells.text and "width:20.00%;background:#d62728" in view.cells.text

    progress.finished("policy fold 3 seed 0", secs=3.0)
    progress.finished("policy fold 4 seed 0", secs=3.0)
    progress.close()
    for _ in range(5):  # the reader polls the file once a second (every LOG_EVERY_PASSES passes)
        reader._pass()
    view.update()
    assert "5/5 cells  done 4 (cached 1)  running 0  failed 1  finished" in view.cells.text


def test_a_run_without_cells_shows_no_panel(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.toml").write_text("")
    state = DashboardState()
    reader = Reader(resolve_target(tmp_path / "run", None), state, DashboardConfig(attach_timeout_secs=0.2))
    view = DashboardView(state)
    reader._pass()
    view.update()
    assert not view.cells.visible and state.cells.figures() == {}


def test_a_folder_with_neither_config_nor_progress_is_refused_by_name(tmp_path):
    with pytest.raises(DashboardError, match="no config.toml.*no cells/progress.json"):
        resolve_target(tmp_path, None)


def test_a_file_that_is_not_json_keeps_the_last_good_progress(tmp_path):
    grid_in_flight(tmp_path)
    cells = CellsView()
    assert cells.poll([tmp_path])
    (tmp_path / PROGRESS_FILE).write_text('{"total": 5, "do')  # not what the job writes (it replaces), but a copy might
    os.utime(tmp_path / PROGRESS_FILE, (1e9, 1e9))
    assert not cells.poll([tmp_path]) and cells.figures()["total"] == 5


def test_the_eta_counts_down_from_when_the_file_was_written_and_foreign_values_read_as_zero():
    assert cells_lines({"total": 4, "done": 1, "eta_secs": 30.0, "updated_unix": 1000.0}, now=1010.0)[0].endswith("ETA 20 s")
    assert cells_lines({"total": 4, "done": 1, "eta_secs": 30.0, "updated_unix": 1000.0}, now=1100.0)[0].endswith("ETA 0 s")
    assert cells_lines({"total": "x", "done": None})[0].startswith("cells: 0/0 cells")
    assert cells_lines({"total": 4, "done": 1, "finished": True})[0].endswith("stopped")  # Ctrl-C: the pool closed early
