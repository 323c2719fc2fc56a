"""EnvBatch (the env actor's core) and the factory."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.env.batch import EnvBatch
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.env.env import FuturesTradingEnv
from actors.common.instruments import resolve_instrument
from actors.env.random_verdicts import random_legal_actions

NQ = resolve_instrument(InstrumentConfig())


def envs_over(split, n: int, **overrides) -> list[FuturesTradingEnv]:
    return [FuturesTradingEnv(split, NQ, AccountConfig(), EnvConfig(**overrides)) for _ in range(n)]


def test_a_closed_trade_names_the_decision_steps_and_query_ids_behind_it(synthetic_dataset):
    batch = EnvBatch(envs_over(synthetic_dataset.train, 2, stop_loss_atr=100.0, take_profit_atr=100.0), mode="train", seed=1)
    batch.reset()
    batch.step([0, 1], np.array([BUY, HOLD]), loop_step=10, query_ids=["q-open", ""])
    batch.step([0, 1], np.array([HOLD, HOLD]), loop_step=11, query_ids=["q-hold", ""])
    result = batch.step([0, 1], np.array([SELL, HOLD]), loop_step=12, query_ids=["", ""])
    (closed,) = result.closed_trades
    assert closed.env_id == 0 and closed.decision_steps == [10, 12] and closed.llm_query_ids == ["q-open"]
    assert result.actions.tolist() == [SELL, HOLD]


def test_train_mode_resets_finished_episodes_and_reports_them(synthetic_dataset):
    batch = EnvBatch(envs_over(synthetic_dataset.train, 2, episode_bars=25), mode="train", seed=0)
    batch.reset()
    finished = []
    for step in range(30):
        result = batch.step([0, 1], np.array([HOLD, HOLD]), loop_step=step)
        finished += result.finished_episodes
        if step == 24:
            assert result.truncated.all() and np.abs(result.terminal_obs).sum() > 0
    assert [episode.steps for episode in finished] == [25, 25]
    assert batch.active_ids() == [0, 1] and [env.episode_id for env in batch.envs] == [1, 1]


def test_backtest_mode_plays_each_env_chunk_once_and_then_finishes(synthetic_dataset):
    split = synthetic_dataset.test
    batch = EnvBatch(envs_over(split, 3), mode="backtest", seed=0)
    batch.reset()
    rng = np.random.default_rng(0)
    steps = 0
    while not batch.finished:
        ids = batch.active_ids()
        assert ids == [0, 1, 2]  # equal chunks: every env plays until the last step
        _, masks = batch.observations(ids)
        batch.step(ids, random_legal_actions(masks, rng), loop_step=steps)
        steps += len(ids)
    bars = split.stop - 1 - split.start
    assert steps == bars - bars % 3  # every bar of the split played once (but the < 3 left over at the end)
    summary, equity_curve, trades = batch.run_summary()
    assert summary["bars"] == steps and len(equity_curve) == steps + 1
    assert summary["trades"] == len(trades) > 0


def test_random_legal_actions_respect_the_masks():
    masks = np.array([[True, True, True, False, False, False], [True, False, False, False, False, False], [False] * 6])
    rng = np.random.default_rng(0)
    for _ in range(50):
        actions = random_legal_actions(masks, rng)
        assert masks[0, actions[0]] and actions[1] == HOLD and actions[2] == HOLD


def test_make_env_builds_from_the_root_config_and_caches_the_dataset():
    from actors.env.factory import load_dataset, make_env
    from actors.jobs.config import load_config

    config = load_config(None, {"data.synthetic_days": 6})
    first, second = make_env(config, "train", seed=0), make_env(config, "validation", seed=1)
    assert first.split.dataset is second.split.dataset is load_dataset(config)
    assert first.split.stop <= second.split.start
    assert first.observation_space.shape == (261,)


@pytest.mark.slow
def test_maskable_ppo_trains_on_the_env_and_never_picks_a_masked_action():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger

    from actors.env.factory import make_env
    from actors.jobs.config import load_config

    env = make_env(load_config(None, {"data.synthetic_days": 6, "env.episode_bars": 100}), "train", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0)
    model.set_logger(Logger(None, []))  # else SB3 leaves a folder /tmp/SB3-<time> behind at every run
    model.learn(256)
    assert model.num_timesteps == 256
    assert env.illegal_actions == 0  # every sampled action respected action_masks()
