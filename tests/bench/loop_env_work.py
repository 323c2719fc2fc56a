"""The env actor's own work per verdict, replayed in one process (``bin/bench loop``; ``--no-env-work`` leaves it out).

What actors/env/loop.py does between a risk.verdict and the next env.obs, without the bus: step every env
(EnvBatch.step), the account checkpoint when one is due (capture and serialise, every env.checkpoint_every_steps
and on every step that closed a trade), env.transition built and encoded, then the observations, masks and market
contexts of the next step and env.obs built and encoded. Random legal actions (seeded), the train split, the
default config. Timed with the thread's CPU clock (time.thread_time_ns), so a busy machine's waits for a core are
not counted: of the bench's figures this one moves least with the load (the hop table's risk.verdict handler is the
same work inside the actor, and its encode and send).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from actors.jobs.config import load_config
from bus.codec import Encoder
from bus.messages import EnvObs, EnvTransition, MarketContext
from tests.bench.common import percentiles_us

WARMUP_STEPS = 50


def env_work_us(steps: int, n_envs: int, seed: int = 0) -> dict[str, float]:
    """p50 and p99 CPU µs of the env's work per loop step, and its parts' p50."""
    from actors.common.instruments import resolve_instrument
    from actors.env.batch import EnvBatch
    from actors.env.checkpoint import AccountCheckpoints, capture
    from actors.env.checkpoint import _serialised as serialised
    from actors.env.env import FuturesTradingEnv
    from actors.env.factory import load_dataset
    from actors.env.random_verdicts import random_legal_actions

    config = load_config(overrides={"env.mode": "train", "env.split": "train", "env.n_envs": n_envs})
    dataset = load_dataset(config)
    instrument = resolve_instrument(config.instrument)
    envs = [FuturesTradingEnv(dataset.split("train"), instrument, config.account, config.env) for _ in range(n_envs)]
    batch = EnvBatch(envs, mode="train", seed=seed)
    batch.reset()
    due = AccountCheckpoints(Path("unused"), {}, config.env.checkpoint_every_steps).due  # when the actor saves (nothing is written)
    encoder, rng = Encoder("env"), np.random.default_rng(seed)
    parts: dict[str, list[int]] = {"total": [], "step": [], "checkpoint": [], "transition": [], "observation": []}
    ids = batch.active_ids()
    obs, masks = batch.observations(ids)
    for step in range(steps + WARMUP_STEPS):
        actions = random_legal_actions(masks, rng)
        t0 = time.thread_time_ns()
        result = batch.step(ids, actions, step)
        t1 = time.thread_time_ns()
        if due(step + 1, bool(result.closed_trades)):
            serialised(capture(batch, step + 1, (step + 1) * n_envs, "bench"))
        t2 = time.thread_time_ns()
        encoder.encode(EnvTransition(env_ids=result.env_ids, step=step, actions=result.actions, rewards=result.rewards,
                                     terminated=result.terminated, truncated=result.truncated, terminal_obs=result.terminal_obs,
                                     timed_out=[False] * len(ids)))
        t3 = time.thread_time_ns()
        obs, masks = batch.observations(ids)
        contexts = [MarketContext(**context) for context in batch.contexts(ids)]
        encoder.encode(EnvObs(env_ids=ids, episode_ids=batch.episode_ids(ids), step=step + 1, obs=obs, masks=masks, contexts=contexts,
                              thought_steps=[]))
        t4 = time.thread_time_ns()
        if step >= WARMUP_STEPS:
            for name, ns in (("total", t4 - t0), ("step", t1 - t0), ("checkpoint", t2 - t1), ("transition", t3 - t2), ("observation", t4 - t3)):
                parts[name].append(ns)
    p50, p99 = percentiles_us(parts.pop("total"))
    return {"p50_us": p50, "p99_us": p99, **{f"{name}_p50_us": percentiles_us(ns)[0] for name, ns in parts.items()}}


def env_work_rows(steps: int, n_envs_list: list[int]) -> list[tuple]:
    rows = []
    for n_envs in n_envs_list:
        work = env_work_us(steps, n_envs)
        parts = ", ".join(f"{name} {work[f'{name}_p50_us']:,.0f}" for name in ("step", "checkpoint", "transition", "observation"))
        rows.append((f"{n_envs} env(s): env's work per verdict, CPU us", f"p50 {work['p50_us']:,.0f}, p99 {work['p99_us']:,.0f}",
                     f"p50 of its parts: {parts}", "-", ""))
    return rows
