"""Faults: kill -9 actors of a running backtest loop; the supervisor sees it at once and the loop decides again."""

import math

import pytest

from actors.jobs.chaos import LOOP_ACTORS, chaos_settings, run_chaos, table
from runtime.testing import running_actors

pytestmark = pytest.mark.slow


def test_killed_fusion_and_risk_are_detected_by_the_supervisor_and_decisions_flow_again():
    with running_actors(LOOP_ACTORS, {**chaos_settings(), "runtime.spare_actors": []}) as rt:  # restarts from scratch: no spares to wait for
        results = run_chaos(rt, ["fusion", "risk"], reasoner=False)

    assert all(r.recovered for r in results), table(results)
    # Seen by the supervisor (its exited event), not by a timed-out heartbeat; how fast is `bin/run chaos`'s figure.
    assert all(math.isfinite(r.detect_secs) for r in results), table(results)
    fusion = results[0]
    assert fusion.degraded_verdicts > 0, "with fusion down, risk decides from the proposal, flagged degraded"


def test_the_supervisor_records_each_death_and_respawn_of_an_actor():
    with running_actors(["runtime.probes:Relay1"], {"runtime.restart_backoff_secs": 0.05}) as rt:
        old_pid = rt.kill("relay1")
        rt.wait_started(30)

        kinds = [(e.kind, e.pid == old_pid) for e in rt.supervisor.events if e.actor == "relay1"]

    assert kinds[:3] == [("spawned", True), ("exited", True), ("spawned", False)]


def test_a_spare_counts_as_ready_once_it_waits_for_its_go_not_while_it_computes():
    import subprocess
    import sys

    from actors.jobs.chaos import spare_waiting

    waiting = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        from tests.waiting import wait_until

        wait_until(lambda: spare_waiting(waiting.pid), 60, "the waiting process to settle")
        assert not spare_waiting(busy.pid)
    finally:
        for proc in (waiting, busy):
            proc.kill()
            proc.wait()
    assert not spare_waiting(waiting.pid)  # gone
