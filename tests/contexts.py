"""One market context for the tests that need a ``MarketContext`` (risk, dashboard, fusion, policy)."""

from bus.messages import MarketContext


def market_context(**overrides) -> MarketContext:
    """A flat NQ account mid-session at 18,000 with nothing special going on; ``overrides`` set any field."""
    values = dict(symbol="NQ", time_et="10:30", price=18000.0, trend="up", rsi=55.0, adx=25.0, atr=10.0,
                  momentum=1.0, vwap_distance_pct=0.1, support=17950.0, resistance=18050.0, pattern="none",
                  volume_trend="flat", volatility_regime=1.0, position=0, contracts=0, entry_price=0.0,
                  unrealized_pnl=0.0, bars_in_position=0, trail_on=False, stop_at_break_even=False,
                  consecutive_losses=0, win_rate=0.5, balance=50000.0, drawdown_buffer=2500.0,
                  trailing_limit=2500.0, daily_pnl=0.0, minutes_to_close=300.0)
    values.update(overrides)
    return MarketContext(**values)
