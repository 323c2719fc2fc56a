"""The risk read (reasoner.risk_read): the grammar asks for it before the reason, the parser reads it (or counts its
absence, never inventing one), the thought and its bus message carry it, and a real SmolLM2 writes one (tests/actors/reasoner/test_thinker.py, beside its loaded engine)."""

from __future__ import annotations

import msgspec
import pytest

from actors.common.llm.grammar import at_reason_start, decision_grammar
from actors.common.llm.parser import DecisionParser, parse_risk_read
from actors.common.llm.prompts import RISK_READ_TASK, SAMPLE_CONTEXT
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import Completion
from actors.reasoner.thinker import Thinker
from bus.messages import LlmThought

FLAT = [True, True, True, False, False, False]


def test_the_grammar_asks_for_the_read_before_the_reason_only_when_on():
    on, off = decision_grammar(FLAT, risk_read=True), decision_grammar(FLAT)
    assert 'root ::= action " | " confidence " |" risk " |" reason' in on
    assert 'risk ::= " CALM" | " ELEVATED " minutes | " EXTREME " minutes' in on
    assert "risk" not in off and 'root ::= action " | " confidence " |" reason' in off


@pytest.mark.parametrize(("generated", "expected"), [
    ("BUY | 0.71 | ELEVATED 15 |", True), ("BUY | 0.71 | CALM |", True), ("BUY | 0.71 |", True),
    ("BUY | 0.71 | ELEVATED 1", False), ("BUY | 0.71 | a reason |", False),
])
def test_the_reason_starts_after_the_read(generated, expected):
    assert at_reason_start(generated) is expected


@pytest.mark.parametrize(("text", "read"), [
    ("BUY | 0.73 | ELEVATED 15 | CPI hot", (1, 15)),
    ("SELL | 0.50 | CALM | quiet tape", (0, 0)),
    ("HOLD | 0.90 | EXTREME 250 | shock", (2, 99)),       # minutes clamped to 1..99
    ("HOLD | 0.90 | extreme | shock", (2, 15)),           # a level without minutes: 15
    ("Decision: SELL\nRisk: EXTREME for 20 minutes\nReason: shock", (2, 20)),
    ("BUY | 0.70 | uptrend", (-1, 0)),                    # no read: none invented
    ("BUY | 0.70 | DANGER 5 | uptrend", (-1, 0)),         # an unknown level
    ("~~ 12 ## ??", (-1, 0)),                             # garbage
    ("", (-1, 0)),
])
def test_the_parser_reads_the_risk_field_or_gives_none(text, read):
    assert parse_risk_read(text) == read


def test_a_parser_that_expects_a_read_counts_the_answers_without_one_and_keeps_the_reason_clean():
    parser = DecisionParser(expect_risk=True)
    with_read = parser.parse("BUY | 0.73 | ELEVATED 15 | uptrend, CPI hot", FLAT)
    without = parser.parse("BUY | 0.70 | uptrend", FLAT)
    garbage = parser.parse("~~ 12 ## ??", FLAT)
    assert (with_read.risk_level, with_read.risk_minutes, with_read.reason) == (1, 15, "uptrend, CPI hot")
    assert without.risk_level == -1 and without.reason == "uptrend"
    assert garbage.fallback and garbage.risk_level == -1
    assert parser.counts["risk_read"] == 1 and parser.counts["risk_read_missing"] == 2
    assert DecisionParser().parse("BUY | 0.70 | uptrend", FLAT) and DecisionParser().counts["risk_read_missing"] == 0


class ScriptedEngine:
    adapter_version = 0

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.grammars: list[str | None] = []
        self.prompts: list[str] = []

    def chat(self, messages, *, max_tokens, grammar=None):
        self.grammars.append(grammar)
        self.prompts.append(messages[-1]["content"])
        return Completion(self.answer, 10, 10, 5, 0.0, 0.01, 0.01)

    def forget_context(self):
        pass


def test_the_thinker_asks_for_the_read_and_the_thought_and_its_message_carry_it():
    from actors.reasoner.actor import thought_message
    from actors.reasoner.core import FinishedThought
    from actors.reasoner.pending import ThoughtRequest

    engine = ScriptedEngine("SELL | 0.60 | EXTREME 20 | CPI shock")
    thinker = Thinker(engine, ReasonerConfig(mode="single_shot", risk_read=True, memo_enabled=False))
    thought = thinker.think(SAMPLE_CONTEXT, FLAT)
    assert (thought.risk_level, thought.risk_minutes) == (2, 20)
    assert "risk ::=" in engine.grammars[0] and RISK_READ_TASK in engine.prompts[0]
    request = ThoughtRequest(env_id=1, episode_id=0, step=5, obs=None, mask=tuple(FLAT), context=SAMPLE_CONTEXT)
    message = thought_message(FinishedThought(request, thought, "q1", step_built=request.step))
    assert (message.risk_level, message.risk_minutes) == (2, 20)
    back = msgspec.msgpack.decode(msgspec.msgpack.encode(message), type=LlmThought)
    assert back.risk_level == 2
    old = {k: v for k, v in msgspec.to_builtins(message).items() if not k.startswith("risk_")}  # a sender before the field
    assert msgspec.convert(old, LlmThought).risk_level == -1

    off = ScriptedEngine("SELL | 0.60 | CPI shock")
    plain = Thinker(off, ReasonerConfig(mode="single_shot", memo_enabled=False)).think(SAMPLE_CONTEXT, FLAT)
    assert plain.risk_level == -1 and "risk ::=" not in off.grammars[0] and RISK_READ_TASK not in off.prompts[0]


def test_the_risk_question_names_every_level_and_shows_no_example_answer_for_the_model_to_copy():
    import re

    from actors.common.llm.prompts import PromptBook, prompt_fields
    from actors.common.news_risk import RISK_LEVELS

    book = PromptBook(ReasonerConfig(mode="single_shot", risk_read=True))
    question = book.opening(prompt_fields(SAMPLE_CONTEXT, FLAT), "single_shot")[-1]["content"]
    assert all(level in question for level in RISK_LEVELS)
    # the base model answered "ELEVATED 15" everywhere while the question said "(e.g. ELEVATED 15)"
    assert not re.search(r"\b(CALM|ELEVATED|EXTREME)\b\s*\d", question), question
    assert "e.g." not in RISK_READ_TASK
