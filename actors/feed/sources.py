"""Market-data sources of the feed actor, behind one small interface.

A source is anything with
- ``name``: what md.bar's ``source`` field says (``replay``, ``synthetic``, ``ccxt:binance``);
- ``records()``: an async iterator of ``SourceBar`` (a finished bar of some interval) and/or
  ``SourceTrade`` (a trade or tick) records, in the order they arrive; it ends when the source
  has nothing more (a file played to its end) and never for a live one;
- ``counters``: a dict of counts the source keeps (``reconnects``, ...), reported in sys.stats;
- ``async close()``: release connections.

The feed actor puts every record through the bar builder (actors/feed/bars.py), which drops
bad records and duplicates, counts late ones and gaps, and closes bars, so a source only reads
and reconnects. A source for CME futures fits in about a page: Databento's live client
(``databento.Live``, ``ohlcv-1m`` or ``trades`` schema) yields bars or trades with ns timestamps;
Interactive Brokers (ib_async's ``reqRealTimeBars`` 5-second bars or ``reqTickByTickData``)
the same. Errors a source cannot recover from it raises: the actor fails and the supervisor restarts it.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections import Counter
from typing import Any, AsyncIterator, Callable, Protocol

import msgspec
import numpy as np
import pandas as pd

from actors.common.bars import OHLCVBar
from actors.feed.bars import timeframe_ns
from actors.feed.config import FeedConfig


class SourceBar(OHLCVBar, frozen=True):
    """A finished bar of some interval, as a source hands it to the bar builder."""

    interval_ns: int
    due_ns: int = 0
    """Wall-clock time (time.time_ns) the bar was due for publication; lag is measured from it. 0 = its end."""
    history: bool = False
    """A warm-up bar from before the replay's start: published at once, flagged on md.bar."""


class SourceTrade(msgspec.Struct, frozen=True):
    """A trade or tick, as a source hands it to the bar builder (which drops a repeated ``trade_id``)."""

    ts_ns: int
    price: float
    size: float
    trade_id: object = None
    due_ns: int = 0


Record = SourceBar | SourceTrade


class Source(Protocol):
    name: str
    counters: Counter[str]

    def records(self) -> AsyncIterator[Record]: ...

    async def close(self) -> None: ...


def bars_from_frame(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(start_ns int64 [n], OHLCV float64 [n, 5]) of a frame indexed by UTC bar start."""
    index = pd.DatetimeIndex(frame.index)
    starts = (index.tz_convert("UTC") if index.tz is not None else index).as_unit("ns").asi8
    values = frame[["open", "high", "low", "close", "volume"]].to_numpy(dtype=np.float64)
    return starts, values


def infer_interval_ns(starts: np.ndarray) -> int:
    """The usual spacing of bar starts (the median positive step); 1 minute for fewer than two bars."""
    steps = np.diff(starts)
    steps = steps[steps > 0]
    return int(np.median(steps)) if len(steps) else 60 * 10**9


class PacedBars:
    """Bars of a frame, one by one, spaced in wall-clock time: ``seconds_per_bar`` fixed, or the
    bars' own spacing divided by ``speed``; 0 for either = as fast as the consumer takes them."""

    def __init__(self, name: str, frame: pd.DataFrame, *, speed: float = 0.0, seconds_per_bar: float = 0.0,
                 history: pd.DataFrame | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.name = name
        self.counters: Counter[str] = Counter()
        self.starts, self.values = bars_from_frame(frame)
        self.history_starts, self.history_values = bars_from_frame(history) if history is not None else (self.starts[:0], self.values[:0])
        """Warm-up bars before the first played one, handed out first, at once, flagged ``history``."""
        self.interval_ns = infer_interval_ns(np.concatenate([self.history_starts, self.starts]))
        self.speed = speed
        self.seconds_per_bar = seconds_per_bar
        self.short_history: ShortHistory | None = None
        self._clock = clock
        self._sleep = sleep

    def _offset_secs(self, i: int) -> float:
        """Wall-clock seconds after the first bar at which bar i is due (its close, replayed)."""
        if self.seconds_per_bar > 0:
            return i * self.seconds_per_bar
        if self.speed > 0:
            return (self.starts[i] - self.starts[0]) / 1e9 / self.speed
        return 0.0

    async def records(self) -> AsyncIterator[Record]:
        for start, (o, h, l, c, v) in zip(self.history_starts, self.history_values):
            await asyncio.sleep(0)
            yield SourceBar(int(start), float(o), float(h), float(l), float(c), float(v), self.interval_ns, due_ns=time.time_ns(), history=True)
        t0 = self._clock()
        wall0_ns = time.time_ns()
        for i in range(len(self.starts)):
            offset = self._offset_secs(i)
            wait = t0 + offset - self._clock()
            if wait > 0:
                await self._sleep(wait)
            else:
                await asyncio.sleep(0)  # as fast as possible still lets the actor's loop breathe
            o, h, l, c, v = self.values[i]
            due = wall0_ns + int(offset * 1e9) if offset else time.time_ns()
            yield SourceBar(int(self.starts[i]), float(o), float(h), float(l), float(c), float(v), self.interval_ns, due_ns=due)

    async def close(self) -> None:
        pass


class ShortHistory(msgspec.Struct, frozen=True):
    """A replay's file had fewer bars before the start than the warm-up asked for."""

    found: int
    needed: int
    start: str

    def message(self) -> str:
        return (f"the file has {self.found} bars before {self.start}, the warm-up needs {self.needed}: "
                f"the first {self.needed - self.found} bars from the start warm up instead of deciding")


def replay_source(path: str, *, speed: float, start: str = "", timezone: str = "America/New_York", warmup_bars: int = 0) -> PacedBars:
    """A CSV/Parquet file of bars (the env's loader: columns detected, repairs counted) played at ``speed`` from
    ``start``; the ``warmup_bars`` bars before ``start`` come first as history (``short_history`` says when there are fewer)."""
    from actors.common.bar_files import load_bars

    frame, report = load_bars(path, timezone=timezone)
    history = None
    short = None
    if start:
        stamp = pd.Timestamp(start)
        stamp = stamp.tz_localize(timezone) if stamp.tzinfo is None else stamp
        before = frame.index < stamp.tz_convert("UTC")
        history = frame[before].iloc[-warmup_bars:] if warmup_bars else None
        if warmup_bars and int(before.sum()) < warmup_bars:
            short = ShortHistory(found=int(before.sum()), needed=warmup_bars, start=stamp.isoformat())
        frame = frame[~before]
    if not len(frame):
        raise ValueError(f"{path}: no bars at or after {start!r}" if start else f"{path}: no bars")
    source = PacedBars("replay", frame, speed=speed, history=history)
    source.short_history = short
    source.counters.update({f"file_{kind}": count for kind, count in report.as_dict().items() if count})
    return source


def synthetic_source(*, days: int, seed: int, pace_secs: float, start_price: float, start_date: str, tick_size: float = 0.25) -> PacedBars:
    """The env's seeded NQ-like generator, a bar every ``pace_secs`` of wall clock."""
    from actors.common.synthetic import generate_bars

    frame = generate_bars(days=days, seed=seed, start_price=start_price, start_date=start_date, tick_size=tick_size)
    return PacedBars("synthetic", frame, seconds_per_bar=pace_secs)


# --------------------------------------------------------------------------- ccxt


def _ccxt_errors():
    import ccxt

    retry = (ccxt.NetworkError, ccxt.ExchangeError)
    # Errors that no retry fixes: a wrong symbol, key or permission, an unsupported call.
    fatal = (ccxt.AuthenticationError, ccxt.PermissionDenied, ccxt.BadSymbol, ccxt.NotSupported, ccxt.AccountSuspended)
    return retry, fatal


def make_exchange(exchange_id: str, *, market_type: str = "", api_key_env: str = "", secret_env: str = ""):
    """A ccxt async exchange with its rate limiter on; the API key comes only from the environment."""
    import ccxt.async_support as ccxt_async

    if not hasattr(ccxt_async, exchange_id):
        raise ValueError(f"ccxt has no exchange {exchange_id!r}")
    options: dict[str, Any] = {"enableRateLimit": True}
    if market_type:
        options["options"] = {"defaultType": market_type}
    key = os.environ.get(api_key_env, "") if api_key_env else ""
    if key:
        options["apiKey"] = key
        options["secret"] = os.environ.get(secret_env, "") if secret_env else ""
    return getattr(ccxt_async, exchange_id)(options)


class CcxtSource:
    """Polls ``fetch_ohlcv`` and yields each candle once, when it has closed.

    ccxt's last candle is still forming: a candle is taken only once ``now >= start + interval``.
    Polls happen just after a candle's end (+ ``ccxt_close_delay_secs``), or every ``ccxt_poll_secs``, and
    never closer than the exchange's ``rateLimit``. A ccxt NetworkError or ExchangeError counts a
    reconnect and waits ``ccxt_backoff_secs``, doubled per failure in a row up to ``ccxt_backoff_max_secs``;
    the candles missed meanwhile come with the next page (asked ``since`` the last one taken).
    ``exchange`` may be any object with ``fetch_ohlcv`` (sync or async) and ``rateLimit`` (tests inject one).
    The timing settings are the [feed] section's ``ccxt_*`` keys, read from ``feed``.
    """

    def __init__(self, exchange, symbol: str, feed: FeedConfig, *, page_limit: int = 100,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.exchange = exchange
        self.name = f"ccxt:{getattr(exchange, 'id', type(exchange).__name__)}"
        self.symbol = symbol
        self.timeframe = feed.timeframe
        self.interval_ns = timeframe_ns(feed.timeframe)
        self.feed = feed
        self.page_limit = page_limit
        self.counters: Counter[str] = Counter()
        self.last_error = ""
        self._clock = clock
        self._sleep = sleep
        self._last_start_ms: int | None = None
        self._last_request = float("-inf")

    @property
    def rate_limit_secs(self) -> float:
        return float(getattr(self.exchange, "rateLimit", 0) or 0) / 1000.0

    async def _fetch(self, since_ms: int | None, limit: int) -> list:
        # Respect the exchange's rate limit ourselves too: an injected or sync exchange has no limiter.
        wait = self._last_request + self.rate_limit_secs - self._clock()
        if wait > 0:
            await self._sleep(wait)
        self._last_request = self._clock()
        self.counters["requests"] += 1
        result = self.exchange.fetch_ohlcv(self.symbol, self.timeframe, since=since_ms, limit=limit)
        return list(await result if inspect.isawaitable(result) else result)

    async def fetch_closed(self) -> list[SourceBar]:
        """One poll: the candles that closed since the last one taken (the first poll: ``ccxt_history_bars`` of them)."""
        first_poll = self._last_start_ms is None
        if first_poll:
            since, limit = None, self.feed.ccxt_history_bars + 2
        else:
            since, limit = self._last_start_ms + 1, self.page_limit
        candles = await self._fetch(since, limit)
        now_ms = self._clock() * 1000.0
        interval_ms = self.interval_ns // 10**6
        closed = [c for c in candles if c and c[0] + interval_ms <= now_ms]
        self.counters["forming_skipped"] += len(candles) - len(closed)
        if self._last_start_ms is None:
            history = self.feed.ccxt_history_bars
            closed = closed[-history:] if history else []
            newest = max((c[0] for c in candles if c and c[0] + interval_ms <= now_ms), default=None)
            self._last_start_ms = newest if newest is not None else int(now_ms // interval_ms * interval_ms) - interval_ms
        else:
            # Pages overlap when an exchange ignores ``since``; only newer candles are news.
            closed = [c for c in closed if c[0] > self._last_start_ms]
        if closed:
            self._last_start_ms = max(self._last_start_ms, max(int(c[0]) for c in closed))
        return [self._to_bar(c, history=first_poll) for c in closed]  # the first poll's candles: a warm-up history

    def _to_bar(self, candle, history: bool = False) -> SourceBar:
        start_ms, o, h, l, c, v = candle[:6]
        start_ns = int(start_ms) * 10**6
        volume = 0.0 if v is None else _num(v)  # some exchanges leave an empty candle's volume out
        return SourceBar(start_ns, _num(o), _num(h), _num(l), _num(c), volume, self.interval_ns, due_ns=start_ns + self.interval_ns, history=history)

    def _next_poll_in(self) -> float:
        if self.feed.ccxt_poll_secs > 0:
            wait = self.feed.ccxt_poll_secs
        else:
            interval = self.interval_ns / 1e9
            now = self._clock()
            wait = (now // interval + 1) * interval + self.feed.ccxt_close_delay_secs - now
            if wait > interval:  # still within the delay after the last close
                wait -= interval
        return max(wait, self.rate_limit_secs)

    async def records(self) -> AsyncIterator[Record]:
        retry, fatal = _ccxt_errors()
        failures = 0
        while True:
            try:
                bars = await self.fetch_closed()
            except fatal:
                raise
            except retry as exc:
                failures += 1
                self.counters["reconnects"] += 1
                self.last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
                await self._sleep(min(self.feed.ccxt_backoff_secs * 2 ** (failures - 1), self.feed.ccxt_backoff_max_secs))
                continue
            failures = 0
            for bar in bars:
                yield bar
            await self._sleep(self._next_poll_in())

    async def close(self) -> None:
        closer = getattr(self.exchange, "close", None)
        if closer is not None:
            result = closer()
            if inspect.isawaitable(result):
                await result


def _num(value) -> float:
    """A candle price as float; None becomes NaN, which the builder drops as a bad record."""
    return float("nan") if value is None else float(value)
