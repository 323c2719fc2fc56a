"""One fused decision per step for a batch of environments, by the configured method.

The Fuser is the fusion actor's whole domain: it holds the freshest thought per env,
applies rules / network / rl_only / llm_only, never returns a masked action, remembers
each decision until the trade it belongs to closes and turns closed trades into training
examples for the network.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from actors.common.actions import HOLD, NO_ACTION, flat_mask
from actors.common.decisions import FusedBatch
from actors.fusion.config import FusionConfig
from actors.common.events import MarketEvent
from actors.common.llm.news import EventBook, context_minute
from actors.fusion.network import (DecisionRecord, Experience, FusionLearner, event_inputs, fusion_input,
                                   hindsight_lesson, input_dim, label_decision)
from actors.fusion.rules import Fused, fuse_llm_only, fuse_rl_only, fuse_rules, make_legal
from actors.fusion.thoughts import Thought, ThoughtBook, UsableThought

if TYPE_CHECKING:
    from bus.messages import MarketContext


class DecisionMemory:
    """Decisions per (env_id, step), kept until a closed trade names their step (bounded, oldest out)."""

    def __init__(self, max_decisions: int) -> None:
        self.max_decisions = max_decisions
        self._records: OrderedDict[tuple[int, int], DecisionRecord] = OrderedDict()
        self.forgotten = 0

    def remember(self, env_id: int, step: int, record: DecisionRecord) -> None:
        self._records[(env_id, step)] = record
        while len(self._records) > self.max_decisions:
            self._records.popitem(last=False)
            self.forgotten += 1

    def set_executed(self, env_id: int, step: int, action: int) -> None:
        """The action risk let through (what the trade really did), when it differs from fusion's."""
        key = (env_id, step)
        record = self._records.get(key)
        if record is not None and record.executed_action != action:
            self._records[key] = DecisionRecord(record.inputs, record.rl_action, record.llm_action,
                                                record.mask, action)

    def take_flat_hold(self, env_id: int, step: int) -> DecisionRecord | None:
        """Remove and return the step's decision if the account was flat and stayed so (executed HOLD): no trade
        will ever name it. Entries stay for their trade's outcome."""
        record = self._records.get((env_id, step))
        if record is None or not flat_mask(record.mask) or record.executed_action != HOLD:
            return None
        return self._records.pop((env_id, step))

    def take(self, env_id: int, steps: Sequence[int]) -> list[DecisionRecord]:
        """Remove and return the remembered decisions of these steps (unknown steps are skipped)."""
        return [r for s in steps if (r := self._records.pop((env_id, s), None)) is not None]

    def __len__(self) -> int:
        return len(self._records)


class Fuser:
    def __init__(self, config: FusionConfig, learner: FusionLearner | None = None) -> None:
        self.config = config
        self.method = config.method
        self.thoughts = ThoughtBook(config.max_staleness_steps, config.llm_confidence_decay_per_step)
        self.learner = learner if learner is not None else (FusionLearner(config) if config.method == "network" else None)
        self.learns = self.learner is not None and config.learn
        """False: the network (if any) decides but never trains (fusion.learn = false: frozen for a backtest)."""
        self.learns_from_hindsight = self.learns and config.hindsight_lessons
        """Flat steps that stayed flat are taught by their env.hindsight row (fusion.hindsight_lessons)."""
        self.memory = DecisionMemory(config.max_remembered_decisions)
        self.events = EventBook()
        """md.event (fusion.event_inputs), read on each env's clock like the reasoner's prompts."""
        self.event_counts = {"decisions_near_event": 0, "decisions_thought_read_event": 0}
        self._explore_rng = np.random.default_rng(config.seed)
        self._risk_reads: dict[int, tuple[int, int, int]] = {}
        """env -> (step seen, level, minutes) of its newest thought's risk read (fusion.event_inputs' 4th input)."""

    def add_thought(self, thought: Thought) -> bool:
        held = self._risk_reads.get(thought.env_id)
        if getattr(thought, "risk_level", -1) >= 0 and (held is None or held[0] <= thought.step_seen):
            self._risk_reads[thought.env_id] = (thought.step_seen, thought.risk_level, thought.risk_minutes)
        return self.thoughts.add(thought)

    def risk_level(self, env_id: int, step: int) -> int:
        """The env's newest risk read (reasoner.risk_read) while its minutes last at ``step``; -1 for none."""
        read = self._risk_reads.get(env_id)
        if read is None or not read[0] <= step <= read[0] + read[2]:
            return -1
        return read[1]

    def add_event(self, event: MarketEvent) -> bool:
        return self.events.add(event)

    def news_inputs(self, context: MarketContext, thought: UsableThought, risk_level: int = -1) -> np.ndarray:
        """fusion.event_inputs of one decision: did its thought read the newest event, how recent, a release due, the
        risk read in force (``risk_level``)."""
        window = self.config.event_window_minutes
        now = context_minute(_as_mapping(context)) if len(self.events) else None
        newest = self.events.newest_visible_minute(now) if now is not None else None
        due = self.events.pending(now, window) if now is not None else []
        row = event_inputs(thought.staleness_steps, None if newest is None else now - newest, due[0][0] if due else None, window,
                           risk_level)
        if row[1] > 0:
            self.event_counts["decisions_near_event"] += 1
            self.event_counts["decisions_thought_read_event"] += int(row[0])
        return row

    def fuse(self, step: int, env_ids: Sequence[int], episode_ids: Sequence[int], rl_actions: np.ndarray,
             rl_confidences: np.ndarray, masks: np.ndarray, contexts: Sequence[MarketContext]) -> FusedBatch:
        n = len(env_ids)
        rl_actions = np.asarray(rl_actions, dtype=np.int64)
        rl_confidences = np.asarray(rl_confidences, dtype=np.float32)
        masks = np.asarray(masks, dtype=bool)
        thoughts = [self.thoughts.usable(env_ids[i], episode_ids[i], step) for i in range(n)]
        with_market, with_events = self.config.market_inputs, self.config.event_inputs
        # Only the network reads (and learns from) the inputs: the rules skip building them, a hot-path cost per step.
        inputs = np.stack([fusion_input(int(rl_actions[i]), float(rl_confidences[i]), thoughts[i].action,
                                        thoughts[i].confidence, contexts[i], with_market,
                                        self.news_inputs(contexts[i], thoughts[i], self.risk_level(env_ids[i], step))
                                        if with_events else None) for i in range(n)]) \
            if n and self.learner is not None else np.zeros((0, input_dim(with_market, with_events)), dtype=np.float32)
        fused = self._decide(rl_actions, rl_confidences, masks, thoughts, inputs)
        fused = [make_legal(f, masks[i], int(rl_actions[i])) for i, f in enumerate(fused)]
        for i, f in enumerate(fused if self.learns else ()):
            self.memory.remember(env_ids[i], step, DecisionRecord(inputs[i], int(rl_actions[i]), thoughts[i].action,
                                                                  masks[i].copy(), f.action))
        return FusedBatch(
            env_ids=list(env_ids), step=step, method=self.method,
            actions=np.array([f.action for f in fused], dtype=np.int64),
            rules=[f.rule for f in fused],
            rl_actions=rl_actions, rl_confidences=rl_confidences,
            llm_actions=np.array([t.action for t in thoughts], dtype=np.int64),
            llm_confidences=np.array([t.confidence for t in thoughts], dtype=np.float32),
            llm_staleness=np.array([t.staleness_steps for t in thoughts], dtype=np.int64),
            llm_query_ids=[t.query_id for t in thoughts],
            rl_trust=np.array([f.rl_trust for f in fused], dtype=np.float32),
            llm_trust=np.array([f.llm_trust for f in fused], dtype=np.float32),
        )

    def _decide(self, rl_actions: np.ndarray, rl_confidences: np.ndarray, masks: np.ndarray,
                thoughts: list[UsableThought], inputs: np.ndarray) -> list[Fused]:
        n = len(thoughts)
        if self.method == "rl_only":
            return [fuse_rl_only(int(rl_actions[i])) for i in range(n)]
        if self.method == "llm_only":
            return [fuse_llm_only(int(rl_actions[i]), thoughts[i]) for i in range(n)]
        rules = [fuse_rules(int(rl_actions[i]), float(rl_confidences[i]), thoughts[i], self.config) for i in range(n)]
        if self.method == "rules" or n == 0:
            return rules
        assert self.learner is not None
        if not self.learner.ready:
            # Until the network has learned something the rules decide; their outcomes are its first lessons.
            return [Fused(r.action, "warmup_" + r.rule, r.rl_trust, r.llm_trust) for r in rules]
        prediction = self.learner.predict(inputs, self._choices(masks, rl_actions, thoughts), rl_actions)
        # Exploring keeps outcomes of both sides coming to a network that learns; a frozen one only decides.
        explore = self._explore_rng.random(n) < (self.config.explore_rate if self.learns else 0.0)
        return [Fused(rules[i].action, "explore_" + rules[i].rule, rules[i].rl_trust, rules[i].llm_trust)
                if explore[i] else
                Fused(int(prediction.actions[i]), "network", float(prediction.rl_trust[i]), float(prediction.llm_trust[i]))
                for i in range(n)]

    def _choices(self, masks: np.ndarray, rl_actions: np.ndarray, thoughts: list[UsableThought]) -> np.ndarray:
        """The actions the network may pick: the legal ones, narrowed to the proposals and HOLD unless free."""
        return network_choices(masks, rl_actions, np.array([t.action for t in thoughts], dtype=np.int64),
                               self.config.network_choices)

    def record_executed(self, env_ids: Sequence[int], step: int, actions: np.ndarray) -> None:
        for env_id, action in zip(env_ids, actions, strict=True):
            self.memory.set_executed(env_id, step, int(action))

    def learn_from_hindsight(self, env_id: int, step: int, long_pnl_usd: float, short_pnl_usd: float) -> Experience | None:
        """A flat step that stayed flat, taught by what a long and a short from it would have made (None: not such a
        step, not remembered, or nothing to learn); added to the learner."""
        if not self.learns_from_hindsight:
            return None
        record = self.memory.take_flat_hold(env_id, step)
        if record is None:
            return None
        choices = network_choices(record.mask[None, :], np.array([record.rl_action]), np.array([record.llm_action]),
                                  self.config.network_choices)[0]
        experience = hindsight_lesson(record, choices, long_pnl_usd, short_pnl_usd, self.config.pnl_scale_usd)
        if experience is not None and self.learner is not None:
            self.learner.add([experience])
        return experience

    def learn_from_outcome(self, env_id: int, decision_steps: Sequence[int], pnl_usd: float) -> list[Experience]:
        """Turn a closed trade into labelled experiences (added to the learner when it learns)."""
        if not self.learns:
            return []
        records = self.memory.take(env_id, decision_steps)
        experiences = [e for r in records if (e := label_decision(r, pnl_usd, self.config.pnl_scale_usd)) is not None]
        if self.learner is not None:
            self.learner.add(experiences)
        return experiences


def _as_mapping(context) -> dict:
    """The clock fields of a context, whether a bus MarketContext or a dict."""
    if isinstance(context, dict):
        return context
    return {"session_id": getattr(context, "session_id", None), "time_et": getattr(context, "time_et", "")}


def network_choices(masks: np.ndarray, rl_actions: np.ndarray, llm_actions: np.ndarray, mode: str) -> np.ndarray:
    """bool [n, 6]: the legal actions, narrowed to RL's, the LLM's (where it has one) and HOLD unless ``mode`` is any."""
    if mode == "any":
        return masks
    proposed = np.zeros_like(masks)
    proposed[:, HOLD] = True
    rows = np.arange(len(rl_actions))
    proposed[rows, rl_actions] = True
    has_thought = llm_actions != NO_ACTION
    proposed[rows[has_thought], llm_actions[has_thought]] = True
    return masks & proposed

