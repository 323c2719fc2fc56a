"""The rollout chain on its own: served steps paired with transitions, buffers rotating through an update."""

from __future__ import annotations

from collections import Counter

import numpy as np
from sb3_contrib import MaskablePPO

from actors.common.actions import N_ACTIONS, OBS_DIM
from actors.policy.config import PolicyConfig
from actors.policy.learner import maskable_ppo_kwargs, spaces_only_vec_env
from actors.policy.rollout import MAX_PENDING_STEPS, RolloutChain

N_ENVS = 2


def chain(n_steps: int = 2) -> RolloutChain:
    config = PolicyConfig(n_steps=n_steps, batch_size=4, net_arch=(8,))
    model = MaskablePPO("MlpPolicy", spaces_only_vec_env(OBS_DIM, N_ACTIONS, N_ENVS), **maskable_ppo_kwargs(config, 0))
    return RolloutChain(model, N_ENVS, Counter(), terminal_values=lambda obs: np.zeros(len(obs), np.float32))


def serve(rollout: RolloutChain, step: int) -> None:
    rollout.serve(step, np.zeros((N_ENVS, OBS_DIM), np.float32), np.ones((N_ENVS, N_ACTIONS), bool),
                  np.zeros((N_ENVS, N_ACTIONS), np.float32), np.zeros(N_ENVS, np.float32), np.zeros(N_ENVS, np.int64))


def record(rollout: RolloutChain, step: int):
    zeros = np.zeros(N_ENVS, bool)
    return rollout.record(step, np.zeros(N_ENVS, np.int64), np.ones(N_ENVS, np.float32), zeros, zeros, None, None)


def test_a_full_rollout_is_ready_at_the_next_served_step_and_rotates_through_training_back_to_spare():
    rollout = chain(n_steps=2)
    for step in range(2):
        serve(rollout, step)
        assert record(rollout, step).stored
    full = rollout.collecting

    serve(rollout, 2)
    assert rollout.update_ready and rollout.ready is full and rollout.fill == 0
    assert rollout.begin_training() is full and not rollout.update_ready
    assert rollout.end_training() == 2 * N_ENVS
    assert rollout.training is None and rollout.spare is full


def test_a_step_served_but_never_executed_is_forgotten_after_the_pending_limit():
    rollout = chain()
    for step in range(MAX_PENDING_STEPS + 3):
        serve(rollout, step)

    assert rollout.counters["proposals_never_executed"] == 3
    assert record(rollout, 0).reason == "no_proposal"
    assert record(rollout, 3).stored
