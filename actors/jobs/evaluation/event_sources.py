"""Around the news: the lockstep decisions whose LLM advice came from a thought that had just read an event.

On a market with events (``news``, ``news_null``, or a feed with calendar and headline files) the success table's
LLM row over every flat decision mostly scores quiet bars, where the LLM reads the same tape as the policy. What the
LLM is for shows on the few decisions right after an event: the first decision of an env whose thought read an event
that env's thoughts had not read before (``LlmThought.news_ids``; a carried answer repeats its thought's ids and so
never counts twice). Those decisions, flat and labelled, are scored here against:

- the hindsight label (the target: the seeds' LLM accuracy 0.75), beside the floors on the same decisions: the
  keyword rule on the event's words (HOLD where it abstains), one side everywhere (BUY), and the ceiling a reader
  of the words can reach, their own sign (``text_sign``; the words carry the surprise's sign with the market's
  reliability, 0.8 on ``news``);
- the surprise's side (what the words are about, whatever the next hour's noise did);
- hindsight $ a decision (one contract from the next open, the label's barrier, costs paid) for the LLM, the keyword
  rule, the words' sign, RL and the fused action.

A decision counts when the thought it used (or the cached answer carrying that thought) read an event none of its
env's earlier decisions had used. The truth of each event (the dataset's ``event_truth``) is joined by event id after
the run: the bus never carries it.
Plain Python over bus messages: no process, no socket.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from actors.common.actions import BUY, HOLD, SELL
from actors.common.hindsight import action_pnl_usd
from actors.common.news_floors import keyword_event_sign
from actors.jobs.evaluation.decision_sources import MeanDifference, Share, SourceBook
from bus.messages import FusionDecision, LlmThought, Message

SIDE = {1: BUY, -1: SELL, 0: HOLD}
EVENT_USD_SOURCES = ("llm", "keyword", "words", "rl", "fused")


class EventSigns(NamedTuple):
    surprise: int
    """+1 / -1: the surprise's sign (what moves the market on ``news``; nothing does on ``news_null``)."""
    words: int
    """The sign the words carry (the surprise's with the market's reliability)."""
    keyword: int
    """The keyword rule's reading of the words: +1, -1, or 0 where it abstains."""


def event_signs_by_id(events: Sequence, event_truth: Mapping[str, np.ndarray] | None) -> dict[str, EventSigns]:
    """Event id -> its signs, from a dataset's events and their hidden truth; {} for a market without news."""
    if not events or event_truth is None:
        return {}
    surprise, words = np.asarray(event_truth["surprise"]), np.asarray(event_truth["text_sign"])
    if len(surprise) != len(events) or len(words) != len(events):
        raise ValueError(f"event_truth: {len(events)} events but {len(surprise)} surprises and {len(words)} word signs")
    return {event.event_id: EventSigns(int(np.sign(s)), int(np.sign(w)), keyword_event_sign(event))
            for event, s, w in zip(events, surprise, words)}


class EventReads:
    """Which decisions used a thought that had just read an event: collected from llm.thought and fusion.decision.

    Resolved when asked, not as messages come: a thought and the decision that used it travel from different actors
    (and a thought may take a direct lane to fusion), so the job may hear the decision first."""

    WATCH: tuple[type[Message], ...] = (LlmThought, FusionDecision)

    def __init__(self) -> None:
        self._thoughts: dict[str, tuple[int, int, tuple[str, ...]]] = {}
        """Query id -> (env, the step its prompt read, the event ids it read): a carried answer has its own query id and
        its thought's step and ids (LlmThought.step_built), so it never counts an event twice."""
        self._used: dict[tuple[int, int], str] = {}
        """(env, step) of a decision -> the query id of the thought it used."""
        self._risk: dict[str, int] = {}
        """Query id -> the thought's risk read (LlmThought.risk_level; -1: none, or reasoner.risk_read off)."""

    def add(self, msg: Message) -> None:
        match msg:
            case LlmThought():
                self._thoughts[msg.query_id] = (msg.env_id, msg.built_on, tuple(msg.news_ids))
                self._risk[msg.query_id] = int(msg.risk_level)
            case FusionDecision():
                for row, env_id in enumerate(msg.env_ids):
                    if msg.llm_query_ids[row]:
                        self._used[(env_id, msg.step)] = msg.llm_query_ids[row]

    @property
    def decision_risk(self) -> dict[tuple[int, int], int]:
        """(env, step) of every decision with a thought -> that thought's risk read (-1 for none)."""
        return {key: self._risk.get(query_id, -1) for key, query_id in self._used.items()}

    @property
    def decision_event(self) -> dict[tuple[int, int], str]:
        """(env, step) of the first decision of its env whose thought had read an event that env's decisions had not
        used before -> that event's id (the newest it read first). With reasoner.think_on = news the thought that read
        the event is often carried to the next quiet bar as a cached answer with its own query id and the same event
        ids: the first decision using either counts, once."""
        used: dict[int, set[str]] = {}
        found: dict[tuple[int, int], str] = {}
        for key, query_id in sorted(self._used.items()):
            thought = self._thoughts.get(query_id)
            if thought is None:
                continue
            known = used.setdefault(key[0], set())
            new = [event_id for event_id in thought[2] if event_id not in known]
            known.update(thought[2])
            if new:
                found[key] = new[0]
        return found


@dataclass(frozen=True)
class EventScores:
    """The flat, labelled decisions right after an event read (see the module docstring)."""

    decisions: int = 0
    read: int = 0
    """Decisions whose thought had just read an event (flat or not, labelled or not)."""
    unknown_events: int = 0
    """Of those, decisions whose event the dataset's truth does not know (a live feed's): not scored."""
    llm_label: Share = Share(0, 0)
    keyword_label: Share = Share(0, 0)
    words_label: Share = Share(0, 0)
    """A reader that takes the words' sign: the ceiling of reading."""
    buy_label: Share = Share(0, 0)
    llm_surprise: Share = Share(0, 0)
    """LLM advice is the surprise's side."""
    usd: dict[str, MeanDifference] = field(default_factory=dict)
    """Per source (EVENT_USD_SOURCES), hindsight $ a decision with its interval."""
    llm_vs_keyword_usd: MeanDifference = MeanDifference()
    """Per decision, the LLM's hindsight $ minus the keyword rule's: does reading beat matching words?"""

    def to_json(self) -> dict:
        return {"decisions": self.decisions, "read": self.read, "unknown_events": self.unknown_events,
                **{name: getattr(self, name).to_json() for name in ("llm_label", "keyword_label", "words_label", "buy_label", "llm_surprise")},
                "usd": {name: m.to_json() for name, m in self.usd.items()}, "llm_vs_keyword_usd": self.llm_vs_keyword_usd.to_json()}

    def usd_text(self) -> str:
        return ", ".join(f"{name} {m.value:+,.1f}" for name, m in self.usd.items()) if self.decisions else "n/a"



def event_scores(reads: EventReads, book: SourceBook, signs: Mapping[str, EventSigns]) -> EventScores:
    """Score the decisions ``reads`` found, with the labels, flat flags and hindsight $ ``book`` collected."""
    read = reads.decision_event
    keys = sorted(read)
    unknown = sum(read[key] not in signs for key in keys)
    scored = [key for key in keys if read[key] in signs and key in book.labels and key in book.decisions and book.flat.get(key, False)]
    answers: dict[str, list[int]] = {name: [] for name in ("llm", "keyword", "words", "buy", "rl", "fused")}
    labels, surprises = [], []
    for key in scored:
        event = signs[read[key]]
        decision = book.decisions[key]
        for name, action in (("llm", decision.llm), ("keyword", SIDE[event.keyword]), ("words", SIDE[event.words]),
                             ("buy", BUY), ("rl", decision.rl), ("fused", decision.fused)):
            answers[name].append(action)
        labels.append(book.labels[key])
        surprises.append(SIDE[event.surprise])

    def matches(name: str, truth: list[int]) -> Share:
        return Share(sum(a == t for a, t in zip(answers[name], truth)), len(truth))

    priced = [(i, book.side_usd[key]) for i, key in enumerate(scored) if key in book.side_usd]
    values = {name: [action_pnl_usd(answers[name][i], *sides) for i, sides in priced] for name in EVENT_USD_SOURCES}
    return EventScores(len(scored), len(keys), unknown, matches("llm", labels), matches("keyword", labels),
                       matches("words", labels), matches("buy", labels), matches("llm", surprises),
                       {name: MeanDifference.of(v) for name, v in values.items()},
                       MeanDifference.of([a - b for a, b in zip(values["llm"], values["keyword"])]))
