"""reasoner.think_on = events (evaluate --lockstep-window events): a new event is a reason to think, an entry or exit
is not, as it is with think_on = news."""

from __future__ import annotations

import numpy as np
import pytest

from actors.reasoner.config import ReasonerConfig
from actors.reasoner.news_trigger import NewsTrigger


def test_an_entry_is_a_reason_to_think_on_news_only_and_an_event_on_both():
    on_news, on_events = NewsTrigger(100), NewsTrigger(100, on_position=False)
    for trigger in (on_news, on_events):
        assert trigger.reason_to_think(0, 0, {"position": 0}, None) == "first"
    assert on_news.reason_to_think(0, 1, {"position": 1}, None) == "position"
    assert on_events.reason_to_think(0, 1, {"position": 1}, None) == ""
    assert on_events.reason_to_think(0, 2, {"position": 1}, 600) == "event"
    assert on_events.reason_to_think(0, 3, {"position": 0}, 600) == ""  # the same event, an exit: quiet


def test_think_on_takes_events_and_refuses_a_misspelling():
    assert ReasonerConfig(think_on="events").think_on == "events"
    with pytest.raises(ValueError, match="think_on"):
        ReasonerConfig(think_on="event")


def test_a_forgotten_env_thinks_again_as_on_its_first_bar():
    trigger = NewsTrigger(100, on_position=False)
    trigger.reason_to_think(0, 0, {"position": 0}, None)
    assert trigger.reason_to_think(0, 40, {"position": 0}, None) == ""
    trigger.forget(0)  # a new episode (the events window's next window): nothing of the last one is carried into it
    assert trigger.reason_to_think(0, 41, {"position": 0}, None) == "first"


def test_a_new_episode_is_thought_about_on_its_first_bar_as_no_thought_can_be_carried_into_it():
    """The events window plays each window as a fresh episode: without a thought there the lockstep env would wait out
    its deadline (env.thought_wait_deadline_ms) on every bar until an event came."""
    from actors.reasoner.core import ReasonerCore
    from tests.actors.reasoner.test_news import MASK, ScriptedEngine, _context, think_next

    config = ReasonerConfig(cache_enabled=False, mode="single_shot", think_on="events", think_every_bars=100)
    core = ReasonerCore(config, ScriptedEngine(), query_id_prefix="t")

    def observe(episode: int, step: int, time_et: str) -> bool:
        return core.observe(env_id=0, episode_id=episode, step=step, obs=np.zeros(261, np.float32), mask=MASK,
                            context=_context(time_et, 0))

    assert observe(0, 0, "10:20")
    think_next(core)
    assert not observe(0, 1, "10:21") and core.carry(0, 0, 1) is not None
    assert observe(1, 35, "11:40")  # the next window: its first bar
    think_next(core)
    assert not observe(1, 36, "11:41") and core.carry(0, 1, 36) is not None
