"""Rule fusion (the original design's rules): agreement, high-confidence override, confidence weighting, uncertain HOLD.

Every function here decides for one environment. The result never is a masked action:
when the rules pick an illegal action, the other side's action, then HOLD, then any legal
action takes its place (and the rule name says so).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from actors.common.actions import HOLD, NO_ACTION, legal_or_hold
from actors.fusion.config import FusionConfig
from actors.fusion.thoughts import UsableThought


@dataclass(frozen=True, slots=True)
class Fused:
    """One environment's fused action, the rule that chose it and how much each side was trusted."""

    action: int
    rule: str
    rl_trust: float
    llm_trust: float


def legal_action(preferred: int, mask: np.ndarray, rl_action: int) -> int:
    """``preferred`` if the mask allows it, else the RL action, else HOLD, else the first legal action;
    RL's action when the mask allows nothing (actors/common/actions.py legal_or_hold with RL as the fallback)."""
    return legal_or_hold(preferred, mask, fallback=rl_action)


def make_legal(fused: Fused, mask: np.ndarray, rl_action: int) -> Fused:
    action = legal_action(fused.action, mask, rl_action)
    if action == fused.action:
        return fused
    return Fused(action, fused.rule + "+masked", fused.rl_trust, fused.llm_trust)


def fuse_rules(rl_action: int, rl_confidence: float, thought: UsableThought, config: FusionConfig) -> Fused:
    """The rule priorities (agreement, override, weighting, uncertain HOLD), before the mask is applied."""
    if thought.action == NO_ACTION:
        return Fused(rl_action, "no_thought", 1.0, 0.0)
    llm_action, llm_confidence = thought.action, thought.confidence
    if rl_action == llm_action:
        return Fused(rl_action, "agreement", 1.0, 1.0)
    if rl_confidence > config.override_confidence and llm_confidence < config.override_other_below:
        return Fused(rl_action, "rl_override", 1.0, 0.0)
    if llm_confidence > config.override_confidence and rl_confidence < config.override_other_below:
        return Fused(llm_action, "llm_override", 0.0, 1.0)
    if rl_confidence < config.uncertain_below and llm_confidence < config.uncertain_below:
        return Fused(HOLD, "uncertain_hold", 0.0, 0.0)
    return _weighted(rl_action, rl_confidence, llm_action, llm_confidence, config.llm_weight)


def _weighted(rl_action: int, rl_confidence: float, llm_action: int, llm_confidence: float,
              llm_weight: float) -> Fused:
    rl_score = (1.0 - llm_weight) * rl_confidence
    llm_score = llm_weight * llm_confidence
    total = rl_score + llm_score
    rl_share = rl_score / total if total > 0 else 1.0
    # Ties go to RL: it has seen this exact step, the thought is older.
    if rl_score >= llm_score:
        return Fused(rl_action, "weighted_rl", rl_share, 1.0 - rl_share)
    return Fused(llm_action, "weighted_llm", rl_share, 1.0 - rl_share)


def fuse_rl_only(rl_action: int) -> Fused:
    return Fused(rl_action, "rl_only", 1.0, 0.0)


def fuse_llm_only(rl_action: int, thought: UsableThought) -> Fused:
    """The LLM's action when a usable thought exists; RL's otherwise."""
    if thought.action == NO_ACTION:
        return Fused(rl_action, "no_thought", 1.0, 0.0)
    return Fused(thought.action, "llm_only", 0.0, 1.0)
