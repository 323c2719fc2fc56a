"""The LLM's risk read right after an event (actors/jobs/evaluation/risk_reads.py), its rows and report lines, and the
event windows the env plays for ``evaluate --lockstep-window events`` (actors/env/batch.py event_windows)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from actors.common.actions import BUY
from actors.common.events import MarketEvent
from actors.common.news_risk import CALM, ELEVATED, EXTREME
from actors.common.synthetic import BARS_PER_SESSION
from actors.env.batch import event_windows
from actors.env.config import EnvConfig
from actors.jobs.evaluation.decision_sources import PairedDifference, Share, SourceScores
from actors.jobs.evaluation.event_sources import EventReads
from actors.jobs.evaluation.lockstep_evidence import LockstepEvidence, lockstep_rows
from actors.jobs.evaluation.lockstep_report import risk_lines
from actors.jobs.evaluation.risk_reads import EventLevels, event_levels, risk_read_scores
from bus.messages import FusionDecision, LlmThought


def levels() -> EventLevels:
    # events a..e: hindsight level, calendar rule, keyword rule, held-out template
    return EventLevels(level=np.array([CALM, ELEVATED, EXTREME, CALM, -1]), calendar=np.array([CALM] * 5),
                       keyword=np.array([CALM, ELEVATED, ELEVATED, ELEVATED, CALM]),
                       held_out=np.array([False, False, False, True, False]), index={k: i for i, k in enumerate("abcde")})


def test_each_read_is_scored_against_its_events_level_beside_the_rules_on_the_same_decisions():
    read_event = {(0, 1): "a", (0, 2): "b", (0, 3): "c", (1, 4): "d", (1, 5): "e", (1, 6): "unknown"}
    reads = {(0, 1): CALM, (0, 2): EXTREME, (0, 3): EXTREME, (1, 4): -1, (1, 5): CALM}

    scores = risk_read_scores(read_event, reads, levels())

    assert scores.decisions == 4  # e has no level (its horizon left the session), "unknown" is no event of the data
    assert scores.missing == 1 and scores.llm == Share(2, 4)  # no readable read is a miss, never CALM
    assert scores.calendar == Share(2, 4) and scores.keyword == Share(2, 4)
    # per decision LLM minus rule: a 0, b 0 / -1, c +1 / +1, d -1 / 0
    assert scores.llm_vs_calendar.value == pytest.approx(0.0) and scores.llm_vs_keyword.value == pytest.approx(0.0)
    assert scores.llm_vs_calendar.n == 4
    assert scores.held_out == 1 and scores.llm_held_out == Share(0, 1) and scores.keyword_held_out == Share(0, 1)
    assert scores.to_json()["answers"] == {"CALM": 1, "ELEVATED": 0, "EXTREME": 2}
    assert risk_read_scores(read_event, reads, None).decisions == 0  # a market without events


def thought(env: int, step: int, query: str, news: list[str], risk: int) -> LlmThought:
    return LlmThought(env_id=env, episode_id=0, step_seen=step, query_id=query, action=BUY, confidence=0.8,
                      mode="single_shot", news_ids=news, risk_level=risk, risk_minutes=15 if risk > 0 else 0)


def decision(step: int, query: str) -> FusionDecision:
    one = lambda value, dtype=np.int64: np.array([value], dtype=dtype)  # noqa: E731
    return FusionDecision(env_ids=[0], step=step, actions=one(BUY), method="rules", rules=["weighted"], rl_actions=one(BUY),
                          rl_confidences=one(0.5, np.float32), llm_actions=one(BUY), llm_confidences=one(0.8, np.float32),
                          llm_staleness=one(1), llm_query_ids=[query], rl_trust=one(0.5, np.float32),
                          llm_trust=one(0.5, np.float32))


def test_the_reads_come_from_the_thought_each_decision_used():
    reads = EventReads()
    for msg in (decision(2, "q1"), thought(0, 1, "q1", ["b"], EXTREME), thought(0, 2, "q2", ["b"], CALM), decision(3, "q2")):
        reads.add(msg)  # a decision may be heard before its thought
    assert reads.decision_risk == {(0, 2): EXTREME, (0, 3): CALM}
    scores = risk_read_scores(reads.decision_event, reads.decision_risk, levels())
    assert scores.decisions == 1 and scores.llm == Share(0, 1)  # b read once: the first decision's EXTREME counts


def test_the_levels_and_the_rules_are_fitted_before_the_split():
    n = 9 * BARS_PER_SESSION  # 8 days before the split: a wild quarter hour after each event is in their top 2 %
    width = 1.0 + 0.5 * np.random.default_rng(1).random(n)
    wild = [100, 500, 900, 8 * BARS_PER_SESSION + 100]
    for bar in wild:
        width[bar + 1: bar + 16] = 40.0
    events = tuple(MarketEvent(time_ns=b * 60_000_000_000, kind="headline", importance="medium", text="Fed hikes",
                               event_id=f"e{b}") for b in wild)
    dataset = SimpleNamespace(high=100 + width / 2, low=100 - width / 2, close=np.full(n, 100.0), events=events,
                              event_truth={"event_bar": np.array(wild), "template_held_out": np.array([False] * 4)})
    out = event_levels(dataset, 8 * BARS_PER_SESSION)
    assert out.level.tolist() == [EXTREME] * 4 and out.calendar.tolist() == [EXTREME] * 4
    assert out.index == {f"e{b}": i for i, b in enumerate(wild)}
    assert event_levels(SimpleNamespace(events=(), event_truth=None), 10) is None


def scores(n: int = 40) -> SourceScores:
    return SourceScores(decisions=n, rl=Share(20, n), llm=Share(20, n), fused=Share(21, n), chose_right_source=Share(5, 10),
                        agreement=Share(20, n), fused_vs_rl=PairedDifference(3, 2, n))


def test_the_rows_and_the_report_give_the_read_beside_the_rules_with_the_thoughts_age():
    read = risk_read_scores({(0, 1): "a", (0, 2): "b", (0, 3): "c"}, {(0, 1): CALM, (0, 2): ELEVATED, (0, 3): CALM}, levels())
    ages = {"thought_share": 1.0, "thought_age_mean": 1.0}
    evidence = LockstepEvidence(40, scores(), thought_ages={"base": ages}, risk_reads={"base": read}, window="events")

    rows = {row.figure: row for row in lockstep_rows(evidence)}

    match = rows["LLM risk read = hindsight level, right after an event"]
    assert match.value == pytest.approx(2 / 3) and "calendar rule 0.33" in match.note and "thought ages" in match.note
    assert rows["LLM risk read minus the keyword rule (match, paired)"].value == pytest.approx(0.0)
    assert rows["LLM risk read minus the calendar rule (match, paired)"].value == pytest.approx(1 / 3)
    lines = risk_lines(evidence.to_json())
    assert "events window" in lines[1] and lines[-1].startswith("| base | 3 | 0.67")
    off = risk_read_scores({(0, 1): "a"}, {(0, 1): -1}, levels())  # reasoner.risk_read off: every read missing
    quiet = LockstepEvidence(40, scores(), risk_reads={"base": off})
    assert not any("risk read" in row.figure for row in lockstep_rows(quiet)) and risk_lines(quiet.to_json()) == []


def fake_env(event_bars: list[int], start: int = 100, stop: int = 1000, before: int = 5, after: int = 30):
    config = EnvConfig(backtest_window="events", event_window_before_bars=before, event_window_after_bars=after)
    dataset = SimpleNamespace(event_truth={"event_bar": np.array(event_bars)})
    return SimpleNamespace(split=SimpleNamespace(start=start, stop=stop, name="test", dataset=dataset), config=config)


def test_the_event_windows_are_dealt_out_evenly_and_never_leave_the_split():
    # 102: its window would start before the split; 120 inside 110's window; 990: cut by the split's end
    env = fake_env([102, 110, 120, 200, 300, 400, 500, 990, 200])
    assert event_windows(env, 2) == [[(105, 140), (295, 330)], [(195, 230), (395, 430)]]  # 500's window: the remainder
    assert event_windows(env, 1) == [[(105, 140), (195, 230), (295, 330), (395, 430), (495, 530)]]
    with pytest.raises(ValueError, match="fewer than the 8 envs"):
        event_windows(env, 8)
    with pytest.raises(ValueError, match="market with events"):
        event_windows(SimpleNamespace(split=SimpleNamespace(dataset=SimpleNamespace()), config=env.config), 1)
    with pytest.raises(ValueError, match="backtest_window"):
        EnvConfig(backtest_window="news")


def test_the_events_window_needs_lockstep_decisions_and_a_market_with_events(tmp_path, capsys):
    from actors.jobs.cli import main

    assert main(["evaluate", "--market", "news", "--lockstep-window", "events", "--run-dir", str(tmp_path / "a")]) == 1
    assert "--lockstep-decisions" in capsys.readouterr().err
    assert main(["evaluate", "--market", "regimes", "--lockstep-decisions", "5", "--lockstep-window", "events",
                 "--run-dir", str(tmp_path / "b")]) == 1
    assert "a market with events" in capsys.readouterr().err
