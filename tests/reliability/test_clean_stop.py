"""Clean stop: an actor busy in its worker thread stops within the grace period when it aborts on sys.shutdown."""

import json
import shutil

import pytest

from runtime.rundir import RunDir
from runtime.testing import running_actors

pytestmark = pytest.mark.slow
GRACE = {"runtime.shutdown_grace_secs": 2.0}


def stop_events(actor: str) -> list[dict]:
    with running_actors([actor], GRACE, keep_run_dir=True) as rt:
        pass
    log_file = RunDir(rt.run_dir).log_file("supervisor")
    events = [json.loads(line) for line in log_file.read_text().splitlines()]
    shutil.rmtree(rt.run_dir.parent, ignore_errors=True)
    assert rt.exit_code == [0]
    return [e for e in events if e["event"] in ("actor_sigterm", "actor_sigkill", "actors_stopped")]


def test_an_actor_that_aborts_its_worker_on_shutdown_stops_without_sigterm():
    events = stop_events("tests.reliability.busy_actor:AbortingWorker")

    stopped = [e for e in events if e["event"] == "actors_stopped"][0]
    assert stopped["sigterm"] == 0 and stopped["secs"] < GRACE["runtime.shutdown_grace_secs"]


def test_an_actor_stuck_in_its_worker_is_terminated_after_the_grace_period_and_named():
    events = stop_events("tests.reliability.busy_actor:StubbornWorker")

    assert [e["child"] for e in events if e["event"] == "actor_sigterm"] == ["stubbornworker"]
