"""Shared helpers for benchmarks: tables with ratios, percentiles, a bench made of sections."""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable

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


Section = Callable[[argparse.Namespace], None]


def sections_parser(doc: str, sections: dict[str, Section]) -> argparse.ArgumentParser:
    """A bench's parser with ``--sections`` (a comma list, all by default); the bench adds its own options."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default=",".join(sections), help=f"comma list of {', '.join(sections)}")
    return parser


def run_sections(parser: argparse.ArgumentParser, sections: dict[str, Section]) -> None:
    """Parse the command line and run the chosen sections in the order given; an unknown name is a usage error."""
    args = parser.parse_args()
    chosen = args.sections.split(",")
    if unknown := [name for name in chosen if name not in sections]:
        parser.error(f"--sections: unknown {', '.join(unknown)}; choose from {', '.join(sections)}")
    for name in chosen:
        sections[name](args)
