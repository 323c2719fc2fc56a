"""One progress bar over a grid's cells: done (cached ones among them), running, failed, and the ETA.

On a terminal a tqdm bar (its ETA is the mean time per finished cell times the cells left, which is what a
grid of similar cells wants); otherwise one line per finished or failed cell, so logs stay readable.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


class CellProgress:
    def __init__(self, label: str, *, enabled: bool = True, say: Callable[[str], None] | None = None) -> None:
        self.label = label
        self.enabled = enabled
        self.say = say or (lambda text: print(f"{label}: {text}", file=sys.stderr, flush=True))
        self.bar = None
        self.total = self.done = self.cached = self.failed = self.running = 0
        self.expected = self.submitted = 0

    def expect(self, total: int) -> None:
        """The grid's cells, all stages together, known before its first stage runs: the bar's total and ETA hold
        from the start."""
        self.expected += total
        self._grow(0)

    def start(self, total: int) -> None:
        """``total`` cells submitted; those past the expected count grow the bar's total."""
        self.submitted += total
        self._grow(max(0, self.submitted - max(self.total, self.expected)))

    def _grow(self, extra: int) -> None:
        self.total = max(self.total, self.expected) + extra
        if not self.enabled:
            return
        if sys.stderr.isatty():
            from tqdm import tqdm

            if self.bar is None:
                self.bar = tqdm(total=self.total, desc=self.label, unit="cell", dynamic_ncols=True)
            else:
                self.bar.total = self.total
            self._refresh()

    def finished(self, name: str, *, cached: bool = False, failed: str = "", secs: float = 0.0) -> None:
        if failed:
            self.failed += 1
        else:
            self.done += 1
            self.cached += cached
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(1)
            if failed:
                self.bar.write(f"{self.label}: {name} FAILED: {failed}")
            self._refresh()
        else:
            how = f"FAILED: {failed}" if failed else ("cached" if cached else f"{secs:.0f} s")
            self.say(f"{self.done + self.failed}/{self.total} cells ({self.running} running, {self.failed} failed): {name} {how}")

    def in_flight(self, running: int) -> None:
        self.running = running
        if self.bar is not None:
            self._refresh()

    def _refresh(self) -> None:
        self.bar.set_postfix({"done": self.done, "cached": self.cached, "running": self.running, "failed": self.failed},
                             refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
