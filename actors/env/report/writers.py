"""The report's writers: ``write_backtest_report`` (metrics.json, report.md, the charts, report.html) and
``write_report``, the short form for runs without per-bar times (e.g. the training episodes)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from actors.env.report.charts import plot_bar_equity, plot_equity, plot_price, plot_sessions
from actors.env.report.html_page import html_document
from actors.env.report.labels import (EVALUATION_HEADER, STATISTICS_BASIS, decision_text, entries_sentence, et_text, evaluation_rows,
                                      evaluation_summary, format_metrics_table, funnel_rows, halt_rows, participation_markdown)
from actors.env.report.events import NEWS_WINDOW_MINUTES, entry_headline, event_rows, headline_cell, headline_fields, shows_news
from actors.env.report.model import ReportInput, ReportTrade
from actors.env.statistics import MIN_SESSIONS, MIN_TRADES, session_returns

MARKDOWN_TRADES = 50
"""report.md lists the last this many trades (report.html and metrics.json list them all)."""


def _session_pnl_records(data: ReportInput) -> list[dict]:
    """Each session's date and P&L (dollars), the series the deflated Sharpe and the interval read."""
    if not len(data.bars.times_ns):
        return []
    sessions = session_returns(data.bars.times_ns, data.bars.equity)
    return [{"date": str(day.date()), "pnl_usd": float(pnl)} for day, pnl in zip(sessions.dates(), sessions.pnl_usd)]


def _trade_record(item: ReportTrade, events: Sequence = ()) -> dict[str, Any]:
    trade = item.trade
    return {
        "env_id": item.env_id, "trade_id": trade.trade_id, "side": "long" if trade.side > 0 else "short",
        "contracts": trade.contracts, "entry_time_et": et_text(trade.entry_ns), "exit_time_et": et_text(trade.exit_ns),
        "entry_price": trade.entry_price, "exit_price": trade.exit_price, "pnl_usd": trade.pnl_usd, "bars_held": trade.bars_held,
        "exit_reason": trade.exit_reason,
        "entry_decision": asdict(item.entry) if item.entry else None, "exit_decision": asdict(item.exit) if item.exit else None,
        **headline_fields(item.entry, events, trade.entry_ns),
    }


def _event_record(event) -> dict[str, Any]:
    return {"time_et": et_text(event.time_ns), "time_ns": event.time_ns, "kind": event.kind, "importance": event.importance,
            "name": event.name, "text": event.text, "event_id": event.event_id}


def _markdown_events(events: Sequence) -> list[str]:
    if not events:
        return []
    rows = [f"## Market events ({len(events)})", "", "| # | time (ET) | kind | importance | text |", "| ---: | --- | --- | --- | --- |"]
    rows += ["| " + " | ".join(cell.replace("|", "/").replace("\n", " ") for cell in row) + " |" for row in event_rows(events)]
    return [*rows, ""]


def _markdown_trades(trades: Sequence[ReportTrade], events: Sequence = ()) -> list[str]:
    if not trades:
        return ["No closed trades."]
    news_column = shows_news(trades, events)
    news = " news its entry read |" if news_column else ""
    rows = [f"| trade | side | entry (ET) | entry | exit (ET) | exit | P&L ($) | bars | exit reason | entry decision |{news} exit decision |",
            "| ---: | :---: | --- | ---: | --- | ---: | ---: | ---: | --- | --- |" + (" --- |" if news_column else "") + " --- |"]
    for item in list(trades)[-MARKDOWN_TRADES:]:
        trade = item.trade
        side = "long" if trade.side > 0 else "short"
        cells = [str(trade.trade_id), side, et_text(trade.entry_ns), f"{trade.entry_price:,.2f}", et_text(trade.exit_ns),
                 f"{trade.exit_price:,.2f}", f"{trade.pnl_usd:,.2f}", str(trade.bars_held), trade.exit_reason,
                 decision_text(item.entry), *([headline_cell(*entry_headline(item.entry, events, trade.entry_ns))] if news_column else []),
                 decision_text(item.exit)]
        rows.append("| " + " | ".join(cell.replace("|", "/").replace("\n", " ") for cell in cells) + " |")
    return rows


def _json_value(value: float) -> float | None:
    return float(value) if math.isfinite(float(value)) else None


def _warning_lines(data: ReportInput) -> list[str]:
    lines = list(data.notes)
    trades = int(data.metrics.get("trades", len(data.trades)))
    if trades < MIN_TRADES:
        lines.append(f"Only {trades} trade(s): fewer than {MIN_TRADES}, so win rate, profit factor and every per-trade figure are noise, not evidence.")
    sessions = int(data.metrics.get("sessions", 0))
    if sessions < MIN_SESSIONS:
        lines.append(f"Only {sessions} session(s): fewer than {MIN_SESSIONS}, so Sharpe, Sortino and their intervals say little.")
    if trades < MIN_TRADES and data.entries_funnel:
        lines.append(entries_sentence(data.entries_funnel))
    return lines


def write_backtest_report(out_dir: str | Path, data: ReportInput) -> dict[str, float]:
    """Write metrics.json, report.md, equity.png, price.png, sessions.png and report.html; returns the metrics."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = {key: float(value) for key, value in data.metrics.items()}
    warnings = _warning_lines(data)
    charts = {"price.png": "price, entries and exits", "equity.png": "equity and drawdown", "sessions.png": "P&L per session"}
    if len(data.bars.times_ns):
        plot_price(out / "price.png", data)
        plot_equity(out / "equity.png", data)
        plot_sessions(out / "sessions.png", data)
    else:
        charts = {}
    document = {
        **{key: _json_value(value) for key, value in clean.items()},
        "warnings": {"notes": warnings, "metrics": data.metric_warnings},
        "entries_funnel": {key: float(value) for key, value in data.entries_funnel.items()},
        "halted_bars": {rule: count for rule, count, _ in halt_rows(np.asarray(data.halts))},
        "evaluation_accounts": [asdict(record) if hasattr(record, "__dataclass_fields__") else dict(vars(record)) for record in data.evaluations],
        "trade_list": [_trade_record(item, data.events) for item in data.trades],
        "events": [_event_record(event) for event in data.events],
        "session_pnl": _session_pnl_records(data),
        "statistics_basis": STATISTICS_BASIS,
    }
    (out / "metrics.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    (out / "report.md").write_text(_markdown(data, clean, warnings, charts))
    (out / "report.html").write_text(html_document(out, data, clean, warnings, charts))
    return clean


def _markdown(data: ReportInput, metrics: dict[str, float], warnings: list[str], charts: dict[str, str]) -> str:
    lines = [f"# {data.title}", ""]
    if data.context:
        lines += [data.context, ""]
    if warnings:
        lines += ["## Warnings", "", *(f"- ⚠ {line}" for line in warnings), ""]
    lines += ["## Metrics", "", format_metrics_table(metrics, data.metric_warnings), "", STATISTICS_BASIS, ""]
    lines += participation_markdown(metrics)
    for name, caption in charts.items():
        lines += [f"![{caption}]({name})", ""]
    lines += ["## Evaluation accounts", "", evaluation_summary(metrics), ""]
    if data.evaluations:
        lines += ["| " + " | ".join(EVALUATION_HEADER) + " |", "|" + " --- |" * len(EVALUATION_HEADER)]
        lines += ["| " + " | ".join(row) + " |" for row in evaluation_rows(data.evaluations)]
        lines.append("")
    if data.entries_funnel:
        lines += ["## Where entries went", "", entries_sentence(data.entries_funnel), "", "| stage | decisions | share of proposals |", "| --- | ---: | ---: |"]
        lines += [f"| {stage} | {value} | {share} |" for stage, value, share in funnel_rows(data.entries_funnel)]
        lines.append("")
    halts = halt_rows(np.asarray(data.halts))
    lines += ["## Halted bars", ""]
    lines += (["| rule | bars | share of bars |", "| --- | ---: | ---: |", *(f"| {rule} | {count:,} | {share} |" for rule, count, share in halts)]
              if halts else ["No entry-veto rule halted trading."])
    lines += ["", *_markdown_events(data.events)]
    if data.events:
        lines += ["News its entry read: the newest event the entry's thought read (its prompt's news line); where that thought did not "
                  f"reach the env, the latest event public at the entry and at most {NEWS_WINDOW_MINUTES} min old, marked.", ""]
    lines += [f"## Trades (last {min(len(data.trades), MARKDOWN_TRADES)} of {len(data.trades)})", "", *_markdown_trades(data.trades, data.events), ""]
    return "\n".join(lines)


def _trade_rows(trades: Sequence, limit: int = 20) -> list[str]:
    if not trades:
        return ["No closed trades."]
    rows = ["| trade | side | entry | exit | P&L ($) | bars | exit reason |", "| ---: | :---: | ---: | ---: | ---: | ---: | --- |"]
    for trade in list(trades)[-limit:]:
        side = "long" if trade.side > 0 else "short"
        rows.append(f"| {trade.trade_id} | {side} | {trade.entry_price:,.2f} | {trade.exit_price:,.2f} | {trade.pnl_usd:,.2f} | {trade.bars_held} | {trade.exit_reason} |")
    return rows


def write_report(out_dir: str | Path, equity_curve: Sequence[float], trades: Sequence, metrics: dict[str, float], title: str = "Backtest", notes: str = "") -> dict[str, float]:
    """The short form: metrics.json, report.md and equity.png (against bar numbers) into ``out_dir``; returns the metrics.

    Sharpe/Sortino here are whatever the caller computed (training episodes: per-bar, actors/env/metrics.py)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = {key: float(value) for key, value in metrics.items()}
    (out / "metrics.json").write_text(json.dumps(clean, indent=2, sort_keys=True) + "\n")
    plot_bar_equity(out / "equity.png", equity_curve, title)
    lines = [f"# {title}", ""]
    if notes:
        lines += [notes, ""]
    lines += ["## Metrics", "", format_metrics_table(clean), "", *participation_markdown(clean), "![equity curve and drawdown](equity.png)", ""]
    lines += [f"## Last trades (of {len(trades)})", "", *_trade_rows(trades), ""]
    (out / "report.md").write_text("\n".join(lines))
    return clean
