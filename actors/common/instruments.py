"""Futures contract specifications (docs/architecture.md, environment facts) and the custom-instrument fallback.

Shared vocabulary: the env fills orders with a spec and risk sizes its guard with the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class InstrumentSettings(Protocol):
    """The [instrument] config section as resolve_instrument reads it (actors/common/market_settings.py InstrumentConfig fits)."""

    @property
    def symbol(self) -> str: ...
    @property
    def tick_size(self) -> float: ...
    @property
    def multiplier(self) -> float: ...
    @property
    def commission_per_side(self) -> float: ...
    @property
    def slippage_ticks(self) -> float: ...



@dataclass(frozen=True)
class InstrumentSpec:
    symbol: str
    tick_size: float
    """Points per tick."""
    multiplier: float
    """Dollars per point per contract."""
    commission_per_side: float
    """Dollars per contract per side."""
    slippage_ticks: float
    """Ticks lost on every market or stop fill."""

    @property
    def tick_value(self) -> float:
        return self.tick_size * self.multiplier

    @property
    def slippage_points(self) -> float:
        return self.slippage_ticks * self.tick_size


# Commissions: typical retail all-in round-turn halves (E-minis $2.50/side as in the source; micros $0.62).
INSTRUMENTS: dict[str, InstrumentSpec] = {
    spec.symbol: spec
    for spec in (
        InstrumentSpec("NQ", 0.25, 20.0, 2.50, 1.0),
        InstrumentSpec("ES", 0.25, 50.0, 2.50, 1.0),
        InstrumentSpec("YM", 1.0, 5.0, 2.50, 1.0),
        InstrumentSpec("RTY", 0.10, 50.0, 2.50, 1.0),
        InstrumentSpec("MNQ", 0.25, 2.0, 0.62, 1.0),
        InstrumentSpec("MES", 0.25, 5.0, 0.62, 1.0),
        InstrumentSpec("M2K", 0.10, 5.0, 0.62, 1.0),
        InstrumentSpec("MYM", 1.0, 0.50, 0.62, 1.0),
    )
}


def resolve_instrument(config: InstrumentSettings) -> InstrumentSpec:
    """The spec for ``config.symbol``: the built-in row with any non-default override applied.

    An unknown symbol must give tick_size and multiplier; its commission and slippage
    default to $0 and 1 tick when not given.
    """
    symbol = config.symbol.strip().upper()
    base = INSTRUMENTS.get(symbol)
    if base is None:
        if config.tick_size <= 0 or config.multiplier <= 0:
            known = ", ".join(INSTRUMENTS)
            raise ValueError(
                f"instrument.symbol: {symbol!r} is not built in ({known}); set instrument.tick_size and instrument.multiplier"
            )
        base = InstrumentSpec(symbol, config.tick_size, config.multiplier, 0.0, 1.0)
    return InstrumentSpec(
        symbol=symbol,
        tick_size=config.tick_size if config.tick_size > 0 else base.tick_size,
        multiplier=config.multiplier if config.multiplier > 0 else base.multiplier,
        commission_per_side=config.commission_per_side if config.commission_per_side >= 0 else base.commission_per_side,
        slippage_ticks=config.slippage_ticks if config.slippage_ticks >= 0 else base.slippage_ticks,
    )
