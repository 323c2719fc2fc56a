"""Floors for the LLM's risk gate: stand aside for minutes after an event a rule without a model names dangerous.

Both read md.event (the news the reasoner reads) and keep the market's clock (md.bar, actors/risk/news.py BarClock);
an event named dangerous vetoes entries from its time T to T + risk.event_gate_minutes (exits, HOLD and stop moves
pass, as the news blackout). The env makes an event public with the observation of the bar it falls in, so the first
decision it can stop is that bar's: a reader acts after reading.

  keyword_risk  risk.keyword_gate_enabled: the project's keyword risk rule (actors/common/news_risk.py
                ``keyword_key``: tier from the release's calendar tier or the headline's words, size from the words or
                a release's figure against its consensus) reads the event; a reading in risk.keyword_gate_keys (the
                "tier:size" keys whose hindsight level on training days is ELEVATED or more) is dangerous.
  oracle_risk   risk.oracle_gate_enabled: the event ids in risk.oracle_gate_event_ids are dangerous: the events whose
                TRUE tier and surprise size the hindsight table names ELEVATED or more. Only a backtest knows them
                (evaluate --gate-walk writes them from the market's event record); a live run refuses the setting.

A release is announced ahead as a calendar stub (no figure) under the same event id as the release itself; the
newest message of an id decides, so the release's own figure reads the size. Plain state, no bus: the risk actor
feeds it events and asks what is in force at the newest bar's end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from actors.common.news_risk import keyword_key
from actors.risk.news import event_key

KEYWORD_RISK = "keyword_risk"
ORACLE_RISK = "oracle_risk"
MINUTE_NS = 60 * 10**9


def keyword_reading(event) -> str:
    """The keyword rule's "tier:size" of an event (actors/common/news_risk.py keyword_key)."""
    tier, size = keyword_key(event)
    return f"{tier}:{size}"


class EventGate:
    """One rule's windows: ``dangerous(event)`` says whether an event opens one."""

    def __init__(self, rule: str, minutes: int, dangerous: Callable[[object], bool]) -> None:
        self.rule = rule
        self.window_ns = int(minutes) * MINUTE_NS
        self._dangerous = dangerous
        self._windows: dict[str, int] = {}
        """Event key -> its time (ns), for the dangerous ones only."""
        self._seen: set[str] = set()
        self.acted = 0

    def add(self, event) -> None:
        """Take an md.event: the newest message of an id decides whether it opens a window."""
        key = event_key(event)
        if self._dangerous(event):
            self._windows[key] = event.time_ns
        else:
            self._windows.pop(key, None)  # the release's figure says in line where its stub read otherwise

    def in_force(self, now_ns: int) -> str:
        """The key of the event whose window holds at ``now_ns`` ('' for none); each window that came into force is
        counted once in ``acted`` (how often the gate acted: a stub replaced before its time is not)."""
        for key, time_ns in self._windows.items():
            if time_ns <= now_ns < time_ns + self.window_ns:
                if key not in self._seen:
                    self._seen.add(key)
                    self.acted += 1
                return key
        return ""

    def forget_before(self, now_ns: int) -> None:
        """Drop windows that ended a day before ``now_ns`` (a replay may step back a little)."""
        horizon = now_ns - self.window_ns - 1440 * MINUTE_NS
        self._windows = {k: t for k, t in self._windows.items() if t >= horizon}
        self._seen &= set(self._windows)


def keyword_gate(minutes: int, keys: Iterable[str]) -> EventGate:
    dangerous = frozenset(keys)
    return EventGate(KEYWORD_RISK, minutes, lambda event: keyword_reading(event) in dangerous)


def oracle_gate(minutes: int, event_ids: Iterable[str]) -> EventGate:
    dangerous = frozenset(event_ids)
    return EventGate(ORACLE_RISK, minutes, lambda event: event_key(event) in dangerous)


def overlay(halts: list[str], rules: list[str]) -> list[str]:
    """The halts with the gates in force laid over them: a halt already in force keeps its name (entries are blocked
    either way); the first gate in force names the others'."""
    if not rules:
        return halts
    return [halt or rules[0] for halt in halts]
