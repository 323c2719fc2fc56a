"""Thinking on news (reasoner.think_on = "news"): a thought when something new arrives, none on a quiet bar; the
prompt carries the env's recent headlines and the releases due, with minutes to go."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from actors.common.events import MarketEvent
from actors.common.llm.prompts import SAMPLE_CONTEXT
from actors.reasoner.actor import thought_message
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.core import ReasonerCore
from bus.messages import EnvObs, Event, Heartbeat, LlmThought, MarketContext, Stats
from runtime.testing import running_actors
from tests.actors.reasoner.test_core import MASK, ScriptedEngine, think_next

DAY = "2024-03-12"
SESSION = (pd.Timestamp(DAY) - pd.Timestamp("1970-01-01")).days


def _ns(time_et: str) -> int:
    return int(pd.Timestamp(f"{DAY} {time_et}", tz="America/New_York").tz_convert("UTC").value)


def _context(time_et: str, position: int = 0) -> dict:
    return dict(SAMPLE_CONTEXT, session_id=SESSION, time_et=time_et, position=position)


HEADLINE = MarketEvent(time_ns=_ns("10:21") + 30 * 10**9, kind="headline", text="Nvidia may cut its guidance, sources say", event_id="h")
ISM = MarketEvent(time_ns=_ns("11:00"), kind="release", importance="medium", name="ISM Manufacturing PMI", text="ISM Manufacturing PMI",
                  event_id="ism")


def _core(**overrides) -> tuple[ReasonerCore, ScriptedEngine]:
    engine = ScriptedEngine()
    config = ReasonerConfig(cache_enabled=False, mode="single_shot", think_on="news", think_every_bars=30, **overrides)
    return ReasonerCore(config, engine, query_id_prefix="t"), engine


def _observe(core, step: int, time_et: str, position: int = 0) -> bool:
    return core.observe(env_id=0, episode_id=0, step=step, obs=np.zeros(261, np.float32), mask=MASK, context=_context(time_et, position))


def test_it_thinks_on_a_new_event_and_not_on_a_quiet_bar():
    core, _ = _core()
    assert _observe(core, 0, "10:20")  # the env's first bar
    think_next(core)
    assert not _observe(core, 1, "10:21")  # quiet: nothing new
    core.note_event(HEADLINE)
    assert _observe(core, 2, "10:22")  # the headline became public on this env's clock
    assert not _observe(core, 3, "10:23")  # read already
    assert _observe(core, 4, "10:24", position=1)  # an entry
    assert not _observe(core, 5, "10:25", position=1)
    assert _observe(core, 34, "10:54", position=1)  # think_every_bars passed
    counts = core.gauges()
    assert (counts["think_on_event"], counts["think_on_position"], counts["think_on_interval"], counts["think_on_quiet"]) == (1, 1, 1, 3)


def test_a_quiet_bar_gets_the_latest_thought_again_marked_cached_with_its_age_counted():
    core, _ = _core()
    assert core.carry(0, 0, 0) is None  # no thought yet
    _observe(core, 0, "10:20")
    assert core.carry(0, 0, 0) is None  # its own thought is under way
    made = think_next(core)
    assert not _observe(core, 3, "10:23")
    carried = core.carry(0, 0, 3)
    assert carried.request.step == 3 and carried.thought.cached and not made.thought.cached
    assert (carried.thought.action, carried.thought.reason) == (made.thought.action, made.thought.reason)
    assert carried.query_id != made.query_id
    assert core.carry(0, 1, 4) is None  # another episode: that thought is not about it
    gauges = core.gauges()
    assert (gauges["thoughts_carried"], gauges["max_carried_age_bars"]) == (1, 3)


def test_a_carried_answer_keeps_the_step_its_prompt_was_built_on():
    """Issue 51: published for the quiet bar it answers (what a lockstep env waits for), aged from the bar it read."""
    core, _ = _core()
    _observe(core, 2, "10:20")
    made = thought_message(think_next(core))
    assert (made.step_seen, made.step_built, made.carried, made.age_at(2)) == (2, 2, False, 0)
    assert not _observe(core, 9, "10:27") and not _observe(core, 14, "10:32")
    first, second = thought_message(core.carry(0, 0, 9)), thought_message(core.carry(0, 0, 14))
    assert (first.step_seen, first.step_built, first.carried, first.age_at(9)) == (9, 2, True, 7)
    assert (second.step_built, second.age_at(14)) == (2, 12)  # carried again: still the bar its prompt read, never restamped
    assert core.gauges()["mean_carried_age_bars"] == (7 + 12) / 2


def test_every_bar_mode_never_carries():
    core = ReasonerCore(ReasonerConfig(cache_enabled=False, mode="single_shot"), ScriptedEngine(), query_id_prefix="t")
    _observe(core, 0, "10:20")
    think_next(core)
    assert core.carry(0, 0, 1) is None


def test_an_event_not_yet_public_on_an_envs_clock_does_not_wake_it():
    core, _ = _core()
    _observe(core, 0, "10:00")
    core.note_event(HEADLINE)  # another env, further on, passed it
    assert not _observe(core, 1, "10:01")


def test_every_bar_stays_the_default_and_thinks_on_quiet_bars():
    core = ReasonerCore(ReasonerConfig(cache_enabled=False, mode="single_shot"), ScriptedEngine(), query_id_prefix="t")
    assert ReasonerConfig().think_on == "every_bar"
    assert all(_observe(core, step, f"10:{20 + step}") for step in range(3))


def test_the_prompt_shows_recent_headlines_and_pending_releases_with_minutes_to_go():
    core, engine = _core()
    core.note_event(HEADLINE)
    core.note_event(ISM)
    _observe(core, 0, "10:25")
    finished = think_next(core)
    prompt = engine.conversations[-1][-1]["content"]
    assert "News: 4 min ago: Nvidia may cut its guidance, sources say" in prompt
    assert "Due: ISM Manufacturing PMI in 35 min" in prompt
    assert core.gauges()["thoughts_with_news"] == 1 and finished.request.context["news"]


def test_a_thought_records_the_events_its_prompt_read_and_a_carried_answer_keeps_them():
    core, _ = _core()
    core.note_event(HEADLINE)
    core.note_event(ISM)  # due, not yet published: the prompt names it, the thought did not read it
    _observe(core, 0, "10:25")
    made = think_next(core)
    assert made.thought.news == ("Nvidia may cut its guidance, sources say",) and made.thought.news_ids == ("h",)
    assert not _observe(core, 1, "10:26")
    assert core.carry(0, 0, 1).thought.news == made.thought.news  # the quiet bar's answer read the same headline


def test_a_thought_without_news_in_its_window_records_none():
    core, _ = _core()
    core.note_event(HEADLINE)
    _observe(core, 0, "12:00")  # 99 minutes after the headline: outside news_window_minutes (90)
    assert think_next(core).thought.news == ()


def test_without_events_the_prompt_is_what_it_was():
    core, engine = _core()
    _observe(core, 0, "10:25")
    think_next(core)
    prompt = engine.conversations[-1][-1]["content"]
    assert f"Last bars: {SAMPLE_CONTEXT['tape']}\n\nChoose ACTION" in prompt  # nothing between the tape and the question
    assert "News" not in engine.conversations[-1][-1]["content"]


@pytest.mark.slow
def test_the_reasoner_actor_reads_md_event_and_thinks_on_it_not_on_a_quiet_bar():
    overrides = {"reasoner.think_on": "news", "reasoner.mode": "single_shot", "reasoner.cache_enabled": False,
                 "reasoner.process_nice": 0, "runtime.heartbeat_interval_secs": 0.25, "runtime.stats_interval_secs": 0.25}

    def obs(step: int, time_et: str) -> EnvObs:
        return EnvObs(env_ids=[0], episode_ids=[0], step=step, obs=np.zeros((1, 261), np.float32),
                      masks=np.array([[True, True, True, False, False, False]]), contexts=[MarketContext(**_context(time_et))])

    with running_actors(["reasoner"], overrides=overrides) as rt:
        rt.client.subscribe(LlmThought, Heartbeat, Stats)
        rt.client.recv(Heartbeat, timeout_secs=300.0, where=lambda h: h.actor == "reasoner")
        time.sleep(0.3)  # our publisher's subscription reaches the reasoner
        rt.client.publish(obs(0, "10:20"))
        rt.client.recv(LlmThought, timeout_secs=300.0, where=lambda t: t.step_seen == 0)
        rt.client.publish(obs(1, "10:21"))
        quiet = rt.client.recv(LlmThought, timeout_secs=300.0, where=lambda t: t.step_seen >= 1)
        rt.client.publish(Event(**{f: getattr(HEADLINE, f) for f in HEADLINE.__struct_fields__}, source="test"))
        rt.client.publish(obs(2, "10:22"))
        thought = rt.client.recv(LlmThought, timeout_secs=300.0, where=lambda t: t.step_seen >= 2)
        stats = rt.client.recv(Stats, timeout_secs=60.0, where=lambda s: s.actor == "reasoner" and s.counters.get("events_new", 0) >= 1
                               and s.gauges.get("thoughts_with_news", 0) >= 1)
    assert quiet.step_seen == 1 and quiet.cached and quiet.step_built == 0  # the quiet bar: the latest thought again, aged from bar 0
    assert thought.step_seen == 2 and not thought.cached  # the bar that made the headline public: thought about
    assert thought.news == [HEADLINE.text] and thought.news_ids == ["h"] and quiet.news == []  # what each prompt read
    assert stats.gauges["think_on_event"] == 1 and stats.gauges["think_on_quiet"] == 1 and stats.gauges["thoughts_carried"] == 1
