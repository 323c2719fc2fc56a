"""CME equity-index futures sessions, holidays and half days, from exchange_calendars (not by hand).

The calendar is exchange_calendars' ``CMES`` (CME Globex equity futures: ES, NQ), in America/Chicago.
A CMES session is labelled with the date it closes on (the session of Tuesday opens Monday evening, CT),
so a release at 08:30 ET on a date falls in that date's session. ``exchange_calendars`` keeps the holiday rules (Good Friday, Christmas, New
Year; Globex half days on Thanksgiving, the Friday after, Christmas Eve, July 4th, the Monday holidays),
updated with the library; writing them here would be a second, staler copy.

``trading_day(date)`` says whether a date is a session, a half day (an early close), a holiday (a weekday
with no session) and when it closes (UTC); ``is_session`` and ``is_half_day`` are its two common questions.
``session_dates(start, count)`` lists the first ``count`` sessions from a date: the synthetic markets' days.
Dates outside the calendar's range (exchange_calendars builds it from 20 years before today to one year after) raise
``CalendarError`` (a ``ValueError``) naming the range: one line from bin/run, never a traceback.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

CALENDAR_NAME = "CMES"
"""exchange_calendars' CME equity futures calendar (4.13)."""


class CalendarError(ValueError):
    """Dates the calendar cannot answer (beyond its range, or not a date): a user's setting, not a bug (one line from bin/run)."""


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
    import warnings

    import exchange_calendars as xcals  # ~0.5 s to import and build; only who asks pays it

    with warnings.catch_warnings():
        # exchange_calendars 4.13 reads Series.values of zoned times, which pandas 3 warns will change (its code, not
        # ours; every synthetic market builds this calendar, so the warning would stand in every test's summary).
        warnings.filterwarnings("ignore", message="Series.values returning an ndarray that drops timezone")
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
    try:
        stamp = pd.Timestamp(day)
    except ValueError:
        raise CalendarError(f"{day!r} is not a date (YYYY-MM-DD)") from None
    if pd.isna(stamp):
        raise CalendarError(f"{day!r} is not a date (YYYY-MM-DD)")
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
        raise CalendarError(f"{date.date()} is outside the {CALENDAR_NAME} calendar ({first.date()} to {last.date()})")
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


def session_dates(start: dt.date | str | pd.Timestamp, count: int) -> pd.DatetimeIndex:
    """The first ``count`` sessions on or after ``start`` (dates at midnight, no zone): weekends and holidays skipped,
    half days included. Running past either end of the calendar is a ``CalendarError`` that says what to change."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    sessions = cme_calendar().sessions
    first_session, last_session = sessions[0], sessions[-1]
    begin = _as_date(start)
    at = int(sessions.searchsorted(begin))
    span = f"the {CALENDAR_NAME} calendar runs {first_session.date()} to {last_session.date()} (20 years before today to one year after)"
    if begin < first_session:
        raise CalendarError(f"{begin.date()} is before the first session: {span}; start later (synthetic_start_date)")
    if at + count > len(sessions):
        raise CalendarError(f"{count} sessions from {begin.date()} run past the last session: {span}, {len(sessions) - at} "
                                 "sessions fit; start earlier or ask for fewer days (synthetic_start_date, synthetic_days)")
    return pd.DatetimeIndex(sessions[at:at + count]).tz_localize(None)
