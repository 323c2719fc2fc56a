"""A stand-in for the policy/fusion/risk chain: answers every env.obs with a random legal action per env.

Run it as the actor ``actors.env.random_verdicts`` beside ``env`` to drive the env on the
bus before (or without) the other actors. Seeded by run.seed, so a run is repeatable.
"""

from __future__ import annotations

import numpy as np

from bus.messages import EnvObs, RiskVerdict
from runtime.actor import Actor


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random allowed action per row of a bool [n, 6] mask (HOLD where none is allowed)."""
    actions = np.zeros(len(masks), dtype=np.int64)
    for row, allowed in enumerate(np.asarray(masks, dtype=bool)):
        choices = np.flatnonzero(allowed)
        if len(choices):
            actions[row] = rng.choice(choices)
    return actions


class RandomVerdictActor(Actor):
    subscriptions = (EnvObs,)

    async def on_start(self) -> None:
        self.rng = np.random.default_rng(self.config.run.seed)

    async def on_message(self, msg) -> None:
        match msg:
            case EnvObs():  # its masks are [n, 6]: checked where it was decoded (bus/messages.py)
                n = len(msg.env_ids)
                self.counters["verdicts"] += 1
                self.publish(RiskVerdict(
                    env_ids=list(msg.env_ids), step=msg.step, actions=random_legal_actions(msg.masks, self.rng),
                    vetoed=[False] * n, reasons=[""] * n, degraded=[False] * n, llm_query_ids=[""] * n,
                ))


ACTOR = RandomVerdictActor
