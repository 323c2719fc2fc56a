"""Checkpoints: atomic files with model + normaliser, resume with the same step count and weights."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from actors.policy.checkpoint import (
    checkpoint_dir,
    latest_checkpoint,
    list_checkpoints,
    prune_checkpoints,
    read_checkpoint,
)
from actors.policy.config import PolicyConfig
from actors.policy.learner import OnlineMaskablePPO

N_ENVS = 2


FEW_FEATURES = ("position", "validity", "market_regime")


def trained_learner(steps: int = 40, features_seen: tuple[str, ...] = FEW_FEATURES) -> OnlineMaskablePPO:
    learner = OnlineMaskablePPO(PolicyConfig(n_steps=8, batch_size=8, n_epochs=2, net_arch=(16,), features_seen=features_seen), N_ENVS)
    rng = np.random.default_rng(0)
    masks = np.ones((N_ENVS, 6), bool)
    for step in range(steps):
        proposal = learner.propose(rng.normal(size=(N_ENVS, 261)).astype(np.float32), masks, step)
        learner.update_if_ready()
        learner.record(step, proposal.actions, rng.normal(size=N_ENVS).astype(np.float32), np.zeros(N_ENVS, bool), np.zeros(N_ENVS, bool))
    return learner


def test_a_checkpoint_keeps_the_columns_its_network_never_saw_whatever_the_config_says(tmp_path):
    """Weights and normaliser have learnt nothing for hidden columns, so a loaded network must not be shown them."""
    learner = trained_learner()  # a few features: the regime belief and the position
    path = learner.save_checkpoint(tmp_path)
    assert read_checkpoint(path).meta["hidden_columns"] == learner._hidden_columns.tolist()

    shows_all = OnlineMaskablePPO.from_checkpoint_file(path, PolicyConfig(learn=False, features_seen=()), N_ENVS)
    obs = np.random.default_rng(6).normal(size=(N_ENVS, 261)).astype(np.float32)
    others_changed = np.random.default_rng(7).normal(size=obs.shape).astype(np.float32)
    seen = np.setdiff1d(np.arange(261), learner._hidden_columns)
    others_changed[:, seen] = obs[:, seen]
    masks = np.ones((N_ENVS, 6), bool)
    np.testing.assert_array_equal(shows_all.propose(obs, masks, 0).probs, shows_all.propose(others_changed, masks, 0).probs)
    assert shows_all.counters["features_seen_from_checkpoint"] == 1
    same = PolicyConfig(learn=False, features_seen=FEW_FEATURES)
    assert OnlineMaskablePPO.from_checkpoint_file(path, same, N_ENVS).counters["features_seen_from_checkpoint"] == 0


def test_the_default_policy_sees_all_261_columns():
    assert PolicyConfig().features_seen == () and OnlineMaskablePPO(PolicyConfig(), N_ENVS)._hidden_columns is None


def test_a_checkpoint_restores_weights_normaliser_and_step_count(tmp_path):
    learner = trained_learner()
    path = learner.save_checkpoint(checkpoint_dir(tmp_path))

    restored = OnlineMaskablePPO.from_checkpoint_file(path, PolicyConfig(), N_ENVS)

    assert path.name == f"policy_{learner.num_timesteps:012d}.zip"
    assert restored.num_timesteps == learner.num_timesteps == 80
    assert restored.n_updates == learner.n_updates > 0
    np.testing.assert_array_equal(restored.parameters_vector(), learner.parameters_vector())
    np.testing.assert_array_equal(restored.normalizer.obs_rms.mean, learner.normalizer.obs_rms.mean)
    assert restored.normalizer.ret_rms.var == pytest.approx(learner.normalizer.ret_rms.var)
    assert restored.model.n_steps == 8  # hyperparameters come from the checkpoint


def test_a_frozen_policy_loaded_from_a_checkpoint_proposes_what_the_trained_one_would(tmp_path):
    learner = trained_learner()
    path = learner.save_checkpoint(tmp_path)
    frozen = OnlineMaskablePPO.from_checkpoint_file(path, PolicyConfig(learn=False), N_ENVS)
    obs = np.random.default_rng(5).normal(size=(N_ENVS, 261)).astype(np.float32)
    masks = np.ones((N_ENVS, 6), bool)

    served = frozen.propose(obs, masks, 0)

    learner.learning = False  # same weights and normaliser, without updating the statistics
    reference = learner.propose(obs, masks, 0)
    np.testing.assert_allclose(served.probs, reference.probs, rtol=1e-6)


def test_writing_leaves_no_temporary_file_and_latest_checkpoint_finds_the_newest(tmp_path):
    learner = trained_learner(steps=10)
    first = learner.save_checkpoint(checkpoint_dir(tmp_path))
    learner.model.num_timesteps += 100
    second = learner.save_checkpoint(checkpoint_dir(tmp_path))

    assert sorted(p.name for p in checkpoint_dir(tmp_path).iterdir()) == sorted([first.name, second.name])
    assert latest_checkpoint(tmp_path) == second
    assert latest_checkpoint(second) == second
    assert latest_checkpoint(tmp_path / "nowhere") is None


def test_pruning_keeps_only_the_newest_checkpoints(tmp_path):
    learner = trained_learner(steps=4)
    for _ in range(4):
        learner.model.num_timesteps += 10
        learner.save_checkpoint(tmp_path)

    prune_checkpoints(tmp_path, keep=2)

    assert [steps for steps, _ in list_checkpoints(tmp_path)] == [38, 48]


def test_a_file_that_is_not_a_checkpoint_is_refused_with_its_name(tmp_path):
    bogus = tmp_path / "policy_000000000001.zip"
    bogus.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="policy_000000000001.zip"):
        read_checkpoint(bogus)
    empty_zip = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty_zip, "w"):
        pass
    with pytest.raises(ValueError, match="not a policy checkpoint"):
        read_checkpoint(empty_zip)


def test_a_resumed_phase_can_take_its_rollout_size_from_the_config(tmp_path):
    learner = trained_learner()
    path = learner.save_checkpoint(checkpoint_dir(tmp_path))

    config = PolicyConfig(rollout_from_checkpoint=False, n_steps=4, batch_size=4, n_epochs=1)
    restored = OnlineMaskablePPO.from_checkpoint_file(path, config, N_ENVS)

    assert (restored.model.n_steps, restored.model.batch_size, restored.model.n_epochs) == (4, 4, 1)
    assert restored.num_timesteps == learner.num_timesteps
    assert restored.model.rollout_buffer.buffer_size == 4


def _with_meta(path, change) -> None:
    """Rewrite the checkpoint at ``path`` with its meta.json changed by ``change(meta)``."""
    import json

    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    meta = json.loads(members["meta.json"])
    change(meta)
    members["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.mark.parametrize("layout", ["261/1", None])  # another layout, and a checkpoint from before the key (layout 1)
def test_a_checkpoint_of_another_observation_layout_is_refused_in_one_line(tmp_path, layout):
    from actors.common.observation import OBSERVATION_LAYOUT

    path = trained_learner(steps=8).save_checkpoint(tmp_path)
    assert read_checkpoint(path).meta["observation_layout"] == OBSERVATION_LAYOUT
    _with_meta(path, (lambda meta: meta.pop("observation_layout")) if layout is None else (lambda meta: meta.update(observation_layout=layout)))
    with pytest.raises(ValueError) as refused:
        read_checkpoint(path)
    message = str(refused.value)
    assert "observation layout 261/1" in message and OBSERVATION_LAYOUT in message and "\n" not in message
