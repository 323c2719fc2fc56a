"""Supervision in real processes: restarts, the restart limit, orderly stop of bin/run."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from bus.messages import Heartbeat, Probe
from runtime.supervisor import EXIT_FAILED
from runtime.testing import running_actors
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_killed_actor_is_restarted_and_receives_messages_again():
    fast = {"runtime.heartbeat_interval_secs": 0.2, "runtime.restart_backoff_secs": 0.1}
    with running_actors(["runtime.probes:Relay1"], fast) as rt:
        rt.client.subscribe("probe.0", Heartbeat, settle_secs=0.5)
        old_pid = rt.pid("relay1")
        rt.kill("relay1")
        beat = rt.client.recv(Heartbeat, timeout_secs=20, where=lambda h: h.actor == "relay1" and h.pid != old_pid)
        assert not pid_alive(old_pid)
        time.sleep(0.3)  # the new process's subscription reaches the broker
        rt.client.publish(Probe(probe_id=9, hop=1, hops=2, sent_ns=0), "1")
        assert rt.client.recv(Probe, timeout_secs=10, where=lambda m: m.probe_id == 9).hop == 0
        assert beat.pid == rt.pid("relay1")


def test_too_many_restarts_stop_the_runtime_with_a_clear_error():
    settings = {"runtime.max_restarts": 2, "runtime.restart_backoff_secs": 0.05, "runtime.restart_window_secs": 60.0}
    with running_actors(["tests.runtime.crashing_actor"], settings, wait_started_secs=0) as rt:
        rt.thread.join(30)
        assert rt.exit_code == [EXIT_FAILED]
        assert "crashing_actor" in rt.supervisor.failure and "restarted more than 2 times" in rt.supervisor.failure


def test_a_silent_actor_is_restarted():
    settings = {"runtime.heartbeat_interval_secs": 0.2, "runtime.heartbeat_liveness": 3, "runtime.restart_backoff_secs": 0.05}
    with running_actors(["runtime.probes:Relay1"], settings) as rt:
        rt.client.subscribe(Heartbeat, settle_secs=0.3)
        old_pid = rt.pid("relay1")
        rt.client.recv(Heartbeat, timeout_secs=10, where=lambda h: h.pid == old_pid)
        os.kill(old_pid, signal.SIGSTOP)  # alive but silent
        rt.client.recv(Heartbeat, timeout_secs=20, where=lambda h: h.actor == "relay1" and h.pid != old_pid)
        assert not pid_alive(old_pid)


def test_sigint_of_bin_run_stops_every_process_with_exit_code_0(tmp_path):
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [str(ROOT / "bin" / "run"), "run", "--run-dir", str(run_dir), "--quiet",
         "--set", 'runtime.actors=["runtime.probes:Relay1", "runtime.probes:Relay2"]'],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    pids: list[int] = []
    while time.monotonic() < deadline and len(pids) < 3:
        time.sleep(0.2)
        pid_files = list((run_dir / "pids").glob("*.pid")) if (run_dir / "pids").exists() else []
        pids = [int(p.read_text()) for p in pid_files]
    assert len(pids) == 3, "broker and two actors should have started"
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err.decode()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(pid_alive(p) for p in pids)
    assert b"terminate called" not in err
    events = [json.loads(line)["event"] for line in (run_dir / "logs" / "supervisor.jsonl").read_text().splitlines()]
    assert events[-1] == "runtime_stopped"


def test_a_paused_actor_reads_nothing_until_it_resumes_then_handles_what_queued_in_order():
    with running_actors(["tests.runtime.pausing_actor"]) as rt:
        rt.client.subscribe("probe.0", settle_secs=0.3)
        rt.client.publish(Probe(probe_id=0, hop=1, hops=2, sent_ns=0, payload=b"pause"), "1")
        time.sleep(0.05)
        for probe_id in range(1, 6):
            rt.client.publish(Probe(probe_id=probe_id, hop=1, hops=2, sent_ns=0), "1")
        with pytest.raises(TimeoutError):
            rt.client.recv(Probe, timeout_secs=0.3)
        answered = [rt.client.recv(Probe, timeout_secs=5).probe_id for _ in range(5)]
        assert answered == [1, 2, 3, 4, 5]


def test_handlers_that_suspend_still_run_one_at_a_time_in_arrival_order():
    with running_actors(["tests.runtime.pausing_actor:SlowRelay"]) as rt:
        rt.client.subscribe("probe.0", settle_secs=0.3)
        for probe_id in range(1, 7):
            rt.client.publish(Probe(probe_id=probe_id, hop=1, hops=2, sent_ns=0), "1")
        answered = [rt.client.recv(Probe, timeout_secs=5).probe_id for _ in range(6)]
        assert answered == [1, 2, 3, 4, 5, 6]


def test_a_handler_that_raises_ends_the_process_and_the_supervisor_restarts_it():
    settings = {"runtime.heartbeat_interval_secs": 0.2, "runtime.restart_backoff_secs": 0.1}
    with running_actors(["tests.runtime.pausing_actor:SlowRelay"], settings) as rt:
        rt.client.subscribe("probe.0", Heartbeat, settle_secs=0.3)
        old_pid = rt.pid("slowrelay")
        rt.client.publish(Probe(probe_id=1, hop=1, hops=2, sent_ns=0, payload=b"boom"), "1")
        rt.client.recv(Heartbeat, timeout_secs=20, where=lambda h: h.actor == "slowrelay" and h.pid != old_pid)
        time.sleep(0.3)
        rt.client.publish(Probe(probe_id=2, hop=1, hops=2, sent_ns=0), "1")
        assert rt.client.recv(Probe, timeout_secs=10, where=lambda m: m.probe_id == 2).hop == 0
        log = (rt.run_dir / "logs" / "slowrelay.jsonl").read_text()
        assert '"event": "handler_failed"' in log


def test_a_spare_with_its_imports_done_takes_over_a_killed_actor_and_is_replaced_then_stopped():
    settings = {"runtime.heartbeat_interval_secs": 0.2, "runtime.restart_backoff_secs": 0.05, "runtime.spare_actors": ["relay1"],
                "runtime.spare_start_delay_secs": 0.0}
    with running_actors(["runtime.probes:Relay1"], settings) as rt:
        rt.client.subscribe("probe.0", Heartbeat, settle_secs=0.3)
        spare = wait_until(lambda: rt.supervisor.actors["relay1"].spare, 60, "the spare")
        old_pid = rt.pid("relay1")
        rt.kill("relay1")
        beat = rt.client.recv(Heartbeat, timeout_secs=60, where=lambda h: h.actor == "relay1" and h.pid != old_pid)
        assert beat.pid == spare.pid == rt.pid("relay1")  # the spare became the actor
        rt.client.publish(Probe(probe_id=5, hop=1, hops=2, sent_ns=0), "1")
        assert rt.client.recv(Probe, timeout_secs=10, where=lambda m: m.probe_id == 5).hop == 0
        second = wait_until(lambda: rt.supervisor.actors["relay1"].spare, 60, "a new spare")
        assert second.pid != spare.pid
        rt.stop()
        assert not pid_alive(second.pid) and not pid_alive(spare.pid)


def test_without_spare_actors_no_spare_is_started():
    settings = {"runtime.heartbeat_interval_secs": 0.2, "runtime.spare_actors": []}
    with running_actors(["runtime.probes:Relay1"], settings) as rt:
        rt.client.subscribe(Heartbeat, settle_secs=0)
        rt.client.recv(Heartbeat, timeout_secs=30, where=lambda h: h.actor == "relay1")
        rt.client.recv(Heartbeat, timeout_secs=30, where=lambda h: h.actor == "relay1")  # the supervisor saw one too
        assert rt.supervisor.actors["relay1"].spare is None


def test_spares_wait_for_their_start_delay():
    settings = {"runtime.heartbeat_interval_secs": 0.2, "runtime.spare_actors": ["relay1"], "runtime.spare_start_delay_secs": 3600.0}
    with running_actors(["runtime.probes:Relay1"], settings) as rt:
        rt.client.subscribe(Heartbeat, settle_secs=0)
        for _ in range(3):  # the supervisor checked its actors after every one of them ran
            rt.client.recv(Heartbeat, timeout_secs=30, where=lambda h: h.actor == "relay1")
        assert rt.supervisor.actors["relay1"].spare is None and rt.supervisor._spares_from is not None
