"""Account rule presets on hand-made bars: intraday vs end-of-day trailing, the lock, the daily pause, the target."""

from __future__ import annotations

import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.common.market_settings import ACCOUNT_PRESETS, AccountConfig

WIDE = {"stop_loss_atr": 100.0, "take_profit_atr": 100.0}  # stops and targets out of reach
FLAT = (20_000.0, 20_002.0, 19_998.0, 20_000.0)


def spike_then_dip() -> list[tuple[float, float, float, float]]:
    """Entry at bar 1's open (20000.25 with slippage); bar 1 spikes to +150 points intrabar and closes +10;
    bar 2 dips to -10 points."""
    return [FLAT, (20_000.0, 20_150.0, 19_999.0, 20_010.0), (20_010.0, 20_012.0, 19_990.0, 19_995.0)] + [FLAT] * 5


def test_every_preset_names_its_source_and_date_and_a_key_overrides_its_preset():
    for name in ACCOUNT_PRESETS:
        account = AccountConfig(preset=name)
        assert account.name == name and "20" in account.source  # a year in the source line

    account = AccountConfig(preset="apex_eod_50k", trailing_drawdown=2_000.0)

    assert (account.trailing, account.trailing_drawdown, account.profit_target) == ("end_of_day", 2_000.0, 3_000.0)
    assert AccountConfig(start_balance=100_000.0).drawdown_lock_balance == 100_100.0  # the lock keeps "start + 100"


def test_the_default_account_is_the_seeds_legacy_apex_50k():
    account = AccountConfig()

    assert (account.preset, account.trailing, account.start_balance, account.trailing_drawdown) == ("apex_legacy_50k", "intraday", 50_000.0, 2_500.0)
    assert (account.drawdown_lock_balance, account.flat_time_et, account.max_contracts) == (50_100.0, "16:59", 10)


def test_an_intrabar_excursion_breaches_under_intraday_trailing(env_over, make_bars):
    env = env_over(make_bars(spike_then_dip()), account=AccountConfig(preset="apex_intraday_50k"), **WIDE)

    env.step(BUY)

    # the high (+$2,995 open profit) raised the peak; the threshold stopped at the lock, start + 100
    assert env.account.peak == pytest.approx(49_997.5 + (20_150.0 - 20_000.25) * 20)
    assert env.account.threshold == 50_100.0
    _, _, terminated, _, info = env.step(HOLD)
    assert terminated and info["closed_trades"][0].exit_reason == "drawdown"
    assert info["evaluation"] == "failed"


def test_the_same_excursion_does_not_breach_under_end_of_day_trailing(env_over, make_bars):
    env = env_over(make_bars(spike_then_dip()), account=AccountConfig(preset="apex_eod_50k"), **WIDE)

    env.step(BUY)
    _, _, terminated, _, info = env.step(HOLD)

    assert not terminated and info["evaluation"] == "open"
    assert env.account.threshold == 47_500.0


def test_end_of_day_trailing_takes_the_closing_balance_at_the_trading_day_reset(env_over, make_bars):
    rows = [FLAT, FLAT, (20_000.0, 20_102.0, 19_998.0, 20_100.0), (20_100.0, 20_102.0, 20_098.0, 20_100.0)] + [FLAT] * 6
    account = AccountConfig(preset="apex_eod_50k", trading_day_reset_et="10:06")  # bars start at 10:00 ET
    env = env_over(make_bars(rows), account=account, **WIDE)

    env.step(HOLD)
    env.step(BUY)  # fills at bar 2's open: 20000.25
    env.step(SELL)  # fills at bar 3's open: 20099.75
    balance = env.account.balance
    while env.bar < 5:
        env.step(HOLD)
    assert env.account.threshold == 47_500.0  # unchanged during the day, whatever the balance did
    env.step(HOLD)  # bar 6 starts at 10:06: a new trading day

    assert balance == pytest.approx(50_000.0 + (20_099.75 - 20_000.25) * 20 - 5.0)
    assert env.account.threshold == pytest.approx(balance - 2_500.0)


def test_the_daily_loss_limit_pauses_the_day_without_failing_the_evaluation(env_over, make_bars):
    falling = [(20_000.0 - 20 * k, 20_002.0 - 20 * k, 19_978.0 - 20 * k, 19_980.0 - 20 * k) for k in range(4)]
    rows = [FLAT] + falling + [(19_920.0, 19_922.0, 19_918.0, 19_920.0)] * 8
    account = AccountConfig(preset="apex_eod_50k", trading_day_reset_et="10:08")
    env = env_over(make_bars(rows), account=account, **WIDE)

    results = [env.step(BUY)] + [env.step(HOLD) for _ in range(3)]

    closed = [trade for result in results for trade in result[4]["closed_trades"]]
    assert [trade.exit_reason for trade in closed] == ["daily_loss_limit"]
    assert not any(result[2] for result in results) and results[-1][4]["evaluation"] == "open"
    assert not env.action_masks()[BUY]  # paused for the rest of the trading day
    while env.bar < 8:
        env.step(HOLD)
    assert env.action_masks()[BUY]  # bar 8 (10:08) opens a new trading day: entries again

def test_the_evaluation_passes_on_reaching_the_profit_target_flat(env_over, make_bars):
    rows = [FLAT, FLAT, (20_000.0, 20_160.0, 19_998.0, 20_155.0), (20_155.0, 20_157.0, 20_150.0, 20_155.0)] + [FLAT] * 4
    env = env_over(make_bars(rows), account=AccountConfig(preset="apex_eod_50k"), **WIDE)
    env.end_episode_on_pass = True

    env.step(HOLD)
    _, _, _, _, in_trade = env.step(BUY)
    _, _, terminated, truncated, info = env.step(SELL)

    assert in_trade["evaluation"] == "open"  # open profit alone does not pass
    assert info["evaluation"] == "passed" and (terminated, truncated) == (False, True)
    record = env.evaluation.record()
    assert (record.outcome, record.reason, record.trading_days) == ("passed", "profit_target", 1)
    assert record.net_pnl_usd >= 3_000.0


def test_the_none_preset_has_no_flat_time_and_no_trailing_drawdown(env_over, make_bars):
    rows = [FLAT] + [(20_000.0 - 50 * k, 20_002.0 - 50 * k, 19_948.0 - 50 * k, 19_950.0 - 50 * k) for k in range(6)]
    env = env_over(make_bars(rows, start_et="2024-03-04 16:55"), account=AccountConfig(preset="none"), **WIDE)

    results = [env.step(BUY)] + [env.step(HOLD) for _ in range(4)]

    assert not any(result[2] for result in results)  # -$5,000 and holding through 16:59: no breach, no forced flat
    assert env.position is not None and env.account.threshold == 0.0


def test_the_account_sums_the_net_pnl_of_its_last_ten_trades():
    from actors.env.account import ApexAccount

    account = ApexAccount(AccountConfig())
    assert account.recent_net_pnl == 0.0
    for pnl in [-50.0] * 7 + [400.0] * 3 + [-10.0]:  # the first -50 drops out of the window of ten
        account.record_result(pnl)
    assert account.recent_net_pnl == -50.0 * 6 + 400.0 * 3 - 10.0
    assert account.win_rate == 0.3
