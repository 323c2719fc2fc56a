"""Steps per second over a sliding window, for progress lines.

A loop at the LLM's pace makes a step every few seconds; measured over one progress interval
(a second) its rate reads 0, 1, 0, 0, ... A window of several intervals reads 0.3 throughout.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

RATE_WINDOW_SECS = 10.0


class StepRate:
    """``rate(steps)``: steps per second over the last ``window_secs`` (since the first call, until then)."""

    def __init__(self, steps: int = 0, window_secs: float = RATE_WINDOW_SECS, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._window_secs = window_secs
        self._samples: deque[tuple[float, int]] = deque([(clock(), steps)])

    def rate(self, steps: int) -> float:
        now = self._clock()
        self._samples.append((now, steps))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self._window_secs:
            self._samples.popleft()
        then, steps_then = self._samples[0]
        return (steps - steps_then) / max(now - then, 1e-9)
