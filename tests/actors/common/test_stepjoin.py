from dataclasses import dataclass

from actors.common.stepjoin import StepJoin


@dataclass
class Parts:
    obs: str | None = None
    proposal: str | None = None


def test_parts_of_a_step_join_in_either_order():
    join = StepJoin(4, Parts)
    join.entry(7).proposal = "p7"
    join.entry(7).obs = "o7"
    assert join.answer(7) == Parts("o7", "p7")
    assert join.get(7) is None and len(join) == 0


def test_an_answered_step_is_late_until_reopened():
    join = StepJoin(4, Parts)
    join.entry(1)
    join.answer(1)
    assert join.is_answered(1)
    join.reopen(1)
    assert not join.is_answered(1)


def test_the_oldest_waiting_steps_are_evicted_and_counted():
    join = StepJoin(3, Parts)
    for step in range(5):
        join.entry(step)
    assert len(join) == 3 and join.get(0) is None and join.get(1) is None and join.get(4) is not None
    assert join.counts["evicted_steps"] == 2


def test_answered_steps_are_remembered_within_the_bound():
    join = StepJoin(2, Parts)
    for step in range(3):
        join.entry(step)
        join.answer(step)
    assert not join.is_answered(0) and join.is_answered(1) and join.is_answered(2)


def test_steps_going_backwards_are_a_counted_restart():
    join = StepJoin(4, Parts)
    assert not join.went_back(5) and not join.went_back(6)
    assert join.went_back(0)
    assert join.latest_step == 0 and join.counts["env_restarts"] == 1


def test_after_a_restart_the_old_runs_steps_are_forgotten():
    join = StepJoin(8, Parts)
    join.entry(3).obs = "new run"
    join.entry(40).obs = "old run"
    join.entry(41)
    join.answer(41)
    join.forget_after(3)
    assert join.get(3) is not None and join.get(40) is None and not join.is_answered(41)


def test_counts_go_to_the_callers_counter():
    counts = {"evicted_steps": 0}
    join = StepJoin(1, Parts, counts)  # type: ignore[arg-type]
    join.entry(0)
    join.entry(1)
    assert counts["evicted_steps"] == 1
