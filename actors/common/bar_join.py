"""Several bar files as one calendar: ``load_bar_files(paths)``.

Each file is read and repaired by ``bar_files.load_bars`` (its own contracts rolled there). Then, in this order:

1. A bar found in two files with the same start time and the same open, high, low, close and volume is one bar
   (an export of the same series twice, or two exports that overlap); the copy of the file named first is kept,
   and each dropped copy is counted (``duplicate_bars_across_files``).
2. Where files still cover the same minutes with different bars, they are two contracts (``NQH4.csv``,
   ``NQM4.csv``) and are joined as the contracts of one file are (``bar_formats.back_adjust``): the files are
   ordered by when they trade, the series starts in the busiest file of the first trading day and rolls to a
   later-trading file on the first day that file's volume is the larger (so an expiring contract is left for the
   next one on its roll date), and earlier prices are shifted by the price difference at the roll bar (additive
   back-adjustment). Each roll is listed in the report (``from`` / ``to`` name the files).
3. Files that never share a minute (consecutive months of one continuous series) follow one another in time
   unchanged; each change of file is listed with ``adjusted: False``.

Why written here: pandas concatenates, and back_adjust (ours, for the contracts inside one file) rolls; what a
join of files must decide (which copy of a minute is kept) is ours to document.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from actors.common import bar_formats
from actors.common.bar_files import OHLCV, RepairReport, load_bars


def load_bar_files(paths: list[str | Path], timezone: str = "America/New_York", dayfirst: str = "auto") -> tuple[pd.DataFrame, RepairReport]:
    """One frame (UTC index, OHLCV floats) from every file in ``paths``, joined by the rules above, and one report."""
    paths = [Path(path) for path in paths]
    if len(paths) == 1:
        return load_bars(paths[0], timezone=timezone, dayfirst=dayfirst)
    labels = _labels(paths)
    frames, reports = [], []
    for path, label in zip(paths, labels):
        frame, report = load_bars(path, timezone=timezone, dayfirst=dayfirst)
        frames.append(frame.assign(_contract=label, _order=len(frames)))
        reports.append(report)
    joined = pd.concat(frames).sort_index(kind="stable")  # stable: at one minute, the files in the order given
    duplicate = joined.reset_index().duplicated(subset=["timestamp", *OHLCV], keep="first").to_numpy()
    joined = joined.loc[~duplicate]
    stitched, rolls = bar_formats.back_adjust(joined.drop(columns="_order"))
    report = _joined_report(paths, reports, rolls, int(duplicate.sum()), len(stitched))
    return stitched[list(OHLCV)].astype(np.float64), report


def _labels(paths: list[Path]) -> list[str]:
    """Each file's name in the rolls (its full path where two files share a name)."""
    names = [path.name for path in paths]
    return [str(path) if names.count(path.name) > 1 else path.name for path in paths]


def _joined_report(paths: list[Path], reports: list[RepairReport], rolls: list[dict], duplicates: int, kept: int) -> RepairReport:
    repaired: Counter = Counter()
    for report in reports:
        repaired.update(report.repaired)
    if duplicates:
        repaired["duplicate_bars_across_files"] += duplicates
    inside = [dict(roll, file=report.path) for report in reports for roll in report.rolls]
    formats = sorted({report.format for report in reports if report.format})
    return RepairReport(path=" + ".join(str(path) for path in paths), rows_read=sum(r.rows_read for r in reports), rows_kept=kept,
                        repaired=repaired, format=", ".join(formats), rolls=inside + rolls)
