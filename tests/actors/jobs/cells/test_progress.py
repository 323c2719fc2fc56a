"""The cells' progress: the grid's total known up front, done / running / failed counted, a line per cell off a terminal."""

from __future__ import annotations

from actors.jobs.cells.progress import CellProgress


def test_the_expected_total_holds_until_more_cells_than_expected_are_submitted():
    lines: list[str] = []
    progress = CellProgress("evaluate cells", say=lines.append)
    progress.expect(3)
    progress.start(1)
    progress.start(1)
    assert progress.total == 3
    progress.in_flight(2)
    progress.finished("policy fold 0 seed 0", secs=12.0)
    progress.finished("policy fold 1 seed 0", failed="ValueError: boom")
    progress.start(2)  # four submitted against three expected
    assert progress.total == 4
    progress.finished("ensemble fold 0", cached=True)
    assert (progress.done, progress.cached, progress.failed) == (2, 1, 1)
    assert lines == ["1/3 cells (2 running, 0 failed): policy fold 0 seed 0 12 s",
                     "2/3 cells (2 running, 1 failed): policy fold 1 seed 0 FAILED: ValueError: boom",
                     "3/4 cells (2 running, 1 failed): ensemble fold 0 cached"]


def test_a_quiet_progress_prints_nothing_but_still_counts():
    lines: list[str] = []
    progress = CellProgress("cells", enabled=False, say=lines.append)
    progress.start(2)
    progress.finished("a")
    assert lines == [] and (progress.total, progress.done) == (2, 1)
