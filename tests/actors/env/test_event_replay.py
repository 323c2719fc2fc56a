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


async def test_the_env_actor_publishes_each_event_before_the_observation_that_makes_it_public():
    from actors.common.llm.news import context_minute, event_minute
    from bus.messages import EnvObs, Event
    from runtime.testing import actor_harness
    from tests.actors.env.test_actor import answer_every_obs_until_done

    overrides = {"data.scenario": "news", "data.synthetic_days": 12, "env.mode": "backtest", "env.split": "test", "env.n_envs": 1,
                 "runtime.stats_interval_secs": 60.0}
    async with actor_harness("env", overrides) as h:
        await answer_every_obs_until_done(h)
        published = [record.msg for record in h.published if isinstance(record.msg, (Event, EnvObs))]
    seen_minute, waiting = None, []
    events = [m for m in published if isinstance(m, Event)]
    assert any(not math.isnan(e.actual) for e in events) and any(e.kind == "headline" for e in events)
    for message in published:
        if isinstance(message, EnvObs):
            seen_minute = context_minute({"session_id": message.contexts[0].session_id, "time_et": message.contexts[0].time_et})
            assert all(minute <= seen_minute for minute in waiting)  # not before its bar: no look-ahead
            waiting = []
        elif message.kind == "headline" or not math.isnan(message.actual):
            # A published event goes out with the first observation whose bar shows it: never after that bar.
            assert seen_minute is None or event_minute(message.time_ns) > seen_minute
            waiting.append(event_minute(message.time_ns))


async def test_the_env_actor_gives_the_calendar_blackout_the_markets_clock():
    # risk.news_blackout_enabled keeps its clock from md.bar: without the env's bars it read the wall clock and a
    # replayed release was never in force. (T+90 minutes here: the 08:30 CPI of
    # the last test day is an hour old at the open.)
    import pandas as pd

    from actors.risk.news import NewsRule
    from bus.messages import Bar, EnvObs, Event
    from runtime.testing import actor_harness
    from tests.actors.env.test_actor import answer_every_obs_until_done

    overrides = {"data.scenario": "news", "data.synthetic_days": 8, "env.mode": "backtest", "env.split": "test", "env.n_envs": 1,
                 "runtime.stats_interval_secs": 60.0}
    async with actor_harness("env", overrides) as h:
        await answer_every_obs_until_done(h)
        published = [record.msg for record in h.published if isinstance(record.msg, (Bar, Event, EnvObs))]
    rule, bar, in_force = NewsRule(2.0, 90.0), None, []
    for message in published:
        if isinstance(message, Bar):
            rule.clock.on_bar(message.start_ns)
            bar = message
        elif isinstance(message, Event):
            rule.add(message)
        else:
            assert bar is not None  # every observation's bar went out before it (and its events)
            et = pd.Timestamp(bar.start_ns, tz="UTC").tz_convert("America/New_York")
            assert et.strftime("%H:%M") == message.contexts[0].time_et
            now = rule.clock.now_ns()
            force = rule.in_force(now)
            in_force.append(force)
            assert force is None or 0 <= now - force.release.time_ns <= 90 * 60 * 10**9
            bar = None
    assert any(force is not None for force in in_force)
