"""The in-process chain's ensemble of seeds: the mean distribution decides, a masked action never does."""

from __future__ import annotations

import msgspec
import numpy as np

from actors.env.factory import load_dataset
from actors.jobs.config import load_config
from actors.jobs.evaluation.chain import InProcessTrainer, ensemble_decide, frozen_copy, make_split_env, play_window


def _seed_learners(config, split, seeds: list[int]):
    learners = []
    for seed in seeds:
        seeded = msgspec.structs.replace(config, policy=msgspec.structs.replace(config.policy, seed=seed, n_steps=64, batch_size=32))
        learners.append(frozen_copy(InProcessTrainer(seeded, split).train_until(64), seeded))
    return learners


def test_the_ensemble_plays_the_allowed_action_of_highest_mean_probability():
    config = load_config()
    dataset = load_dataset(config)
    split = dataset.split("train")
    learners = _seed_learners(config, split, [0, 1, 2])
    env = make_split_env(config, split)
    env.reset(options={"start": split.start + 50, "n_bars": 200})
    decide = ensemble_decide(learners)
    for _ in range(40):
        obs, masks = env.observe()[None, :], env.action_masks()[None, :]
        mean = np.mean([learner.propose(obs, masks, 0).probs[0] for learner in learners], axis=0)
        action = decide(env)
        assert masks[0][action], "the ensemble chose a masked action"
        assert mean[action] == mean[masks[0]].max()
        env.step(action)


def test_an_ensemble_of_one_plays_as_its_learner():
    config = load_config()
    split = load_dataset(config).split("test")
    (learner,) = _seed_learners(config, load_dataset(config).split("train"), [3])
    from actors.jobs.evaluation.chain import learner_decide

    alone = play_window(config, split, learner_decide(learner))
    ensemble = play_window(config, split, ensemble_decide([learner]))
    assert np.array_equal(alone.daily_pnl, ensemble.daily_pnl) and len(alone.trades) == len(ensemble.trades)


def _skipping_trainer(skip: bool):
    config = load_config(None, {"env.decision_every_bars": 30, "env.min_hold_bars": 30, "env.n_envs": 2,
                                "policy.skip_forced_bars": skip, "policy.n_steps": 16, "policy.batch_size": 16})
    return InProcessTrainer(config, load_dataset(config).split("train"))


def test_learning_from_choices_only_asks_the_policy_on_decision_bars_and_keeps_every_bars_reward():
    from actors.env.cadence import is_forced

    trainer = _skipping_trainer(skip=True)
    asked: list[np.ndarray] = []
    propose = trainer.learner.propose
    trainer.learner.propose = lambda obs, masks, step: asked.append(masks.copy()) or propose(obs, masks, step)
    learner = trainer.train_until(96)
    assert learner.num_timesteps == 96 and learner.n_updates >= 2
    assert asked and not any(is_forced(mask) for masks in asked for mask in masks), "the policy was asked on a bar with no choice"
    assert min(trainer._bars) >= 20 * len(asked), "the held bars between decisions were not played"
    for env, stored in zip(trainer.envs, trainer._returns):  # the rewards stored add up to every bar's reward
        assert np.isclose(stored, env.episode_return, atol=1e-5)


def test_without_skipping_the_cadence_still_asks_on_every_bar():
    from actors.env.cadence import is_forced

    trainer = _skipping_trainer(skip=False)
    asked: list[np.ndarray] = []
    propose = trainer.learner.propose
    trainer.learner.propose = lambda obs, masks, step: asked.append(masks.copy()) or propose(obs, masks, step)
    trainer.train_until(64)
    assert sum(is_forced(mask) for masks in asked for mask in masks) > len(asked)  # most bars are no choice
    assert trainer._bars == [len(asked)] * 2
