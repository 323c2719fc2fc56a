"""Decision-loop messages built by hand, for process tests that stand in for env / policy / reasoner."""

import numpy as np

from bus.messages import OBS_DIM, EnvObs, PolicyProposal
from tests.actors.risk.risk_inputs import FLAT_MASK, context


def env_obs(step: int, n: int = 2, episode_id: int = 0, **context_overrides) -> EnvObs:
    return EnvObs(env_ids=list(range(n)), episode_ids=[episode_id] * n, step=step,
                  obs=np.zeros((n, OBS_DIM), dtype=np.float32), masks=np.tile(FLAT_MASK, (n, 1)),
                  contexts=[context(**context_overrides) for _ in range(n)])


def proposal(step: int, actions: list[int], confidence: float = 0.8) -> PolicyProposal:
    n = len(actions)
    probs = np.zeros((n, 6), dtype=np.float32)
    probs[np.arange(n), actions] = confidence
    return PolicyProposal(env_ids=list(range(n)), step=step, actions=np.array(actions, dtype=np.int64),
                          confidences=np.full(n, confidence, dtype=np.float32), probs=probs,
                          values=np.zeros(n, dtype=np.float32))
