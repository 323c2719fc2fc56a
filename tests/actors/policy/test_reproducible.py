"""run.reproducible in the policy: a step the rollout cannot store is an error, and two short trainings through real
processes, one at full speed and one paced, end in the same weights at exactly the budget."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sb3_contrib import MaskablePPO

from actors.common.actions import N_ACTIONS, OBS_DIM
from actors.policy.checkpoint import checkpoint_steps, list_checkpoints, read_checkpoint
from actors.policy.config import PolicyConfig
from actors.policy.learner import OnlineMaskablePPO, maskable_ppo_kwargs, spaces_only_vec_env
from actors.policy.rollout import RolloutChain, StepDropped
from bus.messages import Done
from runtime.testing import running_actors

N_ENVS = 2


def chain(strict: bool) -> RolloutChain:
    config = PolicyConfig(n_steps=2, batch_size=4, net_arch=(8,))
    model = MaskablePPO("MlpPolicy", spaces_only_vec_env(OBS_DIM, N_ACTIONS, N_ENVS), **maskable_ppo_kwargs(config, 0))
    return RolloutChain(model, N_ENVS, Counter(), terminal_values=lambda obs: np.zeros(len(obs), np.float32), strict=strict)


def serve(rollout: RolloutChain, step: int) -> None:
    rollout.serve(step, np.zeros((N_ENVS, OBS_DIM), np.float32), np.ones((N_ENVS, N_ACTIONS), bool),
                  np.zeros((N_ENVS, N_ACTIONS), np.float32), np.zeros(N_ENVS, np.float32), np.zeros(N_ENVS, np.int64))


def record(rollout: RolloutChain, step: int, timed_out: bool = False):
    zeros = np.zeros(N_ENVS, bool)
    return rollout.record(step, np.zeros(N_ENVS, np.int64), np.ones(N_ENVS, np.float32), zeros, zeros, None,
                          np.full(N_ENVS, timed_out))


@pytest.mark.parametrize("case", ["no_proposal", "timed_out", "learner_busy", "gap"])
def test_a_strict_rollout_raises_for_a_step_it_cannot_store_where_a_lenient_one_counts_it(case):
    for strict in (False, True):
        rollout = chain(strict)
        serve(rollout, 0)
        assert record(rollout, 0).stored
        if case == "no_proposal":
            drop = lambda: record(rollout, 1)  # noqa: E731 - never served
        elif case == "timed_out":
            serve(rollout, 1)
            drop = lambda: record(rollout, 1, timed_out=True)  # noqa: E731
        elif case == "learner_busy":
            serve(rollout, 1)
            assert record(rollout, 1).stored
            serve(rollout, 2)  # closes the full rollout: ready
            rollout.begin_training()  # the spare collects
            for step in (2, 3):
                serve(rollout, step)
                assert record(rollout, step).stored
            serve(rollout, 4)  # the second rollout is full too, the first still training: nothing collects
            drop = lambda: record(rollout, 4)  # noqa: E731
        else:
            serve(rollout, 1)  # served, its transition never comes ...
            serve(rollout, 2)
            drop = lambda: record(rollout, 2)  # noqa: E731 - ... so step 2 cannot link up with step 0
        if strict:
            with pytest.raises(StepDropped):
                drop()
        else:
            result = drop()
            assert case == "gap" or not result.stored


def test_a_reproducible_learner_turns_on_torch_deterministic_kernels():
    import torch

    before = torch.are_deterministic_algorithms_enabled()
    try:
        OnlineMaskablePPO(PolicyConfig(n_steps=4, batch_size=4, net_arch=(8,)), 1, reproducible=True)
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(before)


BUDGET = 256
SHORT_TRAINING = {
    "run.reproducible": True,
    "env.n_envs": N_ENVS,
    "env.max_steps": BUDGET // N_ENVS + 1,
    "env.verdict_deadline_ms": 120_000.0,
    "data.synthetic_days": 20,
    "policy.total_timesteps": BUDGET,
    "policy.n_steps": 32,
    "policy.batch_size": 32,
    "policy.n_epochs": 8,
    "policy.checkpoint_every_steps": 0,
}


def train_weights(pace_ms: float) -> tuple[int, np.ndarray, bytes]:
    with running_actors(["env", "policy", "actors.policy.pass_through"], {**SHORT_TRAINING, "env.step_interval_ms": pace_ms}) as rt:
        rt.client.subscribe(Done)
        while rt.client.recv(timeout_secs=120).actor != "policy":
            pass
        [(steps, path)] = list_checkpoints(rt.run_dir / "checkpoints")
        learner = OnlineMaskablePPO.from_checkpoint_file(path, PolicyConfig(), N_ENVS)
        return checkpoint_steps(path), learner.parameters_vector(), read_checkpoint(path).normalizer_bytes


@pytest.mark.slow
def test_two_reproducible_trainings_at_different_paces_end_in_the_same_weights_at_exactly_the_budget():
    # Full speed, then a step every 3 ms: asynchronous updates would let the old weights serve a different number of
    # steps in each (the update takes about as long as a few steps); synchronous ones cannot.
    # The two run side by side (their start-up, imports and data, is most of the time).
    with ThreadPoolExecutor(2) as pool:
        (fast_steps, fast, fast_norm), (paced_steps, paced, paced_norm) = pool.map(train_weights, (0.0, 3.0))
    assert np.array_equal(fast, paced)
    assert fast_norm == paced_norm
    assert fast_steps == paced_steps == BUDGET
