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
    """The env.obs step this thought was about."""
    query_id: str
    action: int
    confidence: float

    def bare(self) -> "ThoughtHeader":
        """The header alone, without a subclass's reasoning text (what a long-lived record keeps)."""
        if type(self) is ThoughtHeader:
            return self
        return ThoughtHeader(self.env_id, self.episode_id, self.step_seen, self.query_id, self.action, self.confidence)
