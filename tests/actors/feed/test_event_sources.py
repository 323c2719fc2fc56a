"""Event sources of the feed: files on the bar clock (EventSchedule) and RSS/Atom against a local HTTP server."""

import asyncio
import math
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pandas as pd
import pytest

from actors.common.events import MarketEvent
from actors.feed.event_sources import EventSchedule, RssSource
from tests.local_http import LocalHttpServer

FEEDS = Path(__file__).parent / "feeds"
MINUTE = 60 * 10**9


def ns(iso: str) -> int:
    return pd.Timestamp(iso).value


# --------------------------------------------------------------------------- EventSchedule


def test_schedule_hands_each_event_out_once_when_the_clock_passes_it_and_announces_releases_ahead():
    cpi = MarketEvent(time_ns=ns("2024-03-12T12:30Z"), kind="release", importance="high", name="CPI", actual=0.4, consensus=0.3)
    headline = MarketEvent(time_ns=ns("2024-03-12T12:10Z"), kind="headline", text="Powell speaks")
    schedule = EventSchedule(ahead_ns=30 * MINUTE)
    schedule.add([cpi], "calendar:cal.csv")
    schedule.add([headline], "headlines:news.jsonl")
    assert schedule.due(ns("2024-03-12T11:59Z")) == []
    announced = schedule.due(ns("2024-03-12T12:00Z"))
    assert [(e.name, e.source) for e in announced] == [("CPI", "calendar:cal.csv")]
    assert math.isnan(announced[0].actual) and announced[0].consensus == 0.3 and announced[0].time_ns == cpi.time_ns
    assert [e.text for e in schedule.due(ns("2024-03-12T12:29Z"))] == ["Powell speaks"]
    at_time = schedule.due(ns("2024-03-12T12:30Z"))
    assert [(e.name, e.actual) for e in at_time] == [("CPI", 0.4)]
    assert schedule.due(ns("2024-03-13T00:00Z")) == [] and schedule.pending == 0


def test_schedule_without_lookahead_publishes_a_release_only_at_its_time_and_a_late_clock_gets_all_in_order():
    events = [MarketEvent(time_ns=ns(f"2024-03-12T12:{m:02d}Z"), kind="release", name=f"R{m}") for m in (40, 10, 20)]
    schedule = EventSchedule(ahead_ns=0)
    schedule.add(events, "calendar:x.csv")
    assert [e.name for e in schedule.due(ns("2024-03-12T13:00Z"))] == ["R10", "R20", "R40"]


def test_a_release_already_past_when_the_bars_begin_goes_out_once_whole():
    schedule = EventSchedule(ahead_ns=30 * MINUTE)
    schedule.add([MarketEvent(time_ns=ns("2024-03-12T12:30Z"), kind="release", name="CPI", actual=0.4)], "calendar:c.csv")
    out = schedule.due(ns("2024-03-12T13:31Z"))  # the session's first bar closes after the release
    assert [(e.name, e.actual) for e in out] == [("CPI", 0.4)]


# --------------------------------------------------------------------------- RSS against a local server


class FeedServer(LocalHttpServer):
    """http.server on 127.0.0.1, a random port: serves ``bodies[path]``; ``/stall`` waits until released."""

    def __init__(self) -> None:
        self.bodies: dict[str, bytes] = {}
        self.release = threading.Event()
        self.stalled = threading.Event()
        super().__init__()

    def respond(self, request: BaseHTTPRequestHandler) -> tuple[int, str, bytes] | None:
        if request.path == "/stall":
            self.stalled.set()
            self.release.wait(30)  # sleeps past any client timeout until the test ends
        body = self.bodies.get(request.path)
        return None if body is None else (200, "application/rss+xml", body)

    def close(self) -> None:
        self.release.set()
        super().close()


@pytest.fixture
def server():
    srv = FeedServer()
    yield srv
    srv.close()


class Log:
    def __init__(self) -> None:
        self.records: list[tuple[str, dict]] = []

    def warning(self, event, **fields):
        self.records.append((event, fields))

    def events(self, name):
        return [fields for event, fields in self.records if event == name]


async def test_rss_each_new_entry_once_in_utc_duplicates_dropped_malformed_counted_and_logged_once(server):
    server.bodies["/markets"] = (FEEDS / "markets_rss_1.xml").read_bytes()
    log = Log()
    rss = RssSource(f"{server.url}/markets", poll_secs=60, timeout_secs=5, importance="high", log=log)
    first = await rss.poll()
    assert [(e.text, e.time_ns, e.event_id) for e in first] == [
        ("ECB holds rates, Lagarde speaks", ns("2024-03-12T12:00Z"), "http://127.0.0.1/ecb-holds"),  # +01:00, by link
        ("Fed's Powell: no rush to cut rates", ns("2024-03-12T12:30Z"), "powell-1"),  # -04:00
    ]
    assert all(e.kind == "headline" and e.importance == "high" for e in first)
    assert rss.counters["entries_duplicate"] == 1 and rss.counters["entries_malformed"] == 4
    problems = sorted(f["problem"] for f in log.events("rss_entry_malformed"))
    assert problems == ["no id and no link", "no published or updated time", "no title", "unreadable time 'sometime after lunch'"]

    server.bodies["/markets"] = (FEEDS / "markets_rss_2.xml").read_bytes()
    second = await rss.poll()
    assert [(e.text, e.time_ns) for e in second] == [("Oil jumps on supply worries", ns("2024-03-12T15:15Z"))]  # EDT
    assert rss.counters["entries_duplicate"] == 3 and rss.counters["entries_malformed"] == 4  # not logged again
    assert len(log.events("rss_entry_malformed")) == 4 and rss.counters["polls"] == 2


async def test_atom_published_else_updated_times_from_several_zones(server):
    server.bodies["/asia"] = (FEEDS / "asia_atom.xml").read_bytes()
    events = await RssSource(f"{server.url}/asia", poll_secs=60, timeout_secs=5).poll()
    assert [(e.text, e.time_ns) for e in events] == [
        ("Nikkei closes at a record", ns("2024-03-12T06:30Z")),
        ("Yen firms", ns("2024-03-12T12:00Z")),
        ("BoJ said to weigh ending negative rates", ns("2024-03-12T12:30Z")),
    ]


async def test_a_stalled_feed_times_out_is_logged_and_polling_goes_on(server):
    server.bodies["/stall"] = (FEEDS / "markets_rss_1.xml").read_bytes()
    log = Log()
    polls = []

    async def sleep(secs):
        polls.append(secs)
        if len(polls) == 2:
            raise asyncio.CancelledError  # two polls are enough: stop the endless loop

    rss = RssSource(f"{server.url}/stall", poll_secs=7.0, timeout_secs=0.3, log=log, sleep=sleep)
    got = []
    with pytest.raises(asyncio.CancelledError):
        async for event in rss.events():
            got.append(event)
    assert server.stalled.is_set() and got == []
    assert rss.counters["fetch_timeouts"] == 2 and rss.counters["polls"] == 2 and polls == [7.0, 7.0]
    assert [f["timeout_secs"] for f in log.events("rss_timeout")] == [0.3, 0.3]


async def test_a_missing_feed_and_a_broken_document_are_logged_not_raised(server):
    log = Log()
    rss = RssSource(f"{server.url}/nothing-here", poll_secs=60, timeout_secs=5, log=log)
    assert await rss.poll() == [] and rss.counters["fetch_errors"] == 1
    assert "404" in log.events("rss_fetch_failed")[0]["error"]
    server.bodies["/broken"] = b"<rss><channel><item><title>Half a headline</title><guid>h1</guid><pubDate>Tue, 12 Mar 2024 10:00:00 GMT</pubDate></item><item><title"
    broken = RssSource(f"{server.url}/broken", poll_secs=60, timeout_secs=5, log=log)
    events = await broken.poll()
    assert broken.counters["feed_bozo"] == 1 and log.events("rss_bozo")
    assert [e.text for e in events] == ["Half a headline"]


async def test_the_feed_actor_publishes_a_feeds_entries_on_md_event_and_logs_them(server):
    from structlog.testing import capture_logs

    from bus.messages import Event
    from runtime.testing import actor_harness

    server.bodies["/asia"] = (FEEDS / "asia_atom.xml").read_bytes()
    overrides = {"feed.source": "synthetic", "feed.synthetic_days": 1, "feed.synthetic_pace_secs": 0.0, "feed.max_bars": 3,
                 "feed.event_rss_urls": [f"{server.url}/asia"], "feed.event_rss_importance": "low", "feed.event_poll_secs": 3600.0}
    with capture_logs() as logs:
        async with actor_harness("feed", overrides) as h:
            got = [await h.recv(Event) for _ in range(3)]
    assert [e.text for e in got] == ["Nikkei closes at a record", "Yen firms", "BoJ said to weigh ending negative rates"]
    assert all(e.source == f"rss:{server.url}/asia" and e.importance == "low" for e in got)
    logged = [e for e in logs if e["event"] == "md_event"]
    assert [e["text"] for e in logged] == [e.text for e in got] and logged[0]["time"] == "2024-03-12T06:30:00+00:00"
