"""The feed actor: reads a market-data source, builds closed bars, publishes ``md.bar``.

A thin shell: the source (actors/feed/sources.py) reads and reconnects, the bar builder
(actors/feed/bars.py) checks records and closes bars; this actor only pumps one into the
other, publishes, and reports. Started by bin/run (``runtime.actors = [..., "feed"]``) or
attached to a running runtime by ``bin/feed``.

sys.stats: counters bars_published, duplicates, late, bad, gaps, gap_bars, reconnects, ...;
gauges bars_per_sec, lag_ms_p50 and lag_ms_max (wall clock from the moment a bar was due, its
close, replayed at the chosen speed, to its publication) over the last stats interval.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

import numpy as np
import pandas as pd

from actors.feed.bars import OHLCV, BarBuilder, timeframe_ns
from actors.feed.config import FeedConfig
from actors.feed.sources import CcxtSource, Record, Source, SourceBar, make_exchange, replay_source, synthetic_source
from bus.messages import Bar
from runtime.actor import Actor
from runtime.logs import RateLimiter

FLUSH_INTERVAL_SECS = 0.5
MAX_LAG_SAMPLES = 10_000  # per stats interval; a fast replay keeps the newest
_COUNTED = ("records", "bad", "duplicates", "out_of_order", "late", "late_dropped", "amended", "gaps", "gap_bars")


def build_source(feed: FeedConfig, *, symbol: str, seed: int) -> Source:
    """The configured source (blocking: a replay reads its whole file here)."""
    if feed.source == "replay":
        return replay_source(feed.replay_path, speed=feed.replay_speed, start=feed.replay_start, timezone=feed.replay_timezone)
    if feed.source == "synthetic":
        return synthetic_source(days=feed.synthetic_days, seed=seed, pace_secs=feed.synthetic_pace_secs,
                                start_price=feed.synthetic_start_price, start_date=feed.synthetic_start_date)
    exchange = make_exchange(feed.ccxt_exchange, market_type=feed.ccxt_market_type, api_key_env=feed.ccxt_api_key_env, secret_env=feed.ccxt_secret_env)
    return CcxtSource(exchange, symbol, feed)


class FeedActor(Actor):
    subscriptions = ()  # publishes only (heartbeats of wait_for_actors come through the base class)

    async def on_start(self) -> None:
        feed = self.config.feed
        self.symbol = feed.symbol or self.config.instrument.symbol
        seed = feed.synthetic_seed if feed.synthetic_seed >= 0 else self.config.run.seed
        self.source: Source = await self.in_worker(lambda: build_source(feed, symbol=self.symbol, seed=seed))
        self.builder = BarBuilder(timeframe_ns(feed.timeframe), feed.late_policy)
        self.gap_log = RateLimiter(self.config.logging.rate_limit_secs)
        self.lags_ms: deque[float] = deque(maxlen=MAX_LAG_SAMPLES)
        self.window_started = time.monotonic()
        self.window_bars = 0
        self.published = 0
        self.log.info("feed_source", source=self.source.name, symbol=self.symbol, timeframe=feed.timeframe)
        self.spawn(self._pump(), "pump")

    async def _pump(self) -> None:
        feed = self.config.feed
        if feed.wait_for_actors:
            missing = await self.wait_for_peers(list(feed.wait_for_actors), feed.wait_timeout_secs)
            if missing:
                self.log.warning("feed_peers_missing", missing=missing, waited_secs=feed.wait_timeout_secs)
        if getattr(self.source, "clock_driven", False):
            self.spawn(self._flush_loop(), "flush")  # trades in a quiet market: close bars on the clock
        async for record in self.source.records():
            self._publish_all(self._build(record), record)
            if feed.max_bars and self.published >= feed.max_bars:
                break
        self._finished()

    def _build(self, record: Record) -> list[OHLCV]:
        gaps_before = self.builder.counts["gaps"]
        if isinstance(record, SourceBar):
            bars = self.builder.add_bar(record.start_ns, record.open, record.high, record.low, record.close, record.volume, record.interval_ns)
        else:
            bars = self.builder.add_trade(record.ts_ns, record.price, record.size, record.trade_id)
        if self.builder.counts["gaps"] != gaps_before:
            self._log_gap()
        return bars

    def _publish_all(self, bars: list[OHLCV], record: Record | None) -> None:
        now_ns = time.time_ns()
        for bar in bars:
            self.publish(Bar(symbol=self.symbol, start_ns=bar.start_ns, open=bar.open, high=bar.high, low=bar.low,
                             close=bar.close, volume=bar.volume, source=self.source.name))
            due_ns = record.due_ns if record is not None and record.due_ns else bar.start_ns + self.builder.interval_ns
            self.lags_ms.append((now_ns - due_ns) / 1e6)
            self.published += 1
            self.window_bars += 1

    async def _flush_loop(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_INTERVAL_SECS)
            self._publish_all(self.builder.flush(time.time_ns()), None)

    def _log_gap(self) -> None:
        gap = self.builder.last_gap
        allowed, suppressed = self.gap_log.allow("gap")
        if gap is not None and allowed:
            after = pd.Timestamp(gap.after_start_ns, tz="UTC").isoformat()
            self.log.info("feed_gap", after_bar=after, missing_bars=gap.missing_bars, suppressed=suppressed)

    def _finished(self) -> None:
        summary = {"bars": float(self.published), **{k: float(v) for k, v in self.builder.counts.items()}}
        self.done("source_exhausted" if not self.config.feed.max_bars or self.published < self.config.feed.max_bars else "max_bars", summary)
        if self.config.feed.stop_when_exhausted:
            self.request_stop("source_exhausted")

    def stats(self):
        if hasattr(self, "builder"):  # on_start may have failed
            for kind in _COUNTED:
                self.counters[kind] = self.builder.counts[kind]
            for kind, count in self.source.counters.items():
                self.counters[kind] = count
            self.counters["bars_published"] = self.published
        return super().stats()

    def gauges(self) -> dict[str, float]:
        if not hasattr(self, "builder"):
            return {}
        now = time.monotonic()
        elapsed, self.window_started = now - self.window_started, now
        figures = {"bars_per_sec": self.window_bars / elapsed if elapsed > 0 else 0.0}
        self.window_bars = 0
        if self.lags_ms:
            lags = np.asarray(self.lags_ms)
            figures.update(lag_ms_p50=float(np.percentile(lags, 50)), lag_ms_max=float(lags.max()))
            self.lags_ms.clear()
        return figures

    async def on_stop(self) -> None:
        if hasattr(self, "source"):
            await self.source.close()


ACTOR = FeedActor
