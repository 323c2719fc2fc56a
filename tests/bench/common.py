"""Shared helpers for benchmarks: tables with ratios, percentiles."""

from __future__ import annotations

import platform
import os

import numpy as np


def percentiles_us(samples_ns) -> tuple[float, float]:
    arr = np.asarray(samples_ns, dtype=np.float64) / 1e3
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 99))


def machine_line() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def print_table(title: str, rows: list[tuple[str, str, str, str, str]]) -> None:
    """rows: (measure, project figure, baseline figure, ratio, target)."""
    header = ("measure", "project", "baseline", "ratio", "target")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(5)]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}  ({machine_line()})")
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)))
    print(line)
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    print(flush=True)
