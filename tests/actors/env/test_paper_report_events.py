"""A paper session's report holds the md.event messages the feed sent during its bars (the paper env's shell on the
harness, as test_paper_replay.py drives it), the DecisionBook keeps one event per id, and a trade's row in trades.jsonl
names the headline its entry's thought read."""

from __future__ import annotations

import json
import math

import numpy as np

from actors.common.actions import BUY, SELL
from actors.env.decision_book import MAX_EVENTS_KEPT, DecisionBook
from bus.messages import EnvObs, Event, FusionDecision, LlmThought, RiskVerdict
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


def _fused(step: int, action: int, query_id: str) -> FusionDecision:
    one = lambda value, dtype=np.float64: np.array([value], dtype=dtype)  # noqa: E731
    return FusionDecision(env_ids=[0], step=step, actions=one(action, np.int64), method="rules", rules=["agreement"],
                          rl_actions=one(action, np.int64), rl_confidences=one(0.6), llm_actions=one(action, np.int64),
                          llm_confidences=one(0.6), llm_staleness=one(1, np.int64), llm_query_ids=[query_id], rl_trust=one(0.5),
                          llm_trust=one(0.5))


def _acting(step: int, action: int) -> RiskVerdict:
    return RiskVerdict(env_ids=[0], step=step, actions=np.array([action], dtype=np.int64), vetoed=[False], reasons=[""], degraded=[False])


async def test_a_paper_trade_row_carries_the_headline_its_entrys_thought_read_not_the_windows_guess(tmp_path):
    bars = session_bars(WARMUP + 5)
    read = "Fed signals a pause"
    later = Event(time_ns=bars[WARMUP].start_ns - 60 * 10**9, kind="headline", text="Chipmakers rally on a rumour", event_id="h2")
    entry_thought = LlmThought(env_id=0, episode_id=0, step_seen=0, query_id="q0", action=BUY, confidence=0.6, mode="single_shot",
                               news=[read], news_ids=["h1"])
    async with actor_harness("env", PAPER, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]], later, bars[WARMUP])
        observation = await h.recv(EnvObs)
        await h.deliver(entry_thought, _fused(observation.step, BUY, "q0"), _acting(observation.step, BUY), bars[WARMUP + 1])
        observation = await h.recv(EnvObs)  # long from this bar's open
        await h.deliver(_fused(observation.step, SELL, ""), _acting(observation.step, SELL), bars[WARMUP + 2])
        observation = await h.recv(EnvObs)  # closed at this bar's open
        await h.deliver(verdict(observation.step), bars[WARMUP + 3])
        await h.recv(EnvObs)
        await h.stop()

    trades = [json.loads(line) for line in (tmp_path / "paper" / "trades.jsonl").read_text().splitlines()]
    decisions = [json.loads(line) for line in (tmp_path / "paper" / "decisions.jsonl").read_text().splitlines()]
    assert len(trades) == 1 and trades[0]["side"] == "long"
    assert (trades[0]["entry_headline"], trades[0]["entry_headline_from"]) == (read, "thought")  # the window's guess: the rumour
    assert trades[0]["entry_decision"]["thought"]["news"] == [read]
    assert decisions[0]["llm"]["news"] == [read]
