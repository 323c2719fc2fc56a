"""Reasoner figures for sys.stats and the reasoner_stats event."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import numpy as np

from actors.reasoner.thought import Thought

RATE_WINDOW_SECS = 60.0


class ReasonerStats:
    def __init__(self, *, window: int = 512, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._started = clock()
        self._recent: deque[Thought] = deque(maxlen=window)
        self._finished_at: deque[float] = deque(maxlen=max(window, 1024))
        self.env_observations = 0
        """Observations seen, counted per env (a batch of n envs counts n)."""
        self.published = 0
        """Thoughts published, from the model or the cache."""
        self.model_thoughts = 0
        self.failures = 0

    def observed(self, n_envs: int) -> None:
        self.env_observations += n_envs

    def published_thought(self, thought: Thought) -> None:
        self.published += 1
        self._finished_at.append(self._clock())
        if not (thought.cached or thought.memo):
            self.model_thoughts += 1
            self._recent.append(thought)

    def failed(self) -> None:
        self.failures += 1

    def gauges(self) -> dict[str, float]:
        latencies = np.array([t.latency_ms for t in self._recent], dtype=np.float64)
        generated = sum(t.generated_tokens for t in self._recent)
        generation_secs = sum(t.generation_secs for t in self._recent)
        reused = sum(t.reused_prompt_tokens for t in self._recent)
        read = sum(t.prompt_tokens for t in self._recent)
        return {
            "thoughts_per_sec": self._thoughts_per_sec(),
            "query_rate": self.published / self.env_observations if self.env_observations else 0.0,
            "latency_p50_ms": float(np.percentile(latencies, 50)) if latencies.size else 0.0,
            "latency_p99_ms": float(np.percentile(latencies, 99)) if latencies.size else 0.0,
            "tokens_per_sec": generated / generation_secs if generation_secs > 0 else 0.0,
            "prefix_reuse_ratio": reused / (reused + read) if reused + read else 0.0,
            "model_thoughts": float(self.model_thoughts),
            "think_failures": float(self.failures),
        }

    def _thoughts_per_sec(self) -> float:
        now = self._clock()
        since = now - RATE_WINDOW_SECS
        count = sum(1 for t in self._finished_at if t >= since)
        span = min(RATE_WINDOW_SECS, now - self._started)
        return count / span if span > 0 else 0.0
