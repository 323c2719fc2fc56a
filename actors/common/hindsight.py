"""Hindsight labels of a decision step: the triple barrier (stop, target, time) for a long and a short.

At decision step t (the bar just closed), a long and a short are entered at the open of
bar t+1, with a stop ``stop_atr`` ATRs and a target ``target_atr`` ATRs away. Walking bars
t+1 .. t+H, the first barrier touched closes each side; a bar that touches both is read
as the stop first (the bar's path is unknown, so the pessimistic reading). A side that
touches neither exits at the close of bar t+H (the time barrier). The label is the side
that earns more after costs, HOLD when neither earns anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from actors.common.actions import BUY, HOLD, SELL


@dataclass(frozen=True, slots=True)
class BarrierSpec:
    horizon_bars: int
    stop_atr: float
    target_atr: float
    multiplier: float
    """Dollars per point per contract (NQ: 20)."""
    cost_per_trade_usd: float
    """Commission for both sides plus slippage on both fills, per contract."""


@dataclass(frozen=True, slots=True)
class SideOutcome:
    pnl_usd: float
    """Net of cost_per_trade_usd."""
    exit: str
    """stop | target | time."""
    bars_held: int


@dataclass(frozen=True, slots=True)
class HindsightLabel:
    action: int
    """BUY, SELL or HOLD: what the advice at this step should have been."""
    long: SideOutcome
    short: SideOutcome

    @property
    def pnl_usd(self) -> float:
        """P&L of the labelled action (0 for HOLD)."""
        return action_pnl_usd(self.action, self.long.pnl_usd, self.short.pnl_usd)


def action_pnl_usd(action: int, long_pnl_usd: float, short_pnl_usd: float) -> float:
    """What ``action`` at a flat step made in hindsight: the long's P&L for BUY, the short's for SELL, nothing else."""
    if action == BUY:
        return float(long_pnl_usd)
    if action == SELL:
        return float(short_pnl_usd)
    return 0.0


def triple_barrier_label(
    opens: Sequence[float], highs: Sequence[float], lows: Sequence[float], closes: Sequence[float],
    step: int, atr: float, spec: BarrierSpec,
) -> HindsightLabel | None:
    """The label of decision step ``step``; None while bar step+H is not known yet (or ATR is unusable)."""
    last = step + spec.horizon_bars
    if atr <= 0 or step < 0 or last >= len(closes):
        return None
    entry = float(opens[step + 1])
    window = range(step + 1, last + 1)
    long = _walk(entry, +1, window, highs, lows, closes, atr, spec)
    short = _walk(entry, -1, window, highs, lows, closes, atr, spec)
    best = max((long.pnl_usd, BUY), (short.pnl_usd, SELL))
    return HindsightLabel(best[1] if best[0] > 0 else HOLD, long, short)


def _walk(entry: float, side: int, window: range, highs, lows, closes, atr: float, spec: BarrierSpec) -> SideOutcome:
    stop = entry - side * spec.stop_atr * atr
    target = entry + side * spec.target_atr * atr
    for held, bar in enumerate(window, start=1):
        adverse = lows[bar] if side > 0 else highs[bar]
        favourable = highs[bar] if side > 0 else lows[bar]
        if (adverse - stop) * side <= 0:  # checked first: the pessimistic reading of a bar touching both
            return _side(entry, stop, side, "stop", held, spec)
        if (favourable - target) * side >= 0:
            return _side(entry, target, side, "target", held, spec)
    return _side(entry, float(closes[window[-1]]), side, "time", len(window), spec)


def _side(entry: float, exit_price: float, side: int, how: str, held: int, spec: BarrierSpec) -> SideOutcome:
    pnl = (exit_price - entry) * side * spec.multiplier - spec.cost_per_trade_usd
    return SideOutcome(round(pnl, 6), how, held)
