"""Closed trades (and hindsight labels) matched to the thoughts behind them, by query id.

Thoughts and outcomes arrive in any order: an outcome whose thoughts are not known yet
waits (bounded, oldest dropped and counted) and is matched when they arrive. Hindsight labels
come from the env by (env id, decision step): joined to the thoughts that saw that step, waiting
(bounded like outcomes) when the thought is not known yet. Duplicates
are harmless: an outcome is keyed by (env, episode, trade), a thought by its query id,
and every experience id is stable, so the store ignores a second copy.

Target of a thought behind a trade (thoughts do not say whether they opened or managed it,
so the action mask they saw tells: entries are allowed only when flat):
- an entry thought: the trade's side when it won, HOLD when it lost (it should not have entered);
- a thought while in the position: its own advice when the trade won; nothing when it lost
  (no better management action is known from the outcome alone).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass

from actors.common.llm.reasons import agreeing_reason
from actors.lora.experience import Experience, ThoughtRecord, target_answer
from actors.common.hindsight import HindsightLabel

HOLD, BUY, SELL = 0, 1, 2


@dataclass(frozen=True, slots=True)
class TradeOutcome:
    """The fields of a bus EnvOutcome the trainer needs (domain code does not import the bus)."""

    env_id: int
    episode_id: int
    trade_id: int
    side: int
    """1 long, -1 short."""
    pnl_usd: float
    exit_reason: str
    llm_query_ids: tuple[str, ...]

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.env_id, self.episode_id, self.trade_id)


class ExperienceMatcher:
    def __init__(self, *, target_confidence: float, max_thoughts: int, max_pending_outcomes: int) -> None:
        self._confidence = target_confidence
        self._max_thoughts = max_thoughts
        self._max_pending = max_pending_outcomes
        self._thoughts: OrderedDict[str, ThoughtRecord] = OrderedDict()
        self._pending: OrderedDict[tuple[int, int, int], TradeOutcome] = OrderedDict()
        self._by_step: OrderedDict[tuple[int, int], list[str]] = OrderedDict()
        """(env id, step seen) -> query ids of the thoughts that saw it (bounded like the thoughts)."""
        self._pending_hindsight: OrderedDict[tuple[int, int], HindsightLabel] = OrderedDict()
        """Hindsight labels whose thought has not arrived yet (a thought may finish after the horizon)."""
        self._done: OrderedDict[str, None] = OrderedDict()
        """Experience ids already produced (bounded like the thoughts): a duplicate outcome yields nothing."""
        self.counts: Counter[str] = Counter()

    @property
    def pending_outcomes(self) -> int:
        return len(self._pending)

    @property
    def pending_hindsight(self) -> int:
        return len(self._pending_hindsight)

    def add_thought(self, thought: ThoughtRecord) -> list[Experience]:
        """Remember a thought; returns the experiences of waiting outcomes it completes."""
        header = thought.header
        if header.query_id in self._thoughts:
            self.counts["duplicate_thoughts"] += 1
            return []
        self._thoughts[header.query_id] = thought
        _trim(self._thoughts, self._max_thoughts)
        self.counts["thoughts"] += 1
        step_key = (header.env_id, header.step_seen)
        self._by_step.setdefault(step_key, []).append(header.query_id)
        _trim(self._by_step, self._max_thoughts)
        waiting = [o for o in self._pending.values() if header.query_id in o.llm_query_ids]
        experiences = [e for outcome in waiting for e in self._try_outcome(outcome)]
        label = self._pending_hindsight.pop(step_key, None)
        if label is not None:
            experiences += self.add_hindsight(header.query_id, label)
        return experiences

    def add_outcome(self, outcome: TradeOutcome) -> list[Experience]:
        """Experiences of a closed trade; waits for any of its thoughts not seen yet."""
        self.counts["outcomes"] += 1
        if not outcome.llm_query_ids:
            self.counts["outcomes_without_thoughts"] += 1
            return []
        return self._try_outcome(outcome)

    def add_hindsight_at(self, env_id: int, step: int, label: HindsightLabel) -> list[Experience]:
        """The env's label of decision step ``step``: an experience per thought that saw it; waits when none has arrived."""
        query_ids = self._by_step.get((env_id, step))
        if not query_ids:
            self._pending_hindsight[(env_id, step)] = label
            if len(self._pending_hindsight) > self._max_pending:
                self._pending_hindsight.popitem(last=False)
                self.counts["pending_hindsight_dropped"] += 1
            return []
        return [e for query_id in query_ids for e in self.add_hindsight(query_id, label)]

    def add_hindsight(self, query_id: str, label: HindsightLabel) -> list[Experience]:
        """The experience of a thought labelled by the triple barrier ([] when the thought is unknown or done)."""
        thought = self._thoughts.get(query_id)
        experience_id = f"hindsight:{query_id}"
        if thought is None or experience_id in self._done:
            self.counts["hindsight_unmatched" if thought is None else "duplicates"] += 1
            return []
        reason = {BUY: "long reaches its target first", SELL: "short reaches its target first"}.get(
            label.action, "neither side pays after costs")
        return [self._experience(experience_id, thought, label.action, label.pnl_usd, "hindsight", reason,
                                 {"long_pnl_usd": label.long.pnl_usd, "short_pnl_usd": label.short.pnl_usd})]

    # ------------------------------------------------------------------ internals

    def _try_outcome(self, outcome: TradeOutcome) -> list[Experience]:
        missing = [q for q in outcome.llm_query_ids if q not in self._thoughts]
        if missing:
            if outcome.key not in self._pending:
                self._pending[outcome.key] = outcome
                if len(self._pending) > self._max_pending:
                    self._pending.popitem(last=False)
                    self.counts["pending_outcomes_dropped"] += 1
            return []
        self._pending.pop(outcome.key, None)
        experiences = []
        for query_id in dict.fromkeys(outcome.llm_query_ids):  # a thought may be behind two decisions: once
            experience = self._trade_experience(outcome, self._thoughts[query_id])
            if experience is not None:
                experiences.append(experience)
        return experiences

    def _trade_experience(self, outcome: TradeOutcome, thought: ThoughtRecord) -> Experience | None:
        experience_id = f"trade:{outcome.env_id}:{outcome.episode_id}:{outcome.trade_id}:{thought.header.query_id}"
        if experience_id in self._done:
            self.counts["duplicates"] += 1
            return None
        won = outcome.pnl_usd > 0
        is_entry = _entry_allowed(thought.mask)
        if is_entry:
            action = (BUY if outcome.side > 0 else SELL) if won else HOLD
        elif won:
            action = thought.header.action
        else:
            self.counts["losing_management_thoughts_skipped"] += 1
            return None
        side = "long" if outcome.side > 0 else "short"
        reason = f"{side} {'won' if won else 'lost'} ${abs(outcome.pnl_usd):.0f} by {outcome.exit_reason}"
        return self._experience(experience_id, thought, action, outcome.pnl_usd, "trade", reason,
                                {"trade_id": outcome.trade_id, "entry": is_entry})

    def _experience(self, experience_id: str, thought: ThoughtRecord, action: int, pnl_usd: float, source: str,
                    reason: str, meta: dict) -> Experience:
        self._done[experience_id] = None
        _trim(self._done, self._max_thoughts)
        self.counts[f"{source}_experiences"] += 1
        return Experience(  # the outcome's own words stay in meta: a reason must be readable from the prompt
            id=experience_id, messages=thought.messages, mask=thought.mask,
            target=target_answer(action, self._confidence, agreeing_reason(action, thought.market_reason or reason)),
            action=action,
            pnl_usd=float(pnl_usd), source=source,
            meta={"query_id": thought.header.query_id, "thought_action": thought.header.action, "outcome": reason,
                  "adapter_version": thought.adapter_version, **meta},
        )


def _entry_allowed(mask: tuple[bool, ...]) -> bool:
    return len(mask) > SELL and (bool(mask[BUY]) or bool(mask[SELL]))


def _trim(book: OrderedDict, limit: int) -> None:
    while len(book) > limit:
        book.popitem(last=False)
