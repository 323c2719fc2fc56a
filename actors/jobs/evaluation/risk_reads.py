"""The LLM's risk read right after an event, against the hindsight volatility level, beside the calendar and keyword rules.

``bin/run evaluate --lockstep-window events`` plays the minutes around events through the running reasoner with
reasoner.risk_read on. A decision counts when its thought had just read an event none of its env's earlier decisions
had used (event_sources.EventReads): the read it carries (``LlmThought.risk_level``) is scored against the hindsight
level of that event's bar (actors/common/news_risk.py: the next 15 bars' range over the ATR before, bucketed at
thresholds fitted on the bars before the test window). On the same decisions:

- the calendar rule (a release's tier; every headline "unscheduled") and the keyword rule (tier and size words, a
  figure against its consensus), each a lookup fitted on the event bars before the test window whose words use a
  training template (news_risk.LevelTable);
- the paired differences LLM minus each rule (per decision 1 / 0 / -1, the mean with its normal 95 % interval);
- the events worded with a held-out template apart (news_sized_words.HELD_OUT: where reading could beat a list).

A thought without a readable read (level -1) counts as a miss, never as CALM. Plain Python: no process, no socket.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from actors.common.news_risk import LevelTable, bucket, calendar_key, fit_thresholds, forward_range_atr, keyword_key
from actors.jobs.evaluation.decision_sources import MeanDifference, Share

FLOORS = ("calendar", "keyword")


@dataclass(frozen=True)
class EventLevels:
    """Per event of a dataset (its order): the hindsight level and the floors' levels, fitted before ``split_bar``."""

    level: np.ndarray
    calendar: np.ndarray
    keyword: np.ndarray
    held_out: np.ndarray
    """The event's words use a held-out template."""
    index: dict[str, int]
    """Event id -> its position."""


def event_levels(dataset, split_bar: int) -> EventLevels | None:
    """The levels of every event of ``dataset``: thresholds fitted on its bars before ``split_bar``, the floors' tables
    on its event bars before it (training templates only). None for a dataset without events or their truth."""
    events = tuple(getattr(dataset, "events", ()))
    truth = getattr(dataset, "event_truth", None)
    if not events or truth is None:
        return None
    highs, lows, closes = (np.asarray(getattr(dataset, k), dtype=np.float64) for k in ("high", "low", "close"))
    thresholds = fit_thresholds(forward_range_atr(highs, lows, closes, np.arange(1, split_bar)))
    bars = np.asarray(truth["event_bar"], dtype=np.int64)
    held = np.asarray(truth.get("template_held_out", ()), dtype=bool)
    held = held if len(held) == len(events) else np.zeros(len(events), bool)
    level = bucket(forward_range_atr(highs, lows, closes, bars), thresholds)
    fit = np.flatnonzero((bars < split_bar) & ~held & (level >= 0))
    floors = {}
    for name, key in (("calendar", calendar_key), ("keyword", keyword_key)):
        keys = [key(e) for e in events]
        floors[name] = (LevelTable([keys[i] for i in fit], level[fit]).predict(keys) if len(fit)
                        else np.full(len(events), -1, np.int64))
    return EventLevels(level, floors["calendar"], floors["keyword"], held, {e.event_id: i for i, e in enumerate(events)})


@dataclass(frozen=True)
class RiskReadScores:
    decisions: int = 0
    """Decisions right after an event read whose event has a hindsight level."""
    missing: int = 0
    """Of those, the thoughts without a readable risk read (scored as misses)."""
    llm: Share = Share(0, 0)
    calendar: Share = Share(0, 0)
    keyword: Share = Share(0, 0)
    llm_vs_calendar: MeanDifference = MeanDifference()
    llm_vs_keyword: MeanDifference = MeanDifference()
    held_out: int = 0
    """Of the decisions, those whose event uses a held-out template ..."""
    llm_held_out: Share = Share(0, 0)
    keyword_held_out: Share = Share(0, 0)
    """... and the LLM's and the keyword rule's match on them."""
    answers: tuple[int, ...] = ()
    """The LLM's reads, in decision order (CALM / ELEVATED / EXTREME counts for the report)."""

    def to_json(self) -> dict:
        mix = {name: sum(a == i for a in self.answers) for i, name in enumerate(("CALM", "ELEVATED", "EXTREME"))}
        return {"decisions": self.decisions, "missing": self.missing, "held_out": self.held_out, "answers": mix,
                **{name: getattr(self, name).to_json() for name in ("llm", "calendar", "keyword", "llm_vs_calendar",
                                                                  "llm_vs_keyword", "llm_held_out", "keyword_held_out")}}


def risk_read_scores(decision_event: Mapping[tuple[int, int], str], reads: Mapping[tuple[int, int], int],
                     levels: EventLevels | None) -> RiskReadScores:
    """``decision_event``: (env, step) -> the event id its thought had just read (EventReads.decision_event);
    ``reads``: (env, step) -> the risk level of the thought that decision used (-1: none readable)."""
    if levels is None:
        return RiskReadScores()
    keys = [key for key in sorted(decision_event) if decision_event[key] in levels.index
            and levels.level[levels.index[decision_event[key]]] >= 0]
    rows = [levels.index[decision_event[key]] for key in keys]
    truth = [int(levels.level[i]) for i in rows]
    llm = [int(reads.get(key, -1)) for key in keys]
    floors = {name: [int(getattr(levels, name)[i]) for i in rows] for name in FLOORS}
    held = [bool(levels.held_out[i]) for i in rows]

    def share(answers: Sequence[int], where: Sequence[bool] | None = None) -> Share:
        pairs = [(a, t) for j, (a, t) in enumerate(zip(answers, truth)) if where is None or where[j]]
        return Share(sum(a == t for a, t in pairs), len(pairs))

    def paired(floor: Sequence[int]) -> MeanDifference:
        return MeanDifference.of([float(a == t) - float(f == t) for a, f, t in zip(llm, floor, truth)])

    return RiskReadScores(len(keys), sum(a < 0 for a in llm), share(llm), share(floors["calendar"]), share(floors["keyword"]),
                          paired(floors["calendar"]), paired(floors["keyword"]), sum(held), share(llm, held),
                          share(floors["keyword"], held), tuple(llm))
