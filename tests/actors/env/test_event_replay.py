"""The env replays the news market's events beside its bars: each once, when an env's bar clock passes it, and a
release's calendar line ahead of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actors.common.news_market import generate_news_market
from actors.env.event_replay import EventReplay


@pytest.fixture(scope="module")
def market():
    return generate_news_market(10, seed=2)


def _replay(market):
    return EventReplay(market.events, market.bars.index.as_unit("ns").asi8.tolist())


def test_each_event_goes_out_once_at_the_bar_that_makes_it_public(market):
    replay = _replay(market)
    published: dict[str, int] = {}
    for bar in range(len(market.bars)):
        for event in replay.due([bar]):
            if not math.isnan(event.actual) or event.kind == "headline" or event.name.startswith("FOMC"):
                if event.text != event.name and not event.text.startswith(f"{event.name} (consensus"):
                    assert event.event_id not in published
                    published[event.event_id] = bar
    assert len(published) == len(market.events)
    for event, bar in zip(market.events, market.event_bar.tolist()):
        assert published[event.event_id] == bar, event.text


def test_a_release_is_announced_ahead_without_its_figure(market):
    replay = _replay(market)
    fomc_or_first = next(i for i, e in enumerate(market.events) if e.kind == "release" and market.event_bar[i] % 390 == 30)  # 10:00
    bar = int(market.event_bar[fomc_or_first])
    early = replay.due([bar - 20])
    stub = next(e for e in early if e.event_id == market.events[fomc_or_first].event_id)
    assert math.isnan(stub.actual) and str(market.events[fomc_or_first].actual) not in stub.text
    assert stub.source and stub.TOPIC == "md.event"


def test_an_env_starting_mid_data_gets_recent_news_not_the_whole_history(market):
    replay = _replay(market)
    sent = replay.due([len(market.bars) - 1])
    last_ns = int(market.bars.index.as_unit("ns").asi8[-1])
    assert all(last_ns - e.time_ns <= 61 * 60 * 10**9 for e in sent)
    assert replay.due([len(market.bars) - 1]) == []


def test_a_market_without_events_has_no_replay():
    from types import SimpleNamespace

    assert EventReplay.of(SimpleNamespace(events=(), lists={"start_ns": [0]}, source="x")) is None
    assert np.all(np.diff(_replay(generate_news_market(3, seed=1))._times) >= 0)
