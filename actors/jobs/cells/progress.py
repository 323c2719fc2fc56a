"""One progress bar over a grid's cells: done (cached ones among them), running, failed, and the ETA.

On a terminal a tqdm bar (its ETA is the mean time per finished cell times the cells left, which is what a
grid of similar cells wants); otherwise one line per finished or failed cell, so logs stay readable. Given a
``file`` (``<run>/cells/progress.json``), the counts also go there as they change, for the dashboard's cells panel
(actors/dashboard/cells.py).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

MAX_FAILURES_WRITTEN = 100
"""Failed cells named in the progress file (the job's own error names them all)."""


class CellProgress:
    def __init__(self, label: str, *, enabled: bool = True, say: Callable[[str], None] | None = None,
                 file: Path | None = None) -> None:
        self.label = label
        self.file = file
        self.failures: list[dict[str, str]] = []
        self.cpu_secs = 0.0
        self.started = time.monotonic()
        self._written: dict | None = None
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
        self._write()
        if not self.enabled:
            return
        if sys.stderr.isatty():
            from tqdm import tqdm

            if self.bar is None:
                self.bar = tqdm(total=self.total, desc=self.label, unit="cell", dynamic_ncols=True)
            else:
                self.bar.total = self.total
            self._refresh()

    def finished(self, name: str, *, cached: bool = False, failed: str = "", secs: float = 0.0, cpu_secs: float = 0.0) -> None:
        if failed:
            self.failed += 1
            self.failures.append({"cell": name, "error": failed})
        else:
            self.done += 1
            self.cached += cached
        self.cpu_secs += 0.0 if cached else cpu_secs
        self._write()
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
        self._write()
        if self.bar is not None:
            self._refresh()

    def _refresh(self) -> None:
        self.bar.set_postfix({"done": self.done, "cached": self.cached, "running": self.running, "failed": self.failed},
                             refresh=True)

    def eta_secs(self) -> float | None:
        """The cells left times the wall time per computed (not cached) cell so far; None before the first one."""
        computed = self.done - self.cached + self.failed
        left = self.total - self.done - self.failed
        return (time.monotonic() - self.started) / computed * left if computed and left > 0 else (0.0 if computed else None)

    def _write(self, finished: bool = False) -> None:
        """The counts to ``file`` when they changed: a temp file, then os.replace (a reader never sees half of it)."""
        if self.file is None:
            return
        counts = {"label": self.label, "total": self.total, "done": self.done, "cached": self.cached, "running": self.running,
                  "failed": self.failed, "failures": self.failures[:MAX_FAILURES_WRITTEN], "cpu_secs": round(self.cpu_secs, 3),
                  "finished": finished}
        if counts == self._written:
            return
        self._written = {**counts, "failures": list(counts["failures"])}
        self.file.parent.mkdir(parents=True, exist_ok=True)
        temp = self.file.with_name(f".{self.file.name}.{os.getpid()}.tmp")
        temp.write_text(json.dumps({**counts, "eta_secs": self.eta_secs(), "updated_unix": time.time()}))
        os.replace(temp, self.file)

    def close(self) -> None:
        self.running = 0
        self._write(finished=True)
        if self.bar is not None:
            self.bar.close()
            self.bar = None
