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
