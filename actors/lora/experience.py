"""One training example: the decide-step prompt a thought was given and the answer that would have won.

LlmThought does not carry its prompt, so the trainer rebuilds it exactly as the
reasoner's Thinker built it: the same PromptBook (the [reasoner] templates), the market
context and mask of the observation the thought saw (from env.obs), and the thought's own
earlier answers (analysis, options, risks) as the assistant turns of the four-step
conversation. The target is written in the decide step's grammar: ``ACTION | 0.80 | reason``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from actors.common.actions import ACTION_NAMES
from actors.common.llm.grammar import MAX_REASON_CHARS
from actors.common.llm.prompts import FOUR_STEPS, Message, PromptBook, prompt_fields
from actors.common.thoughts import ThoughtHeader

SOURCES = ("trade", "hindsight")


@dataclass(frozen=True, slots=True)
class Experience:
    id: str
    """Unique and stable: ``trade:<env>:<episode>:<trade>:<query>`` or ``hindsight:<query>``; a re-added id is ignored."""
    messages: list[Message]
    """The decide-step conversation, ending with the user turn that asks for the decision."""
    mask: tuple[bool, ...]
    """The action mask the thought saw (the grammar and the parser need it)."""
    target: str
    """The answer to learn, ``ACTION | 0.80 | reason``."""
    action: int
    pnl_usd: float
    """Outcome behind the target (sampling weight)."""
    source: str
    """trade | hindsight."""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ThoughtRecord:
    """What the trainer keeps of one thought until its outcome is known."""

    header: ThoughtHeader
    """Whose thought it is, the step it saw and what it advised (an llm.thought is one)."""
    messages: list[Message]
    mask: tuple[bool, ...]
    adapter_version: int = 0
    market_reason: str = ""
    """What the context said in the single-shot examples' words (``market_reason``): the reason of its target."""


TREND_WORDS = {"up": "uptrend", "down": "downtrend", "sideways": "sideways"}


def market_reason(context: Mapping[str, Any]) -> str:
    """The reason a target answer gives: the trend, VWAP and momentum the prompt showed, in the words of the
    single-shot system prompt's examples ("uptrend, above VWAP, momentum positive").

    The outcome behind a target is known only in hindsight, so it is no reason the model could have read
    from its prompt; teaching it to write one makes its reasons about the future it cannot see."""
    trend = TREND_WORDS.get(str(context.get("trend", "")), "no clear trend")
    vwap = float(context.get("vwap_distance_pct", 0.0))
    momentum = float(context.get("momentum", 0.0))
    where = "above VWAP" if vwap > 0.02 else "below VWAP" if vwap < -0.02 else "near VWAP"
    push = "positive" if momentum > 0 else "negative" if momentum < 0 else "flat"
    return f"{trend}, {where}, momentum {push}"


def target_answer(action: int, confidence: float, reason: str) -> str:
    """The decide step's format exactly (actors/common/llm/grammar.py): the reason starts with a letter, has no '|' or newline."""
    text = " ".join(reason.replace("|", "/").split())[:MAX_REASON_CHARS] or "outcome"
    if not text[0].isalpha():
        text = "so " + text
    return f"{ACTION_NAMES[action]} | {min(max(confidence, 0.0), 1.0):.2f} | {text[:MAX_REASON_CHARS]}"


def decide_messages(
    book: PromptBook, mode: str, context: Mapping[str, Any], mask: Sequence[bool],
    earlier_answers: Mapping[str, str] | None = None,
) -> list[Message]:
    """The conversation the reasoner's decide step (or single shot) answered, as Thinker builds it."""
    fields = prompt_fields(context, mask)
    if mode == "single_shot":
        return book.opening(fields, "single_shot")
    answers = earlier_answers or {}
    conversation = book.opening(fields, FOUR_STEPS[0])
    for step in FOUR_STEPS[1:]:
        conversation.append({"role": "assistant", "content": answers.get(FOUR_STEPS[FOUR_STEPS.index(step) - 1], "")})
        conversation.append(book.step(step, fields))
    return conversation


def thought_record(book: PromptBook, mode: str, header: ThoughtHeader, *, context: Mapping[str, Any], mask: Sequence[bool],
                   earlier_answers: Mapping[str, str] | None = None, adapter_version: int = 0) -> ThoughtRecord:
    """What the trainer keeps of a thought: the conversation its decide step answered, rebuilt from its context,
    and the market reason its target will give."""
    return ThoughtRecord(header.bare(), decide_messages(book, mode, context, mask, earlier_answers),
                         tuple(bool(m) for m in mask), adapter_version, market_reason(context))
