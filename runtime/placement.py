"""Which CPUs an actor's process runs on (``runtime.cpu_placement``, Linux).

On a small machine the decision loop and the LLM share the cores. Left to the scheduler, a
message of the loop often wakes its receiver on the core the reasoner is computing on: the
receiver waits for the preemption, and finds its caches cold from llama.cpp's weights. With
``split`` (in a run with a reasoner) the loop's processes (env, policy, fusion, risk, feed and the
broker) run on every CPU but the last ``runtime.llm_cpus``, and the reasoner on those. On 2 cores the whole loop then
shares one core: each hop hands over on a warm cache and the reasoner never takes its turn
(``bin/bench loop``: obs -> verdict p99 about 5 ms -> 1.5 ms). The price is throughput at full speed: the
fan-out work (fusion and risk reading each observation) no longer runs beside the critical path, so a
full-speed backtest with the reasoner steps about 14% slower on 2 cores.

Which process is which is a setting, not a name known here: ``runtime.loop_actors`` are the loop's (the broker
always is), ``runtime.llm_actors`` compute with the LLM, and a run places anything only when it starts one of the
latter. Only the loop's event-loop threads (and the zmq I/O threads they start) are held: a loop actor's
worker thread (PPO and fusion updates) runs anywhere, so training uses every core. Other actors
(lora, dashboard, jobs) are never placed. Linux affinity is per thread and inherited by the
threads a thread starts, so the process is placed before its bus exists.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

LOOP, LLM = "loop", "llm"
"""A placed process's role: the loop's CPUs (every CPU but the last llm_cpus) or the LLM's (the last llm_cpus)."""
BROKER = "broker"
"""The runtime's own process on the loop's path (every frame crosses it)."""

_released_cpus: set[int] | None = None
"""What a loop actor's worker thread gets back (the CPUs the process was allowed before placement)."""


def cpu_split(available: Iterable[int], llm_cpus: int) -> tuple[set[int], set[int]] | None:
    """(loop CPUs, LLM CPUs) from the CPUs this process may use: the last ``llm_cpus`` for the LLM, the rest for
    the loop; None where that leaves the loop nothing (a single CPU, or llm_cpus >= the CPUs)."""
    cpus = sorted(available)
    if llm_cpus < 1 or len(cpus) <= llm_cpus:
        return None
    return set(cpus[:-llm_cpus]), set(cpus[-llm_cpus:])


def process_role(process: str, loop_actors: Iterable[str], llm_actors: Iterable[str]) -> str | None:
    """LOOP, LLM or None (not placed) for a process by its short name, from runtime.loop_actors and llm_actors."""
    if process == BROKER or process in set(loop_actors):
        return LOOP
    return LLM if process in set(llm_actors) else None


def place_process(process: str | None, placement: str, llm_cpus: int, run_has_llm: bool = True) -> set[int] | None:
    """Hold the calling thread (and the threads it starts later) on the CPUs of ``process``, its role (LOOP, LLM or
    None), under ``placement``. Returns the CPUs, or None where the process is not placed (off, no LLM actor in the
    run, no role, one CPU, not Linux). Without an LLM actor there is nothing to keep the loop from: it gets every
    CPU (a full-speed training run's fan-out work then runs beside the critical path)."""
    global _released_cpus
    if placement == "off" or not run_has_llm or not hasattr(os, "sched_setaffinity"):
        return None
    available = os.sched_getaffinity(0)
    split = cpu_split(available, llm_cpus)
    if split is None:
        return None
    loop_cpus, llm_cpus_set = split
    if process == LOOP:
        chosen = loop_cpus
        _released_cpus = set(available)
    elif process == LLM:
        chosen = llm_cpus_set
    else:
        return None
    try:
        os.sched_setaffinity(0, chosen)
    except OSError:  # a sandbox that forbids it: the process runs where the scheduler puts it
        _released_cpus = None
        return None
    return chosen


def release_worker_thread() -> None:
    """A loop actor's worker thread runs on every CPU the process had (the ThreadPoolExecutor's initializer)."""
    if _released_cpus is not None:
        try:
            os.sched_setaffinity(0, _released_cpus)
        except OSError:
            pass
