"""The cells panel: a grid's progress (bin/run evaluate, ablation, sweep) as the dashboard shows it.

The job's ``CellProgress`` (actors/jobs/cells/progress.py) rewrites ``<run>/cells/progress.json`` whenever its counts
change (a temp file then os.replace, so a reader never sees half of it); the reader thread polls it like a report
file (by its mtime) and the page draws a bar and the counts. Plain functions of a file, and one small holder with
its own lock, so state.py only keeps a reference to it.
"""

from __future__ import annotations

import html
import threading
import time
from pathlib import Path
from typing import Any

from actors.dashboard.report import read_json_object

PROGRESS_FILE = Path("cells") / "progress.json"
"""Where a cell job writes its progress, relative to its run directory."""
MAX_FAILURES_SHOWN = 10


class CellsView:
    """The newest progress document of the followed run (empty until one is found); thread-safe."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.progress: dict[str, Any] = {}
        self._seen: tuple[Path, float] | None = None

    def poll(self, run_dirs: list[Path]) -> bool:
        """Read the first of ``run_dirs`` that has a progress file, when it changed since the last poll; True if it did."""
        path = next((d / PROGRESS_FILE for d in run_dirs if (d / PROGRESS_FILE).is_file()), None)
        if path is None:
            return False
        try:
            key = (path, path.stat().st_mtime)
        except OSError:
            return False
        if key == self._seen:
            return False
        document = read_json_object(path)
        if document is None:
            return False
        with self.lock:
            self.progress, self._seen = {**document, "path": str(path)}, key
        return True

    def figures(self) -> dict[str, Any]:
        with self.lock:
            return dict(self.progress)


def _count(progress: dict[str, Any], key: str) -> int:
    value = progress.get(key, 0)
    return int(value) if isinstance(value, (int, float)) else 0


def cells_lines(progress: dict[str, Any], now: float | None = None) -> list[str]:
    """The panel's text: counts, CPU time, the ETA (counted down since the file was written) and the failed cells."""
    if not progress:
        return ["no cells (bin/run evaluate, ablation and sweep write <run>/cells/progress.json)"]
    total, done, cached, failed = (_count(progress, k) for k in ("total", "done", "cached", "failed"))
    eta = progress.get("eta_secs")
    if progress.get("finished"):  # the job's pool closed: every cell ran, or Ctrl-C / a failed stage stopped it
        when = "finished" if done + failed >= total else "stopped"
    elif isinstance(eta, (int, float)):
        since = (time.time() if now is None else now) - float(progress.get("updated_unix", 0.0) or 0.0)
        when = f"ETA {max(0.0, float(eta) - max(0.0, since)):,.0f} s"
    else:
        when = "ETA -"
    lines = [f"{progress.get('label', 'cells')}: {done + failed}/{total} cells  done {done} (cached {cached})  "
             f"running {_count(progress, 'running')}  failed {failed}  {when}",
             f"CPU {float(progress.get('cpu_secs', 0.0) or 0.0):,.0f} s in this run  ({progress.get('path', '')})"]
    failures = [f for f in progress.get("failures", []) if isinstance(f, dict)]
    lines += [f"FAILED {f.get('cell', '?')}: {f.get('error', '')}" for f in failures[:MAX_FAILURES_SHOWN]]
    if len(failures) > MAX_FAILURES_SHOWN:
        lines.append(f"... and {len(failures) - MAX_FAILURES_SHOWN} more failed cells")
    return lines


def cells_html(progress: dict[str, Any], now: float | None = None) -> str:
    """A bar (computed green, cached light green, failed red, over the total) above the panel's text."""
    total = max(_count(progress, "total"), 1)
    done, cached, failed = (_count(progress, k) for k in ("done", "cached", "failed"))
    parts = [(done - cached, "#2ca02c", "computed"), (cached, "#98df8a", "cached"), (failed, "#d62728", "failed")]
    bar = "".join(f"<div title='{name} {n}' style='width:{100 * n / total:.2f}%;background:{colour}'></div>"
                  for n, colour, name in parts if n > 0)
    text = html.escape("\n".join(cells_lines(progress, now)))
    return (f"<div name='cells_bar' style='display:flex;width:520px;height:14px;background:#e5e5e5;border:1px solid #bbb'>{bar}</div>"
            f"<pre style='margin:0;font-size:12px'>{text}</pre>")
