"""The prop-firm news rule: no new entries around a high-importance scheduled release.

Some evaluation firms forbid opening trades from a few minutes before to a few minutes after a major
release (CPI, payrolls, FOMC); Apex does not, so the rule is off unless risk.news_blackout_enabled. With it on:

  news_blackout  from T - risk.news_blackout_before_mins to T + risk.news_blackout_after_mins (T the release's
                 time) entries are vetoed (BUY/SELL while flat, ENABLE_TRAIL: actors/common/actions.py is_entry);
                 exits, HOLD and stop moves pass.
  news_flat      with risk.news_flat_before, the minutes before T also close any position (the closing action,
                 where the env's mask allows it) and block entries; from T on, the plain blackout.

Only a ``release`` of importance ``high`` counts; a headline blocks nothing (it is not scheduled: no window can
be kept before it). The releases come from md.event (the feed announces a file's releases ahead of their time,
feed.event_schedule_ahead_mins, which must cover the minutes before); the clock is the market's: the end of the
newest md.bar (the bar being decided on), so a replay at any speed keeps the same windows. Without any md.bar the
wall clock stands in (a live market's bars may come from elsewhere), said once in the log by the actor.

Plain state, no bus: the risk actor feeds it events and bars and asks what is in force at each observation.
"""

from __future__ import annotations

import time
from typing import NamedTuple

NEWS_BLACKOUT = "news_blackout"
NEWS_FLAT = "news_flat"
NEWS_RULES = (NEWS_BLACKOUT, NEWS_FLAT)
MINUTE_NS = 60 * 10**9
DEFAULT_BAR_NS = MINUTE_NS


def event_key(event) -> str:
    """The id that ties a release's announcement to the release itself (the news rule's and the event gates' key)."""
    return event.event_id or f"{event.name or event.text}@{event.time_ns}"


class Release(NamedTuple):
    """A high release as the rule keeps it, compared whole: the same key at another time or name is a moved release."""

    time_ns: int
    name: str
    event_id: str


class InForce(NamedTuple):
    rule: str
    """NEWS_BLACKOUT or NEWS_FLAT."""
    release: Release


class BarClock:
    """The market's now: the end of the newest bar (its start + the spacing of the last two starts)."""

    def __init__(self) -> None:
        self._start_ns: int | None = None
        self._interval_ns = DEFAULT_BAR_NS

    def on_bar(self, start_ns: int) -> None:
        if self._start_ns is not None and start_ns > self._start_ns:
            self._interval_ns = start_ns - self._start_ns
        self._start_ns = start_ns  # the newest, even backwards: a replay that starts over

    @property
    def started(self) -> bool:
        return self._start_ns is not None

    def now_ns(self) -> int:
        return self._start_ns + self._interval_ns if self._start_ns is not None else time.time_ns()


class NewsRule:
    def __init__(self, before_mins: float, after_mins: float, flat_before: bool = False) -> None:
        self.before_ns = int(before_mins * MINUTE_NS)
        self.after_ns = int(after_mins * MINUTE_NS)
        self.flat_before = flat_before
        self.clock = BarClock()
        self._releases: dict[str, Release] = {}

    def add(self, event) -> Release | None:
        """Take an md.event (any object with MarketEvent's fields); the Release when it is a new (or moved) high release."""
        if event.kind != "release" or event.importance != "high":
            return None
        key = event_key(event)
        release = Release(event.time_ns, event.name or event.text, key)
        if self._releases.get(key) == release:
            return None  # the announcement, then the release itself: one window
        self._releases[key] = release
        return release

    def in_force(self, now_ns: int) -> InForce | None:
        """The rule in force at ``now_ns`` (the flat rule before a release wins over another's blackout), or None."""
        found: InForce | None = None
        for release in self._releases.values():
            if release.time_ns - self.before_ns <= now_ns < release.time_ns:
                rule = NEWS_FLAT if self.flat_before else NEWS_BLACKOUT
            elif release.time_ns <= now_ns < release.time_ns + self.after_ns:
                rule = NEWS_BLACKOUT
            else:
                continue
            if found is None or (rule == NEWS_FLAT and found.rule != NEWS_FLAT):
                found = InForce(rule, release)
        return found

    def forget_before(self, now_ns: int) -> None:
        """Drop releases whose window ended a day before ``now_ns`` (a day's slack: a replay may step back a little)."""
        horizon = now_ns - self.after_ns - 1440 * MINUTE_NS
        self._releases = {k: r for k, r in self._releases.items() if r.time_ns >= horizon}

    @property
    def releases(self) -> int:
        return len(self._releases)


def overlay(halts: list[str], positions: list[int], in_force: InForce | None) -> list[str]:
    """The halts with the news rule laid over them: a halt already in force keeps its name for a flat env (its entries
    are blocked either way); news_flat replaces anything for an env in a position (it must close)."""
    if in_force is None:
        return halts
    rule = in_force.rule
    return [rule if (rule == NEWS_FLAT and position != 0) else (halt or rule) for halt, position in zip(halts, positions, strict=True)]
