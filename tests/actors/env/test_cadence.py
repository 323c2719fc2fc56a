"""The decision cadence and the minimum hold (actors/env/cadence.py), and the reward charging what the account pays."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from actors.common.actions import BUY, HOLD, MOVE_SL_TO_BE, SELL
from actors.env.config import EnvConfig

WIDE = {"stop_loss_atr": 100.0, "take_profit_atr": 100.0}
HOLD_ONLY = [True, False, False, False, False, False]


def test_with_a_5_bar_cadence_the_policy_acts_only_before_bars_on_the_5_minute_grid(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(14), start_et="2024-03-04 10:01"), decision_every_bars=5, **WIDE)
    allowed = []
    for _ in range(10):
        allowed.append(bool(env.action_masks()[BUY]))
        env.step(HOLD)
    # observations of the 10:01 .. 10:10 bars: the 10:04 and 10:09 closes decide (orders fill at 10:05 and 10:10)
    assert allowed == [False, False, False, True, False, False, False, False, True, False]


def test_between_decisions_the_env_holds_the_position_and_an_exit_is_executed_as_hold(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(14), start_et="2024-03-04 10:04"), decision_every_bars=5, **WIDE)
    env.step(BUY)  # the 10:04 close decides: long at the 10:05 open
    assert env.position is not None and env.action_masks().tolist() == HOLD_ONLY
    _, _, _, _, info = env.step(SELL)
    assert info["illegal_action"] and info["executed_action"] == HOLD and env.position is not None
    for _ in range(3):
        env.step(HOLD)
    assert env.action_masks()[SELL]  # the 10:09 close: the exit is allowed again
    env.step(SELL)
    assert env.position is None and len(env.trades) == 1


def test_a_minimum_hold_masks_the_exit_until_the_position_is_old_enough_but_keeps_stop_management(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000)] + [(20000 + 10 * k, 20005 + 10 * k, 19998 + 10 * k, 20010 + 10 * k) for k in range(8)]
    env = env_over(make_bars(rows), min_hold_bars=3, **WIDE)
    env.step(BUY)
    masks = []
    for _ in range(3):
        masks.append(env.action_masks().tolist())
        env.step(HOLD)
    assert [m[SELL] for m in masks] == [False, False, True]  # held 1, 2, then 3 bars
    assert masks[0][MOVE_SL_TO_BE]  # in profit: tightening the stop stays allowed
    assert env.action_masks()[BUY] is np.False_  # a long never re-buys


def test_the_stop_closes_a_position_inside_the_minimum_hold(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000), (20000, 20005, 19995, 20000), (20000, 20002, 19900, 19910)] + [(19910, 19915, 19905, 19910)] * 3
    env = env_over(make_bars(rows), min_hold_bars=50, stop_loss_atr=2.0, take_profit_atr=100.0)
    env.step(BUY)
    env.step(HOLD)
    assert env.position is None and env.trades[-1].exit_reason == "stop"


def test_both_settings_off_leave_the_masks_as_they_were(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(10), start_et="2024-03-04 10:01"), decision_every_bars=1, min_hold_bars=0, **WIDE)
    assert env.action_masks().tolist() == [True, True, True, False, False, False]
    env.step(BUY)
    assert env.action_masks()[SELL]


@pytest.mark.parametrize("key, value", [("decision_every_bars", 0), ("decision_every_bars", -5), ("min_hold_bars", -1)])
def test_a_cadence_below_one_bar_or_a_negative_hold_is_refused(key, value):
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({key: value}, EnvConfig)


def test_the_rewards_add_up_to_the_accounts_net_pnl_costs_and_all(synthetic_dataset):
    """The reward charges what the account pays: commission and slippage per side, in dollars (actors/env/rewards.py)."""
    from actors.common.instruments import resolve_instrument
    from actors.common.market_settings import AccountConfig, InstrumentConfig
    from actors.env.env import FuturesTradingEnv

    env = FuturesTradingEnv(synthetic_dataset.train, resolve_instrument(InstrumentConfig(symbol="NQ")), AccountConfig(),
                            EnvConfig(entry_penalty_usd=0.0, min_hold_bars=3, decision_every_bars=2))
    rng = np.random.default_rng(3)
    env.reset(seed=3)
    total, start = 0.0, env.account.balance
    for _ in range(300):
        _, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        total += reward
        if terminated or truncated:
            break
    assert len(env.trades) >= 5
    costs = sum(t.commission_usd for t in env.trades)
    assert costs > 0
    assert total * env.config.reward_scale_usd == pytest.approx(env.equity - start, abs=1e-6)
