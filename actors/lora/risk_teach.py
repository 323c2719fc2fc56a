"""Teaching the risk read (``lora.teach = "risk"``): history prompts labelled with how dangerous the next minutes were.

On a news market every history bar gets the hindsight volatility level of actors/common/news_risk.py (the next 15
bars' range over the ATR before, bucketed at thresholds fitted on the TRAINING days' bars), and its target answer
carries it in the decide grammar's risk form (``BUY | 0.80 | ELEVATED 15 | reason``, reasoner.risk_read): the choice
loss is then also taken at the level's first token, and a round is judged on the level it would write.

An event bar (one that makes an event public) also carries what the floors answer there: the calendar rule (a
release's tier; every headline "unscheduled") and the keyword rule (tier and size words, a figure against its
consensus), each a lookup fitted on the training days' event bars (news_risk.LevelTable). The publish gate pairs the
new adapter with the current one and with both floors on the same held-out event bars.

Events worded with a held-out template (news_sized_words.HELD_OUT) are dropped from the training days and scored
apart on the held-out days (``meta["template_held_out"]``): where reading could beat a word list.

The publish rule for the risk read: published when the new weights' level match on the held-out event bars of
training templates is ABOVE the current weights' (the paired mean gain > 0; a tie keeps the current ones) and the
levels have not collapsed onto one (more than lora.collapse_share of answers while the labels are mixed). The paired
differences to the calendar and keyword rules (with their intervals) are recorded beside it, not gated on: the
issue's question is whether the read beats them, and a round that does not is still a better read than the last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from actors.common.news_risk import (RISK_HORIZON_BARS, RISK_LEVELS, LevelTable, bucket, calendar_key, fit_thresholds,
                                     forward_range_atr, keyword_key)
from actors.lora.publishing import COLLAPSED, NO_STEPS, NOT_BETTER, PUBLISHED, Verdict, is_collapsed, paired_gain

FLOORS = ("calendar", "keyword")
"""The floors an event bar's experience carries (``meta["risk_calendar"]``, ``meta["risk_keyword"]``)."""


class RiskInfo(NamedTuple):
    level: int
    """The hindsight level (news_risk.RISK_LEVELS index; -1: none, the bar's horizon leaves the session)."""
    event: bool = False
    """The bar makes an event public."""
    calendar: int = -1
    keyword: int = -1
    """The floors' levels at an event bar (-1 elsewhere)."""
    template_held_out: bool = False
    """The event's words use a held-out template."""

    def meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {"risk_level": self.level}
        if self.event:
            out.update(risk_event=True, risk_calendar=self.calendar, risk_keyword=self.keyword,
                       template_held_out=self.template_held_out)
        return out


def risk_field(level: int, minutes: int = RISK_HORIZON_BARS) -> str:
    """The grammar's risk field (actors/common/llm/grammar.py RISK_RULE): CALM, or ELEVATED / EXTREME and minutes."""
    return RISK_LEVELS[level] if level == 0 else f"{RISK_LEVELS[level]} {minutes}"


def risk_target(target: str, level: int) -> str:
    """``ACTION | conf | reason`` -> ``ACTION | conf | LEVEL minutes | reason`` (the label's own 15 minutes)."""
    action, confidence, reason = (part.strip() for part in target.split("|", 2))
    return f"{action} | {confidence} | {risk_field(level)} | {reason}"


def risk_prefix(target: str) -> str:
    """The answer up to the risk field, ``ACTION | conf |``: what precedes the level's first token."""
    action, confidence, _ = target.split("|", 2)
    return f"{action.strip()} | {confidence.strip()} |"


def annotate_risk(rows: Sequence, highs: np.ndarray, lows: np.ndarray, closes: np.ndarray, day: np.ndarray,
                  train_bars: np.ndarray, events: Sequence, event_truth: Mapping[str, np.ndarray] | None) -> list:
    """HistoryBars with their RiskInfo; training-day bars whose event uses a held-out template are dropped.

    ``train_bars``: the training days' bars (the thresholds are their ranges' quantiles); the floors' tables are
    fitted on the event bars of those days (``day``: each bar's session) worded with training templates. Bar indices
    index the data set's arrays."""
    thresholds = fit_thresholds(forward_range_atr(highs, lows, closes, train_bars))
    by_bar = _events_by_bar(events, event_truth)
    labels_at = lambda bars: bucket(forward_range_atr(highs, lows, closes, bars), thresholds)  # noqa: E731
    train_days = np.unique(day[np.asarray(train_bars, dtype=np.int64)])
    fit_bars = sorted(b for b, (_, held) in by_bar.items() if not held and b < len(day) and day[b] in train_days)
    fit_keys = {"calendar": calendar_key, "keyword": keyword_key}
    tables = {}
    if fit_bars:
        fit_labels = labels_at(fit_bars)
        tables = {name: LevelTable([key(by_bar[b][0]) for b in fit_bars], fit_labels) for name, key in fit_keys.items()
                  if (fit_labels >= 0).any()}
    levels = labels_at([int(row.key) for row in rows]) if rows else np.zeros(0, np.int64)
    out = []
    for row, level in zip(rows, levels.tolist()):
        found = by_bar.get(int(row.key))
        if found is None:
            out.append(row._replace(risk=RiskInfo(int(level))))
            continue
        event, held = found
        if held and not row.held_out:
            continue  # a held-out template never reaches training (nor validation)
        floors = {name: int(table.predict([fit_keys[name](event)])[0]) for name, table in tables.items()}
        out.append(row._replace(risk=RiskInfo(int(level), True, floors.get("calendar", -1), floors.get("keyword", -1), held)))
    return out


def _events_by_bar(events: Sequence, event_truth: Mapping[str, np.ndarray] | None) -> dict[int, tuple[Any, bool]]:
    """Bar -> (the newest event it makes public, its held-out-template flag)."""
    if not events or event_truth is None:
        return {}
    bars = np.asarray(event_truth["event_bar"], dtype=np.int64)
    held = np.asarray(event_truth.get("template_held_out", ()), dtype=bool)
    held = held if len(held) else np.zeros(len(bars), bool)  # a market without held-out templates (news_drift)
    if len(bars) != len(events) or len(held) != len(events):
        raise ValueError(f"event_truth: {len(events)} events but {len(bars)} event bars and {len(held)} template flags")
    out: dict[int, tuple[Any, bool]] = {}
    for i, bar in enumerate(bars.tolist()):
        if bar not in out or events[i].time_ns >= out[bar][0].time_ns:
            out[bar] = (events[i], bool(held[i]))
    return out


def with_risk(experience, info: RiskInfo):
    """The experience's target in the risk form and its RiskInfo in ``meta`` (unchanged where the level is unknown)."""
    if info.level < 0:
        return replace(experience, meta={**experience.meta, **info.meta()})
    return replace(experience, target=risk_target(experience.target, info.level), meta={**experience.meta, **info.meta()})


def gate_and_apart(held_out: Sequence) -> tuple[list, list]:
    """(held-out event bars of training templates: the gate's prompts, those of held-out templates: scored apart)."""
    events = [e for e in held_out if e.meta.get("risk_event") and e.meta.get("risk_level", -1) >= 0]
    return [e for e in events if not e.meta.get("template_held_out")], [e for e in events if e.meta.get("template_held_out")]


def risk_verdict(before: Sequence[int], after: Sequence[int], labels: Sequence[int], floors: Mapping[str, Sequence[int]],
                 *, z: float, collapse_share: float, trained: bool = True) -> tuple[Verdict, dict[str, float]]:
    """The module's rule on the current and new weights' levels at the same held-out event bars; with the metrics of
    the paired differences to each floor (``risk_gain_<floor>`` and its ``_low`` / ``_high``) and their match."""
    before_hits = [a == y for a, y in zip(before, labels)]
    after_hits = [a == y for a, y in zip(after, labels)]
    n = max(len(labels), 1)
    mean, low, high = paired_gain(before_hits, after_hits, z)
    collapsed, top, top_share = is_collapsed(list(after), list(labels), collapse_share)
    why = NO_STEPS if not trained else COLLAPSED if collapsed else NOT_BETTER if mean <= 0 else PUBLISHED
    mix = Counter(after)
    verdict = Verdict(why == PUBLISHED, why, sum(before_hits) / n, sum(after_hits) / n, low, high, collapsed,
                      RISK_LEVELS[top] if 0 <= top < 3 else "none", top_share,
                      {RISK_LEVELS[a] if 0 <= a < 3 else "none": mix[a] / n for a in sorted(mix)})
    metrics = {"risk_gain": mean, "risk_events": float(len(labels))}
    for name, answers in floors.items():
        floor_hits = [a == y for a, y in zip(answers, labels)]
        f_mean, f_low, f_high = paired_gain(floor_hits, after_hits, z)
        metrics.update({f"risk_match_{name}": sum(floor_hits) / n, f"risk_gain_{name}": f_mean,
                        f"risk_gain_{name}_low": f_low, f"risk_gain_{name}_high": f_high})
    return verdict, metrics


def floor_levels(experiences: Sequence) -> dict[str, list[int]]:
    return {name: [int(e.meta.get(f"risk_{name}", -1)) for e in experiences] for name in FLOORS}
