import msgspec
import numpy as np
import pytest

from actors.common.actions import BUY, DISABLE_TRAIL, ENABLE_TRAIL, HOLD, MOVE_SL_TO_BE, SELL
from actors.risk.config import RiskConfig
from actors.risk.rules import EpisodeTrades, RiskRules
from tests.actors.risk.risk_inputs import FLAT_MASK, LONG_MASK, NQ_LIMITS, context

RULES = RiskRules(RiskConfig(), NQ_LIMITS)


def test_entries_pass_when_no_rule_fires():
    assert RULES.review(BUY, FLAT_MASK, context()).reason == ""


def test_consecutive_losses_veto_fires_exactly_at_its_threshold():
    assert RULES.review(BUY, FLAT_MASK, context(consecutive_losses=2)).reason == ""
    review = RULES.review(BUY, FLAT_MASK, context(consecutive_losses=3))
    assert (review.action, review.reason) == (HOLD, "consecutive_losses")


def test_drawdown_buffer_veto_fires_just_below_twenty_percent_of_the_trailing_limit():
    assert RULES.review(SELL, FLAT_MASK, context(drawdown_buffer=500.0)).reason == ""  # exactly 20 %
    review = RULES.review(SELL, FLAT_MASK, context(drawdown_buffer=499.0))
    assert (review.action, review.reason) == (HOLD, "drawdown_buffer")


def test_win_rate_veto_fires_just_below_its_threshold():
    assert RULES.review(BUY, FLAT_MASK, context(win_rate=0.3)).reason == ""
    assert RULES.review(BUY, FLAT_MASK, context(win_rate=0.29)).reason == "win_rate"


def test_a_low_win_rate_halts_only_while_the_recent_trades_lost_money():
    trend_follower = context(win_rate=0.2, recent_net_pnl=450.0)  # two big winners paid for eight small losers
    assert RULES.review(BUY, FLAT_MASK, trend_follower).reason == ""
    assert RULES.review(BUY, FLAT_MASK, context(win_rate=0.2, recent_net_pnl=-1.0)).reason == "win_rate"
    seed_002 = RiskRules(RiskConfig(win_rate_halt_needs_net_loss=False, min_win_rate=0.4), NQ_LIMITS)
    assert seed_002.review(BUY, FLAT_MASK, trend_follower).reason == "win_rate"


def test_win_rate_veto_waits_for_enough_trades_in_the_episode():
    one_early_loss = context(win_rate=0.0, consecutive_losses=1)
    assert RULES.review(BUY, FLAT_MASK, one_early_loss, episode_trades=4).reason == ""
    assert RULES.review(BUY, FLAT_MASK, one_early_loss, episode_trades=5).reason == "win_rate"
    assert RiskRules(RiskConfig(min_trades_for_win_rate=0), NQ_LIMITS).review(
        BUY, FLAT_MASK, one_early_loss, episode_trades=1).reason == "win_rate"


def test_trades_are_counted_per_env_and_restart_with_each_episode():
    trades = EpisodeTrades()
    for _ in range(3):
        trades.record(env_id=0, episode_id=7)
    trades.record(env_id=1, episode_id=2)
    assert (trades.count(0, 7), trades.count(1, 2), trades.count(0, 8)) == (3, 1, 0)
    trades.record(env_id=0, episode_id=8)
    assert (trades.count(0, 8), trades.count(0, 7)) == (1, 0)


def test_daily_loss_limit_fires_at_the_limit():
    assert RULES.review(BUY, FLAT_MASK, context(daily_pnl=-999.0)).reason == ""
    assert RULES.review(BUY, FLAT_MASK, context(daily_pnl=-1000.0)).reason == "daily_loss_limit"


def test_a_veto_lets_hold_move_to_break_even_and_disable_trail_pass():
    losing_streak = context(consecutive_losses=5, position=1, contracts=1, trail_on=True)
    all_legal = np.ones(6, dtype=bool)
    for action in (HOLD, MOVE_SL_TO_BE, DISABLE_TRAIL):
        assert RULES.review(action, all_legal, losing_streak).reason == ""
    assert RULES.review(ENABLE_TRAIL, all_legal, losing_streak).reason == "consecutive_losses"


def test_veto_rules_switch_off_but_the_daily_limit_and_guard_stay():
    rules = RiskRules(RiskConfig(veto_enabled=False), NQ_LIMITS)
    assert rules.review(BUY, FLAT_MASK, context(consecutive_losses=9, win_rate=0.0)).reason == ""
    assert rules.review(BUY, FLAT_MASK, context(daily_pnl=-2000.0)).reason == "daily_loss_limit"


def test_account_guard_blocks_an_entry_that_could_breach_on_the_next_bar():
    # one NQ contract, 2 ATR of 10 points = $400 move + 2 fills x ($2.50 + 1 tick $5) = $415
    rules = RiskRules(RiskConfig(veto_enabled=False), NQ_LIMITS)
    assert rules.worst_bar_loss_usd(1, 10.0, sides=2) == pytest.approx(415.0)
    assert rules.review(BUY, FLAT_MASK, context(drawdown_buffer=416.0)).reason == ""
    review = rules.review(BUY, FLAT_MASK, context(drawdown_buffer=415.0))
    assert (review.action, review.reason) == (HOLD, "account_guard")


def test_account_guard_flattens_a_position_before_a_breach_is_possible():
    # two contracts: 2 x ($400 + $7.50) = $815 worst bar
    in_danger = context(position=1, contracts=2, drawdown_buffer=815.0)
    review = RULES.review(HOLD, LONG_MASK, in_danger)
    assert (review.action, review.reason) == (SELL, "account_guard")
    assert RULES.review(HOLD, LONG_MASK, msgspec.structs.replace(in_danger, drawdown_buffer=816.0)).reason == ""
    short_in_danger = msgspec.structs.replace(in_danger, position=-1)
    short_mask = np.array([True, True, False, False, True, False])
    assert RULES.review(ENABLE_TRAIL, short_mask, short_in_danger).action == BUY


def test_account_guard_tightens_the_stop_when_it_cannot_flatten():
    in_danger = context(position=1, contracts=2, drawdown_buffer=815.0)
    no_exit = np.array([True, False, False, True, True, False])
    review = RULES.review(HOLD, no_exit, in_danger)
    assert (review.action, review.reason) == (MOVE_SL_TO_BE, "account_guard")
    at_break_even = msgspec.structs.replace(in_danger, stop_at_break_even=True)
    assert RULES.review(HOLD, no_exit, at_break_even).action == ENABLE_TRAIL


def test_account_guard_blocks_loosening_the_stop():
    in_danger = context(position=-1, contracts=1, drawdown_buffer=100.0, trail_on=True, stop_at_break_even=True)
    mask = np.array([True, False, False, False, False, True])
    review = RULES.review(DISABLE_TRAIL, mask, in_danger)
    assert (review.action, review.reason) == (HOLD, "account_guard")


def test_an_exit_passes_every_veto():
    losing_long = context(position=1, contracts=1, consecutive_losses=9, win_rate=0.0, daily_pnl=-5000.0,
                          drawdown_buffer=450.0)
    assert RULES.review(SELL, LONG_MASK, losing_long).reason == ""


def test_a_masked_action_never_passes():
    review = RULES.review(BUY, LONG_MASK, context(position=1, contracts=1))
    assert (review.action, review.reason) == (HOLD, "masked_action")
    no_hold = np.array([False, False, False, True, False, False])
    assert RULES.review(BUY, no_hold, context(position=1, contracts=1)).action == MOVE_SL_TO_BE


def test_config_names_the_key_it_rejects():
    with pytest.raises(ValueError, match="risk.min_win_rate"):
        RiskConfig(min_win_rate=1.5)


def test_training_leaves_the_vetoes_out_unless_asked_and_backtests_keep_every_rule():
    config = RiskConfig()
    assert config.for_env_mode("train").veto_enabled is False
    assert config.for_env_mode("backtest") is config and config.for_env_mode("paper") is config
    assert RiskConfig(vetoes_while_training=True).for_env_mode("train").veto_enabled is True
    assert RiskConfig(veto_enabled=False).for_env_mode("backtest").veto_enabled is False  # the ablation's switch still wins

    streak = context(consecutive_losses=5)
    assert RiskRules(config.for_env_mode("train"), NQ_LIMITS).review(BUY, FLAT_MASK, streak).reason == ""
    assert RiskRules(config.for_env_mode("backtest"), NQ_LIMITS).review(BUY, FLAT_MASK, streak).reason == "consecutive_losses"
    limit_hit = context(daily_pnl=-1000.0)  # the account's own daily loss limit is not a veto: it holds in training
    assert RiskRules(config.for_env_mode("train"), NQ_LIMITS).review(BUY, FLAT_MASK, limit_hit).reason == "daily_loss_limit"
