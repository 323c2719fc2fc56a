"""Hindsight labels of the env's decision steps: the book (hand-made bars) and the actor publishing env.hindsight."""

from __future__ import annotations

import numpy as np

from actors.common.hindsight import BUY, HOLD, SELL, BarrierSpec, triple_barrier_label
from actors.env.loop import EnvLoop
from actors.common.market_settings import InstrumentConfig
from actors.env.hindsight import DecisionStep, HindsightBook, barrier_spec
from actors.common.instruments import resolve_instrument
from bus.messages import EnvHindsight, EnvObs, RiskVerdict
from runtime.testing import actor_harness

# ATR 10, stop 1 ATR, target 2 ATR, $20 a point, $10 of costs; 3 bars of horizon.
SPEC = BarrierSpec(horizon_bars=3, stop_atr=1.0, target_atr=2.0, multiplier=20.0, cost_per_trade_usd=10.0)


def bar_lists(rows: list[tuple[float, float, float, float]], atr: float = 10.0) -> dict[str, list[float]]:
    opens, highs, lows, closes = (list(column) for column in zip(*rows))
    return {"open": opens, "high": highs, "low": lows, "close": closes, "atr": [atr] * len(rows)}


FLAT = (100.0, 101.0, 99.0, 100.0)
RALLY = [FLAT, (100, 105, 98, 104), (104, 121, 103, 120), (120, 121, 119, 120)]
"""Bar 0 decides; the long's target (120) is hit on bar 2, the short's stop (110) on bar 2 too."""
SLIDE = [FLAT, (100, 102, 95, 96), (96, 97, 79, 80), (80, 81, 79, 80)]


def test_a_step_is_labelled_only_once_its_horizon_bars_are_played():
    book = HindsightBook(SPEC, bar_lists(RALLY + [FLAT] * 4))
    book.record(DecisionStep(env_id=0, episode_id=0, step=0, bar=0))

    early = book.mature({0: (0, 2)})
    due = book.mature({0: (0, 3)})

    assert early == []
    [labelled] = due
    assert labelled.decision.step == 0 and labelled.label.action == BUY
    assert (labelled.label.long.exit, labelled.label.long.bars_held) == ("target", 2)
    assert book.pending == 0


def test_long_wins_short_wins_and_neither_on_hand_made_bars():
    rows = RALLY + SLIDE + [FLAT] * 4
    book = HindsightBook(SPEC, bar_lists(rows))
    for step, bar in enumerate((0, 4, 8)):
        book.record(DecisionStep(env_id=0, episode_id=0, step=step, bar=bar))

    labelled = book.mature({0: (0, 11)})

    assert [item.label.action for item in labelled] == [BUY, SELL, HOLD]
    assert labelled[1].label.short.pnl_usd == 20 * 20.0 - 10.0


def test_a_new_episode_labels_the_old_episodes_steps_from_the_data_and_drops_those_past_its_end():
    book = HindsightBook(SPEC, bar_lists(RALLY + [FLAT]))
    book.record(DecisionStep(env_id=0, episode_id=0, step=0, bar=0))
    book.record(DecisionStep(env_id=0, episode_id=0, step=1, bar=3))  # bars 4..6 do not exist

    labelled = book.mature({0: (1, 0)})

    assert [item.decision.step for item in labelled] == [0]
    assert book.unlabelled == 1 and book.pending == 0


def test_a_run_that_ends_before_the_horizon_is_played_labels_its_last_steps_from_the_data():
    book = HindsightBook(SPEC, bar_lists(RALLY + SLIDE + [FLAT]))
    book.record(DecisionStep(env_id=0, episode_id=0, step=0, bar=0))
    book.record(DecisionStep(env_id=1, episode_id=0, step=0, bar=4))
    book.record(DecisionStep(env_id=1, episode_id=0, step=1, bar=7))  # bars 8..10 do not exist

    labelled = book.label_all()  # env.max_steps reached at bar 1: nothing matured yet

    assert [(item.decision.env_id, item.label.action) for item in labelled] == [(0, BUY), (1, SELL)]
    assert book.unlabelled == 1 and book.pending == 0


def test_costs_are_commission_on_both_sides_and_slippage_on_both_fills():
    nq = resolve_instrument(InstrumentConfig(symbol="NQ"))

    spec = barrier_spec(nq, horizon_bars=20, stop_atr=2.0, target_atr=4.0)

    assert spec.cost_per_trade_usd == 2 * 2.50 + 2 * 0.25 * 20.0
    assert spec.multiplier == 20.0


def verdict_holding(obs: EnvObs) -> RiskVerdict:
    n = len(obs.env_ids)
    return RiskVerdict(env_ids=list(obs.env_ids), step=obs.step, actions=np.zeros(n, dtype=np.int64), vetoed=[False] * n,
                       reasons=[""] * n, degraded=[False] * n, llm_query_ids=[""] * n)


async def test_the_env_actor_publishes_the_label_of_each_step_once_its_horizon_is_played():
    overrides = {"data.synthetic_days": 6, "env.n_envs": 1, "env.mode": "backtest", "env.split": "test",
                 "env.publish_hindsight": True, "lora.hindsight_horizon_bars": 3}
    bars: dict[int, int] = {}
    async with actor_harness("env", overrides) as h:
        actor: EnvLoop = h.actor
        for _ in range(6):
            obs = await h.recv(EnvObs, timeout_secs=30)
            bars[obs.step] = actor.batch.envs[0].bar
            await h.deliver(verdict_holding(obs))
        await h.settle()
        messages = h.messages(EnvHindsight)
        lists = actor.batch.envs[0].split.dataset.lists
        spec = actor.hindsight.spec

    rows = [(step, int(action)) for m in messages for step, action in zip(m.steps, m.actions)]
    assert [step for step, _ in rows] == [0, 1, 2, 3]  # after 6 steps, steps 4 and 5 wait for bars not played yet
    for message in messages:
        for row, step in enumerate(message.steps):
            expected = triple_barrier_label(lists["open"], lists["high"], lists["low"], lists["close"], bars[step],
                                            lists["atr"][bars[step]], spec)
            assert int(message.actions[row]) == expected.action
            assert message.long_pnl_usd[row] == expected.long.pnl_usd and message.short_exits[row] == expected.short.exit


async def test_without_the_switch_the_env_publishes_no_hindsight():
    overrides = {"data.synthetic_days": 6, "env.n_envs": 1, "env.mode": "backtest", "env.split": "test"}
    async with actor_harness("env", overrides) as h:
        for _ in range(4):
            obs = await h.recv(EnvObs, timeout_secs=30)
            await h.deliver(verdict_holding(obs))
        await h.settle()
        assert h.actor.hindsight is None and h.messages(EnvHindsight) == []


async def test_a_backtest_cut_by_max_steps_publishes_its_last_steps_labels_before_it_announces_done():
    from bus.messages import Done

    overrides = {"data.synthetic_days": 6, "env.n_envs": 1, "env.mode": "backtest", "env.split": "test",
                 "env.publish_hindsight": True, "lora.hindsight_horizon_bars": 3, "env.max_steps": 4}
    async with actor_harness("env", overrides) as h:
        for _ in range(4):
            obs = await h.recv(EnvObs, timeout_secs=30)
            await h.deliver(verdict_holding(obs))
        await h.recv(Done, timeout_secs=60)
        published = [type(r.msg) for r in h.published if isinstance(r.msg, (EnvHindsight, Done))]
        steps = sorted(step for m in h.messages(EnvHindsight) for step in m.steps)

    assert steps == [0, 1, 2, 3]  # steps 1-3 labelled from the data set, their horizon never played
    assert published[-1] is Done
