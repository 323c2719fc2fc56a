"""Experiences from market history: the prompt the reasoner would see at a bar, labelled in hindsight.

A run's live thoughts cover a few hours of one day, so the trainer's first round would learn the
answer of that stretch (BUY to everything on a rising morning). Bars spread over the training days,
labelled by the same triple barrier as live thoughts, show it up, down and sideways markets. No
thought is involved: the prompt is what a thought at that bar would have been asked.

On the news market the prompts carry the news of their bar (``HistoryNews``) and the bars that make an event
public are all drawn (``with_event_bars``), each labelled in hindsight like any other bar: what the words were
worth to a reader, where the tape alone says little.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from actors.common.actions import HOLD
from actors.common.events import MarketEvent
from actors.common.hindsight import HindsightLabel
from actors.common.llm.news import EventBook, context_minute, news_line
from actors.common.llm.prompts import PromptBook
from actors.common.thoughts import ThoughtHeader
from actors.lora.experience import Experience, thought_record
from actors.lora.matching import ExperienceMatcher
from actors.lora.risk_teach import RiskInfo, with_risk

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
    risk: RiskInfo | None = None
    """lora.teach = "risk": the bar's hindsight volatility level (and its floors at an event bar); its target then
    carries the level (actors/lora/risk_teach.py). None: the direction target of before."""


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
        made = [replace(e, meta={**e.meta, **extra}) for e in matcher.add_hindsight(query_id, row.label)]
        experiences += [with_risk(e, row.risk) for e in made] if row.risk is not None else made
    return experiences


class HistoryNews:
    """The news a history bar's prompt carries (the news market, actors/common/news_market.py): its events read on
    the bar's clock exactly as the reasoner reads md.event (actors/common/llm/news.py), so the trainer teaches
    what the reasoner asks; a pending release shows its name only, never its figure. Without events a context is
    returned unchanged (every other market's prompts stay as they were)."""

    def __init__(self, events: Sequence[MarketEvent], window_minutes: int, horizon_minutes: int, max_items: int) -> None:
        self.book = EventBook()
        for event in events:
            self.book.add(event)
        self._shape = (window_minutes, horizon_minutes, max_items)

    @classmethod
    def of(cls, events: Sequence[MarketEvent], reasoner) -> HistoryNews:
        """From the [reasoner] news settings (the prompt the reasoner builds)."""
        return cls(events, reasoner.news_window_minutes, reasoner.news_horizon_minutes, reasoner.news_max_items)

    def context(self, context: Mapping[str, Any]) -> Mapping[str, Any]:
        if not len(self.book):
            return context
        news = news_line(self.book, context_minute(context), *self._shape)
        return {**context, "news": news} if news else context


def with_event_bars(pool: np.ndarray, start_ns: Sequence[int], events: Sequence[MarketEvent], rng: np.random.Generator,
                    wanted: int, bar_ns: int = 60_000_000_000) -> np.ndarray:
    """``wanted`` bars of ``pool`` for history prompts: every bar of the pool that makes an event public (its hindsight
    label is what reading the news is worth), the rest drawn at random. Without events: exactly the random draw
    ``rng.choice(pool, wanted)`` of before, so other markets' histories are unchanged."""
    if not len(events):
        return rng.choice(pool, size=min(wanted, len(pool)), replace=False)
    starts = np.asarray(start_ns, dtype=np.int64)
    times = np.array(sorted(e.time_ns for e in events), dtype=np.int64)
    # A bar shows the events stamped before its end and after the previous bar's end (the first bar of a
    # session also those of the night before: the 08:30 releases).
    ends = starts[pool] + bar_ns
    previous_ends = np.where(pool > 0, starts[np.maximum(pool - 1, 0)] + bar_ns, np.iinfo(np.int64).min)
    shows = np.searchsorted(times, ends, side="left") > np.searchsorted(times, previous_ends, side="left")
    event_pool, quiet_pool = pool[shows], pool[~shows]
    chosen = event_pool if len(event_pool) <= wanted else rng.choice(event_pool, size=wanted, replace=False)
    rest = min(wanted - len(chosen), len(quiet_pool))
    return np.concatenate([chosen, rng.choice(quiet_pool, size=rest, replace=False)]) if rest > 0 else chosen
