"""A late heartbeat judged from the process: slow (alive, progressing) is left running, silent is restarted; the
backoff grows; the start-up grace scales. The judgement alone (runtime/liveness.py), then in real processes."""

import os

import pytest

from bus.messages import Heartbeat, Probe
from runtime.liveness import OK, SILENT, SLOW, UNRESPONSIVE, Liveness, ProcessSample, read_process, restart_delay, startup_grace
from runtime.settings import RuntimeConfig
from runtime.testing import running_actors

WINDOW = 5.0


def fresh(grace: float = 30.0, max_slow: float = 120.0) -> Liveness:
    return Liveness(100.0, window_secs=WINDOW, grace_secs=grace, max_slow_secs=max_slow)


def running(state: str = "S", ticks: int = 0, busy_threads: int = 0) -> ProcessSample:
    return ProcessSample(state, ticks, busy_threads)


def test_before_its_deadline_an_actor_is_ok_whatever_its_process_does():
    live = fresh()
    assert live.judge(129.0, running("T")) == OK  # inside the start-up grace
    live.beat(129.0, 10)
    assert live.judge(129.0 + WINDOW, running("S", 10)) == OK


def test_a_late_actor_that_computes_is_slow_and_looked_at_again_one_window_later():
    live = fresh()
    live.beat(110.0, 50)
    assert live.judge(116.0, running("R", 80)) == SLOW
    assert live.judge(117.0, running("S", 80)) == OK  # not judged again before the next window ends
    assert live.judge(121.5, running("S", 95)) == SLOW and live.slow_looks == 2
    live.beat(122.0, 96)
    assert live.slow_looks == 0 and live.overdue_since is None


def test_a_start_that_outlives_its_grace_while_loading_is_slow_not_silent():
    live = fresh(grace=30.0)
    assert live.judge(131.0, running("R", 2500)) == SLOW  # an HMM fit on a loaded machine


def test_a_late_actor_asleep_with_no_progress_over_the_window_is_silent():
    live = fresh()
    live.beat(110.0, 50)
    assert live.judge(116.0, running("S", 50)) == SILENT


def test_a_once_slow_actor_that_stops_progressing_is_silent_at_its_next_look():
    live = fresh()
    live.beat(110.0, 50)
    assert live.judge(116.0, running("R", 70)) == SLOW
    assert live.judge(121.5, running("S", 70)) == SILENT  # a deadlock after a long computation


@pytest.mark.parametrize("state", ["T", "t", "Z", "X"])
def test_a_stopped_zombie_or_dead_process_is_silent_even_with_new_cpu_time(state):
    live = fresh()
    live.beat(110.0, 50)
    assert live.judge(116.0, running(state, 90)) == SILENT


def test_a_process_gone_from_proc_is_silent():
    live = fresh()
    assert live.judge(131.0, None) == SILENT


def test_a_process_whose_thread_waits_for_a_cpu_is_slow_though_it_gained_no_cpu_time():
    live = fresh()
    live.beat(110.0, 50)
    assert live.judge(116.0, running("S", 50, busy_threads=1)) == SLOW  # its loop asleep, its worker starved


def test_a_process_waiting_on_the_disk_counts_as_progress():
    live = fresh()
    live.beat(110.0, 50)
    assert live.judge(116.0, running("D", 50)) == SLOW


def test_slow_for_longer_than_max_slow_secs_is_unresponsive():
    live = fresh(max_slow=10.0)
    live.beat(110.0, 0)
    ticks, now, verdicts = 0, 115.5, []
    while now < 140.0:
        ticks += 10
        verdicts.append(live.judge(now, running("R", ticks)))
        now += WINDOW + 0.5
    assert verdicts[:2] == [SLOW, SLOW] and verdicts[-1] == UNRESPONSIVE  # a busy loop that never yields


def test_the_backoff_doubles_with_each_restart_in_the_window_up_to_its_cap():
    delays = [restart_delay(n, 0.1, 1.0) for n in range(1, 7)]
    assert delays == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    assert restart_delay(0, 0.1, 1.0) == pytest.approx(0.1)


def test_a_restart_gets_at_least_three_times_what_the_last_start_took():
    assert startup_grace(30.0, None) == 30.0
    assert startup_grace(30.0, 4.0) == 30.0
    assert startup_grace(30.0, 25.0) == pytest.approx(75.0)


def test_the_start_secs_are_spawn_to_first_heartbeat():
    live = fresh()
    assert live.start_secs is None
    live.beat(104.5, 7)
    live.beat(105.5, 8)
    assert live.start_secs == pytest.approx(4.5)


def test_read_process_reads_this_process_and_none_for_a_gone_one():
    sample = read_process(os.getpid())
    assert sample is not None and sample.state == "R" and sample.cpu_ticks > 0 and sample.busy_threads >= 1
    assert read_process(2**22 + 12345) is None  # above pid_max's usual range


def test_a_negative_grace_of_an_actor_is_refused_naming_the_key():
    with pytest.raises(ValueError, match="startup_grace_by_actor"):
        RuntimeConfig(startup_grace_by_actor={"env": -1.0})


FAST = {"runtime.heartbeat_interval_secs": 0.2, "runtime.heartbeat_liveness": 3, "runtime.restart_backoff_secs": 0.05}
"""A heartbeat is late after 0.6 s."""


@pytest.mark.slow
def test_an_actor_computing_without_heartbeats_is_left_running_and_one_asleep_is_restarted():
    with running_actors(["tests.runtime.blocking_actor"], FAST) as rt:
        rt.client.subscribe("probe.0", Heartbeat, settle_secs=0.3)
        pid = rt.pid("blocking_actor")
        rt.client.publish(Probe(probe_id=1, hop=1, hops=2, sent_ns=0, payload=b"busy:2.5"), "1")
        assert rt.client.recv(Probe, timeout_secs=60, where=lambda m: m.probe_id == 1).hop == 0  # it finished its work
        actor = rt.supervisor.actors["blocking_actor"]
        assert rt.pid("blocking_actor") == pid and actor.restarts_total == 0 and actor.slow_total >= 1

        rt.client.publish(Probe(probe_id=2, hop=1, hops=2, sent_ns=0, payload=b"hang:60"), "1")
        rt.client.recv(Heartbeat, timeout_secs=60, where=lambda h: h.actor == "blocking_actor" and h.pid != pid)
        assert rt.supervisor.restart_counts() == {"blocking_actor": 1, "broker": 0}
        kinds = [e.kind for e in rt.supervisor.events if e.actor == "blocking_actor"]
        assert kinds[-2:] == ["silent", "spawned"]
        figures = rt.supervisor.supervision_figures()
        assert figures["restarts"] == 1 and figures["slow"] >= 1


@pytest.mark.slow
def test_an_actor_that_keeps_dying_is_restarted_later_each_time_then_given_up():
    import json

    settings = {"runtime.max_restarts": 3, "runtime.restart_backoff_secs": 0.05, "runtime.restart_window_secs": 600.0}
    with running_actors(["tests.runtime.crashing_actor"], settings, wait_started_secs=0) as rt:
        rt.thread.join(60)
        lines = [json.loads(line) for line in (rt.run_dir / "logs" / "supervisor.jsonl").read_text().splitlines()]
        counts = rt.supervisor.restart_counts()
    delays = [line["delay_secs"] for line in lines if line["event"] == "actor_restarting"]
    assert delays == pytest.approx([0.05, 0.1, 0.2])  # the fourth death gives up: the runtime stops with an error
    assert counts["crashing_actor"] == 3 and "restarted more than 3 times" in rt.supervisor.failure
