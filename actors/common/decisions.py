"""A fused decision batch, and the decision-loop figures: RL/LLM agreement, query rate, LLM confidence
and staleness, trust, veto rate.

``FusedBatch`` is what the fuser decides for a step; the fusion.decision message (bus/messages.py
``FusionDecision``) is one with its topic, checked for ragged arrays on decode.

One implementation for the two places that report them: the env actor (its run report, from the
fusion.decision and risk.verdict messages it reads) and the fusion actor (its sys.stats gauges,
from the batches it decides).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np

from actors.common.actions import NO_ACTION


class FusedBatch(msgspec.Struct, frozen=True, kw_only=True):
    """The fused decision for every env of one step (arrays aligned with env_ids)."""

    env_ids: list[int]
    step: int
    actions: np.ndarray
    """int64 [n]: the fused action."""
    method: str
    """``rules`` | ``network`` | ``rl_only`` | ``llm_only`` | ``pass_through``."""
    rules: list[str]
    """Per env, which rule decided (``agreement``, ``rl_override``, ``weighted``, ``uncertain_hold``, ``no_thought``, ...)."""
    rl_actions: np.ndarray
    rl_confidences: np.ndarray
    llm_actions: np.ndarray
    """int64 [n], NO_ACTION (-1) where no usable thought."""
    llm_confidences: np.ndarray
    llm_staleness: np.ndarray
    """int64 [n]: the thought's age, steps from the step its prompt read (ThoughtHeader.step_built) to this step; -1 where none."""
    llm_query_ids: list[str]
    """Per env, the query id of the thought used ('' where none)."""
    rl_trust: np.ndarray
    llm_trust: np.ndarray


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator > 0 else 0.0


class DecisionStats:
    """Agreement, veto, query rate, LLM confidence and trust averages over the decisions seen."""

    def __init__(self) -> None:
        self.decisions = 0
        """Per-env decisions (a batch of n envs counts n)."""
        self.with_thought = 0
        """Decisions that had a usable thought (llm action != NO_ACTION)."""
        self.agreements = 0
        self.llm_confidence_sum = 0.0
        self.staleness_sum = 0.0
        self.rl_trust_sum = 0.0
        self.llm_trust_sum = 0.0
        self.verdicts = 0
        self.vetoes = 0

    def add_fusion(self, rl_actions: np.ndarray, llm_actions: np.ndarray, llm_confidences: np.ndarray,
                   llm_staleness: np.ndarray, rl_trust: np.ndarray, llm_trust: np.ndarray) -> None:
        """One fusion batch (the arrays of a fusion.decision, aligned by env)."""
        # Once per decision in the fusion actor: a batch holds a few envs, and one pass over plain
        # lists costs less than a dozen numpy calls on tiny arrays.
        with_thought = agreements = 0
        confidence_sum = staleness_sum = 0.0
        for rl_action, llm_action, confidence, staleness in zip(np.asarray(rl_actions).tolist(), np.asarray(llm_actions).tolist(),
                                                                np.asarray(llm_confidences).tolist(), np.asarray(llm_staleness).tolist()):
            if llm_action > NO_ACTION:
                with_thought += 1
                agreements += rl_action == llm_action
                confidence_sum += confidence
                staleness_sum += staleness
        self.decisions += len(llm_actions)
        self.with_thought += with_thought
        self.agreements += agreements
        self.llm_confidence_sum += confidence_sum
        self.staleness_sum += staleness_sum
        self.rl_trust_sum += float(np.sum(rl_trust))
        self.llm_trust_sum += float(np.sum(llm_trust))

    def add_verdict(self, vetoed: Sequence[bool]) -> None:
        self.verdicts += len(vetoed)
        self.vetoes += sum(map(bool, vetoed))

    def summary(self) -> dict[str, float]:
        return {
            "agreement_rate": _ratio(self.agreements, self.with_thought),
            "query_rate": _ratio(self.with_thought, self.decisions),
            "llm_confidence": _ratio(self.llm_confidence_sum, self.with_thought),
            "llm_staleness_steps": _ratio(self.staleness_sum, self.with_thought),
            "rl_trust": _ratio(self.rl_trust_sum, self.decisions),
            "llm_trust": _ratio(self.llm_trust_sum, self.decisions),
            "veto_rate": _ratio(self.vetoes, self.verdicts),
        }
