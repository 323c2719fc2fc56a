"""Training steps/s for ``bin/bench loop`` (on by default; ``--no-training`` leaves it out).

Project: the decision loop training its policy, in real processes on the bus: env + policy (learning) + fusion + risk,
no reasoner (the LLM thinks beside training at its own pace). Env steps (summed over envs) per second from the
policy's first progress report to its sys.done at policy.total_timesteps, PPO updates inside the window (as
tests/bench/bench_policy.py measures its pipeline).

Baseline, in the same run: ``MaskablePPO.learn()`` in one process over the env's plain domain code (the same env,
train split, actors.env.factory.make_env) in SB3's DummyVecEnv + VecNormalize, same PPO settings and torch threads,
same timesteps. Beside it SubprocVecEnv (one process per env, fork): whether vectorised in-process environments
train faster than the actor loop, and by how much, is the ratio of these rows.
"""

from __future__ import annotations

import sys
import time

from actors.jobs.config import load_config
from bus.messages import Done, Progress

VEC_ENVS = ("dummy", "subproc")


def ppo_settings(n_steps: int) -> dict:
    return {"policy.n_steps": n_steps, "policy.batch_size": 64, "policy.n_epochs": 10, "policy.checkpoint_every_steps": 0, "policy.seed": 0}


def loop_steps_per_sec(n_envs: int, n_steps: int, rollouts: int) -> float:
    """Env steps/s of env + policy (learning) + fusion + risk on the bus."""
    from runtime.testing import running_actors

    overrides = {"env.n_envs": n_envs, "env.verdict_deadline_ms": 1000.0, "policy.total_timesteps": rollouts * n_steps * n_envs,
                 "policy.progress_interval_secs": 0.25, "runtime.stats_interval_secs": 60.0, **ppo_settings(n_steps)}
    with running_actors(["env", "policy", "fusion", "risk"], overrides=overrides) as rt:
        rt.client.subscribe(Progress, Done)
        first = rt.client.recv(Progress, timeout_secs=180, where=lambda m: m.actor == "policy" and m.steps > 0)
        started, start_steps = time.perf_counter(), first.steps
        done = rt.client.recv(Done, timeout_secs=900, where=lambda m: m.actor == "policy")
        elapsed = time.perf_counter() - started
    return (done.summary["num_timesteps"] - start_steps) / elapsed


def in_process_steps_per_sec(n_envs: int, n_steps: int, rollouts: int, vec: str) -> float:
    """Env steps/s of MaskablePPO.learn() over ``vec`` (dummy: every env in this process; subproc: one process each)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize

    from actors.env.factory import make_env
    from actors.policy.learner import maskable_ppo_kwargs

    config = load_config(None, {"env.n_envs": n_envs, **ppo_settings(n_steps)})
    cfg = config.policy
    torch.set_num_threads(cfg.torch_threads)  # as the policy actor does: the same compute budget
    makers = [lambda i=i: make_env(config, "train", seed=i) for i in range(n_envs)]
    inner = DummyVecEnv(makers) if vec == "dummy" else SubprocVecEnv(makers, start_method="fork")
    venv = VecNormalize(inner, gamma=cfg.gamma)
    try:
        model = MaskablePPO("MlpPolicy", venv, **maskable_ppo_kwargs(cfg, cfg.seed))
        model.set_logger(Logger(None, []))  # else SB3 leaves a folder /tmp/SB3-<time> behind
        steps = rollouts * n_steps * n_envs
        started = time.perf_counter()
        model.learn(total_timesteps=steps)
        return steps / (time.perf_counter() - started)
    finally:
        venv.close()


def timed(label: str, fn, *args):
    """One measurement, telling stderr what ran and how long it took (the tables go to stdout)."""
    started = time.perf_counter()
    result = fn(*args)
    print(f"  {label}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return result


def training_rows(n_envs_list: list[int], n_steps: int, rollouts: int) -> list[tuple]:
    rows = []
    for n_envs in n_envs_list:
        case = f"{n_envs} env(s)"
        dummy = timed(f"training, one process (DummyVecEnv), {case}", in_process_steps_per_sec, n_envs, n_steps, rollouts, "dummy")
        loop = timed(f"training, actor loop, {case}", loop_steps_per_sec, n_envs, n_steps, rollouts)
        rows.append((f"{case}: training steps/s, actor loop", f"{loop:,.0f}", f"{dummy:,.0f} one process (DummyVecEnv)", f"{loop / dummy:.2f}x", ""))
        if n_envs > 1:  # one env in a subprocess is the same work plus a pipe
            subproc = timed(f"training, SubprocVecEnv, {case}", in_process_steps_per_sec, n_envs, n_steps, rollouts, "subproc")
            rows.append((f"{case}: training steps/s, SubprocVecEnv", f"{subproc:,.0f}", f"{dummy:,.0f} one process (DummyVecEnv)",
                         f"{subproc / dummy:.2f}x", ""))
    return rows
