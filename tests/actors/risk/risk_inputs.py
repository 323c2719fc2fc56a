"""Shared inputs for the risk tests: NQ limits, masks and a market context with overrides."""

import numpy as np

from actors.risk.rules import AccountLimits
from bus.messages import MarketContext

NQ_LIMITS = AccountLimits(daily_loss_limit_usd=1000.0, multiplier=20.0, tick_value=5.0, commission_per_side=2.5,
                          slippage_ticks=1.0, entry_contracts=1)
FLAT_MASK = np.array([True, True, True, False, False, False])
LONG_MASK = np.array([True, False, True, True, True, False])  # as the env masks a long: SELL closes it


def context(**overrides) -> MarketContext:
    """A flat NQ account mid-session; its last trades lost $100 in sum (so a low win rate halts unless overridden)."""
    values = dict(symbol="NQ", time_et="10:30", price=18000.0, trend="up", rsi=55.0, adx=25.0, atr=10.0,
                  momentum=1.0, vwap_distance_pct=0.1, support=17950.0, resistance=18050.0, pattern="none",
                  volume_trend="flat", volatility_regime=1.0, position=0, contracts=0, entry_price=0.0,
                  unrealized_pnl=0.0, bars_in_position=0, trail_on=False, stop_at_break_even=False,
                  consecutive_losses=0, win_rate=0.5, recent_net_pnl=-100.0, balance=50000.0, drawdown_buffer=2500.0,
                  trailing_limit=2500.0, daily_pnl=0.0, minutes_to_close=300.0)
    values.update(overrides)
    return MarketContext(**values)
