"""Env + policy + pass-through in real processes: the policy learns from the loop it serves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from actors.jobs.config import load_config
from actors.policy.checkpoint import list_checkpoints
from actors.policy.config import PolicyConfig
from actors.policy.learner import OnlineMaskablePPO
from bus.messages import Done, EnvObs, PolicyProposal
from runtime.testing import running_actors

N_ENVS = 2
PIPELINE = {
    "env.n_envs": N_ENVS,
    "env.verdict_deadline_ms": 2000.0,
    "policy.total_timesteps": 3000,
    "policy.n_steps": 128,
    "policy.batch_size": 64,
    "policy.n_epochs": 4,
    "policy.checkpoint_every_steps": 0,
}


@pytest.mark.slow
def test_a_short_training_run_through_real_processes_changes_the_weights_and_reports_approx_kl_above_zero():
    observations, proposals = {}, {}
    with running_actors(["env", "policy", "actors.policy.pass_through"], overrides=PIPELINE) as rt:
        rt.client.subscribe(Done, EnvObs, PolicyProposal)
        while True:
            msg = rt.client.recv(timeout_secs=120)
            if isinstance(msg, EnvObs) and len(observations) < 300:
                observations[msg.step] = msg
            elif isinstance(msg, PolicyProposal) and len(proposals) < 300:
                proposals[msg.step] = msg
            elif isinstance(msg, Done) and msg.actor == "policy":
                done = msg
                break
        checkpoints = list_checkpoints(rt.run_dir / "checkpoints")
        trained = OnlineMaskablePPO.from_checkpoint_file(checkpoints[-1][1], PolicyConfig(), N_ENVS)
        tensorboard_files = list((rt.run_dir / "tensorboard").glob("events.out.tfevents.*"))
        update_events = [
            json.loads(line)
            for line in (rt.run_dir / "logs" / "policy.jsonl").read_text().splitlines()
            if '"ppo_update"' in line
        ]

    untrained = OnlineMaskablePPO(load_config(None, PIPELINE).policy, N_ENVS)  # same seed: the starting weights
    assert done.reason == "timesteps_reached"
    assert done.summary["num_timesteps"] >= 3000
    assert done.summary["updates"] >= 10
    assert done.summary["approx_kl"] > 1e-6
    assert np.abs(trained.parameters_vector() - untrained.parameters_vector()).max() > 1e-3
    assert trained.num_timesteps >= 3000
    assert tensorboard_files
    assert len(update_events) >= 10 and all("clip_fraction" in event for event in update_events)
    assert max(event["approx_kl"] for event in update_events) > 1e-4

    answered = sorted(set(observations) & set(proposals))
    assert len(answered) >= 200  # every observation seen got its proposal, masks respected
    for step in answered:
        assert proposals[step].env_ids == observations[step].env_ids
        assert observations[step].masks[np.arange(N_ENVS), proposals[step].actions].all()
