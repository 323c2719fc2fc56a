"""Training figures reach TensorBoard and log events; a frozen policy is called out."""

from __future__ import annotations

import numpy as np
import pytest

from actors.policy.config import PolicyConfig
from actors.policy.learner import OnlineMaskablePPO
from actors.policy.training_log import FrozenPolicyWatch, figure_name


def test_a_ppo_update_writes_tensorboard_events_and_hands_its_figures_to_the_callback(tmp_path):
    emitted = []
    learner = OnlineMaskablePPO(
        PolicyConfig(n_steps=8, batch_size=8, n_epochs=2, net_arch=(16,)),
        1,
        tensorboard_dir=tmp_path / "tensorboard",
        on_figures=emitted.append,
    )
    rng = np.random.default_rng(0)
    for step in range(9):
        proposal = learner.propose(rng.normal(size=(1, 261)).astype(np.float32), np.ones((1, 6), bool), step)
        learner.update_if_ready()
        learner.record(step, proposal.actions, np.ones(1, np.float32), np.zeros(1, bool), np.zeros(1, bool))

    assert len(emitted) == 1
    figures = emitted[0]
    for name in ("approx_kl", "clip_fraction", "explained_variance", "entropy_loss", "value_loss", "policy_gradient_loss"):
        assert name in figures
    assert figures["num_timesteps"] == 8
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))


def test_the_frozen_watch_warns_after_consecutive_tiny_kl_and_resets_on_a_real_update():
    watch = FrozenPolicyWatch(kl_threshold=1e-6, warn_after_updates=3)
    assert [watch.observe(kl) for kl in (1e-10, 1e-9, 1e-10)] == [False, False, True]
    assert watch.observe(float("nan"))  # no figure at all is no evidence of learning
    assert not watch.observe(0.01)
    assert watch.consecutive_frozen == 0


@pytest.mark.parametrize(("key", "name"), [("train/approx_kl", "approx_kl"), ("rollout/ep_rew_mean", "rollout_ep_rew_mean"), ("fps", "fps")])
def test_sb3_keys_become_flat_figure_names(key, name):
    assert figure_name(key) == name


def test_a_learner_whose_updates_do_not_move_the_policy_reports_itself_frozen():
    # The seeds' 004 failure, reproduced: a learning rate so small the weights cannot move.
    learner = OnlineMaskablePPO(
        PolicyConfig(n_steps=8, batch_size=8, n_epochs=1, net_arch=(16,), learning_rate=1e-12, frozen_warn_updates=2), 1
    )
    rng = np.random.default_rng(1)
    reports = []
    for step in range(8 * 3 + 1):
        proposal = learner.propose(rng.normal(size=(1, 261)).astype(np.float32), np.ones((1, 6), bool), step)
        report = learner.update_if_ready()
        if report is not None:
            reports.append(report)
        learner.record(step, proposal.actions, rng.normal(size=1).astype(np.float32), np.zeros(1, bool), np.zeros(1, bool))

    assert [r.frozen for r in reports] == [False, True, True]
    assert reports[-1].figures["approx_kl"] < 1e-6
