"""What every reader of an LLM thought needs of it: whose it is, which step it saw, what it advises.

The ``llm.thought`` message (bus/messages.py ``LlmThought``) is a ``ThoughtHeader`` with the
reasoning text and figures added, so fusion keeps the message itself as its freshest thought.
"""

from __future__ import annotations

import msgspec


class ThoughtHeader(msgspec.Struct, frozen=True):
    env_id: int
    episode_id: int
    step_seen: int
    """The env.obs step this thought answers: the step its prompt was built on, or, for an answer carried to a quiet
    bar (reasoner.think_on = news), that later bar (what a lockstep env waits for)."""
    query_id: str
    action: int
    confidence: float
    step_built: int = -1
    """The env.obs step whose market state its prompt was built on: ``step_seen`` for a thought made (or found in the
    cache) for its step, earlier for one carried to a later bar; -1 from a sender that predates the field (read as
    ``step_seen``). A thought's age at a step is counted from here (``age_at``)."""

    @property
    def built_on(self) -> int:
        """The step its prompt was built on (``step_built``, or ``step_seen`` where the sender did not say)."""
        return self.step_built if self.step_built >= 0 else self.step_seen

    @property
    def carried(self) -> bool:
        """An earlier thought answering a later bar again (its age did not start at ``step_seen``)."""
        return 0 <= self.step_built < self.step_seen

    def age_at(self, step: int) -> int:
        """Steps from the market state its prompt read to ``step``: a carried answer's real age, never 0 by restamping."""
        return step - self.built_on

    def bare(self) -> "ThoughtHeader":
        """The header alone, without a subclass's reasoning text (what a long-lived record keeps)."""
        if type(self) is ThoughtHeader:
            return self
        return ThoughtHeader(self.env_id, self.episode_id, self.step_seen, self.query_id, self.action, self.confidence,
                             self.step_built)
