"""The learnability ceiling: how well the hindsight label can be read from the prompt's numbers at all.

A multinomial logistic regression on the tape's numbers (actors/common/llm/tape.py, read back
from the very text the LLM is shown) and, where the caller gives it, the prompt's trend word (up,
down or sideways: the regime filter's belief, actors/env/regime_filter.py), fitted on the training days' prompts and scored on the
later, held-out days'. The LLM's held-out match rate is stated beside it: an LLM near the
ceiling has learnt what there is to learn; on the ``null`` market the ceiling is chance (the
held-out days' commonest label), and so should the LLM be. Plain numpy, no scikit-learn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from actors.common.actions import ACTION_NAMES
from actors.common.llm.tape import tape_numbers

Z_95 = 1.959963984540054
CLASSES = 3
"""HOLD, BUY, SELL: the hindsight label's actions (their ids are 0, 1, 2)."""
TREND_COLUMNS = ("up", "down")
"""The trend words the classifier reads as 0/1 columns (sideways: both 0)."""


@dataclass(frozen=True, slots=True)
class Rate:
    """A share of n trials with its normal-approximation 95 % interval."""

    value: float
    n: int

    @property
    def half_width(self) -> float:
        return Z_95 * math.sqrt(max(self.value * (1 - self.value), 0.0) / self.n) if self.n else 0.0

    @property
    def low(self) -> float:
        return max(0.0, self.value - self.half_width)

    @property
    def high(self) -> float:
        return min(1.0, self.value + self.half_width)

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True, slots=True)
class Ceiling:
    classifier: Rate
    """Held-out accuracy of the logistic regression on the tape's numbers (and the trend word, where given)."""
    chance: Rate
    """The best one answer given everywhere can do on the held-out prompts: their commonest label's share (the
    training days' commonest label is no fair floor: on a random walk the held-out days drift their own way)."""
    train: int
    label_mix: dict[str, float]
    """Share of each label among the held-out prompts."""

    @property
    def beats_chance(self) -> bool:
        """The classifier's interval lies above chance's point estimate."""
        return self.classifier.low > self.chance.value

    def metrics(self) -> dict[str, float]:
        return {"ceiling": self.classifier.value, "ceiling_low": self.classifier.low, "ceiling_high": self.classifier.high,
                "chance": self.chance.value, "ceiling_train": float(self.train), "ceiling_held_out": float(self.classifier.n)}


def features(tapes: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(rows of numbers, which tapes were full): a tape that is not a full line gives no row."""
    parsed = [tape_numbers(tape) for tape in tapes]
    keep = np.array([p is not None for p in parsed], dtype=bool)
    full = [p for p in parsed if p is not None]
    return np.array(full, dtype=np.float64).reshape(len(full), _width(parsed)), keep


def learnability_ceiling(train: Sequence[tuple], held_out: Sequence[tuple], l2: float = 1e-2) -> Ceiling:
    """Fit on ``train`` (tape text, label[, trend word]) rows, score on ``held_out``; rows without a full tape are left out."""
    x_train, y_train = _rows(train)
    x_test, y_test = _rows(held_out)
    if not len(y_train) or not len(y_test):
        raise ValueError(f"the ceiling needs prompts with a full tape on both sides (train {len(y_train)}, held out {len(y_test)})")
    model = SoftmaxRegression(l2).fit(x_train, y_train)
    mix = Counter(y_test.tolist())
    return Ceiling(classifier=Rate(float(np.mean(model.predict(x_test) == y_test)), len(y_test)),
                   chance=Rate(max(mix.values()) / len(y_test), len(y_test)), train=len(y_train),
                   label_mix={ACTION_NAMES[a]: mix[a] / len(y_test) for a in range(CLASSES)})


class SoftmaxRegression:
    """Multinomial logistic regression, standardised inputs, L2 on the weights, fitted by Newton-free
    full-batch gradient descent (a few hundred rows of 18 numbers: milliseconds)."""

    def __init__(self, l2: float = 1e-2, steps: int = 2000, learning_rate: float = 0.5) -> None:
        self.l2, self.steps, self.learning_rate = l2, steps, learning_rate

    def fit(self, x: np.ndarray, y: np.ndarray) -> SoftmaxRegression:
        self.mean, self.scale = x.mean(axis=0), x.std(axis=0) + 1e-9
        z = self._design(x)
        onehot = np.eye(CLASSES)[y]
        self.weights = np.zeros((z.shape[1], CLASSES))
        for _ in range(self.steps):
            grad = z.T @ (_softmax(z @ self.weights) - onehot) / len(y)
            grad[1:] += self.l2 * self.weights[1:]  # the intercept row is not shrunk
            self.weights -= self.learning_rate * grad
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(self._design(x) @ self.weights, axis=1)

    def _design(self, x: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(x), 1)), (x - self.mean) / self.scale])


def _rows(pairs: Sequence[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of (tape, label) or (tape, label, trend word): the word adds an "up" and a "down" column."""
    x, keep = features([pair[0] for pair in pairs])
    y = np.array([pair[1] for pair in pairs], dtype=np.int64)[keep] if len(pairs) else np.zeros(0, dtype=np.int64)
    if len(pairs) and len(pairs[0]) > 2:
        words = np.array([[float(pair[2] == word) for word in TREND_COLUMNS] for pair in pairs]).reshape(len(pairs), 2)
        x = np.hstack([x, words[keep]])
    return x, y


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _width(parsed: Sequence[list[float] | None]) -> int:
    return next((len(p) for p in parsed if p is not None), 0)
