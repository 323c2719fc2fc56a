"""Early stopping of market-history rounds: train until the match rate on validation days stops improving.

The validation days are the last of the training days (actors/jobs/lora.py history_bars): never the
held-out test days, whose prompts only the publish rule reads. A round is better when its validation
match rate beats the best so far by more than ``min_gain``; after ``patience`` rounds that are not,
training stops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(slots=True)
class Plateau:
    patience: int
    """Rounds without a better validation match rate before stopping (>= 1)."""
    min_gain: float = 0.0
    best: float = -math.inf
    best_round: int = 0
    """The round (1-based) of the best rate; 0 before any."""
    rounds: int = 0

    def __post_init__(self) -> None:
        if self.patience < 1:
            raise ValueError(f"patience must be >= 1 round, got {self.patience}")

    def update(self, match_rate: float) -> bool:
        """Record one round's validation match rate; True when training should stop now."""
        self.rounds += 1
        if match_rate > self.best + self.min_gain:
            self.best, self.best_round = match_rate, self.rounds
        return self.rounds - self.best_round >= self.patience
