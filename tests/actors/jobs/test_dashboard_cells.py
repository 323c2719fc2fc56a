"""bin/run evaluate|ablation|sweep --dashboard: the page starts beside the cell job on the run directory it will write,
and the cells keep the shared cache (--dashboard names the run directory only so the page can wait for it)."""

from __future__ import annotations

import socket
from urllib.request import urlopen

import pytest

from actors.dashboard.cells import PROGRESS_FILE
from actors.jobs.cells.progress import CellProgress
from actors.jobs.cli import build_parser
from actors.jobs.dashboard import dashboard_beside, run_dir_given


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
def test_a_cell_job_gets_a_dashboard_on_its_run_directory_and_keeps_the_shared_cache(tmp_path, mode="evaluate"):
    args = build_parser().parse_args([mode, "--dashboard", "--port", "0", "--quiet", "--set", f"run.runs_dir={tmp_path}"])
    with dashboard_beside(args) as url:
        assert args.run_dir.parent == tmp_path and args.run_dir.is_dir()
        assert not run_dir_given(args)  # the cells still cache in <runs_dir>/cells, shared by every run
        progress = CellProgress(f"{mode} cells", enabled=False, file=args.run_dir / PROGRESS_FILE)
        progress.start(2)
        with urlopen(url, timeout=30) as page:  # the page is served for a folder holding only the progress file
            assert page.status == 200
        port = int(url.rsplit(":", 1)[1].split("/")[0])
    assert not port_open(port)  # it stopped with the job


@pytest.mark.parametrize("mode", ["evaluate", "ablation", "sweep"])
def test_every_cell_job_takes_the_dashboard_flags(mode):
    args = build_parser().parse_args([mode, "--dashboard", "--port", "0", "--host", "127.0.0.1"])
    assert (args.dashboard, args.port, args.host) == (True, 0, "127.0.0.1")


def test_a_run_dir_the_user_gives_is_the_cells_own_cache():
    assert run_dir_given(build_parser().parse_args(["evaluate", "--run-dir", "runs/x"]))
    assert not run_dir_given(build_parser().parse_args(["evaluate"]))
