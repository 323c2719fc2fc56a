"""One closed bar of market data and the rule for a bad one: the feed builds them, the paper env plays them.

Shared vocabulary: the feed's sources and bar builder and the env's paper session hold these six
fields, and the md.bar message (bus/messages.py ``Bar``) is an ``OHLCVBar`` with its symbol and
source, so the paper env plays the message itself.
"""

from __future__ import annotations

import math

import msgspec

OHLCV_COLUMNS = ("open", "high", "low", "close", "volume")
"""The price and volume columns of a bar frame, in this order."""


class OHLCVBar(msgspec.Struct, frozen=True):
    """One bar: [start_ns, start_ns + interval), stamped at its start (UTC ns)."""

    start_ns: int
    open: float
    high: float
    low: float
    close: float
    volume: float

    def merged(self, other: OHLCVBar, other_is_earlier: bool = False) -> OHLCVBar:
        """This bar extended by ``other`` (a later record, or an earlier one when ``other_is_earlier``)."""
        return msgspec.structs.replace(
            self,
            open=other.open if other_is_earlier else self.open,
            high=max(self.high, other.high),
            low=min(self.low, other.low),
            close=self.close if other_is_earlier else other.close,
            volume=self.volume + other.volume,
        )


def is_bad_bar(open_: float, high: float, low: float, close: float, volume: float) -> bool:
    """NaN/inf anywhere, a price <= 0, high < low, or volume < 0."""
    values = (open_, high, low, close, volume)
    if not all(math.isfinite(v) for v in values):
        return True
    return min(open_, high, low, close) <= 0 or high < low or volume < 0
