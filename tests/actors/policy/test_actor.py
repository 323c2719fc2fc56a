"""The policy actor driven by a test that plays the env: in-process on the harness, and in real processes for restarts."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from actors.policy.actor import resolve_start_checkpoint
from actors.policy.checkpoint import list_checkpoints
from actors.policy.config import PolicyConfig
from actors.common.actions import OBS_DIM
from actors.policy.learner import OnlineMaskablePPO
from bus.messages import EnvObs, EnvTransition, PolicyProposal
from runtime.testing import actor_harness, running_actors
from tests.actors.risk.risk_inputs import context

N_ENVS = 2
SMALL_POLICY = {
    "env.n_envs": N_ENVS,
    "policy.n_steps": 16,
    "policy.batch_size": 16,
    "policy.n_epochs": 2,
    "policy.net_arch": [16],
    "policy.progress_interval_secs": 0.2,
}


def env_obs(step: int, masks: np.ndarray | None = None) -> EnvObs:
    rng = np.random.default_rng(step)
    return EnvObs(
        env_ids=[0, 1],
        episode_ids=[0, 0],
        step=step,
        obs=rng.normal(size=(N_ENVS, OBS_DIM)).astype(np.float32),
        masks=np.ones((N_ENVS, 6), bool) if masks is None else masks,
        contexts=[context(), context()],
    )


def transition(step: int, actions: np.ndarray) -> EnvTransition:
    return EnvTransition(
        env_ids=[0, 1],
        step=step,
        actions=np.asarray(actions, np.int64),
        rewards=np.ones(N_ENVS, np.float32),
        terminated=np.zeros(N_ENVS, bool),
        truncated=np.zeros(N_ENVS, bool),
        terminal_obs=np.zeros((N_ENVS, OBS_DIM), np.float32),
    )


def wait_until_serving(client, step: int = 0, timeout_secs: float = 60.0) -> PolicyProposal:
    """The actor loads torch for a few seconds; repeat the first obs until it answers."""
    deadline = time.monotonic() + timeout_secs
    while time.monotonic() < deadline:
        client.publish(env_obs(step))
        try:
            return client.recv(PolicyProposal, timeout_secs=0.5, where=lambda m: m.step == step)
        except TimeoutError:
            continue
    raise TimeoutError("the policy actor never answered")


def play_steps(client, first: int, count: int) -> list[PolicyProposal]:
    proposals = []
    for step in range(first, first + count):
        client.publish(env_obs(step))
        proposal = client.recv(PolicyProposal, timeout_secs=10, where=lambda m, s=step: m.step == s)
        client.publish(transition(step, proposal.actions))
        proposals.append(proposal)
    return proposals


def wait_for_checkpoint(run_dir: Path, timeout_secs: float = 60.0) -> tuple[int, Path]:
    deadline = time.monotonic() + timeout_secs
    while time.monotonic() < deadline:
        found = list_checkpoints(run_dir / "checkpoints")
        if found:
            return found[-1]
        time.sleep(0.1)
    raise TimeoutError("no checkpoint written")


async def test_every_env_obs_gets_exactly_one_proposal_for_its_step_and_env_ids_within_the_mask():
    masks = np.zeros((N_ENVS, 6), bool)
    masks[:, [0, 3]] = True
    async with actor_harness("policy", SMALL_POLICY) as h:
        received = []
        for step in range(1, 41):
            await h.deliver(env_obs(step, masks))
            proposal = await h.recv(PolicyProposal, where=lambda m: m.step >= 1)
            received.append(proposal)
            await h.deliver(transition(step, proposal.actions))
        await h.settle()
        with pytest.raises(TimeoutError):  # nothing beyond one proposal per obs
            received.append(await h.recv(PolicyProposal, timeout_secs=0.2, where=lambda m: m.step >= 1))

    assert [p.step for p in received] == list(range(1, 41))
    for proposal in received:
        assert proposal.env_ids == [0, 1]
        assert masks[np.arange(N_ENVS), proposal.actions].all()
        np.testing.assert_allclose(proposal.confidences, proposal.probs[np.arange(N_ENVS), proposal.actions])


@pytest.mark.slow
def test_checkpoint_kill_and_restart_continue_the_step_counter_and_the_weights():
    overrides = {**SMALL_POLICY, "policy.checkpoint_every_steps": 60}
    with running_actors(["policy"], overrides=overrides) as rt:
        rt.client.subscribe(PolicyProposal)
        wait_until_serving(rt.client)
        play_steps(rt.client, 1, 40)  # 80 env steps: one periodic checkpoint
        saved_steps, saved_path = wait_for_checkpoint(rt.run_dir)
        saved = OnlineMaskablePPO.from_checkpoint_file(saved_path, PolicyConfig(), N_ENVS)

        rt.kill("policy")  # SIGKILL: nothing flushed; the supervisor restarts it
        wait_until_serving(rt.client, step=100)
        play_steps(rt.client, 101, 3)  # fewer steps than a rollout: no update, the weights stay
        rt.stop()
        final_steps, final_path = list_checkpoints(rt.run_dir / "checkpoints")[-1]
        final = OnlineMaskablePPO.from_checkpoint_file(final_path, PolicyConfig(), N_ENVS)

    assert saved_steps >= 60 and saved.n_updates > 0
    assert final_steps == saved_steps + 3 * N_ENVS  # the counter went on from the checkpoint
    assert final.n_updates == saved.n_updates
    np.testing.assert_array_equal(final.parameters_vector(), saved.parameters_vector())
    np.testing.assert_array_equal(final.normalizer.obs_rms.mean.shape, (OBS_DIM,))
    assert final.normalizer.obs_rms.count > saved.normalizer.obs_rms.count  # statistics went on too


def test_resume_takes_the_newest_checkpoint_of_a_run_dir_and_a_restart_prefers_its_own(tmp_path):
    learner = OnlineMaskablePPO(PolicyConfig(n_steps=8, net_arch=(8,)), 1)
    old_run, own_run = tmp_path / "old", tmp_path / "own"
    learner.save_checkpoint(old_run / "checkpoints")
    learner.model.num_timesteps = 500
    newest_old = learner.save_checkpoint(old_run / "checkpoints")

    assert resolve_start_checkpoint(str(old_run), "", True, own_run) == newest_old
    assert resolve_start_checkpoint("", str(newest_old), False, own_run) == newest_old
    assert resolve_start_checkpoint("", "", True, own_run) is None
    own = learner.save_checkpoint(own_run / "checkpoints")
    assert resolve_start_checkpoint(str(old_run), "", True, own_run) == own
    with pytest.raises(ValueError, match="policy.resume_from"):
        resolve_start_checkpoint(str(tmp_path / "empty"), "", True, tmp_path / "x")
    with pytest.raises(ValueError, match="policy.model_path"):
        resolve_start_checkpoint("", str(tmp_path / "missing.zip"), False, tmp_path / "x")


@pytest.mark.parametrize("learn", [False, True])
def test_a_spare_policy_warms_up_on_the_run_config_without_writing_anything(learn, tmp_path, monkeypatch):
    # The first learner of a process pays torch's and SB3's set-up; warm_up (run by a spare, runtime.spare_actors) pays it
    # ahead. bin/run chaos shows the restart time it saves; here: it runs on a real config (seed -1 too) and writes nothing.
    from actors.policy.actor import PolicyActor
    from actors.jobs.config import load_config

    monkeypatch.chdir(tmp_path)
    PolicyActor.warm_up(load_config(overrides={"policy.learn": learn, "policy.seed": -1, "env.n_envs": 2}))
    assert list(tmp_path.iterdir()) == []
