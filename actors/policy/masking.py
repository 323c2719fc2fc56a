"""sb3-contrib's masked categorical distribution, in numpy: the one definition of its log-softmax.

Serving (proposal probabilities) and the rollout (the log-probability stored with an executed
action) both use it, so what is stored is exactly what was served, and both match what
``policy.evaluate_actions`` computes in the PPO update.
"""

from __future__ import annotations

import numpy as np

MASKED_LOGIT = -1e8
"""The value sb3-contrib's MaskableCategorical puts on masked logits."""


def masked_log_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """MaskableCategorical's log-probabilities [n, A]: masked logits set to MASKED_LOGIT, then log-softmax."""
    masked = np.where(masks, logits, np.float32(MASKED_LOGIT))
    top = masked.max(axis=1, keepdims=True)
    shifted = masked - top
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
