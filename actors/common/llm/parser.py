"""Tolerant parsing of a decision text, with a counted fallback to HOLD / confidence 0.

Accepted, in order of preference:
1. ``ACTION | confidence | reason`` (what the grammar produces),
2. ``Decision: ACTION`` ... ``Confidence: 0.7`` ... ``Reasoning: ...`` (the first prototype's format),
3. free text: the first allowed action mentioned, and a "confidence" number if any.
An explicit answer naming a masked action, or text naming no allowed action, falls back; so does a
reason of numbers that says nothing (no word of three letters but "confidence": "Confidence: 1.00% to 1.00% to"),
which a small model writes on real price levels: a HOLD at confidence 1.0 behind it would be a made-up answer.

The risk read (reasoner.risk_read: ``ACTION | 0.73 | ELEVATED 15 | reason``) is parsed from the field after the
confidence, or from ``Risk: EXTREME 20`` anywhere; a parser built with ``expect_risk`` counts an answer without a
readable one (``risk_read_missing``) and gives it no read (level -1, 0 minutes): never a made-up CALM.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from actors.common.actions import HOLD, Action, allowed_actions
from actors.common.llm.reasons import reason_contradicts

# Every action's own name, and other spellings a model (or the seeds' prompts) may use for it.
ACTION_ALIASES: dict[str, Action] = {
    **{action.name: action for action in Action},
    "MOVE_TO_BE": Action.MOVE_SL_TO_BE,
    "MOVE_SL_TO_BREAKEVEN": Action.MOVE_SL_TO_BE,
    "BREAKEVEN": Action.MOVE_SL_TO_BE,
    "BREAK_EVEN": Action.MOVE_SL_TO_BE,
    "TRAIL": Action.ENABLE_TRAIL,
    "WAIT": Action.HOLD,
    "LONG": Action.BUY,
    "SHORT": Action.SELL,
}

# An action given without a confidence gets 0.5, as in the first prototype's parser.
MISSING_CONFIDENCE = 0.5
MAX_REASON_CHARS = 200

_PIPE_FORMAT = re.compile(r"^\W*([A-Za-z][A-Za-z_ -]*?)\s*\|\s*([0-9]*\.?[0-9]+)\s*(%?)\s*(?:\|\s*(.*))?$")
_DECISION_FIELD = re.compile(r"(?:final\s+)?decision\s*[:=\-]\s*\**\s*([A-Za-z][A-Za-z_ -]*)", re.IGNORECASE)
_CONFIDENCE_FIELD = re.compile(r"confidence\W{0,3}([0-9]*\.?[0-9]+)\s*(%?)", re.IGNORECASE)
_REASON_FIELD = re.compile(r"reason(?:ing)?\s*[:=\-]\s*(.+)", re.IGNORECASE | re.DOTALL)
_REASON_WORD = re.compile(r"[A-Za-z]{3,}")
RISK_LEVELS = ("CALM", "ELEVATED", "EXTREME")
"""Index = the read's level (actors/common/news_risk.py buckets the hindsight label the same way)."""
MAX_RISK_MINUTES = 99
_RISK_FIELD = re.compile(r"^\s*(CALM|ELEVATED|EXTREME)(?:\s+([0-9]{1,3}))?\s*(?:m(?:in(?:utes?)?)?)?\s*$", re.IGNORECASE)
_RISK_ANYWHERE = re.compile(r"\brisk\s*[:=\-]\s*\**\s*(CALM|ELEVATED|EXTREME)\b(?:\s+(?:for\s+)?([0-9]{1,3}))?", re.IGNORECASE)

# Free-text spellings per action id (word-bounded, case-insensitive).
_MENTIONS: dict[int, re.Pattern[str]] = {
    Action.HOLD: re.compile(r"\b(?:HOLD|WAIT)\b", re.IGNORECASE),
    Action.BUY: re.compile(r"\b(?:BUY|LONG)\b", re.IGNORECASE),
    Action.SELL: re.compile(r"\b(?:SELL|SHORT)\b", re.IGNORECASE),
    Action.MOVE_SL_TO_BE: re.compile(r"\bMOVE[ _-]*(?:SL[ _-]*|STOP[ _-]*)?TO[ _-]*(?:BE|BREAK[ _-]*EVEN)\b|\bBREAK[ _-]*EVEN\b", re.IGNORECASE),
    Action.ENABLE_TRAIL: re.compile(r"\bENABLE[ _-]*TRAIL(?:ING)?\b", re.IGNORECASE),
    Action.DISABLE_TRAIL: re.compile(r"\bDISABLE[ _-]*TRAIL(?:ING)?\b", re.IGNORECASE),
}


@dataclass(frozen=True, slots=True)
class ParsedDecision:
    action: int
    confidence: float
    reason: str
    fallback: bool
    """True when the text gave no usable allowed action: HOLD with confidence 0."""
    how: str
    """pipe | decision_field | free_text | fallback_no_action | fallback_forbidden_action | fallback_empty_reason."""
    confidence_missing: bool = False
    """True when an action was found without a readable confidence (MISSING_CONFIDENCE used)."""
    risk_level: int = -1
    """The risk read's index in RISK_LEVELS (CALM, ELEVATED, EXTREME); -1 when the answer has none."""
    risk_minutes: int = 0
    """For how many minutes the read holds (0 for CALM or none)."""


class DecisionParser:
    """Parses decision texts and counts how each one was understood (``counts``)."""

    def __init__(self, expect_risk: bool = False) -> None:
        self.counts: Counter[str] = Counter()
        self.expect_risk = expect_risk

    @property
    def fallbacks(self) -> int:
        return self.counts["fallback_no_action"] + self.counts["fallback_forbidden_action"] + self.counts["fallback_empty_reason"]

    def parse(self, text: str, mask: Sequence[bool]) -> ParsedDecision:
        allowed = set(allowed_actions(mask))
        decision = _parse_explicit(text, allowed) or _parse_free_text(text, allowed)
        level, minutes = parse_risk_read(text)
        if level >= 0:
            decision = replace(decision, risk_level=level, risk_minutes=minutes)
            self.counts["risk_read"] += 1
        elif self.expect_risk:
            self.counts["risk_read_missing"] += 1
        self.counts[decision.how] += 1
        if decision.confidence_missing:
            self.counts["confidence_missing"] += 1
        if reason_contradicts(decision.action, decision.reason):  # says one trend, trades the other
            self.counts["reason_contradicts_action"] += 1
        return decision


def parse_risk_read(text: str) -> tuple[int, int]:
    """(level, minutes) of the answer's risk read: the pipe field after the confidence, else a ``Risk:`` field;
    (-1, 0) when there is none. Minutes are clamped to 1..MAX_RISK_MINUTES (a level without them: 15); CALM has 0."""
    fields = text.strip().splitlines()[0].split("|") if text.strip() else []
    match = _RISK_FIELD.match(fields[2]) if len(fields) >= 4 else None
    match = match or _RISK_ANYWHERE.search(text)
    if match is None:
        return -1, 0
    level = RISK_LEVELS.index(match.group(1).upper())
    if level == 0:
        return 0, 0
    minutes = int(match.group(2)) if match.group(2) else 15
    return level, min(max(minutes, 1), MAX_RISK_MINUTES)


def _parse_explicit(text: str, allowed: set[int]) -> ParsedDecision | None:
    """The pipe format or a ``Decision:`` field; None when the text has neither."""
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    pipe = _PIPE_FORMAT.match(first_line)
    if pipe and _action_of(pipe.group(1)) is not None:
        confidence = _as_confidence(pipe.group(2), pipe.group(3))
        return _checked(_action_of(pipe.group(1)), confidence, _without_risk_field(pipe.group(4) or ""), allowed, "pipe")
    field = _DECISION_FIELD.search(text)
    if field and _action_of(field.group(1)) is not None:
        reason_match = _REASON_FIELD.search(text)
        reason = reason_match.group(1) if reason_match else ""
        return _checked(_action_of(field.group(1)), _confidence_in(text), reason, allowed, "decision_field")
    return None


def _without_risk_field(rest: str) -> str:
    """The reason after the confidence, a leading risk field (``ELEVATED 15 | reason``) taken off."""
    head, bar, tail = rest.partition("|")
    return tail.strip() if bar and _RISK_FIELD.match(head) else rest


def _parse_free_text(text: str, allowed: set[int]) -> ParsedDecision:
    """The earliest mention of an allowed action anywhere in the text."""
    earliest: tuple[int, int] | None = None
    for action in allowed:
        match = _MENTIONS[action].search(text)
        if match and (earliest is None or match.start() < earliest[0]):
            earliest = (match.start(), action)
    if earliest is None:
        return _fallback("fallback_no_action")
    return _decision(earliest[1], _confidence_in(text), text, "free_text")


def _checked(action: int | None, confidence: float | None, reason: str, allowed: set[int], how: str) -> ParsedDecision:
    if action is None or action not in allowed:
        return _fallback("fallback_forbidden_action")
    return _decision(action, confidence, reason, how)


def _decision(action: int, confidence: float | None, reason: str, how: str) -> ParsedDecision:
    if reason.strip() and not _says_something(reason):
        return _fallback("fallback_empty_reason")
    missing = confidence is None
    return ParsedDecision(action, MISSING_CONFIDENCE if missing else confidence, _short(reason), False, how, missing)


def _says_something(reason: str) -> bool:
    """False for numbers with no word of three letters but "confidence" ("Confidence: 1.00% to 1.00% to")."""
    return not any(char.isdigit() for char in reason) or any(word.lower() != "confidence" for word in _REASON_WORD.findall(reason))


def _fallback(how: str) -> ParsedDecision:
    return ParsedDecision(HOLD, 0.0, "", True, how)


def _action_of(word: str) -> int | None:
    key = re.sub(r"[\s-]+", "_", word.strip().strip("*").upper())
    action = ACTION_ALIASES.get(key)
    return None if action is None else int(action)


def _confidence_in(text: str) -> float | None:
    match = _CONFIDENCE_FIELD.search(text)
    return _as_confidence(match.group(1), match.group(2)) if match else None


def _as_confidence(number: str, percent_sign: str) -> float | None:
    """A number read as a confidence: 0.7, 70% and 70 all mean 0.7; 1.5 is clamped to 1.0."""
    try:
        value = float(number)
    except ValueError:
        return None
    if percent_sign or ("." not in number and 1.0 < value <= 100.0):
        value /= 100.0
    return min(value, 1.0)


def _short(reason: str) -> str:
    return " ".join(reason.split())[:MAX_REASON_CHARS]
