"""When an observation is worth a thought (selective querying: think only where a thought may change the decision).

- always: every newest observation (the default: the LLM never blocks, so think all the time);
- every_n: at most once per N steps per env;
- selective: when the policy is unsure, the position is flat (an entry decision), the
  position/risk state changed, or N steps passed since the env's last thought.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from actors.reasoner.config import ReasonerConfig

# Context fields whose change makes a new thought worth it in selective mode.
STATE_FIELDS: tuple[str, ...] = ("position", "contracts", "consecutive_losses", "trail_on", "stop_at_break_even")


class QueryPolicy:
    def __init__(self, config: ReasonerConfig) -> None:
        self._policy = config.query_policy
        self._every_n = config.query_every_n_steps
        self._rl_threshold = config.query_rl_confidence_below
        self._when_flat = config.query_when_flat
        self._on_state_change = config.query_on_state_change
        self._last_queried_step: dict[int, int] = {}
        self._last_state: dict[int, tuple[Any, ...]] = {}
        self._rl_confidence: dict[int, float] = {}

    def note_rl_confidence(self, env_id: int, confidence: float) -> None:
        """The policy's latest confidence for this env (from policy.proposal)."""
        self._rl_confidence[env_id] = float(confidence)

    def reason_to_think(self, env_id: int, step: int, context: Mapping[str, Any]) -> str:
        """Why this observation should be thought about, or "" when it should not.

        Accepting an observation counts as querying it (it will be the env's next
        thought unless a newer accepted one replaces it).
        """
        reason = self._reason(env_id, step, context)
        self._last_state[env_id] = tuple(context.get(name) for name in STATE_FIELDS)
        if reason:
            self._last_queried_step[env_id] = step
        return reason

    def _reason(self, env_id: int, step: int, context: Mapping[str, Any]) -> str:
        if self._policy == "always":
            return "always"
        if self._interval_passed(env_id, step):
            return "interval"
        if self._policy == "every_n":
            return ""
        if self._rl_confidence.get(env_id, 0.0) < self._rl_threshold:
            return "rl_uncertain"
        if self._when_flat and int(context.get("position", 0)) == 0:
            return "flat"
        if self._on_state_change and self._state_changed(env_id, context):
            return "state_changed"
        return ""

    def _interval_passed(self, env_id: int, step: int) -> bool:
        last = self._last_queried_step.get(env_id)
        # A step number below the last one means the env restarted its count.
        return last is None or step < last or step - last >= self._every_n

    def _state_changed(self, env_id: int, context: Mapping[str, Any]) -> bool:
        state = tuple(context.get(name) for name in STATE_FIELDS)
        return self._last_state.get(env_id, state) != state
