"""Joining the messages of one loop step that arrive in any order (fusion and risk both do it).

Every reply in the decision loop carries the step N of the env.obs it answers, but the bus
gives no order between topics: the proposal may come before the observation, the fusion
decision before either. A StepJoin keeps one entry per step being joined until the caller
answers it, then remembers the step as answered so a straggler for it is recognised as late.

Both books are bounded (``max_pending_steps``): when more steps wait, the oldest entry is
dropped and counted as ``evicted_steps``. Steps that go backwards mean the env actor restarted
(its steps count from 0 again): ``went_back`` says so, and ``forget_after`` drops what the old
run left behind.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from actors.common.seen import SeenKeys

E = TypeVar("E")


class StepJoin(Generic[E]):
    def __init__(self, max_pending_steps: int, new_entry: Callable[[], E], counts: Counter[str] | None = None) -> None:
        self.max_pending_steps = max_pending_steps
        self._new_entry = new_entry
        self._pending: OrderedDict[int, E] = OrderedDict()
        self._answered = SeenKeys(max_pending_steps)
        self.latest_step = -1
        """The highest step seen by ``went_back`` since the last restart (-1 before any)."""
        self.counts: Counter[str] = counts if counts is not None else Counter()
        """evicted_steps, env_restarts."""

    def __len__(self) -> int:
        return len(self._pending)

    # ------------------------------------------------------------------ entries

    def entry(self, step: int) -> E:
        """The step's entry, made when the step's first message arrives (evicting the oldest beyond the bound)."""
        entry = self._pending.get(step)
        if entry is None:
            entry = self._pending[step] = self._new_entry()
            while len(self._pending) > self.max_pending_steps:
                self._pending.popitem(last=False)
                self.counts["evicted_steps"] += 1
        return entry

    def get(self, step: int) -> E | None:
        return self._pending.get(step)

    def answer(self, step: int) -> E:
        """The step is answered: its entry leaves the book and later messages for it are late."""
        entry = self._pending.pop(step)
        self._answered.first_time(step)
        return entry

    def is_answered(self, step: int) -> bool:
        return step in self._answered

    def reopen(self, step: int) -> None:
        """The same step arrived again as new (the env started over): it may be answered once more."""
        self._answered.forget(step)

    # ------------------------------------------------------------------ restarts

    def went_back(self, step: int) -> bool:
        """Record an observation's step; True (counted as env_restarts) when it is below the latest one seen."""
        restarted = step < self.latest_step
        if restarted:
            self.counts["env_restarts"] += 1
        self.latest_step = step
        return restarted

    def forget_after(self, step: int) -> None:
        """After a restart at ``step``: drop the old run's waiting steps beyond it and every answered step."""
        self._answered.clear()
        for stale in [s for s in self._pending if s > step]:
            del self._pending[stale]
