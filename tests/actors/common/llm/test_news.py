"""The event book read on an env's clock: what a prompt shows of the news at a bar, and what it must not show."""

from __future__ import annotations

import math

import pandas as pd

from actors.common.events import MarketEvent
from actors.common.llm.news import EventBook, context_minute, event_minute, news_line


def _ns(et: str) -> int:
    return int(pd.Timestamp(et, tz="America/New_York").tz_convert("UTC").value)


def _context(et: str) -> dict:
    stamp = pd.Timestamp(et)
    session = (stamp - pd.Timestamp("1970-01-01")).days
    return {"session_id": session, "time_et": stamp.strftime("%H:%M")}


CPI = MarketEvent(time_ns=_ns("2024-03-12 08:30"), kind="release", importance="high", name="CPI y/y",
                  text="CPI y/y 3.4% vs 3.1% expected", actual=3.4, consensus=3.1, event_id="cpi")
FOMC_STUB = MarketEvent(time_ns=_ns("2024-03-12 14:00"), kind="release", importance="high", name="FOMC rate decision",
                        text="FOMC rate decision", event_id="fomc")
HEADLINE = MarketEvent(time_ns=_ns("2024-03-12 10:41") + 20 * 10**9, kind="headline", text="Nvidia may cut its guidance",
                       event_id="h1")


def test_a_context_and_an_event_meet_on_the_same_et_minute():
    assert context_minute(_context("2024-03-12 10:41")) == event_minute(_ns("2024-03-12 10:41") + 59 * 10**9)
    assert context_minute({"time_et": "10:41"}) is None


def test_the_prompt_shows_recent_headlines_and_pending_releases_with_minutes_to_go():
    book = EventBook()
    for event in (CPI, FOMC_STUB, HEADLINE):
        assert book.add(event)
    line = news_line(book, context_minute(_context("2024-03-12 10:45")), window_minutes=30, horizon_minutes=240, max_items=3)
    assert line == "\nNews: 4 min ago: Nvidia may cut its guidance\nDue: FOMC rate decision in 195 min"
    # At the open the 08:30 release is an hour old: inside a 90-minute window, outside a 30-minute one.
    opening = context_minute(_context("2024-03-12 09:30"))
    assert "60 min ago: CPI y/y 3.4% vs 3.1% expected" in news_line(book, opening, 90, 240, 3)
    assert "CPI" not in news_line(book, opening, 30, 240, 3)


def test_a_pending_release_never_shows_its_figure_even_when_the_book_holds_it():
    book = EventBook()
    book.add(CPI)
    before = news_line(book, context_minute(_context("2024-03-12 08:10")), 30, 240, 3)
    assert before == "\nDue: CPI y/y in 20 min"
    assert "3.4" not in before


def test_a_published_release_replaces_its_calendar_stub_and_a_repeat_is_not_new():
    book = EventBook()
    stub = MarketEvent(time_ns=CPI.time_ns, kind="release", name="CPI y/y", text="CPI y/y (consensus 3.1)", event_id="cpi")
    assert book.add(stub) and book.add(CPI) and not book.add(CPI)
    assert len(book) == 1
    assert book.recent(context_minute(_context("2024-03-12 09:30")), 90)[0][1].text == CPI.text
    assert math.isnan(stub.actual)


def test_no_news_is_an_empty_line_so_a_plain_prompt_is_unchanged():
    assert news_line(EventBook(), 100, 30, 240, 3) == ""
    book = EventBook()
    book.add(HEADLINE)
    assert news_line(book, context_minute(_context("2024-03-13 12:00")), 30, 240, 3) == ""
