"""actors/env/checkpoint.py's fast path: msgspec's JSON reads back as json.dumps's did, a non-finite number still
survives, and the RNG state read once an episode is the RNG's own."""

from __future__ import annotations

import copy
import json
import math

import numpy as np

from actors.common.actions import BUY, HOLD
from actors.common.instruments import resolve_instrument
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env import checkpoint
from actors.env.batch import EnvBatch
from actors.env.config import EnvConfig
from actors.env.dataset import Dataset
from actors.env.env import FuturesTradingEnv
from actors.env.random_verdicts import random_legal_actions

from .conftest import bars_frame

NQ = resolve_instrument(InstrumentConfig())


def train_batch(dataset, seed: int = 0, steps: int = 300) -> EnvBatch:
    """Two envs trading at random over short episodes: open positions, closed trades, finished episodes."""
    envs = [FuturesTradingEnv(dataset.train, NQ, AccountConfig(), EnvConfig(episode_bars=60)) for _ in range(2)]
    batch = EnvBatch(envs, mode="train", seed=seed)
    batch.reset()
    rng = np.random.default_rng(seed)
    for step in range(steps):
        _, masks = batch.observations(batch.active_ids())
        batch.step(batch.active_ids(), random_legal_actions(masks, rng), step)
    for step in range(steps, steps + 60):  # then into a position, so the state holds one
        if any(env.position is not None for env in batch.envs):
            break
        _, masks = batch.observations(batch.active_ids())
        batch.step(batch.active_ids(), np.where(masks[:, BUY], BUY, HOLD), step)
    return batch


def passed_backtest(seed: int = 0) -> EnvBatch:
    """A long held through a rising market: the evaluation passes, so the state holds a finished evaluation's record."""
    account = AccountConfig()
    rows = [(20_000.0 + 2 * i, 20_003.0 + 2 * i, 19_999.0 + 2 * i, 20_002.0 + 2 * i) for i in range(400)]
    dataset = Dataset.from_frame(bars_frame(rows), account.flat_minute_of_day, source="test", warmup_bars=0)
    envs = [FuturesTradingEnv(dataset.split("all"), NQ, account, EnvConfig(stop_loss_atr=100.0, take_profit_atr=100.0)) for _ in range(2)]
    batch = EnvBatch(envs, mode="backtest", seed=seed)
    batch.reset()
    for step in range(300):
        batch.step(batch.active_ids(), np.array([BUY if step % 50 == 3 else HOLD] * len(batch.active_ids())), step)
    return batch


def float_paths(node, path=()):
    """Where the floats of a captured state are (key and index paths)."""
    if isinstance(node, float):
        yield path
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from float_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from float_paths(value, (*path, index))


def at(node, path):
    for key in path:
        node = node[key]
    return node


def test_the_written_json_reads_back_as_json_dumps_wrote_it(synthetic_dataset):
    for batch in (train_batch(synthetic_dataset), passed_backtest()):
        state = checkpoint.capture(batch, 7, 14, "fp")
        assert json.loads(checkpoint._serialised(state)) == json.loads(json.dumps(state)) == state


def test_a_nan_or_infinity_anywhere_in_the_state_is_written_as_json_dumps_writes_it(synthetic_dataset):
    states = [checkpoint.capture(batch, 7, 14, "fp") for batch in (train_batch(synthetic_dataset), passed_backtest())]
    assert any(state["batch"]["evaluations"][0] for state in states) and any(env["position"] for s in states for env in s["envs"])
    paths = 0
    for state in states:
        for path in float_paths(state):
            for bad in (math.nan, math.inf):
                broken = copy.deepcopy(state)
                at(broken, path[:-1])[path[-1]] = bad
                read_back = at(json.loads(checkpoint._serialised(broken)), path)
                assert isinstance(read_back, float) and not math.isfinite(read_back), path
            paths += 1
    assert paths > 50


def test_the_saved_rng_state_follows_new_episodes_and_a_restore(synthetic_dataset):
    batch = train_batch(synthetic_dataset, steps=150)
    checkpoint.capture(batch, 0, 0, "fp")  # read now, then more episodes start (each reset draws its start)
    episodes = [env.episode_id for env in batch.envs]
    rng = np.random.default_rng(1)
    for step in range(150):
        _, masks = batch.observations(batch.active_ids())
        batch.step(batch.active_ids(), random_legal_actions(masks, rng), step)
    assert [env.episode_id for env in batch.envs] != episodes
    assert [env["rng"] for env in checkpoint.capture(batch, 0, 0, "fp")["envs"]] == [env.np_random.bit_generator.state for env in batch.envs]

    other = passed_backtest(seed=5)
    saved = checkpoint.capture(other, 0, 0, "fp")
    fresh = passed_backtest(seed=0)
    checkpoint.capture(fresh, 0, 0, "fp")  # read in the same episode the restore puts back
    checkpoint.restore(fresh, json.loads(checkpoint._serialised(saved)))
    assert [env["rng"] for env in checkpoint.capture(fresh, 0, 0, "fp")["envs"]] == [env["rng"] for env in saved["envs"]]
