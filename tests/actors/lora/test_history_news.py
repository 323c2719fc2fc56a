"""LoRA market history on the news market: every bar that makes an event public is drawn, its prompt carries the
news as the reasoner would show it, and it is labelled in hindsight like any bar."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.llm.prompts import PromptBook
from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.lora import history_bars
from actors.lora.experience import decide_messages
from actors.lora.history import HistoryNews, history_experiences, with_event_bars


def news_config(scenario: str = "news"):
    return configure(build_parser().parse_args(["lora"]), {"data.scenario": scenario, "data.synthetic_days": 30,
                                                           "reasoner.mode": "single_shot"})


@pytest.fixture(scope="module")
def rows():
    return history_bars(news_config(), 120, held_out=60)


def test_without_events_the_draw_is_the_plain_random_draw_of_before():
    pool = np.arange(100, 400)
    plain = np.random.default_rng(3).choice(pool, size=50, replace=False)
    assert np.array_equal(with_event_bars(pool, list(range(500)), (), np.random.default_rng(3), 50), plain)


def test_every_event_bar_of_the_days_is_drawn_and_its_prompt_carries_the_news(rows):
    with_news = [row for row in rows if "news" in row.context]
    assert len(with_news) >= 20
    assert all(row.context["news"].startswith("\nNews: ") or row.context["news"].startswith("\nDue: ") for row in with_news)
    fresh = [row for row in with_news if "\nNews: 0 min ago: " in row.context["news"] or "News: 60 min ago" in row.context["news"]]
    assert len(fresh) >= 10  # bars that made an event public (an 08:30 release is 60 minutes old at the open)
    config = news_config()
    book = PromptBook(config.reasoner)
    experiences = history_experiences(book, config.reasoner.mode, 0.8, with_news[:5])
    assert all("News: " in e.messages[-1]["content"] or "Due: " in e.messages[-1]["content"] for e in experiences)
    assert experiences[0].messages == decide_messages(book, config.reasoner.mode, with_news[0].context, with_news[0].mask)


def test_a_prompt_never_shows_a_release_before_it_is_out(rows):
    for row in rows:
        news = row.context.get("news", "")
        if "Due: " in news:
            due = news.split("Due: ", 1)[1]
            assert "vs" not in due and "consensus" not in due and "%" not in due


def test_other_markets_prompts_are_unchanged():
    assert HistoryNews((), 90, 60, 2).context({"time_et": "10:00"}) == {"time_et": "10:00"}
