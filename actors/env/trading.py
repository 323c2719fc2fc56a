"""One position's life: entry with ATR stop and target, stop management, fills, intrabar exits.

Fill rules (all prices in points):
- Market orders (entries, signal exits, forced-flat, episode-end and drawdown liquidations)
  and stop exits fill ``slippage`` against the trader; a bar that opens beyond the stop
  fills at that open (minus slippage): a gap is never filled at the stop price.
- Take-profit is a limit order: it fills at the target, or at the open when the bar
  opens beyond it.
- Within one bar the adverse side is assumed to trade first: when a bar touches both the
  stop and the target, the stop fills (conservative, no look inside the bar).
- Commission is charged per contract per side at entry and at exit.
"""

from __future__ import annotations

from dataclasses import dataclass

from actors.common.instruments import InstrumentSpec


@dataclass(frozen=True)
class Trade:
    """A closed trade; ``pnl_usd`` is net of both commissions and of slippage."""

    trade_id: int
    side: int
    contracts: int
    entry_bar: int
    exit_bar: int
    entry_ns: int
    exit_ns: int
    entry_price: float
    exit_price: float
    pnl_usd: float
    commission_usd: float
    bars_held: int
    exit_reason: str
    mae_points: float
    mfe_points: float


@dataclass(slots=True, eq=False)
class Position:
    """An open position. ``stop_kind`` says what placed the stop: stop | break_even | trail."""

    trade_id: int
    side: int
    contracts: int
    entry_price: float
    entry_bar: int
    entry_ns: int
    stop: float
    target: float
    entry_commission: float
    stop_kind: str = "stop"
    trail_on: bool = False
    bars_held: int = 0
    mae_points: float = 0.0
    mfe_points: float = 0.0

    @property
    def at_break_even(self) -> bool:
        return self.side * (self.stop - self.entry_price) >= 0

    def unrealized_usd(self, price: float, multiplier: float) -> float:
        return self.side * (price - self.entry_price) * multiplier * self.contracts

    def can_move_stop_to_break_even(self, price: float) -> bool:
        """Only when the price is beyond the entry (else the new stop would be hit at once) and the stop is behind it."""
        return self.side * (price - self.entry_price) > 0 and not self.at_break_even

    def move_stop_to_break_even(self) -> None:
        self.stop = self.entry_price
        self.stop_kind = "break_even"

    def trail(self, close: float, distance: float, tick_size: float) -> None:
        """Ratchet the stop to ``distance`` behind the close (never loosen it)."""
        candidate = round_to_tick(close - self.side * distance, tick_size)
        if self.side * (candidate - self.stop) > 0:
            self.stop = candidate
            self.stop_kind = "trail"

    def track_excursions(self, high: float, low: float) -> None:
        favourable, adverse = (high - self.entry_price, self.entry_price - low) if self.side > 0 else (self.entry_price - low, high - self.entry_price)
        if favourable > self.mfe_points:
            self.mfe_points = favourable
        if adverse > self.mae_points:
            self.mae_points = adverse


def round_to_tick(price: float, tick_size: float) -> float:
    return round(price / tick_size) * tick_size


def market_fill(price: float, order_side: int, instrument: InstrumentSpec) -> float:
    """A market order's fill: ``order_side`` +1 buys (pays up), -1 sells (receives less)."""
    return price + order_side * instrument.slippage_points


def open_position(trade_id: int, side: int, contracts: int, open_price: float, atr_points: float, bar: int, bar_ns: int, stop_atr: float, target_atr: float, instrument: InstrumentSpec) -> Position:
    entry = market_fill(open_price, side, instrument)
    tick = instrument.tick_size
    stop_distance = max(stop_atr * atr_points, tick)
    target_distance = max(target_atr * atr_points, tick)
    stop = round_to_tick(entry - side * stop_distance, tick)
    target = round_to_tick(entry + side * target_distance, tick)
    return Position(trade_id, side, contracts, entry, bar, bar_ns, stop, target, contracts * instrument.commission_per_side)


def bar_exit(position: Position, open_: float, high: float, low: float, breach_price: float, instrument: InstrumentSpec, at_open: bool) -> tuple[float, str] | None:
    """The exit this bar forces on ``position`` (fill price, reason), or None.

    ``breach_price`` is where equity touches the trailing-drawdown threshold; whichever
    of stop and breach lies nearer the entry trades first on an adverse move. With
    ``at_open`` the position was held into this bar, so the open itself can gap through.
    """
    side = position.side
    slip = instrument.slippage_points
    stop = position.stop
    adverse_level = stop if side * (stop - breach_price) >= 0 else breach_price
    reason = position.stop_kind if adverse_level == stop else "drawdown"
    if at_open and side * (open_ - adverse_level) <= 0:
        return open_ - side * slip, reason
    if at_open and side * (open_ - position.target) >= 0:
        return open_, "target"
    adverse_extreme = low if side > 0 else high
    if side * (adverse_extreme - adverse_level) <= 0:
        return adverse_level - side * slip, reason
    favourable_extreme = high if side > 0 else low
    if side * (favourable_extreme - position.target) >= 0:
        return position.target, "target"
    return None


def close_position(position: Position, exit_price: float, exit_bar: int, exit_ns: int, reason: str, instrument: InstrumentSpec) -> Trade:
    exit_commission = position.contracts * instrument.commission_per_side
    gross = position.unrealized_usd(exit_price, instrument.multiplier)
    return Trade(
        trade_id=position.trade_id,
        side=position.side,
        contracts=position.contracts,
        entry_bar=position.entry_bar,
        exit_bar=exit_bar,
        entry_ns=position.entry_ns,
        exit_ns=exit_ns,
        entry_price=position.entry_price,
        exit_price=exit_price,
        pnl_usd=gross - position.entry_commission - exit_commission,
        commission_usd=position.entry_commission + exit_commission,
        bars_held=position.bars_held,
        exit_reason=reason,
        mae_points=position.mae_points,
        mfe_points=position.mfe_points,
    )
