"""Replays a data set's market events beside its bars: ``md.event`` as each env's bar clock passes them.

The news market (actors/common/news_market.py) keeps its events beside the bars (``Dataset.events``). Before the
observation of a bar goes out, ``due`` gives the events that bar makes public, so a reader has them when it reads
that observation (one publisher, so they arrive first):

- an event stamped before the bar's end (``time_ns < start_ns + bar_ns``): it is public once the bar has closed
  (an 08:30 release at the 09:30 bar). Only events at most ``recent_minutes`` old are sent: an env whose episode
  starts mid-data gets the news a reader would still show, not the whole history;
- a release due within ``lookahead_minutes``: once, ahead, as its calendar line (name and consensus, no figure),
  so a prompt can say "CPI y/y in 25 min"; the published release follows under the same event id.

Each event goes out once per run (by id), whichever env passes it first: readers place events on each env's own
clock (actors/common/llm/news.py), so one copy serves every env.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec
import numpy as np

from actors.common.events import MarketEvent
from bus.messages import Event

LOOKAHEAD_MINUTES = 240
"""A release is announced this long before it is due (a 14:00 FOMC decision is on the calendar by 10:00)."""
RECENT_MINUTES = 60
"""Events older than this at an env's first bar are not sent (no prompt shows them)."""
MINUTE_NS = 60_000_000_000


class EventReplay:
    def __init__(self, events: Sequence[MarketEvent], start_ns: Sequence[int], source: str = "synthetic:news",
                 bar_ns: int = MINUTE_NS, lookahead_minutes: int = LOOKAHEAD_MINUTES, recent_minutes: int = RECENT_MINUTES) -> None:
        self._events = sorted(events, key=lambda e: e.time_ns)
        self._times = np.array([e.time_ns for e in self._events], dtype=np.int64)
        self._start_ns = start_ns
        self._source = source
        self._bar_ns = bar_ns
        self._lookahead_ns = lookahead_minutes * MINUTE_NS
        self._recent_ns = recent_minutes * MINUTE_NS
        self._published: set[int] = set()
        self._announced: set[int] = set()
        self.sent = 0

    @classmethod
    def of(cls, dataset) -> EventReplay | None:
        """The replay of a dataset's events; None when it has none (every market but news)."""
        events = getattr(dataset, "events", ())
        return cls(events, dataset.lists["start_ns"], source=dataset.source) if events else None

    def due(self, bars: Sequence[int]) -> list[Event]:
        """The events the bars (dataset indices, one per env) make public or announce, not sent before, oldest first."""
        out: dict[int, Event] = {}
        for bar in bars:
            start = int(self._start_ns[bar])
            end = start + self._bar_ns
            first = int(np.searchsorted(self._times, start - self._recent_ns, side="left"))
            public = int(np.searchsorted(self._times, end, side="left"))
            for i in range(first, public):
                if i not in self._published:
                    self._published.add(i)
                    out[i] = self._message(self._events[i])
            ahead = int(np.searchsorted(self._times, end + self._lookahead_ns, side="left"))
            for i in range(public, ahead):
                event = self._events[i]
                if event.kind == "release" and i not in self._announced and i not in self._published:
                    self._announced.add(i)
                    out[i] = self._message(calendar_stub(event))
        self.sent += len(out)
        return [out[i] for i in sorted(out)]

    def _message(self, event: MarketEvent) -> Event:
        return Event.of(event, self._source)


def calendar_stub(event: MarketEvent) -> MarketEvent:
    """A release as the calendar shows it before it is out: its name and consensus, no figure, no text."""
    consensus = "" if math.isnan(event.consensus) else f" (consensus {event.consensus:g})"
    return msgspec.structs.replace(event, text=f"{event.name}{consensus}", actual=math.nan)
