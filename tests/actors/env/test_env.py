"""The gym env: Gymnasium contract, masks, fills, stops, Apex rules, episodes."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from actors.common.actions import BUY, DISABLE_TRAIL, ENABLE_TRAIL, HOLD, MOVE_SL_TO_BE, SELL
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.env.env import FuturesTradingEnv
from actors.env.features import POSITION_START, RISK_START, VALIDITY_START
from actors.common.instruments import resolve_instrument

NQ = resolve_instrument(InstrumentConfig(symbol="NQ"))
WIDE = {"stop_loss_atr": 100.0, "take_profit_atr": 100.0}  # stops and targets out of reach


def synthetic_env(dataset, **overrides) -> FuturesTradingEnv:
    return FuturesTradingEnv(dataset.train, NQ, AccountConfig(), EnvConfig(**overrides))


def random_rollout(env: FuturesTradingEnv, seed: int, steps: int) -> list:
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    record = [obs]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, _ = env.step(action)
        record.append((action, reward, terminated, truncated, obs))
        if terminated or truncated:
            obs, _ = env.reset()
            record.append(obs)
    return record


# ------------------------------------------------------------------ Gymnasium contract


def test_env_passes_gymnasium_check_env(synthetic_dataset):
    env = synthetic_env(synthetic_dataset)
    check_env(env, skip_render_check=True)


def test_the_same_seed_gives_identical_episodes_and_another_seed_does_not(synthetic_dataset):
    first = random_rollout(synthetic_env(synthetic_dataset), seed=7, steps=300)
    second = random_rollout(synthetic_env(synthetic_dataset), seed=7, steps=300)
    other = random_rollout(synthetic_env(synthetic_dataset), seed=8, steps=300)

    def flatten(record):
        return np.concatenate([np.ravel(np.asarray(item[-1] if isinstance(item, tuple) else item, dtype=np.float64)) for item in record]
                              + [np.array([item[1] for item in record if isinstance(item, tuple)])])

    assert np.array_equal(flatten(first), flatten(second))
    assert not np.array_equal(flatten(first)[:5000], flatten(other)[:5000])


def test_observations_stay_inside_the_observation_space(synthetic_dataset):
    env = synthetic_env(synthetic_dataset)
    record = random_rollout(env, seed=1, steps=500)
    observations = [item[-1] if isinstance(item, tuple) else item for item in record]
    assert all(env.observation_space.contains(obs) for obs in observations)


def test_an_episode_without_a_breach_lasts_the_configured_bars_and_is_truncated(synthetic_dataset):
    env = synthetic_env(synthetic_dataset, episode_bars=390)
    env.reset(seed=3)
    steps, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env.step(HOLD)
        steps += 1
    assert (steps, terminated, truncated) == (390, False, True)
    assert info["episode_metrics"]["bars"] == 390


def test_session_open_episodes_start_at_the_first_bar_of_a_session(synthetic_dataset):
    env = synthetic_env(synthetic_dataset, episode_start="session_open")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info["start_bar"] in set(synthetic_dataset.session_starts.tolist())


# ------------------------------------------------------------------ masks


def test_masks_allow_only_entries_and_hold_when_flat(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(10)), **WIDE)
    assert env.action_masks().tolist() == [True, True, True, False, False, False]


def test_masks_in_a_long_allow_exit_and_trail_but_not_a_second_entry(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(10)), **WIDE)
    env.step(BUY)
    # the close (20000) is below the entry (20000.25): a break-even stop would be hit at once
    assert env.action_masks().tolist() == [True, False, True, False, True, False]
    env.step(ENABLE_TRAIL)
    assert env.action_masks().tolist() == [True, False, True, False, False, True]
    env.step(DISABLE_TRAIL)
    assert env.action_masks().tolist() == [True, False, True, False, True, False]


def test_masks_in_a_short_allow_buy_to_exit_but_not_sell(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(10)), **WIDE)
    env.step(SELL)
    assert env.action_masks().tolist() == [True, True, False, False, True, False]


def test_without_management_actions_a_position_allows_only_hold_and_its_exit(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000), (20000, 20012, 19998, 20010), (20010, 20015, 20005, 20010), (20010, 20015, 20005, 20010)]
    env = env_over(make_bars(rows), management_actions=False, **WIDE)
    assert env.action_masks().tolist() == [True, True, True, False, False, False]  # flat: entries as before
    env.step(BUY)
    assert env.action_masks().tolist() == [True, False, True, False, False, False]  # in profit, yet no break-even or trail
    _, _, _, _, info = env.step(ENABLE_TRAIL)
    assert info["illegal_action"] and info["executed_action"] == HOLD
    assert not env.position.trail_on and env.position.stop < env.position.entry_price


def test_break_even_is_allowed_once_in_profit_and_not_again_after_the_move(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000), (20000, 20012, 19998, 20010), (20010, 20015, 20005, 20010), (20010, 20015, 20005, 20010)]
    env = env_over(make_bars(rows), **WIDE)
    env.step(BUY)
    assert env.action_masks()[MOVE_SL_TO_BE]
    env.step(MOVE_SL_TO_BE)
    assert env.position.stop == env.position.entry_price
    assert not env.action_masks()[MOVE_SL_TO_BE]


def test_validity_and_position_features_follow_the_state(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(10)), **WIDE)
    obs, *_ = env.step(SELL)
    assert obs[POSITION_START] == -1.0
    assert obs[VALIDITY_START] == 0.0  # cannot enter while short
    assert obs[POSITION_START + 2] > 0  # stop is above a short: positive distance in ATR


def test_an_action_outside_the_mask_is_held_and_counted(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(10)), **WIDE)
    _, _, _, _, info = env.step(MOVE_SL_TO_BE)
    assert info["illegal_action"] and info["executed_action"] == HOLD
    assert env.illegal_actions == 1 and env.position is None


def test_entries_are_masked_after_the_daily_loss_limit(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000)] * 2 + [(19970, 19975, 19965, 19970)] * 6
    env = env_over(make_bars(rows), account=AccountConfig(daily_loss_limit=500.0), **WIDE)
    env.step(BUY)
    env.step(SELL)  # closes at the 19970 open: (19969.75 - 20000.25) x $20 - $5 = -$615
    assert env.account.daily_pnl == pytest.approx(-615.0)
    assert env.action_masks().tolist() == [True, False, False, False, False, False]


# ------------------------------------------------------------------ fills and exits


def test_commission_and_slippage_arithmetic_on_a_hand_made_ten_bar_file(tmp_path, env_over):
    from actors.common.bar_files import load_bars

    csv = tmp_path / "ten.csv"
    csv.write_text(
        "timestamp,open,high,low,close,volume\n"
        + "\n".join(
            f"2024-03-04 10:{minute:02d}:00,{o},{h},{l},{c},100"
            for minute, (o, h, l, c) in enumerate([
                (20000, 20004, 19996, 20000), (20001, 20006, 19999, 20004), (20004, 20009, 20002, 20008), (20008, 20012, 20006, 20010),
                (20011, 20014, 20009, 20012), (20012, 20015, 20010, 20013), (20013, 20016, 20011, 20014), (20014, 20017, 20012, 20015),
                (20015, 20018, 20013, 20016), (20016, 20019, 20014, 20017),
            ])
        )
        + "\n"
    )
    frame, _ = load_bars(csv)
    env = env_over(frame, **WIDE, entry_penalty_usd=0.0)  # the reward is then exactly the equity change
    rewards = []
    for action in (BUY, HOLD, HOLD, SELL):
        _, reward, *_ , info = env.step(action)
        rewards.append(reward)
    (trade,) = info["closed_trades"]
    # entry: bar 1 open 20001 + 1 tick slippage; exit: bar 4 open 20011 - 1 tick; $20/point; $2.50 per side
    assert trade.entry_price == 20001.25 and trade.exit_price == 20010.75
    assert trade.commission_usd == pytest.approx(5.0)
    assert trade.pnl_usd == pytest.approx((20010.75 - 20001.25) * 20 - 5.0)  # 185.0
    assert env.account.balance == pytest.approx(50_000 + 185.0)
    assert sum(rewards) * 100.0 == pytest.approx(185.0)
    assert rewards[0] == pytest.approx(((20004 - 20001.25) * 20 - 2.5) / 100.0)  # entry commission paid, marked at close


def test_the_entry_penalty_lowers_the_reward_of_each_entry_and_never_the_account(env_over, make_bars):
    rows = [(20000, 20004, 19996, 20000)] * 8
    plain, charged = env_over(make_bars(rows), **WIDE, entry_penalty_usd=0.0), env_over(make_bars(rows), **WIDE, entry_penalty_usd=40.0)
    actions = (BUY, HOLD, SELL, SELL, HOLD, BUY)  # two entries (a long, then a short), two exits
    pairs = [(plain.step(a)[1], charged.step(a)[1]) for a in actions]

    assert [round(p - c, 9) for p, c in pairs] == [0.4, 0.0, 0.0, 0.4, 0.0, 0.0]
    assert charged.account.balance == plain.account.balance and len(charged.trades) == 2


def test_stop_fills_before_the_target_when_one_bar_touches_both(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000), (20000, 20030, 19970, 20000), (20000, 20005, 19995, 20000), (20000, 20005, 19995, 20000)]
    env = env_over(make_bars(rows), stop_loss_atr=2.0, take_profit_atr=2.0)
    _, _, _, _, info = env.step(BUY)
    (trade,) = info["closed_trades"]
    # ATR at entry = 10 (mean range so far): stop 20000.25 - 20, target 20000.25 + 20
    assert trade.exit_reason == "stop"
    assert trade.exit_price == 19980.25 - 0.25
    assert trade.pnl_usd == pytest.approx((19980.0 - 20000.25) * 20 - 5.0)


def test_target_fills_at_the_limit_price_without_slippage(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000), (20000, 20030, 19990, 20025), (20025, 20030, 20020, 20025), (20025, 20030, 20020, 20025)]
    env = env_over(make_bars(rows), stop_loss_atr=2.0, take_profit_atr=2.0)
    _, _, _, _, info = env.step(BUY)
    (trade,) = info["closed_trades"]
    assert (trade.exit_reason, trade.exit_price) == ("target", 20020.25)


def test_a_gap_through_the_stop_fills_at_the_open_not_at_the_stop(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000), (20000, 20005, 19995, 20000), (19950, 19955, 19940, 19945), (19945, 19950, 19940, 19945)]
    env = env_over(make_bars(rows), stop_loss_atr=2.0, take_profit_atr=2.0)
    env.step(BUY)
    _, _, _, _, info = env.step(HOLD)
    (trade,) = info["closed_trades"]
    assert (trade.exit_reason, trade.exit_price) == ("stop", 19950 - 0.25)


def test_break_even_stop_exits_at_the_entry_with_reason_break_even(env_over, make_bars):
    rows = [(20000, 20005, 19995, 20000), (20000, 20012, 19998, 20010), (20010, 20015, 20005, 20010), (20005, 20006, 19990, 19995)] + [(19995, 20000, 19990, 19995)] * 2
    env = env_over(make_bars(rows), stop_loss_atr=3.0, take_profit_atr=10.0)
    env.step(BUY)
    env.step(MOVE_SL_TO_BE)
    _, _, _, _, info = env.step(HOLD)
    (trade,) = info["closed_trades"]
    assert trade.exit_reason == "break_even"
    assert trade.exit_price == 20000.25 - 0.25


def test_trailing_stop_ratchets_up_and_exits_with_reason_trail(env_over, make_bars):
    rising = [(20000 + 10 * k, 20005 + 10 * k, 19995 + 10 * k, 20000 + 10 * k) for k in range(6)]
    falling = [(20040, 20042, 19990, 19995), (19995, 20000, 19990, 19995)]
    env = env_over(make_bars(rising + falling), stop_loss_atr=5.0, take_profit_atr=50.0, trail_atr=1.5)
    env.step(BUY)
    env.step(ENABLE_TRAIL)
    stops = [env.position.stop]
    for _ in range(3):
        env.step(HOLD)
        stops.append(env.position.stop)
    assert stops == sorted(stops) and stops[-1] > stops[0]
    _, _, _, _, info = env.step(HOLD)
    (trade,) = info["closed_trades"]
    assert trade.exit_reason == "trail" and trade.exit_price == stops[-1] - 0.25


# ------------------------------------------------------------------ Apex rules


def falling_after_entry(n_bars: int, drop_per_bar: float) -> list[tuple[float, float, float, float]]:
    rows = [(20000.0, 20005.0, 19995.0, 20000.0)]
    for k in range(1, n_bars):
        open_ = 20000.0 - drop_per_bar * (k - 1)
        rows.append((open_, open_ + 2, open_ - drop_per_bar - 2, open_ - drop_per_bar))
    return rows


def test_trailing_drawdown_breach_ends_the_episode_on_the_bar_that_touches_it(env_over, make_bars):
    env = env_over(make_bars(falling_after_entry(12, 30.0)), **WIDE)
    results = [env.step(BUY)] + [env.step(HOLD) for _ in range(3)]
    assert not any(terminated for _, _, terminated, _, _ in results)
    # entry 20000.25, balance 49,997.50 after commission; the entry bar's high 20002 marks the intraday peak
    # at 50,032.50, threshold 47,532.50: equity touches it at 19877.00, the stop fills a tick of slippage
    # lower. Bar 4's low is 19878, bar 5's is 19848: the breach is on bar 5.
    _, reward, terminated, truncated, info = env.step(HOLD)
    assert (terminated, truncated) == (True, False)
    (trade,) = info["closed_trades"]
    assert (trade.exit_reason, trade.exit_price, trade.exit_bar) == ("drawdown", 19876.75, 5)
    assert trade.pnl_usd == pytest.approx((19876.75 - 20000.25) * 20 - 5.0)
    assert info["episode_metrics"]["apex_violations"] == 1
    assert reward < -10.0  # the loss of the bar plus the breach penalty


def test_the_drawdown_threshold_trails_the_equity_peak(env_over, make_bars):
    rising = [(20000 + 20 * k, 20005 + 20 * k, 19995 + 20 * k, 20000 + 20 * k) for k in range(6)]  # +$400 a bar
    falling = [(20100 - 20 * k, 20102 - 20 * k, 20078 - 20 * k, 20080 - 20 * k) for k in range(20)]
    env = env_over(make_bars(rising + falling), account=AccountConfig(drawdown_lock_balance=0.0), **WIDE)
    env.step(BUY)
    for _ in range(4):
        env.step(HOLD)
    # intraday trailing: the peak is the last bar's high (the favourable extreme of a long), not its close
    assert env.account.peak == pytest.approx(env.equity + 5 * 20)
    assert env.account.threshold == pytest.approx(env.account.peak - 2500.0)
    threshold = env.account.threshold
    while True:
        _, _, terminated, truncated, info = env.step(HOLD)
        if terminated or truncated:
            break
    assert terminated
    assert env.account.threshold == threshold
    assert info["closed_trades"][0].exit_reason == "drawdown"


def test_the_threshold_stops_trailing_at_the_lock_balance(env_over, make_bars):
    rising = [(20000 + 50 * k, 20005 + 50 * k, 19995 + 50 * k, 20000 + 50 * k) for k in range(10)]  # +$1,000 a bar
    env = env_over(make_bars(rising), **WIDE)
    for action in [BUY] + [HOLD] * 6:
        env.step(action)
    assert env.account.peak > 52_600
    assert env.account.threshold == pytest.approx(50_100.0)


def test_positions_are_forced_flat_by_4_59_pm_eastern_and_entries_masked_after(env_over, make_bars, flat_bars):
    frame = make_bars(flat_bars(30), start_et="2024-03-04 16:40")  # 16:40 .. 17:09 ET
    env = env_over(frame, **WIDE)
    env.step(BUY)  # fills at the 16:41 open
    closed = []
    for _ in range(17):
        assert env.position is not None or closed
        _, _, terminated, truncated, info = env.step(HOLD)
        closed += info["closed_trades"]
        if closed:
            break
    (trade,) = closed
    bar_time = frame.index[trade.exit_bar].tz_convert("America/New_York").strftime("%H:%M")
    assert (trade.exit_reason, bar_time) == ("forced_flat", "16:58")  # closed at the 16:58 bar's close = 16:59
    assert trade.exit_price == 20000 - 0.25
    assert not terminated and not truncated
    for _ in range(5):
        assert not env.action_masks()[BUY] and not env.action_masks()[SELL]
        env.step(HOLD)


def test_rth_positions_are_closed_at_the_last_bar_of_the_session(synthetic_dataset):
    env = FuturesTradingEnv(synthetic_dataset.split("all"), NQ, AccountConfig(), EnvConfig(**WIDE))
    session_end = int(synthetic_dataset.session_starts[2]) - 1  # 15:59 ET bar of the second session
    env.reset(options={"start": session_end - 5, "n_bars": 20})
    env.step(BUY)
    trades = []
    for _ in range(4):
        trades += env.step(HOLD)[4]["closed_trades"]
    assert [trade.exit_reason for trade in trades] == ["forced_flat"]
    assert trades[0].exit_bar == session_end
    assert synthetic_dataset.index[session_end].tz_convert("America/New_York").strftime("%H:%M") == "15:59"


def test_contracts_per_trade_are_capped_by_the_account_maximum(env_over, make_bars, flat_bars):
    env = env_over(make_bars(flat_bars(10)), account=AccountConfig(max_contracts=2), contracts_per_trade=5, **WIDE)
    env.step(BUY)
    assert env.position.contracts == 2


def test_risk_features_report_unrealized_pnl_and_drawdown(env_over, make_bars):
    env = env_over(make_bars(falling_after_entry(8, 10.0)), **WIDE)
    env.step(BUY)
    obs, *_ = env.step(HOLD)
    assert obs[RISK_START] < 0  # losing position
    assert obs[RISK_START + 1] > 0  # below the equity peak


def test_context_names_the_market_and_the_account(synthetic_dataset):
    env = synthetic_env(synthetic_dataset)
    env.reset(seed=0)
    env.step(BUY)
    context = env.context()
    from bus.messages import MarketContext

    built = MarketContext(**context)
    assert built.position == 1 and built.contracts == 1 and built.trend in ("up", "down", "sideways")
    assert built.drawdown_buffer == pytest.approx(env.equity - env.account.threshold)
    assert 0 < built.minutes_to_close <= 24 * 60


def test_a_losing_streak_restarts_at_each_new_session_unless_configured_not_to():
    from actors.env.account import ApexAccount as Account

    for resets, expected in ((True, 0), (False, 3)):
        account = Account(AccountConfig(losing_streak_resets_daily=resets))
        account.new_bar(session=1)
        for _ in range(3):
            account.record_result(-100.0)
        account.new_bar(session=1)
        assert account.consecutive_losses == 3
        account.new_bar(session=2)
        assert account.consecutive_losses == expected
