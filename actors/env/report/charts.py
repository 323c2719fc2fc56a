"""The report's PNG charts: price with entries and exits, equity and drawdown, P&L per session (US/Eastern time
axes, halted periods shaded), and the short form's equity against bar numbers. matplotlib loads on first use."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from actors.env.report.events import MAX_LABELLED_EVENTS, event_bars, event_label
from actors.env.report.labels import ET
from actors.env.report.model import ReportInput
from actors.env.statistics import session_returns

if TYPE_CHECKING:
    from actors.env.account_walk import EvaluationRecord

_HALT_COLOURS = ("#f4a261", "#e76f51", "#9b5de5", "#00bbf9", "#8d99ae", "#f15bb5")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _et_axis(axis, times_ns: np.ndarray) -> None:
    """Bars are plotted at their index (no gaps for nights and weekends); ticks read the ET time."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    span_ns = int(times_ns[-1] - times_ns[0]) if len(times_ns) > 1 else 0
    fmt = "%m-%d %H:%M" if span_ns < 3 * 86_400 * 10**9 else "%m-%d"
    labels = pd.to_datetime(times_ns, unit="ns", utc=True).tz_convert(ET).strftime(fmt) if len(times_ns) else []

    def label(value: float, _position: int) -> str:
        index = int(round(value))
        return labels[index] if 0 <= index < len(labels) else ""

    axis.xaxis.set_major_locator(MaxNLocator(nbins=10, integer=True))
    axis.xaxis.set_major_formatter(FuncFormatter(label))
    axis.set_xlabel("time (US/Eastern)")


def _halt_runs(halts: np.ndarray) -> list[tuple[int, int, str]]:
    """(first bar, last bar, rule) of each contiguous halted stretch."""
    runs: list[tuple[int, int, str]] = []
    start = 0
    for index in range(1, len(halts) + 1):
        if index == len(halts) or halts[index] != halts[start]:
            if halts[start]:
                runs.append((start, index - 1, str(halts[start])))
            start = index
    return runs


def _shade_halts(axis, halts: np.ndarray, legend: bool) -> None:
    rules = sorted({str(rule) for rule in halts if rule})
    colours = {rule: _HALT_COLOURS[index % len(_HALT_COLOURS)] for index, rule in enumerate(rules)}
    labelled: set[str] = set()
    for start, end, rule in _halt_runs(halts):
        label = f"halted: {rule}" if legend and rule not in labelled else None
        labelled.add(rule)
        axis.axvspan(start - 0.5, end + 0.5, color=colours[rule], alpha=0.18, linewidth=0, label=label)


def _session_starts(times_ns: np.ndarray) -> np.ndarray:
    from actors.env.statistics import session_of

    sessions = session_of(times_ns)
    return np.flatnonzero(np.diff(sessions) != 0) + 1


def _mark_sessions(axis, times_ns: np.ndarray) -> None:
    starts = _session_starts(times_ns)
    if len(starts) <= 60:  # more would be a grey wash
        for start in starts:
            axis.axvline(start - 0.5, color="grey", alpha=0.25, linewidth=0.6, linestyle=":")


def _mark_events(axis, times_ns: np.ndarray, events) -> list:
    """A release: a dashed vertical line with its name along it; a headline: a diamond under the price with its
    number in the report's events table. Returns the legend's handles for the kinds drawn."""
    from matplotlib.lines import Line2D

    if not len(events) or not len(times_ns):
        return []
    labelled = len(events) <= MAX_LABELLED_EVENTS
    colours = {"high": "tab:purple", "medium": "tab:olive", "low": "tab:cyan"}
    kinds = set()
    for number, (event, at) in enumerate(zip(events, event_bars(times_ns, events)), start=1):
        kinds.add(event.kind)
        if event.kind == "release":
            axis.axvline(at, color=colours.get(event.importance, "tab:purple"), linewidth=0.9, linestyle="--", alpha=0.8)
            if labelled:
                axis.annotate(event_label(event), (at, 0.99), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                              fontsize=7, color=colours.get(event.importance, "tab:purple"),
                              bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.75})  # over the price
        else:
            axis.scatter([at], [0.03], marker="D", s=22, color="tab:orange", edgecolors="black", linewidths=0.4, zorder=4,
                         transform=axis.get_xaxis_transform(), clip_on=False)
            if labelled:
                axis.annotate(f"#{number}", (at, 0.06 + 0.04 * (number % 2)), xycoords=("data", "axes fraction"), ha="center", va="bottom", fontsize=7, color="tab:brown")
    handles = []
    if "release" in kinds:
        handles.append(Line2D([], [], linestyle="--", color="tab:purple", label="release (name; events table)"))
    if "headline" in kinds:
        handles.append(Line2D([], [], marker="D", linestyle="", color="tab:orange", markeredgecolor="black", label="headline (#: events table)"))
    return handles


def price_figure(data: ReportInput):
    """The price chart's figure (plot_price saves it; a test reads what it drew)."""
    plt = _pyplot()
    times = np.asarray(data.bars.times_ns, dtype=np.int64)
    figure, axis = plt.subplots(figsize=(12, 5))
    bars = np.arange(len(times))
    axis.fill_between(bars, data.bars.low, data.bars.high, color="tab:grey", alpha=0.25, linewidth=0, label="bar range")
    axis.plot(bars, data.bars.close, color="black", linewidth=0.7, label="close")
    _shade_halts(axis, np.asarray(data.halts), legend=True)
    _mark_sessions(axis, times)
    for item in data.trades:
        trade = item.trade
        entry_at, exit_at = np.searchsorted(times, [trade.entry_ns, trade.exit_ns])
        colour = "tab:green" if trade.pnl_usd > 0 else "tab:red"
        axis.plot([entry_at, exit_at], [trade.entry_price, trade.exit_price], color=colour, linewidth=1.0, alpha=0.8)
        axis.scatter([entry_at], [trade.entry_price], marker="^" if trade.side > 0 else "v", s=40, color="tab:blue", zorder=3, edgecolors="white", linewidths=0.5)
        axis.scatter([exit_at], [trade.exit_price], marker="X", s=36, color=colour, zorder=3, edgecolors="white", linewidths=0.5)
    event_handles = _mark_events(axis, times, data.events)
    handles, labels = axis.get_legend_handles_labels()
    from matplotlib.lines import Line2D

    handles += [Line2D([], [], marker="^", linestyle="", color="tab:blue", label="long entry"),
                Line2D([], [], marker="v", linestyle="", color="tab:blue", label="short entry"),
                Line2D([], [], marker="X", linestyle="", color="tab:green", label="exit, win"),
                Line2D([], [], marker="X", linestyle="", color="tab:red", label="exit, loss"), *event_handles]
    # Below the axes: over the price it would hide the first trades.
    axis.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, ncol=min(len(handles), 6), frameon=False)
    axis.set_ylabel("price")
    events = f", {len(data.events)} events" if len(data.events) else ""
    axis.set_title(f"{data.title}: price, entries and exits ({len(data.trades)} trades{events})")
    axis.grid(alpha=0.3)
    _et_axis(axis, times)
    figure.tight_layout()
    return figure


def plot_price(path: Path, data: ReportInput) -> None:
    figure = price_figure(data)
    figure.savefig(path, dpi=100, bbox_inches="tight")
    _pyplot().close(figure)


def plot_equity(path: Path, data: ReportInput) -> None:
    plt = _pyplot()
    times = np.asarray(data.bars.times_ns, dtype=np.int64)
    equity = np.asarray(data.bars.equity, dtype=np.float64)
    bars = np.arange(len(equity))
    drawdown = np.maximum.accumulate(equity) - equity if len(equity) else equity
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(12, 6), sharex=True, gridspec_kw={"height_ratios": (3, 1)})
    top.plot(bars, equity, color="tab:blue", linewidth=1.0, label="equity (accounts chained)")
    _shade_halts(top, np.asarray(data.halts), legend=True)
    _shade_halts(bottom, np.asarray(data.halts), legend=False)
    _mark_evaluations(top, times, data.evaluations)
    top.set_ylabel("equity ($)")
    top.set_title(f"{data.title}: equity and drawdown")
    top.grid(alpha=0.3)
    top.legend(loc="upper left", fontsize=8)
    bottom.fill_between(bars, -drawdown, 0.0, color="tab:red", alpha=0.5, linewidth=0)
    bottom.set_ylabel("drawdown ($)")
    bottom.grid(alpha=0.3)
    _et_axis(bottom, times)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _mark_evaluations(axis, times_ns: np.ndarray, evaluations: Sequence[EvaluationRecord]) -> None:
    """A line where each evaluation account ended, labelled with its outcome."""
    colours = {"passed": "tab:green", "failed": "tab:red"}
    for record in evaluations:
        if record.outcome not in colours or not len(times_ns):
            continue
        at = int(np.searchsorted(times_ns, record.end_ns))
        axis.axvline(at, color=colours[record.outcome], linewidth=1.0, alpha=0.7)
        axis.annotate(f"#{record.index} {record.outcome}", (at, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                      va="top", ha="right", fontsize=7, color=colours[record.outcome])


def plot_sessions(path: Path, data: ReportInput) -> None:
    plt = _pyplot()
    sessions = session_returns(data.bars.times_ns, data.bars.equity)
    figure, axis = plt.subplots(figsize=(12, 3.5))
    positions = np.arange(len(sessions.pnl_usd))
    colours = np.where(sessions.pnl_usd >= 0, "tab:green", "tab:red")
    axis.bar(positions, sessions.pnl_usd, color=colours, width=0.8)
    axis.axhline(0.0, color="black", linewidth=0.6)
    labels = sessions.dates().strftime("%a %m-%d")
    step = max(1, len(labels) // 25)
    axis.set_xticks(positions[::step], labels[::step], rotation=45, ha="right", fontsize=8)
    axis.set_ylabel("P&L ($)")
    axis.set_xlabel("session (US/Eastern trading day, from 18:00 the evening before)")
    winning = int((sessions.pnl_usd > 0).sum())
    axis.set_title(f"{data.title}: P&L per session ({winning} of {len(labels)} sessions up)")
    axis.grid(alpha=0.3, axis="y")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def plot_bar_equity(path: Path, equity_curve: Sequence[float], title: str) -> None:
    plt = _pyplot()
    equity = np.asarray(equity_curve, dtype=np.float64)
    drawdown = np.maximum.accumulate(equity) - equity if len(equity) else equity
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True, gridspec_kw={"height_ratios": (3, 1)})
    top.plot(equity, color="tab:blue", linewidth=1.0)
    top.set_ylabel("equity ($)")
    top.set_title(title)
    top.grid(alpha=0.3)
    bottom.fill_between(np.arange(len(drawdown)), -drawdown, 0.0, color="tab:red", alpha=0.5, linewidth=0)
    bottom.set_ylabel("drawdown ($)")
    bottom.set_xlabel("bar")
    bottom.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
