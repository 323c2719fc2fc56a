"""The cells' progress file (<run>/cells/progress.json), written through a real CellPool run in this process."""

from __future__ import annotations

import json
import time
from pathlib import Path

from actors.dashboard.cells import PROGRESS_FILE
from actors.jobs.cells.cache import CellCache
from actors.jobs.cells.cell import Cell
from actors.jobs.cells.pool import OFF, CellPool
from actors.jobs.cells.progress import CellProgress

BURN_CPU_SECS = 0.05


def seen_cell(progress_file: str, cell: Cell):
    """A cheap cell: records the progress file as it reads while the cell runs; 'boom' then raises."""
    seen = json.loads(Path(progress_file).read_text())
    (Path(progress_file).parent / f"{cell.variant}.seen").write_text(json.dumps(seen))
    if cell.variant == "boom":
        raise ValueError("boom: this cell's data is broken")
    start = time.process_time()
    while time.process_time() - start < BURN_CPU_SECS:  # CPU the pool measures and the file adds up
        sum(range(1000))
    return cell.variant


def run_grid(run_dir: Path, cache: CellCache) -> dict:
    file = run_dir / PROGRESS_FILE
    cells = [Cell("cheap", "h", variant="fine"), Cell("cheap", "h", variant="boom")]
    with CellPool(OFF, cache=cache, progress=CellProgress("test cells", enabled=False, file=file)) as pool:
        run = pool.run(seen_cell, str(file), cells)
    assert [f.cell.variant for f in run.failures] == ["boom"]
    return json.loads(file.read_text())


def test_the_progress_file_counts_done_running_and_failed_cells_as_they_change(tmp_path):
    cache = CellCache(tmp_path / "cache")
    final = run_grid(tmp_path / "run", cache)

    assert {k: final[k] for k in ("label", "total", "done", "cached", "running", "failed", "finished")} == {
        "label": "test cells", "total": 2, "done": 1, "cached": 0, "running": 0, "failed": 1, "finished": True}
    assert final["failures"] == [{"cell": Cell("cheap", "h", variant="boom").name,
                                  "error": "ValueError: boom: this cell's data is broken"}]
    assert final["eta_secs"] == 0.0 and final["cpu_secs"] >= BURN_CPU_SECS
    # While the second cell ran, the file said: the first done, this one running, both submitted.
    while_boom = json.loads((tmp_path / "run" / "cells" / "boom.seen").read_text())
    assert (while_boom["total"], while_boom["done"], while_boom["running"], while_boom["failed"], while_boom["finished"]) == (2, 1, 1, 0, False)
    assert not list((tmp_path / "run" / "cells").glob("*.tmp"))  # written through a temp file, replaced


def test_a_rerun_counts_the_cached_cell_and_computes_no_cpu_for_it(tmp_path):
    cache = CellCache(tmp_path / "cache")
    run_grid(tmp_path / "first", cache)
    again = run_grid(tmp_path / "second", cache)
    assert (again["done"], again["cached"], again["failed"], again["cpu_secs"]) == (1, 1, 1, 0.0)
