"""Policy benchmark (``bin/bench policy``): the actor pipeline beside plain SB3, measured in one run.

Project: env + policy + pass-through actors (fusion/risk stand-in, LLM off) in real processes
on the bus, the policy learning online (same PPO settings). Steps/s = env steps (summed over
environments) between the policy's first progress report and its sys.done at
policy.total_timesteps, so process start-up is left out; PPO updates are inside the window.

Baseline: `MaskablePPO.learn()` in one process on the same env (actors.env.factory.make_env,
train split) wrapped in DummyVecEnv + VecNormalize, same n_envs, n_steps, batch size, epochs
and network, torch threads as policy.torch_threads, for the same number of timesteps (model
construction left out).

Also printed: stored steps/s of the pipeline (steps kept in a rollout for a PPO update; the
actor keeps serving during an update and drops steps when the next rollout fills first, which
plain SB3 never does, so this is the like-for-like learning throughput) and the mean proposal
latency inside the policy actor, and the loop ceiling: the same three actors with the policy
frozen (no learning at all), i.e. what the process hops alone allow.
Targets: pipeline >= 0.5x plain SB3 with 1 env, >= 0.8x with 8 envs.
"""

from __future__ import annotations

import argparse
import sys
import time

from actors.jobs.config import load_config
from bus.messages import Done, Progress, Stats
from tests.bench.common import print_table

TARGETS = {1: 0.5, 8: 0.8}


def ppo_settings(args: argparse.Namespace) -> dict:
    return {
        "policy.n_steps": args.n_steps,
        "policy.batch_size": args.batch_size,
        "policy.n_epochs": args.n_epochs,
        "policy.checkpoint_every_steps": 0,
        "policy.seed": 0,
    }


def total_timesteps(args: argparse.Namespace, n_envs: int) -> int:
    return args.rollouts * args.n_steps * n_envs


def plain_sb3_steps_per_sec(args: argparse.Namespace, n_envs: int) -> float:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from actors.env.factory import make_env
    from actors.policy.learner import maskable_ppo_kwargs

    config = load_config(None, {"env.n_envs": n_envs, **ppo_settings(args)})
    cfg = config.policy
    torch.set_num_threads(cfg.torch_threads)  # as the policy actor does: same compute budget
    venv = VecNormalize(DummyVecEnv([lambda i=i: make_env(config, "train", seed=i) for i in range(n_envs)]), gamma=cfg.gamma)
    model = MaskablePPO("MlpPolicy", venv, **maskable_ppo_kwargs(cfg, cfg.seed))
    model.set_logger(Logger(None, []))  # else SB3 leaves a folder /tmp/SB3-<time> behind
    steps = total_timesteps(args, n_envs)
    started = time.perf_counter()
    model.learn(total_timesteps=steps)
    return steps / (time.perf_counter() - started)


def pipeline_steps_per_sec(args: argparse.Namespace, n_envs: int) -> tuple[float, float, float]:
    """(steps/s, stored steps/s, mean propose latency in us) of env + policy + pass-through."""
    from runtime.testing import running_actors

    overrides = {
        "env.n_envs": n_envs,
        "env.verdict_deadline_ms": 1000.0,
        "policy.total_timesteps": total_timesteps(args, n_envs),
        "policy.progress_interval_secs": 0.25,
        "runtime.stats_interval_secs": 1.0,
        **ppo_settings(args),
    }
    with running_actors(["env", "policy", "actors.policy.pass_through"], overrides=overrides) as rt:
        rt.client.subscribe(Progress, Done, Stats)
        first = rt.client.recv(Progress, timeout_secs=120, where=lambda m: m.actor == "policy" and m.steps > 0)
        started, start_steps = time.perf_counter(), first.steps
        done = rt.client.recv(Done, timeout_secs=600, where=lambda m: m.actor == "policy")
        elapsed = time.perf_counter() - started
        stats = rt.client.recv(Stats, timeout_secs=10, where=lambda m: m.actor == "policy")
    steps = done.summary["num_timesteps"] - start_steps
    stored = done.summary.get("stored_steps", 0.0) - first.figures.get("stored_steps", 0.0)
    return steps / elapsed, stored / elapsed, stats.gauges.get("propose_mean_us", 0.0)


def frozen_loop_steps_per_sec(n_envs: int, window_secs: float) -> float:
    """Steps/s of the same three actors with the policy frozen: the bus loop's own ceiling."""
    from runtime.testing import running_actors

    overrides = {"env.n_envs": n_envs, "env.verdict_deadline_ms": 1000.0, "policy.learn": False, "policy.progress_interval_secs": 0.25}
    with running_actors(["env", "policy", "actors.policy.pass_through"], overrides=overrides) as rt:
        rt.client.subscribe(Progress)
        first = rt.client.recv(Progress, timeout_secs=120, where=lambda m: m.actor == "policy" and m.steps > 0)
        started = last_at = time.perf_counter()
        last = first
        while last_at - started < window_secs:  # keep receiving, so no report waits in a queue
            last = rt.client.recv(Progress, timeout_secs=10, where=lambda m: m.actor == "policy")
            last_at = time.perf_counter()
    return (last.steps - first.steps) / (last_at - started)


def timed(label: str, fn, *args):
    """Run one measurement, telling stderr what ran and how long it took (the table goes to stdout)."""
    started = time.perf_counter()
    result = fn(*args)
    print(f"  {label}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench policy", description=__doc__.split("\n")[0])
    parser.add_argument("--n-envs", default="1,8", help="comma-separated environment counts (default 1,8)")
    parser.add_argument("--n-steps", type=int, default=512, help="rollout steps per env (default 512)")
    parser.add_argument("--batch-size", type=int, default=64, help="PPO minibatch size (default 64)")
    parser.add_argument("--n-epochs", type=int, default=10, help="PPO epochs per rollout (default 10)")
    parser.add_argument("--rollouts", type=int, default=4, help="PPO rollouts per measurement (default 4)")
    parser.add_argument("--repeats", type=int, default=2, help="measurements of each, best kept (default 2)")
    parser.add_argument("--frozen-window-secs", type=float, default=6.0, help="window for the frozen-policy loop ceiling")
    args = parser.parse_args(argv)

    rows = []
    for n_envs in (int(n) for n in args.n_envs.split(",")):
        # Alternate the two, best of --repeats each: on a shared 2-core machine a burst of
        # someone else's load should not decide the ratio.
        baselines, pipelines = [], []
        for _ in range(args.repeats):
            baselines.append(timed(f"plain SB3, {n_envs} env(s)", plain_sb3_steps_per_sec, args, n_envs))
            pipelines.append(timed(f"actor pipeline, {n_envs} env(s)", pipeline_steps_per_sec, args, n_envs))
        baseline = max(baselines)
        project, stored, propose_us = max(pipelines)
        target = TARGETS.get(n_envs)
        rows.append(
            (
                f"steps/s, {n_envs} env{'s' if n_envs > 1 else ''}",
                f"{project:,.0f}",
                f"{baseline:,.0f}",
                f"{project / baseline:.2f}x",
                f">= {target}x" if target else "-",
            )
        )
        rows.append((f"  stored (learned-from) steps/s, {n_envs} env(s)", f"{stored:,.0f}", f"{baseline:,.0f}", f"{stored / baseline:.2f}x", "-"))
        rows.append((f"  propose latency in actor, {n_envs} env(s)", f"{propose_us:,.0f} us", "-", "-", "-"))
        ceiling = timed(f"frozen loop, {n_envs} env(s)", frozen_loop_steps_per_sec, n_envs, args.frozen_window_secs)
        rows.append((f"  loop ceiling, policy frozen, {n_envs} env(s)", f"{ceiling:,.0f}", f"{baseline:,.0f}", f"{ceiling / baseline:.2f}x", "-"))
    print_table(
        f"policy: actor pipeline (env + policy + pass-through, LLM off) vs plain MaskablePPO.learn(); "
        f"n_steps={args.n_steps}, batch={args.batch_size}, epochs={args.n_epochs}, {args.rollouts} rollouts, "
        f"best of {args.repeats}",
        rows,
    )


if __name__ == "__main__":
    main()
