"""Market events (md.event) on the dashboard: a line in the events table and a mark on env 0's price chart at the
bar of env 0 that makes the event public; through the real bus (broker, publisher, the dashboard's reader) and
through the page's models."""

from __future__ import annotations

import datetime as dt
import math
import threading
import time

import pandas as pd
import pytest

from actors.dashboard.page import DashboardView
from actors.dashboard.state import DashboardState
from bus.messages import Event
from tests.actors.dashboard.test_state import obs

SESSION = (dt.date(2024, 3, 4) - dt.date(1970, 1, 1)).days
"""The session id of 2024-03-04 (days since 1970-01-01), as the env's market context carries it."""


def at_et(clock: str) -> int:
    return int(pd.Timestamp(f"2024-03-04 {clock}", tz="America/New_York").value)


def cpi(text: str = "CPI m/m prints 0.4% against 0.2% expected", actual: float = 0.4) -> Event:
    return Event(time_ns=at_et("08:30"), kind="release", importance="high", name="CPI m/m", text=text, actual=actual, consensus=0.2,
                 event_id="synthetic:CPI m/m:1", source="synthetic:news")


def bar(step: int, clock: str, price: float = 18_000.0):
    return obs(step, price, time_et=clock, session_id=SESSION)


def test_an_md_event_published_on_the_bus_reaches_the_events_table_and_env_0s_chart():
    from actors.dashboard.source import BusReader
    from bus.broker import Broker, bind_addresses, make_socket_dir
    from bus.client import SyncBus

    broker = Broker(bind_addresses("ipc", "127.0.0.1", 0, 0, make_socket_dir()))
    stop = threading.Event()
    serving = threading.Thread(target=broker.serve_until, args=(stop,), daemon=True)
    serving.start()
    publisher = SyncBus(broker.addresses, sender="env")
    reader, state = BusReader(broker.addresses, sender="dashboard"), DashboardState()
    try:
        deadline = time.monotonic() + 30  # a bound for a broken run, not a timing: the loop ends when the event arrives
        while not state.news.rows and time.monotonic() < deadline:
            publisher.publish(cpi())  # resent until the reader's subscription has reached the broker
            publisher.publish(bar(7, "09:30", price=18_012.5))
            reader.drain(state)
            time.sleep(0.05)
        news = [row for row in state.snapshot({})["events"] if row["kind"] == "news"]
        assert news and news[0]["actor"] == "synthetic:news" and "CPI m/m prints 0.4%" in news[0]["text"] and "03-04 08:30 ET" in news[0]["text"]
        marks = state.snapshot({})["new"]["news"]
        assert marks["step"][0] == 7 and marks["price"][0] == 18_012.5 and marks["kind"][0] == "release"
    finally:
        reader.close()
        publisher.close()
        stop.set()
        serving.join(10)


def test_an_event_is_marked_at_the_first_bar_of_env_0_at_or_after_it_once_and_as_published():
    state = DashboardState()
    state.on_message(Event(time_ns=at_et("08:30"), kind="release", importance="high", name="CPI m/m", text="CPI m/m (consensus 0.2)",
                           actual=math.nan, consensus=0.2, event_id="synthetic:CPI m/m:1", source="synthetic:news"))  # announced ahead
    state.on_message(bar(1, "08:00"))
    assert state.snapshot({})["new"]["news"]["step"] == []  # not public yet at 08:00
    assert "release due (high): CPI m/m (consensus 0.2)" in state.snapshot({})["events"][0]["text"]
    state.on_message(cpi())
    state.on_message(bar(2, "08:31"))
    state.on_message(bar(3, "08:32"))
    marks = state.snapshot({})["new"]["news"]
    assert marks["step"] == [2] and marks["text"] == ["CPI m/m prints 0.4% against 0.2% expected"]


def test_an_event_of_another_envs_stretch_is_listed_but_not_marked_on_env_0s_chart():
    state = DashboardState()
    state.on_message(Event(time_ns=at_et("08:30") - 86_400 * 10**9, kind="headline", text="yesterday's news", source="synthetic:news"))
    state.on_message(bar(1, "10:00"))
    assert state.snapshot({})["new"]["news"]["step"] == []
    assert "yesterday's news" in state.snapshot({})["events"][0]["text"]


def test_the_page_streams_the_event_marks_onto_the_price_chart_with_their_text():
    state = DashboardState()
    view = DashboardView(state)
    state.on_message(cpi())
    state.on_message(bar(4, "09:30"))
    view.update()
    assert list(view.news_source.data["step"]) == [4]
    assert list(view.news_source.data["text"]) == ["CPI m/m prints 0.4% against 0.2% expected"]
    assert "news" in view.event_kinds.options


def test_a_logged_md_event_reads_back_into_the_events_table_once_even_when_the_bus_brought_it_too():
    state = DashboardState()
    record = {"event": Event.LOG_EVENT, "actor": "env", "level": "info", "timestamp": "2026-11-29T02:00:05Z", **cpi().log_fields()}
    assert "actual" in record and "previous" not in record  # NaN (unknown) left out of the JSON line
    state.on_message(cpi())  # a live run: on the bus, then read again from the log
    state.on_log(record)
    state.on_log(record)
    state.on_log({**record, "text": "CPI m/m (consensus 0.2)", "actual": None})  # another line under the same id: not a repeat
    news = [row["text"] for row in state.snapshot({})["events"] if row["kind"] == "news"]
    assert len(news) == 1 and "CPI m/m prints 0.4%" in news[0]


@pytest.mark.slow
async def test_a_finished_backtests_log_gives_the_dashboard_the_events_the_env_published():
    import structlog

    from runtime.testing import actor_harness
    from tests.actors.env.test_actor import answer_every_obs_until_done

    overrides = {"data.scenario": "news_drift", "data.synthetic_days": 12, "env.mode": "backtest", "env.split": "test", "env.n_envs": 1,
                 "runtime.stats_interval_secs": 60.0}
    with structlog.testing.capture_logs() as logged:  # the env's log lines (runtime/testing.py: the harness writes no file)
        async with actor_harness("env", overrides) as h:
            await answer_every_obs_until_done(h)
            published = [record.msg for record in h.published if isinstance(record.msg, Event)]
    state = DashboardState()
    state.set_source("logs (finished run)")
    for record in logged:
        state.on_log({**record, "event": record.get("event"), "actor": "env"})
    news = [row["text"] for row in state.snapshot({})["events"] if row["kind"] == "news"]
    assert len(published) >= 3 and len(news) == len({(e.event_id, e.text) for e in published})
    assert all(any((e.text or e.name) in line for line in news) for e in published)
