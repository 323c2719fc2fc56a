"""Shared inputs for the risk tests: NQ limits, masks and a market context with overrides."""

import numpy as np

from actors.risk.rules import AccountLimits
from bus.messages import MarketContext
from tests.contexts import market_context

NQ_LIMITS = AccountLimits(daily_loss_limit_usd=1000.0, multiplier=20.0, tick_value=5.0, commission_per_side=2.5,
                          slippage_ticks=1.0, entry_contracts=1)
FLAT_MASK = np.array([True, True, True, False, False, False])
LONG_MASK = np.array([True, False, True, True, True, False])  # as the env masks a long: SELL closes it


def context(**overrides) -> MarketContext:
    """A flat NQ account mid-session; its last trades lost $100 in sum (so a low win rate halts unless overridden)."""
    return market_context(**{"recent_net_pnl": -100.0, **overrides})
