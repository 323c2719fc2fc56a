"""The freshest finished LLM thought per environment, and how much it is still worth.

Fusion never waits for the LLM to think: at step N it looks up the newest thought it holds
for an environment. A thought about another episode, or built on a market state more than K steps
old, counts as no thought; a usable thought's confidence decays with its age in steps. The age is
counted from the step its prompt was built on (``step_built``): an answer the reasoner carried to a
quiet bar (reasoner.think_on = news) is as old as the thought it repeats, never 0.

It only waits for a thought already sent: one the env had received before it published the
step's observation (EnvObs.thought_steps) but still on its way to fusion on another lane
(bus.direct). ThoughtsReceived tells which of those are still missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from actors.common.actions import NO_ACTION
from actors.common.thoughts import ThoughtHeader


Thought = ThoughtHeader
"""What fusion needs of an ``llm.thought`` (the message itself is one)."""


@dataclass(frozen=True, slots=True)
class UsableThought:
    """A thought as it counts at one step: its action, its decayed confidence, its age."""

    action: int
    confidence: float
    staleness_steps: int
    query_id: str


NO_THOUGHT = UsableThought(action=NO_ACTION, confidence=0.0, staleness_steps=-1, query_id="")


class ThoughtBook:
    """Keeps the newest thought per env (by ``step_seen``) and grades it at a given step."""

    def __init__(self, max_staleness_steps: int, confidence_decay_per_step: float) -> None:
        self.max_staleness_steps = max_staleness_steps
        self.confidence_decay_per_step = confidence_decay_per_step
        self._latest: dict[int, Thought] = {}
        self.too_stale = 0
        """Decisions (per env) whose env held a thought of its episode older than max_staleness_steps: no thought."""
        self.too_stale_carried = 0
        """Of those, the ones whose thought was an answer carried to a later bar (``ThoughtHeader.carried``)."""

    def add(self, thought: Thought) -> bool:
        """Remember ``thought`` unless an equally new or newer one is held; True when kept."""
        held = self._latest.get(thought.env_id)
        # Loop steps only grow (across episodes too), so step_seen alone tells which is newer.
        if held is not None and held.step_seen > thought.step_seen:
            return False
        self._latest[thought.env_id] = thought
        return True

    def clear(self) -> None:
        """Forget every thought (the env started over: its steps and episodes count from 0 again)."""
        self._latest.clear()

    def usable(self, env_id: int, episode_id: int, step: int) -> UsableThought:
        """The thought for ``env_id`` as it counts at ``step``, or NO_THOUGHT."""
        thought = self._latest.get(env_id)
        if thought is None or thought.episode_id != episode_id:
            return NO_THOUGHT
        staleness = thought.age_at(step)  # from the step its prompt read, a carried answer too
        # A thought about a later step than the one being decided cannot be used for it.
        if staleness < 0:
            return NO_THOUGHT
        if staleness > self.max_staleness_steps:
            self.too_stale += 1
            self.too_stale_carried += thought.carried
            return NO_THOUGHT
        decayed = thought.confidence * (1.0 - self.confidence_decay_per_step) ** staleness
        return UsableThought(thought.action, float(decayed), staleness, thought.query_id)


class ThoughtsReceived:
    """The newest ``step_seen`` per env of every thought received, whatever fusion made of it (a fallback or a bad
    thought too: the reasoner answered), to match against what an observation says it depends on."""

    def __init__(self) -> None:
        self._newest_seen: dict[int, int] = {}

    def record(self, env_id: int, step_seen: int) -> None:
        if step_seen > self._newest_seen.get(env_id, -1):
            self._newest_seen[env_id] = step_seen

    def missing(self, env_ids: Sequence[int], thought_steps: Sequence[int]) -> list[int]:
        """The envs whose named thought (step_seen >= its entry in ``thought_steps``) has not arrived; none when
        ``thought_steps`` is empty (the observation depends on no thought)."""
        return [env_id for env_id, needed in zip(env_ids, thought_steps) if needed >= 0 and self._newest_seen.get(env_id, -1) < needed]

    def clear(self) -> None:
        """Forget every thought (the env started over: its steps count from 0 again)."""
        self._newest_seen.clear()
