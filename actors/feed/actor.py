"""The feed actor: reads a market-data source, builds closed bars, publishes ``md.bar``.

A thin shell: the source (actors/feed/sources.py) reads and reconnects, the bar builder
(actors/feed/bars.py) checks records and closes bars; this actor only pumps one into the
other, publishes, and reports. Started by bin/run (``runtime.actors = [..., "feed"]``) or
attached to a running runtime by ``bin/feed``.

A replay with a start first publishes the bars before it that the env's warm-up needs, at once and flagged
``history`` (actors/feed/sources.py); ``max_bars`` counts the bars played from the start, not the history.
With ``feed.pace = "agent"`` (``bin/feed --speed agent``) a played bar goes out only once the runtime has decided
on the previous one (a risk.verdict for a step not seen before arrived), or after ``agent_wait_secs`` (counted
``agent_timeouts``); the bars the env needs to warm up are not waited for (no decision comes for them). A verdict
for the step just counted is the answer to a re-sent observation (risk answers a step again, the env ignores it):
it is counted ``repeated_verdicts``, never taken for the decision on the next bar.

Events (actors/feed/event_sources.py): the files of feed.event_calendar_paths / event_headline_paths are read at start
(a bad row fails the start, naming file, row and field) and each event goes out on md.event once the bar clock (the end
of the bar just published) passes its time, right after that bar, so at any speed, agent included, events and bars
keep their order; a release is also announced feed.event_schedule_ahead_mins before. The feeds of feed.event_rss_urls
are polled beside the bars. Every event published is logged ``md_event`` with its fields (``bin/tail --event md.event``).

sys.stats: counters events_published, events_ahead (announcements), rss_* (the feeds' polls, timeouts, malformed
entries ...), bars_published, history_bars, agent_timeouts, duplicates, late, bad, gaps, gap_bars, reconnects, ...;
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
from actors.feed.config import FeedConfig, FeedSettings
from actors.feed.event_sources import EventSchedule, RssSource
from actors.feed.sources import CcxtSource, Record, Source, SourceBar, make_exchange, replay_source, synthetic_source
from bus.messages import Bar, Event, RiskVerdict
from runtime.actor import Actor
from runtime.logs import RateLimiter

FLUSH_INTERVAL_SECS = 0.5
MAX_LAG_SAMPLES = 10_000  # per stats interval; a fast replay keeps the newest
_COUNTED = ("records", "bad", "duplicates", "out_of_order", "late", "late_dropped", "amended", "gaps", "gap_bars")


def build_source(feed: FeedConfig, *, symbol: str, seed: int, warmup_bars: int = 0) -> Source:
    """The configured source (blocking: a replay reads its whole file here)."""
    if feed.source == "replay":
        speed = 0.0 if feed.pace == "agent" else feed.replay_speed
        return replay_source(feed.replay_path, speed=speed, start=feed.replay_start, timezone=feed.replay_timezone, warmup_bars=warmup_bars)
    if feed.source == "synthetic":
        pace_secs = 0.0 if feed.pace == "agent" else feed.synthetic_pace_secs
        return synthetic_source(days=feed.synthetic_days, seed=seed, pace_secs=pace_secs,
                                start_price=feed.synthetic_start_price, start_date=feed.synthetic_start_date)
    exchange = make_exchange(feed.ccxt_exchange, market_type=feed.ccxt_market_type, api_key_env=feed.ccxt_api_key_env, secret_env=feed.ccxt_secret_env)
    return CcxtSource(exchange, symbol, feed)


def load_event_schedule(feed: FeedConfig) -> tuple[EventSchedule, list[str]]:
    """The event files' schedule (blocking: reads every file) and their warnings (releases on CME holidays)."""
    from actors.common.event_files import read_events

    schedule = EventSchedule(ahead_ns=int(feed.event_schedule_ahead_mins * 60 * 10**9))
    warnings: list[str] = []
    for kind, paths in (("calendar", feed.event_calendar_paths), ("headlines", feed.event_headline_paths)):
        for path in paths:
            found = read_events(path)
            schedule.add(found.events, f"{kind}:{path}")
            warnings += found.warnings
    return schedule, warnings


def warmup_bars(config) -> int:
    """Bars before a replay's start to publish as history: feed.warmup_bars, or the env's paper warm-up (-1)."""
    return config.env.paper_warmup_bars if config.feed.warmup_bars < 0 else config.feed.warmup_bars


class FeedActor(Actor):
    settings_type = FeedSettings
    subscriptions = ()  # publishes only (heartbeats of wait_for_actors come through the base class); agent pace: + RiskVerdict

    async def on_start(self) -> None:
        feed = self.config.feed
        self.symbol = feed.symbol or self.config.instrument.symbol
        seed = feed.synthetic_seed if feed.synthetic_seed >= 0 else self.config.run.seed
        self.warmup_bars = warmup_bars(self.config) if feed.replay_start else 0
        self.source: Source = await self.in_worker(lambda: build_source(feed, symbol=self.symbol, seed=seed, warmup_bars=self.warmup_bars))
        self.agent_paced = feed.pace == "agent"
        if self.agent_paced:
            self.subscriptions = (RiskVerdict,)
        self.verdicts = 0
        self._counted_step: int | None = None
        """The step of the last verdict counted as a decision."""
        self._verdict_arrived = asyncio.Event()
        self.played = 0
        """Bars published from the replay's start (or from the first, without one): what max_bars counts."""
        self.history_published = 0
        short = getattr(self.source, "short_history", None)
        if short is not None:
            self.log.warning("feed_history_short", found=short.found, needed=short.needed, start=short.start, message=short.message())
        self.builder = BarBuilder(timeframe_ns(feed.timeframe), feed.late_policy)
        self.gap_log = RateLimiter(self.config.logging.rate_limit_secs)
        self.lags_ms: deque[float] = deque(maxlen=MAX_LAG_SAMPLES)
        self.window_started = time.monotonic()
        self.window_bars = 0
        self.published = 0
        self.log.info("feed_source", source=self.source.name, symbol=self.symbol, timeframe=feed.timeframe)
        await self._start_events(feed)
        self.spawn(self._pump(), "pump")

    async def _start_events(self, feed: FeedConfig) -> None:
        self.events, warnings = await self.in_worker(lambda: load_event_schedule(feed))
        for warning in warnings:
            self.log.warning("event_file_warning", problem=warning)
        if self.events.pending:
            self.log.info("event_files", files=feed.event_calendar_paths + feed.event_headline_paths, messages=self.events.pending)
        self.rss = [RssSource(url, poll_secs=feed.event_poll_secs, timeout_secs=feed.event_timeout_secs,
                              importance=feed.event_rss_importance, log=self.log) for url in feed.event_rss_urls]

    async def _follow_rss(self, rss: RssSource) -> None:
        async for event in rss.events():
            self._publish_event(Event.of(event, rss.name), clock_ns=time.time_ns())

    def _publish_event(self, event: Event, clock_ns: int) -> None:
        self.publish(event)
        ahead = event.time_ns > clock_ns
        self.counters["events_ahead" if ahead else "events_published"] += 1
        self.log.info("md_event", time=pd.Timestamp(event.time_ns, tz="UTC").isoformat(), ahead=ahead, **event.log_fields())

    async def _pump(self) -> None:
        feed = self.config.feed
        if feed.wait_for_actors:
            missing = await self.wait_for_peers(list(feed.wait_for_actors), feed.wait_timeout_secs)
            if missing:
                self.log.warning("feed_peers_missing", missing=missing, waited_secs=feed.wait_timeout_secs)
        for index, rss in enumerate(self.rss):  # polled from now on: the actors waited for see the first headlines
            self.spawn(self._follow_rss(rss), f"rss{index}")
        if getattr(self.source, "clock_driven", False):
            self.spawn(self._flush_loop(), "flush")  # trades in a quiet market: close bars on the clock
        async for record in self.source.records():
            history = getattr(record, "history", False)
            bars = self._build(record)
            waits_for_decision = self._waits_for_decision(bars, history)
            before = self.verdicts
            self._publish_all(bars, record, history)
            if history:
                continue
            if waits_for_decision:  # the last bar's too: a run that stops with the feed keeps its decision
                await self._await_decision(before)
            if feed.max_bars and self.played >= feed.max_bars:
                break
        self._finished()

    def _waits_for_decision(self, bars: list[OHLCV], history: bool) -> bool:
        """Agent pace: a played bar the env will decide on (its warm-up is complete with it)."""
        return self.agent_paced and bool(bars) and not history and self.published + len(bars) >= self.config.env.paper_warmup_bars

    async def _await_decision(self, verdicts_before: int) -> None:
        """Until a risk.verdict arrived after the bar went out (the decision on it), or agent_wait_secs."""
        deadline = time.monotonic() + self.config.feed.agent_wait_secs
        while self.verdicts == verdicts_before:
            self._verdict_arrived.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.counters["agent_timeouts"] += 1
                self.log.warning("feed_agent_timeout", bars_played=self.played, waited_secs=self.config.feed.agent_wait_secs)
                return
            try:
                await asyncio.wait_for(self._verdict_arrived.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def on_message(self, msg) -> None:
        if isinstance(msg, RiskVerdict):
            if msg.step == self._counted_step:
                # The env re-sent an observation whose verdict was on its way (verdict_retry_ms): risk answered it twice.
                self.counters["repeated_verdicts"] += 1
                return
            self._counted_step = msg.step
            self.verdicts += 1
            self._verdict_arrived.set()

    def _build(self, record: Record) -> list[OHLCV]:
        gaps_before = self.builder.counts["gaps"]
        if isinstance(record, SourceBar):
            bars = self.builder.add_bar(record.start_ns, record.open, record.high, record.low, record.close, record.volume, record.interval_ns)
        else:
            bars = self.builder.add_trade(record.ts_ns, record.price, record.size, record.trade_id)
        if self.builder.counts["gaps"] != gaps_before:
            self._log_gap()
        return bars

    def _publish_all(self, bars: list[OHLCV], record: Record | None, history: bool = False) -> None:
        now_ns = time.time_ns()
        for bar in bars:
            self.publish(Bar(symbol=self.symbol, start_ns=bar.start_ns, open=bar.open, high=bar.high, low=bar.low,
                             close=bar.close, volume=bar.volume, source=self.source.name, history=history))
            self.published += 1
            self._publish_due_events(bar.start_ns + self.builder.interval_ns)
            if history:  # published at once: no lag to measure
                self.history_published += 1
                continue
            if self.played == 0 and self.history_published:
                self.log.info("feed_history_published", history_bars=self.history_published, first_bar_start_ns=bar.start_ns)
            due_ns = record.due_ns if record is not None and record.due_ns else bar.start_ns + self.builder.interval_ns
            self.lags_ms.append((now_ns - due_ns) / 1e6)
            self.played += 1
            self.window_bars += 1

    def _publish_due_events(self, clock_ns: int) -> None:
        """The file events the bar clock (the end of the bar just published) has passed, right after that bar."""
        for event in self.events.due(clock_ns):
            self._publish_event(event, clock_ns)

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
        if getattr(self, "events", None) is not None and self.events.pending:
            self.log.info("feed_events_unplayed", messages=self.events.pending, reason="after the last bar")
        summary = {**{k: float(v) for k, v in self.builder.counts.items()}, "bars": float(self.played),
                   "history_bars": float(self.history_published), "agent_timeouts": float(self.counters["agent_timeouts"])}
        self.done("source_exhausted" if not self.config.feed.max_bars or self.played < self.config.feed.max_bars else "max_bars", summary)
        if self.config.feed.stop_when_exhausted:
            self.request_stop("source_exhausted")

    def stats(self):
        if hasattr(self, "builder"):  # on_start may have failed
            for kind in _COUNTED:
                self.counters[kind] = self.builder.counts[kind]
            for kind, count in self.source.counters.items():
                self.counters[kind] = count
            self.counters["bars_published"] = self.played
            self.counters["history_bars"] = self.history_published
            feeds = getattr(self, "rss", [])
            for kind in {k for rss in feeds for k in rss.counters}:
                self.counters[f"rss_{kind}"] = sum(rss.counters[kind] for rss in feeds)
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
