"""Market events from files: an economic calendar (CSV or ICS) and a headlines file (JSON lines).

``load_events(path)`` dispatches on the extension (``.csv``, ``.ics``, ``.jsonl``) and returns the events
sorted by time (``MarketEvent``, actors/common/events.py); ``read_events(path)`` also returns the warnings
(a release dated on a CME holiday or half day). Who replays them: the feed (``bin/feed --calendar FILE
--headlines FILE``) and the env/reasoner side.

Bad input: the WHOLE FILE IS REFUSED with an ``EventFileError`` naming the file, the row (CSV: the data
row, 1-based, header not counted; JSONL and ICS: the line) and the field, so no event is ever dropped
silently. A calendar row is a schedule a risk rule relies on: a half-read calendar would quietly miss a
blackout. Duplicates (the same release at the same time, the same headline id) are refused too, naming
both rows. A release dated on a CME holiday, a half day or a weekend (actors/common/trading_calendar.py)
is read but warned about, naming the row: payrolls came out on Good Friday 2023-04-07, so it is not an error.

CSV economic calendar (a header, any column order, names case-insensitive)::

    time,name,importance,actual,consensus,previous
    2024-03-12T08:30:00-04:00,CPI m/m,high,0.4%,0.4%,0.3%
    2024-03-08T13:30:00Z,Nonfarm Payrolls,high,275K,200K,229K

or the date and the time apart, read in US/Eastern (where US releases are scheduled)::

    date,time,name,importance,actual,consensus,previous
    2024-03-12,08:30,CPI m/m,high,0.4%,0.4%,0.3%

- ``time``: ISO-8601 WITH a zone (``Z`` or an offset) when there is no ``date`` column; with a ``date``
  column (``YYYY-MM-DD``) ``time`` is ``HH:MM[:SS]`` or ``h:mm am|pm`` in US/Eastern. A naive ISO time
  without a ``date`` column is refused (its zone would be a guess).
- ``name`` (or ``event``): the release's name. ``importance`` (or ``impact``): low | medium | high.
- ``actual``, ``consensus`` (or ``forecast``), ``previous`` (or ``prior``): optional numbers; empty = unknown
  (NaN). ``%`` is stripped, ``,`` thousands separators too, and ``K``/``M``/``B``/``T`` multiply by 1e3, 1e6,
  1e9, 1e12 (``275K`` -> 275000), so actual and consensus compare in the same units.
- ``text``: optional; the line as a reader sees it (default: the name).
- Any other column is refused (a misspelt ``consensus`` would otherwise be lost).

Headlines (``.jsonl``, one JSON object a line, blank lines skipped)::

    {"time": "2024-03-12T10:05:00-04:00", "text": "Fed's Powell: no rush to cut", "source": "Reuters", "importance": "high"}

``time`` (ISO-8601 with a zone) and ``text`` are required; ``importance`` defaults to medium; ``source``
(the publisher) is kept at the head of the text (``Reuters: Fed's Powell ...``), MarketEvent having no
field for it; ``id`` (optional) is the dedupe id, else the time and text. Other keys are refused.

ICS (``.ics``, RFC 5545, read by hand: the standard library has no iCalendar parser and the subset a
calendar export uses is small; anything outside it is refused, never skipped): each ``VEVENT`` is a
release. ``DTSTART`` is the time (``...Z`` = UTC, ``;TZID=Zone/Name`` = that zone, floating = US/Eastern;
an all-day ``VALUE=DATE`` is refused: a release has a time); ``SUMMARY`` the name; ``UID`` the id;
``DESCRIPTION`` the text; importance from ``X-IMPORTANCE`` (low|medium|high), else ``PRIORITY`` (1-4 high,
5 medium, 6-9 low, RFC 5545's bands), else refused. ``RRULE`` (recurring events) is refused.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from actors.common.events import IMPORTANCES, MarketEvent
from actors.common.file_errors import FileError

EASTERN = ZoneInfo("America/New_York")
EXTENSIONS = (".csv", ".ics", ".jsonl")


class EventFileError(FileError):
    """An event file that cannot be used, with the file, row (or line) and field at fault (``unit="line"`` for .jsonl)."""


@dataclass
class EventFile:
    events: list[MarketEvent]
    warnings: list[str] = field(default_factory=list)
    """One line per release on a CME holiday, half day or weekend (or outside the calendar's range)."""


def load_events(path: str | Path) -> list[MarketEvent]:
    """The events of a calendar (.csv, .ics) or headlines (.jsonl) file, sorted by time; raises EventFileError."""
    return read_events(path).events


def read_events(path: str | Path) -> EventFile:
    """``load_events`` with the warnings about releases dated on a CME holiday or half day."""
    path = Path(path)
    readers = {".csv": _read_calendar_csv, ".ics": _read_ics, ".jsonl": _read_headlines}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise EventFileError(path, f"unknown event file type {path.suffix!r}: expected one of {EXTENSIONS}")
    try:
        text = path.read_text(encoding="utf-8-sig")  # -sig: a spreadsheet's BOM is not part of the first name
    except (OSError, UnicodeDecodeError) as exc:
        raise EventFileError(path, f"cannot read: {exc}") from exc
    events, warnings = reader(path, text)
    return EventFile(sorted(events, key=lambda e: e.time_ns), warnings)


# --------------------------------------------------------------------------- values


def parse_number(text: str) -> float:
    """``0.4%`` -> 0.4, ``275K`` -> 275000.0, ``1,234.5`` -> 1234.5, empty -> NaN; ValueError otherwise."""
    text = text.strip().replace(",", "")
    if not text:
        return math.nan
    text = text.removesuffix("%")
    multiplier = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}.get(text[-1:].upper(), 1.0)
    if multiplier != 1.0:
        text = text[:-1]
    value = float(text) * multiplier
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def parse_aware_time(text: str) -> dt.datetime:
    """ISO-8601 with a zone (``Z`` or an offset); ValueError for a naive or unreadable time."""
    stamp = dt.datetime.fromisoformat(text.strip())
    if stamp.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone: write it with an offset (2024-03-12T08:30:00-04:00) or Z")
    return stamp


_CLOCK_FORMATS = ("%H:%M", "%H:%M:%S", "%I:%M%p", "%I:%M %p", "%I:%M:%S%p")


def parse_eastern(date_text: str, time_text: str) -> dt.datetime:
    """A date (YYYY-MM-DD) and a clock time (08:30, 8:30am) in US/Eastern."""
    day = dt.date.fromisoformat(date_text.strip())
    clock = time_text.strip().lower().replace(".", "")
    for fmt in _CLOCK_FORMATS:
        try:
            return dt.datetime.combine(day, dt.datetime.strptime(clock, fmt).time(), EASTERN)
        except ValueError:
            continue
    raise ValueError(f"{time_text!r} is not a clock time (08:30, 08:30:00 or 8:30am)")


def to_ns(stamp: dt.datetime) -> int:
    """UTC nanoseconds of an aware datetime (exact: no float on the way)."""
    delta = stamp.astimezone(dt.timezone.utc) - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def parse_importance(text: str) -> str:
    value = text.strip().lower()
    if value not in IMPORTANCES:
        raise ValueError(f"{text!r} is not one of {IMPORTANCES}")
    return value


def holiday_warning(stamp: dt.datetime, name: str) -> str | None:
    """Why a release's date (in US/Eastern) is odd for CME equity futures, or None on a full session."""
    from actors.common.trading_calendar import trading_day

    date = stamp.astimezone(EASTERN).date()
    try:
        day = trading_day(date)
    except ValueError as exc:
        return f"release {name!r} on {date}: not checked against the CME calendar ({exc})"
    if day.session and not day.half_day:
        return None
    return f"release {name!r} on {date}: {day.describe()}"


# --------------------------------------------------------------------------- CSV calendar

_CSV_ALIASES = {"event": "name", "impact": "importance", "forecast": "consensus", "prior": "previous"}
_CSV_COLUMNS = {"date", "time", "name", "importance", "actual", "consensus", "previous", "text"}


def _csv_header(path: Path, names: list[str] | None) -> dict[str, str]:
    """File column -> our field; refuses unknown, repeated and missing columns."""
    if not names:
        raise EventFileError(path, "empty file: expected a header (time,name,importance,...)")
    mapping: dict[str, str] = {}
    for raw in names:
        key = _CSV_ALIASES.get(raw.strip().lower(), raw.strip().lower())
        if key not in _CSV_COLUMNS:
            raise EventFileError(path, f"unknown column {raw!r}: expected {sorted(_CSV_COLUMNS)} (or event, impact, forecast, prior)", row=0, field=raw, unit="header row")
        if key in mapping.values():
            raise EventFileError(path, f"column {raw!r} repeats {key!r}", row=0, field=raw, unit="header row")
        mapping[raw] = key
    for needed in ("time", "name", "importance"):
        if needed not in mapping.values():
            raise EventFileError(path, f"no {needed!r} column (have {names})", field=needed)
    return mapping


def _read_calendar_csv(path: Path, text: str) -> tuple[list[MarketEvent], list[str]]:
    reader = csv.DictReader(text.splitlines())
    mapping = _csv_header(path, reader.fieldnames)
    has_date = "date" in mapping.values()
    events: list[MarketEvent] = []
    warnings: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(reader, start=1):
        if None in raw:  # more cells than header names
            raise EventFileError(path, f"{len(reader.fieldnames) + len(raw[None])} cells for {len(reader.fieldnames)} columns", row=number)
        row = {mapping[k]: (v or "") for k, v in raw.items()}
        if not any(v.strip() for v in row.values()):
            raise EventFileError(path, "empty row", row=number)
        event, stamp = _calendar_row(path, number, row, has_date)
        if event.event_id in seen:
            raise EventFileError(path, f"duplicate of row {seen[event.event_id]} ({event.name!r} at {stamp.isoformat()})", row=number)
        seen[event.event_id] = number
        warning = holiday_warning(stamp, event.name)
        if warning:
            warnings.append(f"{path}, row {number}: {warning}")
        events.append(event)
    return events, warnings


def _calendar_row(path: Path, number: int, row: dict[str, str], has_date: bool) -> tuple[MarketEvent, dt.datetime]:
    def field_value(name: str, parse):
        try:
            return parse(row.get(name, ""))
        except ValueError as exc:
            raise EventFileError(path, str(exc), row=number, field=name) from None

    if has_date:
        try:
            stamp = parse_eastern(row["date"], row["time"])
        except ValueError as exc:
            bad = "date" if not _is_iso_date(row["date"]) else "time"
            raise EventFileError(path, f"{exc} (date and time are read in US/Eastern)", row=number, field=bad) from None
    else:
        stamp = field_value("time", parse_aware_time)
    name = row["name"].strip()
    if not name:
        raise EventFileError(path, "empty name", row=number, field="name")
    importance = field_value("importance", parse_importance)
    figures = {key: field_value(key, parse_number) for key in ("actual", "consensus", "previous")}
    utc = stamp.astimezone(dt.timezone.utc)
    event = MarketEvent(time_ns=to_ns(stamp), kind="release", importance=importance, name=name,
                        text=row.get("text", "").strip() or name, event_id=f"{name}@{utc:%Y-%m-%dT%H:%M:%SZ}", **figures)
    return event, stamp


def _is_iso_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text.strip())
        return True
    except ValueError:
        return False


# --------------------------------------------------------------------------- JSON-lines headlines

_HEADLINE_KEYS = {"time", "text", "source", "importance", "id"}


def _read_headlines(path: Path, text: str) -> tuple[list[MarketEvent], list[str]]:
    events: list[MarketEvent] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        event = headline_from_json(path, number, line)
        if event.event_id in seen:
            raise EventFileError(path, f"duplicate of line {seen[event.event_id]} (id {event.event_id!r})", row=number, unit="line")
        seen[event.event_id] = number
        events.append(event)
    return events, []


def headline_from_json(path: Path, number: int, line: str) -> MarketEvent:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise EventFileError(path, f"not JSON: {exc.msg} at column {exc.colno}", row=number, unit="line") from None
    if not isinstance(record, dict):
        raise EventFileError(path, f"expected a JSON object, got {type(record).__name__}", row=number, unit="line")
    for key in record:
        if key not in _HEADLINE_KEYS:
            raise EventFileError(path, f"unknown key: expected {sorted(_HEADLINE_KEYS)}", row=number, field=key, unit="line")
    for key in ("time", "text"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise EventFileError(path, "missing or not a non-empty string", row=number, field=key, unit="line")
    for key in ("source", "importance", "id"):
        if key in record and not isinstance(record[key], str):
            raise EventFileError(path, f"expected a string, got {type(record[key]).__name__}", row=number, field=key, unit="line")
    try:
        stamp = parse_aware_time(record["time"])
    except ValueError as exc:
        raise EventFileError(path, str(exc), row=number, field="time", unit="line") from None
    try:
        importance = parse_importance(record.get("importance", "medium"))
    except ValueError as exc:
        raise EventFileError(path, str(exc), row=number, field="importance", unit="line") from None
    source = record.get("source", "").strip()
    text = f"{source}: {record['text'].strip()}" if source else record["text"].strip()
    event_id = record.get("id") or headline_id(to_ns(stamp), text)
    return MarketEvent(time_ns=to_ns(stamp), kind="headline", importance=importance, text=text, event_id=event_id)


def headline_id(time_ns: int, text: str) -> str:
    """A stable id for a headline without one: its time and text."""
    return "h:" + hashlib.sha1(f"{time_ns}|{text}".encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- ICS


_ICS_PRIORITY = {**{n: "high" for n in range(1, 5)}, 5: "medium", **{n: "low" for n in range(6, 10)}}


def unfold_ics(text: str) -> list[tuple[int, str]]:
    """(line number of its start, logical line): RFC 5545 folds long lines with CRLF + a space or a tab."""
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line[:1] in (" ", "\t") and lines:
            lines[-1] = (lines[-1][0], lines[-1][1] + line[1:])
        elif line.strip():
            lines.append((number, line))
    return lines


def ics_property(line: str) -> tuple[str, dict[str, str], str]:
    """``DTSTART;TZID=America/New_York:20240312T083000`` -> (DTSTART, {TZID: ...}, 20240312T083000)."""
    head, _, value = line.partition(":")
    name, *params = head.split(";")
    parameters = {}
    for param in params:
        key, _, val = param.partition("=")
        parameters[key.upper()] = val.strip('"')
    return name.upper(), parameters, value


def ics_text(value: str) -> str:
    """RFC 5545 TEXT unescaped: backslash-n, -comma, -semicolon, -backslash."""
    return re.sub(r"\\([nN,;\\])", lambda m: "\n" if m.group(1) in "nN" else m.group(1), value).strip()


def ics_time(value: str, params: dict[str, str]) -> dt.datetime:
    if params.get("VALUE", "").upper() == "DATE" or re.fullmatch(r"\d{8}", value.strip()):
        raise ValueError(f"{value!r} is an all-day date: a release needs a time (DTSTART:20240312T123000Z)")
    try:
        naive = dt.datetime.strptime(value.strip().rstrip("Zz"), "%Y%m%dT%H%M%S")
    except ValueError:
        raise ValueError(f"{value!r} is not an iCalendar date-time (20240312T083000, ...Z for UTC)") from None
    if value.strip()[-1:] in "Zz":
        return naive.replace(tzinfo=dt.timezone.utc)
    zone_name = params.get("TZID", "")
    try:
        zone = ZoneInfo(zone_name) if zone_name else EASTERN  # floating time: US/Eastern, as the CSV's date + time
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown TZID {zone_name!r} (an IANA zone name such as America/New_York)") from None
    return naive.replace(tzinfo=zone)


def _ics_importance(props: dict[str, tuple[int, dict[str, str], str]]) -> str:
    if "X-IMPORTANCE" in props:
        return parse_importance(props["X-IMPORTANCE"][2])
    if "PRIORITY" in props:
        text = props["PRIORITY"][2].strip()
        if not text.isdigit() or int(text) not in _ICS_PRIORITY:
            raise ValueError(f"PRIORITY {text!r}: expected 1-4 (high), 5 (medium) or 6-9 (low)")
        return _ICS_PRIORITY[int(text)]
    raise ValueError("no importance: add X-IMPORTANCE:high|medium|low or PRIORITY (1-4 high, 5 medium, 6-9 low)")


def _read_ics(path: Path, text: str) -> tuple[list[MarketEvent], list[str]]:
    events: list[MarketEvent] = []
    warnings: list[str] = []
    seen: dict[str, int] = {}
    props: dict[str, tuple[int, dict[str, str], str]] | None = None
    begin = nested = 0
    for number, line in unfold_ics(text):
        name, params, value = ics_property(line)
        if props is not None and name in ("BEGIN", "END") and value.upper() != "VEVENT":
            nested += 1 if name == "BEGIN" else -1  # a VALARM inside the event: its DESCRIPTION is not the event's
        elif name == "BEGIN" and value.upper() == "VEVENT":
            props, begin, nested = {}, number, 0
        elif name == "END" and value.upper() == "VEVENT" and props is not None:
            event, stamp = _ics_event(path, begin, props)
            if event.event_id in seen:
                raise EventFileError(path, f"duplicate of the VEVENT at line {seen[event.event_id]} (UID {event.event_id!r})", row=begin, unit="line")
            seen[event.event_id] = begin
            warning = holiday_warning(stamp, event.name)
            if warning:
                warnings.append(f"{path}, line {begin}: {warning}")
            events.append(event)
            props = None
        elif props is not None and not nested:
            props.setdefault(name, (number, params, value))
    if props is not None:
        raise EventFileError(path, "VEVENT without END:VEVENT", row=begin, unit="line")
    if not events and "BEGIN:VCALENDAR" not in text.upper():
        raise EventFileError(path, "not an iCalendar file (no BEGIN:VCALENDAR)")
    return events, warnings


def _ics_event(path: Path, begin: int, props: dict[str, tuple[int, dict[str, str], str]]) -> tuple[MarketEvent, dt.datetime]:
    if "RRULE" in props:
        raise EventFileError(path, "recurring events are not read: list each release", row=props["RRULE"][0], field="RRULE", unit="line")
    for needed in ("DTSTART", "SUMMARY"):
        if needed not in props or not props[needed][2].strip():
            raise EventFileError(path, f"VEVENT without {needed}", row=begin, field=needed, unit="line")
    line, params, value = props["DTSTART"]
    try:
        stamp = ics_time(value, params)
    except ValueError as exc:
        raise EventFileError(path, str(exc), row=line, field="DTSTART", unit="line") from None
    try:
        importance = _ics_importance(props)
    except ValueError as exc:
        where = next((props[k][0] for k in ("X-IMPORTANCE", "PRIORITY") if k in props), begin)
        raise EventFileError(path, str(exc), row=where, field="importance", unit="line") from None
    name = ics_text(props["SUMMARY"][2])
    utc = stamp.astimezone(dt.timezone.utc)
    uid = props["UID"][2].strip() if "UID" in props else f"{name}@{utc:%Y-%m-%dT%H:%M:%SZ}"
    text = ics_text(props["DESCRIPTION"][2]) if "DESCRIPTION" in props else name
    return MarketEvent(time_ns=to_ns(stamp), kind="release", importance=importance, name=name, text=text or name, event_id=uid), stamp
