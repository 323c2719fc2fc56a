"""A paper session's report holds the md.event messages the feed sent during its bars (the paper env's shell on the
harness, as test_paper_replay.py drives it), and the DecisionBook keeps one event per id."""

from __future__ import annotations

import json
import math

from actors.env.decision_book import MAX_EVENTS_KEPT, DecisionBook
from bus.messages import EnvObs, Event
from runtime.testing import actor_harness
from tests.actors.env.test_paper_replay import PAPER, WARMUP, as_history, session_bars, verdict


async def test_the_paper_report_lists_and_charts_the_feeds_events_of_its_bars(tmp_path):
    bars = session_bars(WARMUP + 6)
    old = Event(time_ns=bars[0].start_ns - 3 * 86_400 * 10**9, kind="headline", text="last week's news", source="headlines:old.jsonl")
    news = Event(time_ns=bars[WARMUP + 1].start_ns + 20 * 10**9, kind="headline", importance="high", text="Fed signals a pause",
                 event_id="h1", source="headlines:news.jsonl")
    async with actor_harness("env", PAPER, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]], old)
        await h.deliver(bars[WARMUP])
        observation = await h.recv(EnvObs)
        await h.deliver(news)
        for bar in bars[WARMUP + 1:]:
            await h.deliver(verdict(observation.step), bar)
            observation = await h.recv(EnvObs)
        await h.stop()

    report = tmp_path / "paper" / "report"
    document = json.loads((report / "metrics.json").read_text())
    assert [event["text"] for event in document["events"]] == ["Fed signals a pause"]  # last week's is outside the session's bars
    page = (report / "report.html").read_text()
    assert "Market events (1)" in page and "Fed signals a pause" in page


def test_the_book_keeps_one_event_per_id_the_newest_text_and_a_bounded_number():
    book = DecisionBook(n_envs=1)
    book.keep_event(Event(time_ns=1, kind="release", name="CPI m/m", text="CPI m/m (consensus 0.2)", actual=math.nan, event_id="cpi"))
    book.keep_event(Event(time_ns=1, kind="release", name="CPI m/m", text="CPI m/m prints 0.4%", actual=0.4, event_id="cpi"))
    assert [event.text for event in book.events.values()] == ["CPI m/m prints 0.4%"]
    for index in range(MAX_EVENTS_KEPT + 2):
        book.keep_event(Event(time_ns=10 + index, kind="headline", text=f"headline {index}"))
    assert len(book.events) == MAX_EVENTS_KEPT and "cpi" not in book.events
