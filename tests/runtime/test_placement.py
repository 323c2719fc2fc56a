"""runtime.cpu_placement (runtime/placement.py): the loop's processes on their CPUs, the reasoner on the last."""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from actors import DECISION_LOOP
from actors.jobs.config import load_config
from config.tree import ConfigError
from runtime import placement
from runtime.placement import LLM, LOOP, cpu_split, place_process, process_role, release_worker_thread
from runtime.settings import RuntimeConfig
from runtime.testing import running_actors

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="placement needs 2+ CPUs (Linux)")


def test_the_last_cpus_go_to_the_llm_and_the_rest_to_the_loop():
    assert cpu_split([0, 1], 1) == ({0}, {1})
    assert cpu_split([3, 5], 1) == ({3}, {5})
    assert cpu_split(range(8), 2) == (set(range(6)), {6, 7})


def test_no_split_where_the_loop_would_get_nothing():
    assert cpu_split([0], 1) is None
    assert cpu_split([0, 1], 2) is None
    assert cpu_split([0, 1], 0) is None


def test_an_unknown_placement_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match="runtime.cpu_placement"):
        load_config(overrides={"runtime.cpu_placement": "both"})


def test_a_process_role_comes_from_the_runtime_settings_and_the_broker_is_the_loops():
    rt = RuntimeConfig()
    roles = {name: process_role(name, rt.loop_actors, rt.llm_actors) for name in ("broker", "env", "feed", "reasoner", "lora")}
    assert roles == {"broker": LOOP, "env": LOOP, "feed": LOOP, "reasoner": LLM, "lora": None}
    assert process_role("mine", ["mine"], []) == LOOP and process_role("reasoner", [], []) is None


def test_the_runtimes_default_actor_names_are_actor_packages_and_the_decision_loop():
    """The runtime names no actor in its code; its defaults (data) must still name real ones."""
    rt = RuntimeConfig()
    assert rt.actors == list(DECISION_LOOP)
    root = Path(__file__).resolve().parents[2]
    for name in {*rt.actors, *rt.loop_actors, *rt.llm_actors, *rt.spare_actors}:
        assert (root / "actors" / name / "actor.py").is_file(), name
    config = load_config()
    assert (config.runtime.loop_actors, config.runtime.llm_actors) == (rt.loop_actors, rt.llm_actors)


def _in_thread(fn):
    """Run ``fn`` in a fresh thread (Linux affinity is per thread: the test's own thread is never placed)."""
    out: list = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join(30)
    return out[0]


@pytest.fixture
def restore_released():
    yield
    placement._released_cpus = None


@needs_two_cpus
def test_a_loop_thread_is_held_and_its_worker_runs_anywhere(restore_released):
    def placed_then_worker():
        held = place_process(LOOP, "split", 1)
        own = os.sched_getaffinity(0)
        with ThreadPoolExecutor(max_workers=1, initializer=release_worker_thread) as worker:
            in_worker = worker.submit(os.sched_getaffinity, 0).result()
        child: list = []
        started_after = threading.Thread(target=lambda: child.append(os.sched_getaffinity(0)))
        started_after.start()
        started_after.join()
        return held, own, in_worker, child[0]

    held, own, in_worker, child = _in_thread(placed_then_worker)
    assert held == own == child == set(CPUS[:-1])
    assert in_worker == set(CPUS)


@needs_two_cpus
def test_the_reasoner_holds_the_last_cpu_and_others_are_not_placed(restore_released):
    assert _in_thread(lambda: (place_process(LLM, "split", 1), os.sched_getaffinity(0))) == ({CPUS[-1]}, {CPUS[-1]})
    assert _in_thread(lambda: (place_process(None, "split", 1), os.sched_getaffinity(0))) == (None, set(CPUS))
    assert _in_thread(lambda: (place_process(LOOP, "off", 1), os.sched_getaffinity(0))) == (None, set(CPUS))
    assert _in_thread(lambda: (place_process(LOOP, "split", 1, run_has_llm=False), os.sched_getaffinity(0))) == (None, set(CPUS))


def _allowed_cpus(run_dir: Path, actor: str) -> set[int]:
    pid = int((run_dir / "pids" / f"{actor}.pid").read_text())
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("Cpus_allowed_list:"))
    cpus: set[int] = set()
    for part in line.split(":", 1)[1].strip().split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def _placed_events(run_dir: Path, actor: str) -> list[dict]:
    lines = (run_dir / "logs" / f"{actor}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if '"cpu_placed"' in line]


@needs_two_cpus
@pytest.mark.parametrize("setting", ["split", "off"])
def test_running_actors_are_placed_as_configured(setting):
    with running_actors(["risk", "reasoner"], {"runtime.cpu_placement": setting}, keep_run_dir=True) as rt:
        risk, reasoner = _allowed_cpus(rt.run_dir, "risk"), _allowed_cpus(rt.run_dir, "reasoner")
        run_dir = rt.run_dir
    if setting == "split":
        assert (risk, reasoner) == (set(CPUS[:-1]), {CPUS[-1]})
        assert [e["cpus"] for e in _placed_events(run_dir, "risk")] == [CPUS[:-1]]
        assert [e["cpus"] for e in _placed_events(run_dir, "reasoner")] == [[CPUS[-1]]]
    else:
        assert risk == reasoner == set(CPUS)
        assert _placed_events(run_dir, "risk") == _placed_events(run_dir, "reasoner") == []


@needs_two_cpus
def test_without_a_reasoner_the_loop_keeps_every_cpu():
    with running_actors(["risk"], {"runtime.cpu_placement": "split"}, keep_run_dir=True) as rt:
        risk = _allowed_cpus(rt.run_dir, "risk")
        run_dir = rt.run_dir
    assert risk == set(CPUS)
    assert _placed_events(run_dir, "risk") == []


@needs_two_cpus
def test_a_sandbox_that_forbids_placement_leaves_the_process_where_it_is(monkeypatch, restore_released):
    def forbidden(pid, cpus):
        raise PermissionError("operation not permitted")

    monkeypatch.setattr(os, "sched_setaffinity", forbidden)
    assert place_process(LOOP, "split", 1) is None and placement._released_cpus is None
    release_worker_thread()  # nothing to give back, and no error
