"""--ray local starts a Ray of its own, even where the machine has one running already (another job's `ray start`)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[4]

SCRIPT = textwrap.dedent("""
    from actors.jobs.cells.cell import Cell
    from actors.jobs.cells.pool import LOCAL, CellPool

    def double(payload, cell):
        return payload * 2

    with CellPool(LOCAL) as pool:
        run = pool.run(double, 21, [Cell("cheap", "h", variant="a")])
    print("results", [r.result for r in run.records.values()], "failures", len(run.failures))
""")


def test_local_ray_runs_its_cells_where_another_ray_is_announced(tmp_path):
    # In a child process (this one may hold the package's simulated cluster). $RAY_ADDRESS stands for a running Ray
    # that ray.init(address=None) would join, as it joins the one a `ray start` on the machine announces in /tmp/ray.
    env = {**os.environ, "RAY_ADDRESS": "127.0.0.1:1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "results [42] failures 0" in done.stdout
