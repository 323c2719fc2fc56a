"""Market events: a scheduled release or a headline, the words and schedules a vector of numbers cannot carry.

Shared vocabulary: the feed's event sources (an economic-calendar file, a headlines file, an RSS/Atom feed)
build these, the synthetic ``news`` market plants them, the env replays them beside the bars, and the
reasoner reads them into its prompt. The ``md.event`` message (bus/messages.py ``Event``) is a
``MarketEvent`` with its source, so whoever holds the message holds the event itself.
"""

from __future__ import annotations

import math

import msgspec

EVENT_KINDS = ("release", "headline")
"""``release``: a scheduled economic release (CPI, payrolls, FOMC); ``headline``: unscheduled news text."""
IMPORTANCES = ("low", "medium", "high")
"""How much a release moves an index future; prop-firm news rules apply to ``high``."""


class MarketEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One event, stamped at the time it becomes public (UTC ns), with its text as a reader would see it."""

    time_ns: int
    """When the event is (or was) public: a release's scheduled time, a headline's publication time."""
    kind: str
    """One of EVENT_KINDS."""
    importance: str = "medium"
    """One of IMPORTANCES."""
    text: str = ""
    """The headline, or the release's line as a calendar shows it."""
    name: str = ""
    """A release's name (``CPI m/m``, ``Nonfarm Payrolls``, ``FOMC rate decision``); empty for a headline."""
    actual: float = math.nan
    """A release's published figure once known (NaN before the release or when unknown)."""
    consensus: float = math.nan
    """A release's consensus forecast (NaN when unknown)."""
    previous: float = math.nan
    """A release's previous figure (NaN when unknown)."""
    event_id: str = ""
    """A stable id for de-duplication (a feed entry's id or link, a calendar row's name + time)."""

    def __post_init__(self) -> None:
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"event kind must be one of {EVENT_KINDS}, got {self.kind!r}")
        if self.importance not in IMPORTANCES:
            raise ValueError(f"event importance must be one of {IMPORTANCES}, got {self.importance!r}")
