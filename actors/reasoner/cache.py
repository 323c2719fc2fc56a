"""Thought cache keyed on a rounded market state, with confidence decay per reuse (an older answer is trusted less).

Two observations whose market-context features agree to ``decimals`` places, with the
same position and the same allowed actions, get the same key: the model would be asked
the same question, so the earlier thought is reused, each time with less confidence.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from actors.reasoner.thought import Thought

# Observation slice holding the 10 market-context + first 2 multi-timeframe features
# (docs/architecture.md, environment facts; the seed keyed its cache on the same 228:240).
KEY_FEATURES = slice(228, 240)

CacheKey = tuple


@dataclass(slots=True)
class _Entry:
    thought: Thought
    stored_at: float
    uses: int = 0


class ThoughtCache:
    def __init__(
        self,
        *,
        max_entries: int = 100,
        decimals: int = 1,
        ttl_secs: float = 300.0,
        confidence_decay: float = 0.2,
        min_confidence: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: OrderedDict[CacheKey, _Entry] = OrderedDict()
        self._max_entries = max_entries
        self._decimals = decimals
        self._ttl_secs = ttl_secs
        self._keep = 1.0 - confidence_decay
        self._min_confidence = min_confidence
        self._clock = clock
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def key(self, obs: np.ndarray, mask: Sequence[bool], position: int) -> CacheKey:
        features = np.round(np.asarray(obs, dtype=np.float64)[KEY_FEATURES], self._decimals)
        # + 0.0 turns -0.0 into 0.0 so both round to the same key.
        return (tuple((features + 0.0).tolist()), tuple(bool(m) for m in mask), int(np.sign(position)))

    def get(self, key: CacheKey) -> Thought | None:
        """The cached thought with its confidence decayed once more, or None (a miss)."""
        entry = self._entries.get(key)
        if entry is not None and self._clock() - entry.stored_at > self._ttl_secs:
            del self._entries[key]
            entry = None
        if entry is None:
            self.misses += 1
            return None
        entry.uses += 1
        confidence = entry.thought.confidence * self._keep**entry.uses
        if confidence < self._min_confidence:
            del self._entries[key]
            self.misses += 1
            return None
        self.hits += 1
        return dataclasses.replace(entry.thought, confidence=confidence, cached=True)

    def put(self, key: CacheKey, thought: Thought) -> None:
        """Store a fresh model thought (a fallback is not worth reusing)."""
        if thought.fallback or thought.cached:
            return
        put_bounded(self._entries, key, _Entry(thought, self._clock()), self._max_entries)

    def hit_rate(self) -> float:
        return share_of_hits(self.hits, self.misses)


def put_bounded(entries: OrderedDict, key, value, max_entries: int) -> None:
    """Store as the newest entry; the oldest go once there are more than ``max_entries``."""
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > max_entries:
        entries.popitem(last=False)


def share_of_hits(hits: int, misses: int) -> float:
    lookups = hits + misses
    return hits / lookups if lookups else 0.0
