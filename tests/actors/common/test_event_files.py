"""Event files: calendar CSV and ICS, headlines JSONL; each bad input refused naming file, row and field."""

import math
from pathlib import Path

import pandas as pd
import pytest

from actors.common.event_files import EventFileError, load_events, parse_number, read_events


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def ns(iso: str) -> int:
    return pd.Timestamp(iso).value


CALENDAR = """time,name,importance,actual,consensus,previous
2024-03-12T08:30:00-04:00,CPI m/m,high,0.4%,0.4%,0.3%
2024-03-08T13:30:00Z,Nonfarm Payrolls,high,275K,200K,229K
2024-03-13T10:30:00-04:00,Crude Oil Inventories,low,,,
"""


def test_calendar_csv_with_zoned_times_sorted_and_figures_read(tmp_path):
    events = load_events(write(tmp_path, "cal.csv", CALENDAR))
    assert [e.name for e in events] == ["Nonfarm Payrolls", "CPI m/m", "Crude Oil Inventories"]
    nfp, cpi, crude = events
    assert nfp.time_ns == ns("2024-03-08T13:30Z") and cpi.time_ns == ns("2024-03-12T12:30Z")
    assert (nfp.actual, nfp.consensus, nfp.previous) == (275_000.0, 200_000.0, 229_000.0)
    assert (cpi.kind, cpi.importance, cpi.actual, cpi.text) == ("release", "high", 0.4, "CPI m/m")
    assert math.isnan(crude.actual) and crude.importance == "low"
    assert cpi.event_id == "CPI m/m@2024-03-12T12:30:00Z"


def test_calendar_csv_with_date_and_time_columns_is_us_eastern_across_dst(tmp_path):
    path = write(tmp_path, "cal.csv", "Date,Time,Event,Impact,Forecast\n2024-03-08,8:30am,NFP,high,200K\n2024-03-12,08:30,CPI,high,0.4\n")
    nfp, cpi = load_events(path)
    assert nfp.time_ns == ns("2024-03-08T13:30Z")  # EST, UTC-5
    assert cpi.time_ns == ns("2024-03-12T12:30Z")  # EDT, UTC-4 (DST began 2024-03-10)
    assert nfp.consensus == 200_000.0


@pytest.mark.parametrize("text, row, field, problem", [
    ("time,name,importance\n2024-03-12T08:30:00,CPI,high\n", 1, "time", "no time zone"),
    ("time,name,importance\n2024-03-12T08:30:00Z,CPI,extreme\n", 1, "importance", "not one of"),
    ("time,name,importance\n2024-03-12T08:30:00Z,,high\n", 1, "name", "empty name"),
    ("time,name,importance,actual\n2024-03-12T08:30:00Z,CPI,high,0.4\n2024-03-13T08:30:00Z,PPI,high,n/a\n", 2, "actual", "could not convert"),
    ("date,time,name,importance\n2024-03-12,All Day,CPI,high\n", 1, "time", "not a clock time"),
    ("date,time,name,importance\n12/03/2024,08:30,CPI,high\n", 1, "date", "Invalid isoformat"),
    ("time,name,importance,consensu\n2024-03-12T08:30:00Z,CPI,high,0.3\n", 0, "consensu", "unknown column"),
])
def test_calendar_csv_bad_row_refuses_the_file_naming_row_and_field(tmp_path, text, row, field, problem):
    path = write(tmp_path, "bad.csv", text)
    with pytest.raises(EventFileError, match=problem) as caught:
        load_events(path)
    assert (caught.value.path, caught.value.row, caught.value.field) == (str(path), row, field)
    assert str(path) in str(caught.value) and f"field {field!r}" in str(caught.value)


def test_calendar_csv_missing_column_extra_cells_and_duplicates_are_refused(tmp_path):
    with pytest.raises(EventFileError, match="no 'importance' column"):
        load_events(write(tmp_path, "a.csv", "time,name\n2024-03-12T08:30:00Z,CPI\n"))
    with pytest.raises(EventFileError, match="row 1: 4 cells for 3 columns"):
        load_events(write(tmp_path, "b.csv", "time,name,importance\n2024-03-12T08:30:00Z,CPI,high,extra\n"))
    with pytest.raises(EventFileError, match="row 2: duplicate of row 1"):
        load_events(write(tmp_path, "c.csv", "time,name,importance\n2024-03-12T08:30:00Z,CPI,high\n2024-03-12T04:30:00-04:00,CPI,high\n"))
    with pytest.raises(EventFileError, match="empty file"):
        load_events(write(tmp_path, "d.csv", ""))


def test_a_release_on_a_cme_holiday_or_half_day_is_read_and_warned_about_naming_the_row(tmp_path):
    path = write(tmp_path, "cal.csv", "time,name,importance\n2024-03-12T08:30:00-04:00,CPI,high\n"
                 "2024-03-29T08:30:00-04:00,PCE,high\n2024-11-29T10:00:00-05:00,Sentiment,low\n")
    result = read_events(path)
    assert len(result.events) == 3
    assert len(result.warnings) == 2
    assert "row 2" in result.warnings[0] and "holiday" in result.warnings[0] and "'PCE'" in result.warnings[0]
    assert "row 3" in result.warnings[1] and "half day" in result.warnings[1]


HEADLINES = """{"time": "2024-03-12T10:05:00-04:00", "text": "Powell: no rush to cut", "source": "Reuters", "importance": "high"}

{"time": "2024-03-12T09:00:00+01:00", "text": "ECB's Lagarde speaks"}
"""


def test_headlines_jsonl_read_with_source_and_default_importance(tmp_path):
    first, second = load_events(write(tmp_path, "news.jsonl", HEADLINES))
    assert first.time_ns == ns("2024-03-12T08:00Z") and first.text == "ECB's Lagarde speaks" and first.importance == "medium"
    assert second.kind == "headline" and second.text == "Reuters: Powell: no rush to cut" and second.importance == "high"
    assert second.name == "" and first.event_id != second.event_id


@pytest.mark.parametrize("line, field, problem", [
    ('{"time": "2024-03-12T10:05:00", "text": "x"}', "time", "no time zone"),
    ('{"text": "x"}', "time", "missing"),
    ('{"time": "2024-03-12T10:05:00Z", "text": ""}', "text", "missing"),
    ('{"time": "2024-03-12T10:05:00Z", "text": "x", "importance": "huge"}', "importance", "not one of"),
    ('{"time": "2024-03-12T10:05:00Z", "text": "x", "headline": "y"}', "headline", "unknown key"),
    ('{"time": "2024-03-12T10:05:00Z", "text": "x", "source": 3}', "source", "expected a string"),
    ('{"time": "2024-03-12T10:05:00Z", "text": "x"', None, "not JSON"),
    ('["2024-03-12T10:05:00Z", "x"]', None, "expected a JSON object"),
])
def test_headlines_bad_line_refuses_the_file_naming_line_and_field(tmp_path, line, field, problem):
    path = write(tmp_path, "news.jsonl", '{"time": "2024-03-12T10:00:00Z", "text": "fine"}\n' + line + "\n")
    with pytest.raises(EventFileError, match=problem) as caught:
        load_events(path)
    assert (caught.value.row, caught.value.field) == (2, field)
    assert f"{path}, line 2" in str(caught.value)


def test_headlines_duplicate_id_is_refused(tmp_path):
    line = '{"time": "2024-03-12T10:00:00Z", "text": "same"}\n'
    with pytest.raises(EventFileError, match="line 2: duplicate of line 1"):
        load_events(write(tmp_path, "news.jsonl", line + line))


ICS = """BEGIN:VCALENDAR\r
VERSION:2.0\r
BEGIN:VEVENT\r
UID:cpi-2024-03@bls\r
DTSTART;TZID=America/New_York:20240312T083000\r
SUMMARY:CPI m/m\r
DESCRIPTION:Consumer prices\\, February\r
X-IMPORTANCE:high\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTART:20240320T180000Z\r
SUMMARY:FOMC rate decision (a long summary folded onto\r
  a second line)\r
PRIORITY:5\r
END:VEVENT\r
END:VCALENDAR\r
"""


def test_ics_events_with_tzid_utc_folding_escapes_and_priority(tmp_path):
    cpi, fomc = load_events(write(tmp_path, "cal.ics", ICS))
    assert (cpi.time_ns, cpi.event_id, cpi.importance, cpi.text) == (ns("2024-03-12T12:30Z"), "cpi-2024-03@bls", "high", "Consumer prices, February")
    assert fomc.time_ns == ns("2024-03-20T18:00Z") and fomc.importance == "medium"
    assert fomc.name == "FOMC rate decision (a long summary folded onto a second line)"


def test_ics_reads_past_a_timezone_block_and_an_alarm_inside_the_event(tmp_path):
    text = ICS.replace("VERSION:2.0\r\n", "VERSION:2.0\r\nBEGIN:VTIMEZONE\r\nTZID:America/New_York\r\nBEGIN:STANDARD\r\n"
                       "DTSTART:19701101T020000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n")
    text = text.replace("UID:cpi-2024-03@bls\r\n", "UID:cpi-2024-03@bls\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\n"
                        "DESCRIPTION:Reminder\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n")
    cpi, fomc = load_events(write(tmp_path, "cal.ics", text))
    assert (cpi.text, cpi.time_ns, fomc.name[:4]) == ("Consumer prices, February", ns("2024-03-12T12:30Z"), "FOMC")


@pytest.mark.parametrize("replace, with_, line, field, problem", [
    ("DTSTART:20240320T180000Z", "DTSTART;VALUE=DATE:20240320", 11, "DTSTART", "all-day"),
    ("DTSTART:20240320T180000Z", "DTSTART;TZID=Mars/Olympus:20240320T180000", 11, "DTSTART", "unknown TZID"),
    ("PRIORITY:5", "PRIORITY:0", 14, "importance", "PRIORITY '0'"),
    ("PRIORITY:5", "RRULE:FREQ=MONTHLY", 14, "RRULE", "recurring"),
    ("SUMMARY:FOMC", "COMMENT:FOMC", 10, "SUMMARY", "without SUMMARY"),
])
def test_ics_bad_event_refuses_the_file_naming_line_and_field(tmp_path, replace, with_, line, field, problem):
    path = write(tmp_path, "cal.ics", ICS.replace(replace, with_))
    with pytest.raises(EventFileError, match=problem) as caught:
        load_events(path)
    assert (caught.value.row, caught.value.field) == (line, field)


def test_unknown_extension_and_unreadable_file_are_refused(tmp_path):
    with pytest.raises(EventFileError, match="unknown event file type '.txt'"):
        load_events(write(tmp_path, "cal.txt", CALENDAR))
    with pytest.raises(EventFileError, match="cannot read"):
        load_events(tmp_path / "missing.csv")


def test_parse_number():
    assert parse_number("1,234.5") == 1234.5 and parse_number("-0.1%") == -0.1 and parse_number("2.5M") == 2.5e6
    assert math.isnan(parse_number(" "))
    with pytest.raises(ValueError):
        parse_number("inf")
