"""kill -9 of the broker: the supervisor starts it again on the same addresses; the loop pauses and resumes."""

import time

import pytest

from bus.messages import RiskVerdict
from runtime.testing import running_actors
from tests.waiting import wait_until

LOOP = ["env", "policy", "fusion", "risk"]
SMALL = {"env.n_envs": 1, "env.step_interval_ms": 50.0, "policy.learn": False, "env.mode": "train",
         "data.synthetic_days": 20, "env.verdict_deadline_ms": 1000.0}
NEW_VERDICTS = 5


def verdict_steps_until(rt, enough, timeout_secs: float = 60.0) -> list[int]:
    """The steps of the verdicts the test client receives until ``enough(steps)`` holds (the bound only stops a
    broken test from hanging)."""
    steps, deadline = [], time.monotonic() + timeout_secs
    while not enough(steps) and time.monotonic() < deadline:
        try:
            steps.append(rt.client.recv(RiskVerdict, timeout_secs=0.5).step)
        except TimeoutError:
            pass
    return steps


def queued_verdict_steps(client) -> list[int]:
    """The steps of the verdicts already queued in the client's socket (it waits for none)."""
    steps = []
    while client.poller.poll(0):
        decoded = client.decode(client.sub.recv_multipart())
        if decoded is not None and isinstance(decoded.msg, RiskVerdict):
            steps.append(decoded.msg.step)
    return steps


@pytest.mark.slow
def test_a_killed_broker_is_restarted_on_the_same_addresses_and_decisions_flow_again():
    with running_actors(LOOP, SMALL) as rt:
        rt.client.subscribe(RiskVerdict)
        before = verdict_steps_until(rt, lambda steps: len(steps) >= 3)
        old_pid = rt.supervisor.broker.pid

        rt.supervisor.kill("broker")
        wait_until(lambda: rt.supervisor.broker is not None and rt.supervisor.broker.pid != old_pid, 60, "the broker's restart",
                   poll_secs=0.05)
        # The verdicts queued meanwhile (on direct lanes the loop need not pause), then NEW_VERDICTS of later steps:
        # decisions made after the restart.
        newest = max(before + queued_verdict_steps(rt.client))
        after = verdict_steps_until(rt, lambda steps: len([s for s in steps if s > newest]) >= NEW_VERDICTS)

        events = [(e.actor, e.kind) for e in rt.supervisor.events if e.actor == "broker"]
        new_pid = rt.supervisor.broker.pid
        actor_pids_alive = all(a.proc is not None and a.proc.poll() is None for a in rt.supervisor.actors.values())
        exit_code = rt.stop()

    assert before and after, "decisions before the kill and again after the broker's restart"
    assert new_pid != old_pid and ("broker", "exited") in events and ("broker", "spawned") in events
    assert len([s for s in after if s > newest]) >= NEW_VERDICTS and max(after) > max(before)  # the loop went on from where it was
    assert actor_pids_alive and exit_code == 0
