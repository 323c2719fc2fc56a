"""Experiences from market history: the prompt the reasoner would see at a bar, labelled in hindsight.

A run's live thoughts cover a few hours of one day, so the trainer's first round would learn the
answer of that stretch (BUY to everything on a rising morning). Bars spread over the training days,
labelled by the same triple barrier as live thoughts, show it up, down and sideways markets. No
thought is involved: the prompt is what a thought at that bar would have been asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from actors.common.actions import HOLD
from actors.common.hindsight import HindsightLabel
from actors.common.llm.prompts import PromptBook
from actors.common.thoughts import ThoughtHeader
from actors.lora.experience import Experience, thought_record
from actors.lora.matching import ExperienceMatcher

HISTORY_PREFIX = "history"
"""Query-id prefix of a history experience: its id is ``hindsight:history:<key>``."""
MIN_HELD_OUT = 300
"""Held-out prompts a market-history run evaluates on at least: at 300 a match-rate difference of 10 points is
outside its 95 % interval (the standard error of a rate near 0.5 is 0.029)."""


class HistoryBar(NamedTuple):
    key: str
    """Names the bar (the data-set index): a stable experience id."""
    context: Mapping[str, Any]
    mask: Sequence[bool]
    label: HindsightLabel
    day: int = -1
    """The bar's trading day (session id); -1 unknown."""
    held_out: bool | None = None
    """True: a held-out day's bar (evaluation only); False: a training day's; None: the store decides by id hash."""
    validation: bool = False
    """A validation day's bar (the last training days): early stopping reads it, training never does."""


def split_days(days: Iterable[int], held_out_fraction: float) -> tuple[list[int], list[int]]:
    """(training days, held-out days): the later ``held_out_fraction`` of the days is held out, at least one of
    each when there are two or more. Later days, not random ones: a held-out prompt then never shares a day, a
    regime or the label horizon with a training prompt (bars of one day overlap in both)."""
    ordered = sorted(set(days))
    if len(ordered) < 2:
        raise ValueError(f"market history needs at least 2 trading days to hold some out, got {len(ordered)}")
    held = min(max(1, round(len(ordered) * held_out_fraction)), len(ordered) - 1)
    return ordered[:-held], ordered[-held:]


def history_experiences(prompts: PromptBook, mode: str, target_confidence: float,
                        bars: Iterable[HistoryBar | tuple]) -> list[Experience]:
    """One experience per bar (key, market context, action mask, label[, day, held out]); ``key`` names the bar
    (stable ids, so adding the same history twice stores it once). The day and the held-out side go into
    ``meta`` (the store keeps a bar with ``held_out`` set on that side)."""
    rows = [HistoryBar(*row) for row in bars]
    matcher = ExperienceMatcher(target_confidence=target_confidence, max_thoughts=max(len(rows), 1), max_pending_outcomes=1)
    experiences: list[Experience] = []
    for row in rows:
        query_id = f"{HISTORY_PREFIX}:{row.key}"
        no_thought = ThoughtHeader(env_id=-1, episode_id=-1, step_seen=-1, query_id=query_id, action=HOLD, confidence=0.0)
        matcher.add_thought(thought_record(prompts, mode, no_thought, context=row.context, mask=row.mask))
        extra = {"day": row.day, "tape": str(row.context.get("tape", ""))}
        if row.held_out is not None:
            extra["held_out"] = bool(row.held_out)
        if row.validation:
            extra["validation"] = True
        experiences += [replace(e, meta={**e.meta, **extra}) for e in matcher.add_hindsight(query_id, row.label)]
    return experiences
