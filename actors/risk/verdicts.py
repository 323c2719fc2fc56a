"""One verdict per step: from the fusion decision, or, past the deadline, from RL alone.

The VerdictBook pairs each step's observation (masks and contexts) with the fusion
decision for it. It holds no clock: the actor calls ``deadline(step)`` when the step's
fusion deadline has passed. A step is answered exactly once; a decision for an answered
step is late (counted, ignored). Bookkeeping is bounded: the oldest unanswered steps are
dropped (counted) when more than ``max_pending_steps`` wait (actors/common/stepjoin.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from actors.common.actions import HOLD
from actors.common.stepjoin import StepJoin
from actors.risk.rules import RiskContext, RiskRules


@dataclass(frozen=True, slots=True)
class Verdict:
    step: int
    env_ids: list[int]
    actions: np.ndarray
    vetoed: list[bool]
    reasons: list[str]
    degraded: list[bool]
    llm_query_ids: list[str]
    source: str
    """fusion | rl (deadline passed, RL proposal used) | hold (deadline passed, nothing upstream)."""
    halts: list[str] = field(default_factory=list)
    """Per env, the entry-veto rule in force (actors/risk/halts.py; '' none); empty when halts are not tracked."""


@dataclass(slots=True)
class _Step:
    env_ids: list[int] | None = None
    masks: np.ndarray | None = None
    contexts: Sequence[RiskContext] = ()
    episode_trades: list[int | None] | None = None
    halts: list[str] | None = None
    rl_actions: np.ndarray | None = None
    decision_actions: np.ndarray | None = None
    llm_query_ids: list[str] = field(default_factory=list)

    @property
    def has_obs(self) -> bool:
        return self.env_ids is not None


class VerdictBook:
    def __init__(self, rules: RiskRules, max_pending_steps: int, counts: Counter[str] | None = None) -> None:
        self.rules = rules
        self.max_pending_steps = max_pending_steps
        self.counts: Counter[str] = counts if counts is not None else Counter()
        self._steps: StepJoin[_Step] = StepJoin(max_pending_steps, _Step, self.counts)
        """verdicts, env_decisions, degraded_verdicts, hold_without_input, late_decisions, mismatched_batches, evicted_steps,
        vetoes, veto_<reason>."""

    # ------------------------------------------------------------------ inputs

    def add_obs(self, step: int, env_ids: Sequence[int], masks: np.ndarray, contexts: Sequence[RiskContext],
                episode_trades: list[int | None] | None = None, halts: list[str] | None = None) -> Verdict | None:
        """A step's observation (and each env's closed trades this episode, and the halt in force, when known);
        answers at once when its fusion decision came first."""
        self._steps.reopen(step)  # the same step again means the env started over
        entry = self._steps.entry(step)
        entry.env_ids, entry.masks, entry.contexts = list(env_ids), np.asarray(masks, dtype=bool), contexts
        entry.episode_trades = episode_trades
        entry.halts = halts
        if entry.decision_actions is not None:
            return self._answer(step, degraded=False)
        return None

    def add_proposal(self, step: int, env_ids: Sequence[int], actions: np.ndarray) -> None:
        """The RL proposal: the fallback if fusion does not answer in time."""
        if self._steps.is_answered(step):
            return
        entry = self._steps.entry(step)
        if entry.has_obs and list(env_ids) != entry.env_ids:
            self.counts["mismatched_batches"] += 1
            return
        entry.rl_actions = np.asarray(actions, dtype=np.int64)

    def add_decision(self, step: int, env_ids: Sequence[int], actions: np.ndarray,
                     llm_query_ids: Sequence[str]) -> Verdict | None:
        """The fusion decision; answers unless the step was answered already (late) or its obs is missing."""
        if self._steps.is_answered(step):
            self.counts["late_decisions"] += 1
            return None
        entry = self._steps.entry(step)
        if entry.has_obs and list(env_ids) != entry.env_ids:
            self.counts["mismatched_batches"] += 1
            return None
        entry.decision_actions = np.asarray(actions, dtype=np.int64)
        entry.llm_query_ids = list(llm_query_ids) if len(llm_query_ids) == len(env_ids) else [""] * len(env_ids)
        return self._answer(step, degraded=False) if entry.has_obs else None

    def env_restarted(self, step: int) -> bool:
        """Record an observation's step: True (counted as env_restarts) when steps went backwards."""
        return self._steps.went_back(step)

    def deadline(self, step: int) -> Verdict | None:
        """The fusion deadline of ``step`` passed: answer from RL alone, or HOLD (None when already answered)."""
        entry = self._steps.get(step)
        if self._steps.is_answered(step) or entry is None or not entry.has_obs:
            return None
        return self._answer(step, degraded=True)

    # ------------------------------------------------------------------ verdicts

    def _answer(self, step: int, degraded: bool) -> Verdict:
        entry = self._steps.answer(step)
        assert entry.env_ids is not None and entry.masks is not None
        n = len(entry.env_ids)
        if not degraded:
            proposed, query_ids, source = entry.decision_actions, entry.llm_query_ids, "fusion"
        elif entry.rl_actions is not None:
            proposed, query_ids, source = entry.rl_actions, [""] * n, "rl"
        else:
            proposed, query_ids, source = np.full(n, HOLD, dtype=np.int64), [""] * n, "hold"
            self.counts["hold_without_input"] += 1
        reviews = self.rules.review_batch(proposed, entry.masks, list(entry.contexts), entry.episode_trades, entry.halts)
        self.counts["verdicts"] += 1
        self.counts["env_decisions"] += n
        self.counts["degraded_verdicts"] += int(degraded)
        for review in reviews:
            if review.vetoed:
                self.counts["vetoes"] += 1
                self.counts[f"veto_{review.reason}"] += 1
        return Verdict(step=step, env_ids=list(entry.env_ids),
                       actions=np.array([r.action for r in reviews], dtype=np.int64),
                       vetoed=[r.vetoed for r in reviews], reasons=[r.reason for r in reviews],
                       degraded=[degraded] * n, llm_query_ids=list(query_ids), source=source,
                       halts=list(entry.halts) if entry.halts is not None else [])
