"""Backtest / ablation report: metrics.json, report.md, PNG charts and one self-contained report.html.

Two writers (writers.py):
- ``write_backtest_report(out_dir, ReportInput)``: the backtest report. Charts with US/Eastern time on the
  x axes (price with entry/exit markers, equity and drawdown, P&L per session; halted periods shaded),
  the evaluation accounts, where entries went, warnings, the market events of the window (the news market's
  releases and headlines: lines and markers on the price chart, a table), and a trades table where every row
  shows the decision behind its entry and exit and the headline its entry's thought read. report.html carries the same with its images inline (base64 data
  URIs): it opens from a file, with no network.
- ``write_report(out_dir, equity_curve, trades, metrics, ...)``: the short form (metrics table, equity.png
  against bar numbers) for runs without per-bar times, e.g. the training episodes.

metrics.json holds every figure shown: the flat metrics at the top level (floats; None where undefined),
plus ``warnings``, ``entries_funnel``, ``evaluation_accounts`` and ``trade_list``.

The package's parts: model.py (the input: trades and the decision behind each), labels.py (how figures,
decisions and table rows read), events.py (the events shown and each trade's news), charts.py (the PNGs), html_page.py (report.html), writers.py. It lives in
the env's package because the env actor is what writes it, from the env's bars, trades and evaluation walk.
This module names the package's public surface; matplotlib loads only when a chart is drawn.
"""

from __future__ import annotations

from actors.env.report.events import headline_fields, window_events
from actors.env.report.labels import entries_sentence, et_text, format_metrics_table, participation_rows
from actors.env.report.model import ReportInput, ReportTrade, ThoughtUsed, TradeDecision
from actors.env.report.writers import write_backtest_report, write_report

__all__ = ["ReportInput", "ReportTrade", "ThoughtUsed", "TradeDecision", "entries_sentence", "et_text", "format_metrics_table",
           "headline_fields", "participation_rows", "window_events", "write_backtest_report", "write_report"]
