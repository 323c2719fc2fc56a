"""lora.teach = "risk" (actors/lora/risk_teach.py): a history prompt's target carries its bar's hindsight volatility
level in the decide grammar's risk form, event bars carry the calendar and keyword rules' levels, held-out templates
never reach training, and the publish rule pairs the new levels with the current ones and the floors."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from actors.common.actions import BUY, SELL
from actors.common.events import MarketEvent
from actors.common.llm.parser import DecisionParser, parse_risk_read
from actors.common.news_risk import CALM, ELEVATED, EXTREME
from actors.common.synthetic import BARS_PER_SESSION
from actors.jobs.common import JobError
from actors.jobs.lora import history_bars
from actors.lora.config import LoraConfig
from actors.lora.history import HistoryBar
from actors.lora.risk_teach import (RiskInfo, annotate_risk, floor_levels, gate_and_apart, risk_prefix, risk_target,
                                    risk_verdict)

MASK = (True,) * 6


def test_the_target_carries_the_level_in_the_grammar_form_the_parser_reads():
    for level, minutes in ((CALM, 0), (ELEVATED, 15), (EXTREME, 15)):
        target = risk_target("SELL | 0.80 | downtrend, below VWAP, momentum negative", level)
        assert parse_risk_read(target) == (level, minutes)
        assert DecisionParser().parse(target, MASK).action == SELL
        assert target.startswith(risk_prefix(target) + " ")
    assert risk_target("BUY | 0.80 | x", CALM) == "BUY | 0.80 | CALM | x"
    assert risk_target("BUY | 0.80 | x", EXTREME) == "BUY | 0.80 | EXTREME 15 | x"  # the grammar wants the minutes


def bars(days: int, wild_after: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Days of bars 1-1.5 points wide; the 15 bars after each bar of ``wild_after`` 40 points wide (an EXTREME quarter)."""
    n = days * BARS_PER_SESSION
    close = np.full(n, 100.0)
    width = 1.0 + 0.5 * np.random.default_rng(0).random(n)
    for bar in wild_after:
        width[bar + 1: bar + 16] = 40.0
    return close + width / 2, close - width / 2, close


def headline(bar: int, text: str) -> MarketEvent:
    return MarketEvent(time_ns=bar * 60_000_000_000, kind="headline", importance="low", text=text)


def row(bar: int, held_out: bool) -> HistoryBar:
    return HistoryBar(str(bar), {}, list(MASK), None, day=bar // BARS_PER_SESSION, held_out=held_out)


def test_event_bars_get_their_level_and_the_floors_and_held_out_templates_never_reach_training():
    # days 0-7 training (EXTREME: the top 2 % of their quarter hours), day 8 held out; Fed headlines (medium by the keyword rule) are followed by a wild quarter
    fed = [100, 500, 900]
    company, held_template_train, held_template_test = 200, 300, 8 * BARS_PER_SESSION + 100
    highs, lows, closes = bars(9, tuple(fed))
    events = [headline(b, "Fed signals rate cuts") for b in fed] + [headline(company, "Acme beats estimates"),
                                                                   headline(held_template_train, "Fed stuns"),
                                                                   headline(held_template_test, "Fed stuns")]
    truth = {"event_bar": np.array([*fed, company, held_template_train, held_template_test]),
             "template_held_out": np.array([False, False, False, False, True, True])}
    train_bars = np.arange(20, 8 * BARS_PER_SESSION - 20)
    rows = [row(b, b >= 8 * BARS_PER_SESSION) for b in (*fed, company, held_template_train, held_template_test, 600)]
    day = np.arange(len(closes)) // BARS_PER_SESSION

    out = {int(r.key): r.risk for r in annotate_risk(rows, highs, lows, closes, day, train_bars, events, truth)}

    assert held_template_train not in out  # dropped: a held-out template on a training day
    assert all(out[b].level == EXTREME for b in fed)
    # every headline is "unscheduled" to the calendar: the commonest level of the training headlines (3 Fed, 1 Acme)
    assert {out[b].calendar for b in (*fed, company, held_template_test)} == {EXTREME}
    # the keyword rule reads a policy maker (medium) apart from a company (low): each key its own commonest level
    assert out[held_template_test][1:] == (True, EXTREME, EXTREME, True) and out[held_template_test].level in (CALM, ELEVATED)
    assert out[company][1:] == (True, EXTREME, out[company].level, False)
    assert out[600] == RiskInfo(out[600].level) and out[600].level >= 0  # a quiet bar: its level only


def test_a_mismatched_event_truth_is_refused():
    highs, lows, closes = bars(1, ())
    with pytest.raises(ValueError, match="template flags"):
        annotate_risk([row(10, False)], highs, lows, closes, np.zeros(len(closes), int), np.arange(20, 300),
                      [headline(10, "x")], {"event_bar": np.array([10]), "template_held_out": np.array([True, False])})


def test_the_rule_publishes_a_better_read_only_and_pairs_it_with_the_floors():
    labels = [CALM, ELEVATED, CALM, EXTREME, CALM, ELEVATED]
    before = [ELEVATED] * 6
    after = [CALM, ELEVATED, CALM, ELEVATED, CALM, ELEVATED]
    floors = {"calendar": [CALM] * 6, "keyword": labels}
    verdict, metrics = risk_verdict(before, after, labels, floors, z=1.96, collapse_share=0.8)
    assert verdict.publish and verdict.before == pytest.approx(2 / 6) and verdict.after == pytest.approx(5 / 6)
    assert metrics["risk_match_calendar"] == pytest.approx(0.5) and metrics["risk_gain_calendar"] == pytest.approx(2 / 6)
    assert metrics["risk_gain_keyword"] == pytest.approx(-1 / 6) and metrics["risk_gain_keyword_high"] > 0 > metrics["risk_gain_keyword_low"]
    tie, _ = risk_verdict(after, after, labels, floors, z=1.96, collapse_share=0.8)
    assert not tie.publish and tie.why == "not_better"  # a tie keeps the current weights
    collapsed, _ = risk_verdict(before, [CALM] * 6, labels, floors, z=1.96, collapse_share=0.8)
    assert not collapsed.publish and collapsed.why == "collapse" and collapsed.top_action == "CALM"


def test_the_gate_reads_held_out_event_bars_of_training_templates_and_scores_the_others_apart():
    from actors.lora.experience import Experience

    def experience(i: int, **meta) -> Experience:
        return Experience(f"e{i}", [], MASK, "BUY | 0.80 | CALM | x", BUY, 0.0, "hindsight", meta)

    seen = experience(1, **RiskInfo(ELEVATED, True, CALM, ELEVATED, False).meta())
    held = experience(2, **RiskInfo(CALM, True, CALM, CALM, True).meta())
    quiet, unlabelled = experience(3, **RiskInfo(CALM).meta()), experience(4, **RiskInfo(-1, True).meta())
    assert gate_and_apart([seen, held, quiet, unlabelled]) == ([seen], [held])
    assert floor_levels([seen]) == {"calendar": [CALM], "keyword": [ELEVATED]}


def test_bad_teach_settings_are_refused():
    with pytest.raises(ValueError, match="lora.teach"):
        LoraConfig(teach="volatility")
    config = SimpleNamespace(lora=LoraConfig(teach="risk"), reasoner=SimpleNamespace(risk_read=False))
    with pytest.raises(JobError, match="reasoner.risk_read"):  # before any market is drawn
        history_bars(config, 10)
