"""actors/env/checkpoint.py: the account state survives a restart (plain module), and the env actor resumes from it."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from actors.common.actions import BUY, HOLD
from actors.env import checkpoint
from actors.env.batch import EnvBatch
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.env.dataset import Dataset
from actors.env.env import FuturesTradingEnv
from actors.common.instruments import resolve_instrument
from bus.messages import EnvObs, EnvTransition, Heartbeat, RiskVerdict
from runtime.testing import actor_harness, running_actors
from tests.waiting import wait_until

from .conftest import bars_frame

SMALL = {"data.synthetic_days": 6, "env.n_envs": 2, "env.mode": "backtest", "env.split": "all"}


def rising_rows(n: int) -> list[tuple[float, float, float, float]]:
    return [(20_000.0 + 2 * i, 20_003.0 + 2 * i, 19_999.0 + 2 * i, 20_002.0 + 2 * i) for i in range(n)]


def backtest_batch(n_bars: int = 200) -> EnvBatch:
    account = AccountConfig()
    dataset = Dataset.from_frame(bars_frame(rising_rows(n_bars)), account.flat_minute_of_day, source="test", warmup_bars=0)
    envs = [FuturesTradingEnv(dataset.split("all"), resolve_instrument(InstrumentConfig()), account,
                              EnvConfig(stop_loss_atr=100.0, take_profit_atr=100.0)) for _ in range(2)]
    batch = EnvBatch(envs, mode="backtest", seed=0)
    batch.reset()
    return batch


def play(batch: EnvBatch, steps: int, first_step: int = 0) -> None:
    for step in range(first_step, first_step + steps):
        actions = np.array([BUY if step == 3 else HOLD] * len(batch.envs), dtype=np.int64)
        batch.step(batch.active_ids(), actions, step)


def test_a_restored_batch_has_the_balance_peak_position_and_cursor_it_was_saved_with(tmp_path):
    batch = backtest_batch()
    play(batch, 40)
    path = tmp_path / "env.json"

    checkpoint.write(path, checkpoint.capture(batch, 40, 80, "fp"))
    fresh = backtest_batch()
    open_ids = checkpoint.restore(fresh, checkpoint.read(path, "fp"))

    assert open_ids == [0, 1]
    for before, after in zip(batch.envs, fresh.envs):
        assert after.bar == before.bar and after.account.balance == before.account.balance
        assert after.account.peak == before.account.peak > 50_000.0  # a long in a rising market raised the floor
        assert after.account.threshold == before.account.threshold
        assert list(after.account.recent_pnls) == list(before.account.recent_pnls)
        assert after.position.entry_price == before.position.entry_price and after.position.bars_held == before.position.bars_held
        assert after.evaluation.record() == before.evaluation.record()
        assert np.array_equal(after.observe(), before.observe())


def test_a_restored_batch_steps_exactly_as_the_one_that_never_stopped(tmp_path):
    batch = backtest_batch()
    play(batch, 40)
    fresh = backtest_batch()
    checkpoint.restore(fresh, json.loads(json.dumps(checkpoint.capture(batch, 40, 80, "fp"))))

    play(batch, 30, first_step=40)
    play(fresh, 30, first_step=40)

    assert [env.equity for env in fresh.envs] == [env.equity for env in batch.envs]
    assert [env.account.peak for env in fresh.envs] == [env.account.peak for env in batch.envs]


def test_a_checkpoint_written_under_other_settings_is_not_restored(tmp_path):
    path = tmp_path / "env.json"
    checkpoint.write(path, checkpoint.capture(backtest_batch(), 0, 0, "fp-a"))

    assert checkpoint.read(path, "fp-b") is None
    assert checkpoint.read(tmp_path / "absent.json", "fp-a") is None


def test_writing_replaces_the_file_whole_and_leaves_no_temporary_behind(tmp_path):
    path = tmp_path / "sub" / "env.json"
    batch = backtest_batch()

    checkpoint.write(path, checkpoint.capture(batch, 1, 2, "fp"))
    checkpoint.write(path, checkpoint.capture(batch, 2, 4, "fp"))

    assert json.loads(path.read_text())["step_index"] == 2
    assert [p.name for p in path.parent.iterdir()] == ["env.json"]


def verdict(obs: EnvObs, actions) -> RiskVerdict:
    n = len(obs.env_ids)
    return RiskVerdict(env_ids=list(obs.env_ids), step=obs.step, actions=np.asarray(actions, dtype=np.int64),
                       vetoed=[False] * n, reasons=[""] * n, degraded=[False] * n, llm_query_ids=[""] * n)


async def test_a_restarted_env_actor_resumes_at_its_step_and_flattens_an_open_position_when_configured(tmp_path):
    overrides = {**SMALL, "env.stop_loss_atr": 100.0, "env.take_profit_atr": 100.0}
    async with actor_harness("env", overrides, run_dir=tmp_path) as h:
        obs = await h.recv(EnvObs, timeout_secs=30)
        await h.deliver(verdict(obs, [BUY, BUY]))
        obs = await h.recv(EnvObs)
        balances = [env.account.balance for env in h.actor.batch.envs]

    async with actor_harness("env", {**overrides, "env.restart_position": "flatten"}, run_dir=tmp_path) as h:
        resumed = await h.recv(EnvObs, timeout_secs=30)
        assert resumed.step == obs.step == 1
        assert [env.account.balance for env in h.actor.batch.envs] == balances
        await h.deliver(verdict(resumed, [HOLD, HOLD]))
        transition = await h.recv(EnvTransition)

    assert transition.actions.tolist() != [HOLD, HOLD]  # the restored longs were closed at the next bar's open
    assert h.actor.counters["positions_flattened_at_restart"] == 2


@pytest.mark.slow
def test_a_kill_9_of_the_env_actor_resumes_at_the_step_it_reached_with_the_same_balance_and_peak():
    overrides = {**SMALL, "env.verdict_deadline_ms": 2000, "runtime.restart_backoff_secs": 0.1}
    with running_actors(["env", "actors.env.random_verdicts"], overrides=overrides) as rt:
        rt.client.subscribe(EnvObs, Heartbeat)
        rt.client.recv(EnvObs, timeout_secs=30, where=lambda m: m.step >= 30)
        checkpoint = rt.run_dir / "env_state" / "env.json"
        wait_until(lambda: checkpoint.exists() and json.loads(checkpoint.read_text())["step_index"] >= 20, timeout_secs=30, what="a checkpoint at step 20")
        old_pid = rt.kill("env")
        saved = json.loads((rt.run_dir / "env_state" / "env.json").read_text())
        rt.client.recv(Heartbeat, timeout_secs=60, where=lambda m: m.actor == "env" and m.pid != old_pid)  # skips the old process's obs
        resumed = rt.client.recv(EnvObs, timeout_secs=30)

    # The checkpoint is written every 20 steps and on closed trades by a thread: the kill may land
    # between two writes, so the env resumes at the last written step, which is past step 0.
    assert resumed.step == saved["step_index"] >= 20
    for context, env in zip(resumed.contexts, saved["envs"]):
        assert context.balance == pytest.approx(env["account"]["balance"])
        assert context.drawdown_buffer == pytest.approx(env["equity"] - env["account"]["threshold"])
    assert any(env["account"]["peak"] != 50_000.0 or env["account"]["balance"] != 50_000.0 for env in saved["envs"])

