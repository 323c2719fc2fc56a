"""What an env knows of the news at its bar: the events received so far, read on that env's own clock.

Events (``md.event``) are global, but envs of one run sit at different times (a backtest's envs each play
their own chunk of the data), so an event is placed on the US/Eastern wall clock in minutes and each env
reads the book at its bar's minute (``context_minute``: the MarketContext's session id and time):

- visible: an event whose minute is at or before the bar's start (the observation goes out once the bar has
  closed, so an event inside the bar is public by then; an 08:30 release is visible at the 09:30 bar);
- pending: a release due within ``horizon_minutes`` after it: only its name and minutes to go are shown, never
  its figure, even when the book already holds the published release (another env passed it).

``news_line`` is the short text the prompts carry after the tape (empty without news, so a prompt of a market
without events is unchanged); the reasoner and fusion read the same book.
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
from collections.abc import Mapping
from typing import Any
from zoneinfo import ZoneInfo

from actors.common.events import MarketEvent

ET = ZoneInfo("America/New_York")
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
SESSION_ROLL_MINUTE = 18 * 60
"""A Globex session opening at 18:00 ET carries the next date's session id (actors/env/features.py)."""
MAX_EVENTS = 20_000
"""Most events a book keeps (the oldest go first): years of a live feed's headlines."""


def event_minute(time_ns: int) -> int:
    """The ET wall-clock minute (minutes since 1970-01-01 00:00 ET-naive) of a UTC ns stamp."""
    local = dt.datetime.fromtimestamp(time_ns / 1e9, tz=ET)
    return (local.date().toordinal() - _EPOCH_ORDINAL) * 1440 + local.hour * 60 + local.minute


def context_minute(context: Mapping[str, Any]) -> int | None:
    """The ET wall-clock minute of a market context's bar (session id + time_et), None without them."""
    session, time_et = context.get("session_id"), context.get("time_et")
    if session is None or not time_et:
        return None
    hours, minutes = (int(part) for part in str(time_et).split(":"))
    minute_of_day = hours * 60 + minutes
    date_days = int(session) - (minute_of_day >= SESSION_ROLL_MINUTE)
    return date_days * 1440 + minute_of_day


class EventBook:
    """Events by ET minute, one per event id (a published release replaces its calendar stub)."""

    def __init__(self) -> None:
        self._minutes: list[int] = []
        self._events: list[MarketEvent] = []
        self._by_id: dict[str, int] = {}
        self.received = 0

    def __len__(self) -> int:
        return len(self._events)

    def add(self, event: MarketEvent) -> bool:
        """Keep ``event``; True when it is new or adds to what was held (a stub's figure, a new text)."""
        self.received += 1
        key = event.event_id or f"{event.time_ns}:{event.text}"
        held = self._by_id.get(key)
        if held is not None:
            if self._events[held].text == event.text and _same(self._events[held].actual, event.actual):
                return False
            self._events[held] = event
            return True
        minute = event_minute(event.time_ns)
        position = bisect.bisect_right(self._minutes, minute)
        self._minutes.insert(position, minute)
        self._events.insert(position, event)
        self._reindex()
        if len(self._events) > MAX_EVENTS:
            del self._minutes[0], self._events[0]
            self._reindex()
        return True

    def _reindex(self) -> None:
        self._by_id = {(e.event_id or f"{e.time_ns}:{e.text}"): i for i, e in enumerate(self._events)}

    def recent(self, now_minute: int, window_minutes: int) -> list[tuple[int, MarketEvent]]:
        """(minutes ago, event) of the events visible at ``now_minute`` and at most ``window_minutes`` old, newest first."""
        stop = bisect.bisect_right(self._minutes, now_minute)
        start = bisect.bisect_left(self._minutes, now_minute - window_minutes)
        return [(now_minute - self._minutes[i], self._events[i]) for i in range(stop - 1, start - 1, -1)]

    def pending(self, now_minute: int, horizon_minutes: int) -> list[tuple[int, MarketEvent]]:
        """(minutes to go, release) of the releases due within ``horizon_minutes`` after ``now_minute``, soonest first."""
        start = bisect.bisect_right(self._minutes, now_minute)
        stop = bisect.bisect_right(self._minutes, now_minute + horizon_minutes)
        return [(self._minutes[i] - now_minute, self._events[i]) for i in range(start, stop) if self._events[i].kind == "release"]

    def newest_visible_minute(self, now_minute: int) -> int | None:
        """The minute of the newest event visible at ``now_minute`` (None: none yet)."""
        stop = bisect.bisect_right(self._minutes, now_minute)
        return self._minutes[stop - 1] if stop else None


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def news_line(book: EventBook, now_minute: int | None, window_minutes: int, horizon_minutes: int, max_items: int) -> str:
    """The prompt's news: "\\nNews: 4 min ago: <text>; ... Due: CPI y/y in 25 min" or "" when there is none.

    Short on purpose (a 135M model reads it): at most ``max_items`` recent events, newest first, and the
    pending releases by name only."""
    if now_minute is None or not len(book):
        return ""
    parts = []
    recent = news_read(book, now_minute, window_minutes, max_items)
    if recent:
        parts.append("News: " + "; ".join(f"{ago} min ago: {event_text(event)}" for ago, event in recent))
    due = book.pending(now_minute, horizon_minutes)[:max_items]
    if due:
        parts.append("Due: " + "; ".join(f"{event.name or 'release'} in {ahead} min" for ahead, event in due))
    return "\n" + "\n".join(parts) if parts else ""


def news_read(book: EventBook, now_minute: int | None, window_minutes: int, max_items: int) -> list:
    """The recent events a news line shows, (minutes ago, event) newest first: what a prompt made at ``now_minute`` read."""
    if now_minute is None or not len(book):
        return []
    return book.recent(now_minute, window_minutes)[:max_items]


def event_text(event: MarketEvent) -> str:
    """What a reader is shown of a published event: its text, else its name."""
    return event.text or event.name or event.kind
