"""The bar builder: trades, ticks or finer bars in, closed bars of one timeframe out.

A bar covers [start, start + interval), is stamped at its start (UTC ns, aligned to the epoch,
so 5-minute bars start at :00, :05, ...) and is handed out once, when it has closed:
- a record for a later bar closes the open one;
- an input bar that reaches the end of its bucket closes it at once (1m bars into 1m bars pass
  straight through; the fifth 1m bar of a 5m bucket closes it);
- ``flush(now_ns)`` closes the open bar once the clock is past its end (a quiet market).

What the builder rejects or notices, each counted in ``counts``:
- ``bad``: NaN/inf, non-positive prices, high < low, negative volume (dropped);
- ``duplicates``: an input bar whose start was already taken, a trade whose id was already
  seen (or, without ids, the exact repeat of the previous trade) (dropped);
- ``out_of_order``: a record older than the newest one but still inside the open bar (merged);
- ``late``: a record for a bar already closed; ``late_policy`` decides: ``drop`` it, or
  ``amend``: hand out the closed bar again with the record merged (same start; counted ``amended``);
- ``gaps`` / ``gap_bars``: closed bars not followed by the next one (how many bars are missing
  is in ``gap_bars``; the last gap is in ``last_gap``).

Plain Python, no bus: the feed actor and the benchmark drive it directly.
"""

from __future__ import annotations

import math
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass

from actors.common.bars import OHLCVBar, is_bad_bar
from actors.common.seen import SeenKeys

LATE_POLICIES = ("drop", "amend")
MAX_REMEMBERED_TRADE_IDS = 100_000
_AMENDABLE_BARS = 64  # closed bars kept so that late records can amend them

_UNIT_NS = {"s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9, "w": 7 * 86400 * 10**9}


def timeframe_ns(timeframe: str) -> int:
    """``30s``, ``1m``, ``5m``, ``1h``, ``1d``, ``1w`` (ccxt's notation) -> nanoseconds."""
    match = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", timeframe)
    if not match or int(match.group(1)) <= 0:
        raise ValueError(f"timeframe must look like 30s, 1m, 5m, 1h, 1d or 1w, got {timeframe!r}")
    return int(match.group(1)) * _UNIT_NS[match.group(2)]


OHLCV = OHLCVBar
"""The feed's name for a closed bar (actors/common/bars.py)."""


class _OpenBar:
    """The bar being built, updated in place (a frozen OHLCV per trade would cost a copy each)."""

    __slots__ = ("start_ns", "open", "high", "low", "close", "volume")

    def __init__(self, bar: OHLCV) -> None:
        self.start_ns, self.open, self.high, self.low, self.close, self.volume = bar.start_ns, bar.open, bar.high, bar.low, bar.close, bar.volume

    def merge(self, other: OHLCV, other_is_earlier: bool) -> None:
        if other_is_earlier:
            self.open = other.open
        else:
            self.close = other.close
        self.high = max(self.high, other.high)
        self.low = min(self.low, other.low)
        self.volume += other.volume

    def frozen(self) -> OHLCV:
        return OHLCV(self.start_ns, self.open, self.high, self.low, self.close, self.volume)


@dataclass(frozen=True)
class Gap:
    after_start_ns: int
    """Start of the last bar before the gap."""
    missing_bars: int


class BarBuilder:
    def __init__(self, interval_ns: int, late_policy: str = "drop") -> None:
        if interval_ns <= 0:
            raise ValueError(f"interval_ns must be > 0, got {interval_ns}")
        if late_policy not in LATE_POLICIES:
            raise ValueError(f"late_policy must be one of {LATE_POLICIES}, got {late_policy!r}")
        self.interval_ns = interval_ns
        self.late_policy = late_policy
        self.counts: Counter[str] = Counter()
        self.last_gap: Gap | None = None
        self._open: _OpenBar | None = None
        self._open_newest_ns = 0  # newest record time inside the open bar (orders open/close)
        self._open_input_starts: set[int] = set()  # input bar starts taken into the open bar (duplicates)
        self._last_closed_start: int | None = None
        self._closed: OrderedDict[int, OHLCV] = OrderedDict()  # recent closed bars, for amend and duplicates
        self._closed_input_starts: OrderedDict[int, None] = OrderedDict()
        self._trade_ids = SeenKeys(MAX_REMEMBERED_TRADE_IDS)
        self._last_trade: tuple[int, float, float] | None = None

    def bucket(self, ts_ns: int) -> int:
        return ts_ns - ts_ns % self.interval_ns

    # ------------------------------------------------------------------ inputs

    def add_trade(self, ts_ns: int, price: float, size: float, trade_id: object = None) -> list[OHLCV]:
        """One trade (or tick: size may be 0). Returns the bars it closed (or amended)."""
        if not (0 < price < math.inf and 0 <= size < math.inf):  # NaN fails every comparison
            self.counts["bad"] += 1
            return []
        if self._is_duplicate_trade(ts_ns, price, size, trade_id):
            self.counts["duplicates"] += 1
            return []
        self.counts["records"] += 1
        bar = self._open
        if bar is not None and ts_ns >= self._open_newest_ns and ts_ns - bar.start_ns < self.interval_ns:
            # The common case, kept cheap: a newer trade inside the open bar.
            bar.close = price
            if price > bar.high:
                bar.high = price
            elif price < bar.low:
                bar.low = price
            bar.volume += size
            self._open_newest_ns = ts_ns
            return []
        return self._take(OHLCV(self.bucket(ts_ns), price, price, price, price, size), ts_ns, ts_ns)

    def add_bar(self, start_ns: int, open_: float, high: float, low: float, close: float, volume: float, interval_ns: int = 0) -> list[OHLCV]:
        """One finished input bar of ``interval_ns`` (0 = the builder's own; it must divide it).
        Returns the bars it closed (or amended)."""
        if is_bad_bar(open_, high, low, close, volume):
            self.counts["bad"] += 1
            return []
        if self._is_duplicate_bar(start_ns):
            self.counts["duplicates"] += 1
            return []
        self.counts["records"] += 1
        record = OHLCV(self.bucket(start_ns), open_, high, low, close, volume)
        closed = self._take(record, start_ns, start_ns)
        if self._open is not None and self._open.start_ns == record.start_ns:
            self._open_input_starts.add(start_ns)
            input_end = start_ns + (interval_ns or self.interval_ns)
            if input_end >= record.start_ns + self.interval_ns:
                closed.extend(self._close_open())  # the input bar finishes the bucket: no need to wait
        return closed

    def flush(self, now_ns: int) -> list[OHLCV]:
        """Close the open bar if ``now_ns`` is at or past its end (no later record may come to close it)."""
        if self._open is not None and now_ns >= self._open.start_ns + self.interval_ns:
            return self._close_open()
        return []

    # ------------------------------------------------------------------ machinery

    def _is_duplicate_trade(self, ts_ns: int, price: float, size: float, trade_id: object) -> bool:
        if trade_id is not None:
            return not self._trade_ids.first_time(trade_id)
        # Without ids only an exact repeat of the previous trade is taken for a resend.
        key = (ts_ns, price, size)
        if key == self._last_trade:
            return True
        self._last_trade = key
        return False

    def _is_duplicate_bar(self, start_ns: int) -> bool:
        return start_ns in self._open_input_starts or start_ns in self._closed_input_starts

    def _take(self, record: OHLCV, ts_ns: int, order_ns: int) -> list[OHLCV]:
        if self._last_closed_start is not None and record.start_ns <= self._last_closed_start:
            return self._late(record)
        if self._open is None:
            self._start(record, order_ns)
            return []
        if record.start_ns == self._open.start_ns:
            earlier = order_ns < self._open_newest_ns
            if earlier:
                self.counts["out_of_order"] += 1
            self._open.merge(record, other_is_earlier=earlier)
            self._open_newest_ns = max(self._open_newest_ns, order_ns)
            return []
        if record.start_ns < self._open.start_ns:
            # Older than the open bar but newer than the last closed one: a bar nobody closed yet.
            # Handing it out now would break the time order, so it counts as late.
            return self._late(record)
        closed = self._close_open()
        self._start(record, order_ns)
        return closed

    def _start(self, record: OHLCV, order_ns: int) -> None:
        if self._last_closed_start is not None:
            missing = (record.start_ns - self._last_closed_start) // self.interval_ns - 1
            if missing > 0:
                self.counts["gaps"] += 1
                self.counts["gap_bars"] += missing
                self.last_gap = Gap(after_start_ns=self._last_closed_start, missing_bars=missing)
        self._open = _OpenBar(record)
        self._open_newest_ns = order_ns
        self._open_input_starts = set()

    def _close_open(self) -> list[OHLCV]:
        assert self._open is not None
        bar = self._open.frozen()
        self._open = None
        self._last_closed_start = bar.start_ns
        self._remember(self._closed, bar.start_ns, bar)
        for start in self._open_input_starts:
            self._remember(self._closed_input_starts, start, None)
        self._open_input_starts = set()
        self.counts["bars"] += 1
        return [bar]

    def _late(self, record: OHLCV) -> list[OHLCV]:
        self.counts["late"] += 1
        closed = self._closed.get(record.start_ns)
        if self.late_policy == "drop" or closed is None:
            self.counts["late_dropped"] += 1
            return []
        amended = closed.merged(record, other_is_earlier=False)
        self._closed[record.start_ns] = amended
        self.counts["amended"] += 1
        return [amended]

    @staticmethod
    def _remember(store: OrderedDict, key: int, value) -> None:
        store[key] = value
        while len(store) > _AMENDABLE_BARS:
            store.popitem(last=False)
