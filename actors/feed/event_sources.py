"""Event sources of the feed actor: files replayed on the bar clock, and a live RSS/Atom feed.

``EventSchedule`` holds the events of calendar and headlines files (actors/common/event_files.py) and hands
each out when the bar clock passes its time: the feed calls ``due(clock_ns)`` after every bar it publishes,
with the bar's end as the clock, so events go out in step with the bars at any replay speed, ``agent``
included (the clock is the bars', never the wall's). A release is also announced ``ahead_ns`` before its
time (once, with its actual figure left out: NaN), because a schedule is known in advance and the news
rule of risk must see a release before it happens; at its time it goes out again, with the actual figure.
Both have the same ``event_id``; a consumer tells them apart by ``time_ns`` against its clock. A release whose
time the bar clock has already passed when its announcement falls due (bars that begin after it) goes out once.

``RssSource`` polls an RSS or Atom feed (parsed by feedparser) every ``poll_secs`` and yields each new
entry once (deduplicated by the entry's id, else its link), stamped with its published (else updated) time
in UTC (feedparser converts the zones). An entry without a title, a time or an id and a link is malformed:
counted and logged once with what was wrong, never a crash. A fetch that takes longer than ``timeout_secs``
(a stalled server) or fails is counted and logged, and polling goes on.
"""

from __future__ import annotations

import asyncio
import calendar
import math
import time
import urllib.error
import urllib.request
from collections import Counter
from typing import Any, AsyncIterator, Callable, NamedTuple

from actors.common.events import MarketEvent
from actors.common.seen import SeenKeys
from bus.messages import Event

MAX_REMEMBERED_IDS = 100_000
"""Entry ids remembered for de-duplication (the oldest are forgotten)."""


# --------------------------------------------------------------------------- files on the bar clock


class Scheduled(NamedTuple):
    """Sorted as a tuple: by due_ns, then order (unique)."""

    due_ns: int
    """Bar-clock time the message goes out."""
    order: int
    """Tie-break: the file order, announcements before occurrences."""
    message: Event
    announcement: bool = False


class EventSchedule:
    """File events handed out in time order as the bar clock passes them (``due``); what is left is ``pending``."""

    def __init__(self, ahead_ns: int = 0) -> None:
        self.ahead_ns = ahead_ns
        self._queue: list[Scheduled] = []
        self._sorted = True

    def add(self, events: list[MarketEvent], source: str) -> None:
        for event in events:
            if event.kind == "release" and self.ahead_ns > 0:
                announcement = Event.of(event, source, actual=math.nan)
                self._queue.append(Scheduled(event.time_ns - self.ahead_ns, len(self._queue), announcement, announcement=True))
            self._queue.append(Scheduled(event.time_ns, len(self._queue), Event.of(event, source)))
        self._sorted = False

    def due(self, clock_ns: int) -> list[Event]:
        """Every message due at or before ``clock_ns``, in time order, each once."""
        if not self._sorted:
            self._queue.sort(reverse=True)  # pop() from the end: the earliest
            self._sorted = True
        out = []
        while self._queue and self._queue[-1].due_ns <= clock_ns:
            item = self._queue.pop()
            # A release already out at this clock (the bars began after it) needs no announcement: it comes whole.
            if not (item.announcement and item.message.time_ns <= clock_ns):
                out.append(item.message)
        return out

    @property
    def pending(self) -> int:
        return len(self._queue)


# --------------------------------------------------------------------------- RSS / Atom


class MalformedEntry(ValueError):
    """An entry that is not an event, with what was wrong."""


def entry_event(entry: Any, importance: str) -> MarketEvent:
    """A feedparser entry as a headline; raises MalformedEntry naming what is missing."""
    title = str(entry.get("title", "") or "").strip()
    if not title:
        raise MalformedEntry("no title")
    entry_id = str(entry.get("id", "") or entry.get("link", "") or "").strip()
    if not entry_id:
        raise MalformedEntry("no id and no link")
    # dict.get: FeedParserDict's own get maps a missing updated_* to published_* (deprecated, with a warning).
    parsed = dict.get(entry, "published_parsed") or dict.get(entry, "updated_parsed")
    if parsed is None:
        raw = dict.get(entry, "published") or dict.get(entry, "updated")
        raise MalformedEntry(f"unreadable time {raw!r}" if raw else "no published or updated time")
    # feedparser's *_parsed is a UTC struct_time whatever zone the feed wrote; timegm reads it as UTC.
    return MarketEvent(time_ns=calendar.timegm(parsed) * 10**9, kind="headline", importance=importance,
                       text=title, event_id=entry_id)


def entry_key(entry: Any, position: int) -> str:
    """Who a malformed entry is, so it is logged once, not at every poll."""
    return str(entry.get("id") or entry.get("link") or entry.get("title") or f"#{position}:{sorted(entry.keys())}")


def fetch_url(url: str, timeout_secs: float, user_agent: str = "thinking-trader-feed") -> bytes:
    """The feed's bytes (blocking; the source runs it in a worker thread). ``timeout_secs`` bounds each
    socket wait, so a server that stalls before or during its answer raises TimeoutError."""
    request = urllib.request.Request(url, headers={"User-Agent": user_agent})
    with urllib.request.urlopen(request, timeout=timeout_secs) as response:
        return response.read()


class RssSource:
    """An RSS/Atom feed polled every ``poll_secs``; ``events()`` yields each new entry once, forever.

    ``counters``: polls, fetch_timeouts, fetch_errors, entries_new, entries_duplicate, entries_malformed,
    feed_bozo (a feed feedparser could only partly parse). ``log`` is a structlog logger (or None).
    """

    def __init__(self, url: str, *, poll_secs: float, timeout_secs: float, importance: str = "medium", log=None,
                 fetch: Callable[[str, float], bytes] = fetch_url, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        self.url = url
        self.name = f"rss:{url}"
        self.poll_secs = poll_secs
        self.timeout_secs = timeout_secs
        self.importance = importance
        self.log = log
        self.counters: Counter[str] = Counter()
        self._fetch = fetch
        self._sleep = sleep
        self._seen = SeenKeys(MAX_REMEMBERED_IDS)
        self._malformed_seen = SeenKeys(MAX_REMEMBERED_IDS)

    def _warn(self, event: str, **fields) -> None:
        if self.log is not None:
            self.log.warning(event, url=self.url, **fields)

    async def poll(self) -> list[MarketEvent]:
        """One fetch: the entries not seen before ([] when the fetch timed out or failed: logged, counted)."""
        import feedparser

        self.counters["polls"] += 1
        started = time.monotonic()
        try:
            # wait_for too: timeout_secs bounds each socket wait; a trickling server could still hold the thread.
            body = await asyncio.wait_for(asyncio.to_thread(self._fetch, self.url, self.timeout_secs), self.timeout_secs * 2)
        except (TimeoutError, asyncio.TimeoutError):
            self.counters["fetch_timeouts"] += 1
            self._warn("rss_timeout", waited_secs=round(time.monotonic() - started, 3), timeout_secs=self.timeout_secs)
            return []
        except (OSError, urllib.error.URLError, ValueError) as exc:
            self.counters["fetch_errors"] += 1
            self._warn("rss_fetch_failed", error=f"{type(exc).__name__}: {str(exc)[:200]}")
            return []
        parsed = feedparser.parse(body)
        if parsed.get("bozo"):
            self.counters["feed_bozo"] += 1
            self._warn("rss_bozo", problem=str(parsed.get("bozo_exception", ""))[:200], entries=len(parsed.entries))
        return self._new_events(parsed.entries)

    def _new_events(self, entries: list) -> list[MarketEvent]:
        events = []
        for position, entry in enumerate(entries):
            try:
                event = entry_event(entry, self.importance)
            except MalformedEntry as exc:
                key = entry_key(entry, position)
                if self._malformed_seen.first_time(key):
                    self.counters["entries_malformed"] += 1
                    self._warn("rss_entry_malformed", entry=key[:200], problem=str(exc))
                continue
            if not self._seen.first_time(event.event_id):
                self.counters["entries_duplicate"] += 1
                continue
            self.counters["entries_new"] += 1
            events.append(event)
        return sorted(events, key=lambda e: e.time_ns)

    async def events(self) -> AsyncIterator[MarketEvent]:
        while True:
            for event in await self.poll():
                yield event
            await self._sleep(self.poll_secs)
