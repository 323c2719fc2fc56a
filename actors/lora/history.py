"""Experiences from market history: the prompt the reasoner would see at a bar, labelled in hindsight.

A run's live thoughts cover a few hours of one day, so the trainer's first round would learn the
answer of that stretch (BUY to everything on a rising morning). Bars spread over the training days,
labelled by the same triple barrier as live thoughts, show it up, down and sideways markets. No
thought is involved: the prompt is what a thought at that bar would have been asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from actors.common.actions import HOLD
from actors.common.hindsight import HindsightLabel
from actors.common.llm.prompts import PromptBook
from actors.lora.experience import Experience, thought_record
from actors.lora.matching import ExperienceMatcher

HISTORY_PREFIX = "history"
"""Query-id prefix of a history experience: its id is ``hindsight:history:<key>``."""


def history_experiences(prompts: PromptBook, mode: str, target_confidence: float,
                        bars: Iterable[tuple[str, Mapping[str, Any], Sequence[bool], HindsightLabel]]) -> list[Experience]:
    """One experience per (key, market context, action mask, label); ``key`` names the bar (stable ids, so
    adding the same history twice stores it once)."""
    rows = list(bars)
    matcher = ExperienceMatcher(target_confidence=target_confidence, max_thoughts=max(len(rows), 1), max_pending_outcomes=1)
    experiences: list[Experience] = []
    for key, context, mask, label in rows:
        query_id = f"{HISTORY_PREFIX}:{key}"
        matcher.add_thought(thought_record(prompts, mode, query_id=query_id, env_id=-1, episode_id=-1, step_seen=-1,
                                           action=HOLD, context=context, mask=mask))
        experiences += matcher.add_hindsight(query_id, label)
    return experiences
