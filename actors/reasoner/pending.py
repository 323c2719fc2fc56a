"""Conflation: only the newest observation per environment waits to be thought about.

The env publishes faster than a small LLM thinks, so an older observation of an env is
replaced (and counted) when a newer one arrives; envs with something pending are served
round robin, so one busy env cannot starve the others.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class ThoughtRequest:
    """One env's newest state, waiting for a thought."""

    env_id: int
    episode_id: int
    step: int
    obs: np.ndarray
    """float32 [261] (a copy, not a view into the batch)."""
    mask: tuple[bool, ...]
    context: Mapping[str, Any]
    news: tuple[tuple[str, str], ...] = ()
    """(event id, text) of the events the prompt's {news} line shows, newest first: recorded on the thought."""


class PendingObservations:
    """Newest ThoughtRequest per env; ``pop_next`` serves envs round robin."""

    def __init__(self) -> None:
        self._by_env: dict[int, ThoughtRequest] = {}
        # Order in which envs are served next; an env goes to the back once served.
        self._turns: OrderedDict[int, None] = OrderedDict()
        self.replaced = 0
        """Observations dropped because a newer one of the same env arrived first."""

    def __len__(self) -> int:
        return len(self._by_env)

    def put(self, request: ThoughtRequest) -> None:
        if request.env_id in self._by_env:
            self.replaced += 1
        self._by_env[request.env_id] = request
        self._turns.setdefault(request.env_id, None)

    def pop_next(self) -> ThoughtRequest | None:
        """The next env's newest request (None when nothing waits)."""
        for env_id in list(self._turns):
            self._turns.move_to_end(env_id)
            request = self._by_env.pop(env_id, None)
            if request is not None:
                return request
        return None
