"""CME equity-index futures sessions, holidays and half days, from exchange_calendars (not by hand).

The calendar is exchange_calendars' ``CMES`` (CME Globex equity futures: ES, NQ), in America/Chicago.
A CMES session is labelled with the date it closes on (the session of Tuesday opens Monday evening, CT),
so a release at 08:30 ET on a date falls in that date's session. ``exchange_calendars`` keeps the holiday rules (Good Friday, Christmas, New
Year; Globex half days on Thanksgiving, the Friday after, Christmas Eve, July 4th, the Monday holidays),
updated with the library; writing them here would be a second, staler copy.

``trading_day(date)`` says whether a date is a session, a half day (an early close), a holiday (a weekday
with no session) and when it closes (UTC); ``is_session`` and ``is_half_day`` are its two common questions.
Dates outside the calendar's range (it reaches about a year ahead) raise ``ValueError`` naming the range.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

CALENDAR_NAME = "CMES"
"""exchange_calendars' CME equity futures calendar (4.13)."""


@dataclass(frozen=True)
class TradingDay:
    date: dt.date
    session: bool
    """The exchange trades a session closing on this date."""
    half_day: bool
    """The session closes early (a Globex half day)."""
    holiday: bool
    """A weekday without a session (a full holiday)."""
    close_utc: pd.Timestamp | None
    """When the session closes (UTC); None without a session."""

    def describe(self) -> str:
        """``holiday``, ``half day (closes 17:00 UTC)``, ``weekend`` or ``session``: for warnings."""
        if self.holiday:
            return "a CME holiday (no session)"
        if not self.session:
            return "a weekend (no session)"
        if self.half_day:
            return f"a CME half day (closes {self.close_utc:%H:%M} UTC)"
        return "a CME session"


@lru_cache(maxsize=1)
def cme_calendar():
    import exchange_calendars as xcals  # ~0.1 s to build; only who asks pays it

    return xcals.get_calendar(CALENDAR_NAME)


@lru_cache(maxsize=1)
def _early_closes() -> frozenset[pd.Timestamp]:
    return frozenset(pd.DatetimeIndex(cme_calendar().early_closes).normalize())


@lru_cache(maxsize=1)
def _closes_utc() -> dict[pd.Timestamp, pd.Timestamp]:
    """Session date -> its close (UTC), the whole calendar at once: a dict look-up, not a calendar query, per date."""
    closes = cme_calendar().closes
    return {pd.Timestamp(session): pd.Timestamp(close).tz_convert("UTC") if pd.Timestamp(close).tzinfo else pd.Timestamp(close, tz="UTC")
            for session, close in closes.items()}


def _as_date(day: dt.date | str | pd.Timestamp) -> pd.Timestamp:
    stamp = pd.Timestamp(day)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_localize(None)
    return stamp.normalize()


def trading_day(day: dt.date | str | pd.Timestamp) -> TradingDay:
    """The CME equity futures session of a date (a date, ``2024-07-04``, or a timestamp: its date as written)."""
    return _trading_day(_as_date(day))


@lru_cache(maxsize=8192)  # a calendar file asks about the same dates again and again
def _trading_day(date: pd.Timestamp) -> TradingDay:
    calendar = cme_calendar()
    first, last = calendar.first_session, calendar.last_session
    if not first <= date <= last:
        raise ValueError(f"{date.date()} is outside the {CALENDAR_NAME} calendar ({first.date()} to {last.date()})")
    close = _closes_utc().get(date)
    session = close is not None
    return TradingDay(date=date.date(), session=session, half_day=session and date in _early_closes(),
                      holiday=not session and date.day_of_week < 5, close_utc=close)


def is_session(day: dt.date | str | pd.Timestamp) -> bool:
    return trading_day(day).session


def is_half_day(day: dt.date | str | pd.Timestamp) -> bool:
    return trading_day(day).half_day


def session_close_utc(day: dt.date | str | pd.Timestamp) -> pd.Timestamp | None:
    return trading_day(day).close_utc
