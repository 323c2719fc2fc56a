"""Event-bar prompts of the news market: which history prompts show an event, and what that event's truth was.

The LoRA history of the news market (actors/lora/history.py) draws every bar that makes an event public. To judge a
reader of the news on those prompts, each one is joined here to its event's hidden truth (the dataset's
``event_truth``: the surprise's sign, the words' sign) and to the keyword rule's reading of its words
(actors/common/news_floors.py), so the trained model sits beside the floors on the same prompts: the hindsight label's
match, the surprise sign's match (the ceiling the words allow is their reliability, 0.8) and hindsight $.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from actors.common.actions import BUY, HOLD, SELL
from actors.common.news_floors import keyword_event_sign
from actors.lora.dollars import answer_usd
from actors.lora.experience import Experience
from actors.lora.history import HISTORY_PREFIX

SIDE = {1: BUY, -1: SELL, 0: HOLD}


class EventTruth(NamedTuple):
    surprise_sign: int
    """+1 / -1: the surprise's sign (what moves the market on `news`; nothing does on `news_null`)."""
    text_sign: int
    """The sign the words carry (= the surprise's with probability reliability)."""
    keyword_sign: int
    """The keyword rule's reading of the words: +1, -1, or 0 where it abstains."""
    text: str


def event_truth_by_bar(events: Sequence, event_truth: Mapping[str, np.ndarray] | None) -> dict[int, EventTruth]:
    """Bar index -> the truth of the newest event that bar makes public (the one the prompt's news line shows
    first). {} for a market without news."""
    if not events or event_truth is None:
        return {}
    bars = np.asarray(event_truth["event_bar"], dtype=np.int64)
    if len(bars) != len(events):
        raise ValueError(f"event_truth: {len(events)} events but {len(bars)} event bars")
    surprise, text_sign = np.asarray(event_truth["surprise"]), np.asarray(event_truth["text_sign"])
    newest: dict[int, int] = {}
    for i, bar in enumerate(bars.tolist()):
        if bar not in newest or events[i].time_ns >= events[newest[bar]].time_ns:
            newest[bar] = i
    return {bar: EventTruth(int(np.sign(surprise[i])), int(text_sign[i]), keyword_event_sign(events[i]), events[i].text)
            for bar, i in newest.items()}


def history_bar_index(experience: Experience) -> int | None:
    """The data-set bar of a history experience (its id is ``hindsight:history:<bar>``), None for any other."""
    head, _, key = experience.id.rpartition(":")
    return int(key) if head.endswith(HISTORY_PREFIX) and key.isdigit() else None


def event_experiences(experiences: Sequence[Experience], truth: Mapping[int, EventTruth]) -> list[Experience]:
    """The experiences whose bar makes an event public (in their order)."""
    return [e for e in experiences if history_bar_index(e) in truth]


class RuleScore(NamedTuple):
    match_label: list[bool]
    match_surprise: list[bool]
    """Per prompt: the answer is the side of the surprise's sign (HOLD never is)."""
    usd: list[float]


def score(answers: Sequence[int], experiences: Sequence[Experience], truth: Mapping[int, EventTruth]) -> RuleScore:
    """Each answer against its prompt's hindsight label, its event's surprise sign, and its hindsight $ (the trade
    it names from that bar, actors/lora/dollars.py)."""
    if len(answers) != len(experiences):
        raise ValueError(f"{len(answers)} answers for {len(experiences)} prompts")
    signs = [truth[history_bar_index(e)].surprise_sign for e in experiences]
    return RuleScore([a == e.action for a, e in zip(answers, experiences)],
                     [a == SIDE[s] for a, s in zip(answers, signs)],
                     [answer_usd(a, e) for a, e in zip(answers, experiences)])


def floor_answers(experiences: Sequence[Experience], truth: Mapping[int, EventTruth]) -> dict[str, list[int]]:
    """The floors' answers on the same prompts: the keyword rule (HOLD where it abstains), one side everywhere, the
    surprise's sign (the oracle of the news) and the hindsight label itself (the oracle of the barrier)."""
    events = [truth[history_bar_index(e)] for e in experiences]
    return {"keyword rule": [SIDE[t.keyword_sign] for t in events],
            "always BUY": [BUY] * len(experiences),
            "always SELL": [SELL] * len(experiences),
            "surprise sign (news oracle)": [SIDE[t.surprise_sign] for t in events],
            "label (oracle)": [e.action for e in experiences]}


def label_agreement(experiences: Sequence[Experience], truth: Mapping[int, EventTruth]) -> tuple[float, float]:
    """(share of the prompts whose label is the surprise's side, share whose label is HOLD): the first bounds what
    any reader of the news can match of the labels, the reading being at best the surprise's sign."""
    if not experiences:
        return 0.0, 0.0
    sides = [SIDE[truth[history_bar_index(e)].surprise_sign] for e in experiences]
    return (float(np.mean([e.action == s for e, s in zip(experiences, sides)])),
            float(np.mean([e.action == HOLD for e in experiences])))
