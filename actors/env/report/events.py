"""The market events a report shows: those of the run's bars (its test window), where each falls on the price
chart, the table rows, and the news a trade's entry could read."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

import numpy as np

from actors.common.events import MarketEvent
from actors.env.report.labels import et_text
from actors.env.report.model import ReportTrade, TradeDecision

NEWS_WINDOW_MINUTES = 90
"""Where the entry's thought did not reach the env (LLM off, a lost message), a trade's headline is the latest event
public at its entry and at most this old: the reasoner's default ``news_window_minutes`` (actors/reasoner/config.py),
what a default prompt would have shown; the row marks it as such (``FROM_WINDOW``)."""
FROM_THOUGHT = "thought"
FROM_WINDOW = "news window"
MINUTE_NS = 60_000_000_000
MAX_LABELLED_EVENTS = 60
"""Above this many events in the window the chart marks them without text (labels would overprint each other)."""


def window_events(events: Sequence[MarketEvent], times_ns: np.ndarray, bar_ns: int = MINUTE_NS) -> list[MarketEvent]:
    """The events inside the run's bars (from the first bar's start to the last bar's end), oldest first."""
    if not len(times_ns) or not events:
        return []
    first, last = int(np.min(times_ns)), int(np.max(times_ns)) + bar_ns
    return sorted((event for event in events if first <= event.time_ns < last), key=lambda event: event.time_ns)


def event_label(event: MarketEvent) -> str:
    """What a reader sees of an event: a release's name (its text says the figures), a headline's text."""
    return event.name or event.text or event.kind


def event_bars(times_ns: np.ndarray, events: Sequence[MarketEvent], bar_ns: int = MINUTE_NS) -> np.ndarray:
    """The index of the bar that makes each event public (bars are plotted at their index): the bar it falls in, or
    for one between bars (an 08:30 release before the 09:30 open) the next bar, as the env replays it."""
    ends = np.asarray(times_ns, dtype=np.int64) + bar_ns
    stamps = np.array([event.time_ns for event in events], dtype=np.int64)
    return np.clip(np.searchsorted(ends, stamps, side="right"), 0, max(len(ends) - 1, 0))


def event_rows(events: Sequence[MarketEvent]) -> list[tuple[str, str, str, str, str]]:
    """(number, time ET, kind, importance, text) per event; the number is the headline's mark on the chart."""
    return [(str(number), et_text(event.time_ns), event.kind, event.importance, event.text or event.name)
            for number, event in enumerate(events, start=1)]


def entry_headline(entry: TradeDecision | None, events: Sequence[MarketEvent], entry_ns: int) -> tuple[str, str]:
    """(headline, where it came from) of a trade's entry: the newest event its thought read (FROM_THOUGHT; '' when it read
    none), else the news window's guess (FROM_WINDOW); ('', '') without either."""
    thought = entry.thought if entry is not None else None
    if thought is not None and thought.news is not None:
        return (thought.news[0] if thought.news else ""), FROM_THOUGHT
    guess = headline_before(events, entry_ns)
    return guess, FROM_WINDOW if guess else ""


def headline_fields(entry: TradeDecision | None, events: Iterable[MarketEvent], entry_ns: int) -> dict[str, str]:
    """A trade record's ``entry_headline`` and ``entry_headline_from`` (see entry_headline); ``events`` in any order."""
    headline, source = entry_headline(entry, sorted(events, key=lambda event: event.time_ns), entry_ns)
    return {"entry_headline": headline, "entry_headline_from": source}


def shows_news(trades: Sequence[ReportTrade], events: Sequence[MarketEvent]) -> bool:
    """A trades table gets its news column when the run had events or an entry's thought read one."""
    return bool(events) or any(item.entry and item.entry.thought and item.entry.thought.news for item in trades)


def headline_cell(headline: str, source: str) -> str:
    """A trade row's news text: the thought's headline as it is, a guess marked, '-' for none."""
    if not headline:
        return "-"
    return headline if source == FROM_THOUGHT else f"{headline} (not from its thought: latest within {NEWS_WINDOW_MINUTES} min)"


def headline_before(events: Sequence[MarketEvent], time_ns: int, window_minutes: int = NEWS_WINDOW_MINUTES) -> str:
    """The text of the latest of ``events`` (oldest first) at or before ``time_ns`` and at most ``window_minutes``
    old; '' when none."""
    at = bisect.bisect_right(events, time_ns, key=lambda event: event.time_ns)
    if not at or events[at - 1].time_ns < time_ns - window_minutes * MINUTE_NS:
        return ""
    return events[at - 1].text or events[at - 1].name
