"""reasoner.think_on = events (evaluate --lockstep-window events): a new event is a reason to think, an entry or exit
is not, as it is with think_on = news."""

from __future__ import annotations

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
