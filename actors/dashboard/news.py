"""Market events (md.event) on the dashboard: a line in the events table when one arrives, and a mark on env 0's
price chart at the first bar of env 0 that makes it public.

Events are global while a backtest's envs play different stretches of the data, so an event is placed on env 0's
own clock, as the reasoner reads it (actors/common/llm/news.py): its ET minute against the minute of env 0's bar
(the market context's session id and time). One more than ``STALE_MINUTES`` old at that bar belongs to another
env's stretch and gets no mark (the table still lists it). A release announced ahead and then published (one event
id) is marked once, as published.

A finished run's events come from its logs: the env (backtest, train) and the feed (paper) log each md.event they
publish under ``Event.LOG_EVENT``, which the state reads back as the message (its LOGGED_MESSAGES).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from actors.common.events import MarketEvent
from actors.common.llm.news import ET, context_minute, event_minute
from actors.common.seen import SeenKeys
from actors.dashboard.model import Series

STALE_MINUTES = 60
"""An event older than this at env 0's bar is not marked there (the env's replay sends none older either)."""
MAX_PENDING = 500
"""Events waiting for env 0's clock to reach them (the oldest go first)."""
COLOURS = {"release": "#7b2cbf", "headline": "#f77f00"}


def event_line(event: MarketEvent) -> str:
    """The events table's text of an event: its time ET, kind, importance and text (a release announced ahead, as
    the calendar line actors/env/event_replay.py sends: "due")."""
    due = " due" if event.kind == "release" and (event.text == event.name or event.text.startswith(f"{event.name} (consensus")) else ""
    when = dt.datetime.fromtimestamp(event.time_ns / 1e9, tz=ET).strftime("%m-%d %H:%M")
    return f"{when} ET {event.kind}{due} ({event.importance}): {event.text or event.name}"


MAX_SEEN = 5000
"""Events remembered to read each once (the oldest go first)."""


def news_key(event: MarketEvent) -> str:
    """One event: its id, else its time and text."""
    return event.event_id or f"{event.time_ns}:{event.text}"


class NewsMarks(Series):
    """The price chart's event marks of env 0 (step, price, kind, colour, text), and the events not yet reached."""

    def __init__(self, maxlen: int) -> None:
        super().__init__(("step", "price", "kind", "colour", "text"), maxlen)
        self.pending: dict[str, MarketEvent] = {}
        self._seen = SeenKeys(MAX_SEEN)

    def first_time(self, event: MarketEvent) -> bool:
        """False for an event read already: a live run's md.event comes twice, on the bus and in its publisher's log
        (``Event.LOG_EVENT``). A release's published line (another text under the stub's id) is new."""
        return self._seen.first_time((news_key(event), event.text))

    def arrived(self, event: MarketEvent) -> str:
        """Keep ``event`` until env 0's clock reaches it; its line for the events table."""
        key = news_key(event)
        self.pending.pop(key, None)  # a published release replaces its stub
        self.pending[key] = event
        while len(self.pending) > MAX_PENDING:
            del self.pending[next(iter(self.pending))]
        return event_line(event)

    def bar(self, step: int, context: Any) -> None:
        """Env 0's bar at ``step``: mark the events it makes public. Without a session id (a sender that gives none)
        every waiting event is marked at the bar after its arrival."""
        now = context_minute({"session_id": context.session_id, "time_et": context.time_et}) if context.session_id >= 0 else None
        for key, event in list(self.pending.items()):
            minute = event_minute(event.time_ns)
            if now is not None and minute > now:
                continue
            del self.pending[key]
            if now is None or now - minute <= STALE_MINUTES:
                self.add(step, float(context.price), event.kind, COLOURS.get(event.kind, "#555555"), event.text or event.name)

    def clear(self) -> None:
        super().clear()
        self.pending.clear()
        self._seen.clear()
