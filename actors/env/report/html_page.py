"""report.html: the backtest report in one self-contained page, its charts inline as base64 data URIs (it opens
from a file, with no network)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from actors.env.report.labels import (EVALUATION_HEADER, STATISTICS_BASIS, DecisionStyle, entries_sentence, et_text, evaluation_rows,
                                      evaluation_summary, funnel_rows, halt_rows, metric_rows, participation_rows, render_decision)
from actors.env.report.events import FROM_THOUGHT, NEWS_WINDOW_MINUTES, entry_headline, event_rows, headline_cell, shows_news
from actors.env.report.model import ReportInput, ReportTrade, TradeDecision

HTML_TRADES = 2000
"""report.html lists at most this many trades (the last ones)."""

_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px auto; max-width: 1280px; color: #1d2330; padding: 0 16px; }
h1 { margin-bottom: 4px; } h2 { border-bottom: 1px solid #dde2ea; padding-bottom: 4px; margin-top: 32px; }
.context { color: #5b6475; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #dde2ea; padding: 4px 8px; vertical-align: top; }
th { background: #f3f5f9; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:nth-child(even) td { background: #fafbfd; }
.warn { background: #fff4e5; border-left: 4px solid #f0a020; padding: 8px 12px; margin: 6px 0; }
.w { color: #b35c00; font-size: 12px; }
.win { color: #137333; } .loss { color: #b3261e; }
.passed { color: #137333; font-weight: 600; } .failed { color: #b3261e; font-weight: 600; } .open { color: #5b6475; }
.decision { font-size: 12px; line-height: 1.35; min-width: 260px; } .decision .reason { color: #38404f; font-style: italic; }
.muted { color: #8a93a3; } img { max-width: 100%; border: 1px solid #eef0f4; margin: 8px 0; }
.basis { color: #5b6475; font-size: 13px; } .headline { font-size: 12px; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """Cells are HTML already (escaped by the caller)."""
    head = "".join(f"<th>{_e(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{cell}</td>" if index in numeric else f"<td>{cell}</td>" for index, cell in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_HTML_DECISION = DecisionStyle(
    escape=_e,
    missing="<div class=\"decision muted\">no decision recorded</div>",
    head="<b>step {step}</b> · RL {action} ({confidence:.2f})",
    no_thought="<span class=\"muted\">no thought</span>",
    thought=("thought {action} ({confidence:.2f}, {staleness} steps old) <span class=\"muted\">{query_id}</span>",
             "<span class=\"reason\">“{reason}”</span>"),
    fusion="fusion {method}/{rule} · trust RL {rl_trust:.2f} / LLM {llm_trust:.2f} → {action}",
    veto="<span class=\"loss\">veto: {reason}</span>",
    join=lambda lines: "<div class=\"decision\">" + "<br>".join(lines) + "</div>",
)


def _html_decision(decision: TradeDecision | None) -> str:
    return render_decision(decision, _HTML_DECISION)


def _html_trades(trades: Sequence[ReportTrade], events: Sequence = ()) -> str:
    if not trades:
        return "<p>No closed trades.</p>"
    rows, news_column = [], shows_news(trades, events)
    for item in list(trades)[-HTML_TRADES:]:
        trade = item.trade
        outcome = "win" if trade.pnl_usd > 0 else "loss"
        rows.append([
            _e(trade.trade_id), _e(item.env_id), "long" if trade.side > 0 else "short", _e(et_text(trade.entry_ns)), f"{trade.entry_price:,.2f}",
            _e(et_text(trade.exit_ns)), f"{trade.exit_price:,.2f}", f"<span class=\"{outcome}\">{trade.pnl_usd:,.2f}</span>",
            _e(trade.bars_held), _e(trade.exit_reason), _html_decision(item.entry), *([_html_headline(item, events)] if news_column else []), _html_decision(item.exit),
        ])
    header = ["trade", "env", "side", "entry (ET)", "entry", "exit (ET)", "exit", "P&L ($)", "bars", "exit reason", "entry decision",
              *(["news its entry read"] if news_column else []), "exit decision"]
    note = f"<p class=\"muted\">the last {HTML_TRADES} of {len(trades)} trades</p>" if len(trades) > HTML_TRADES else ""
    return note + _html_table(header, rows, numeric=(0, 1, 4, 6, 7, 8))


def _html_headline(item: ReportTrade, events: Sequence) -> str:
    """The news cell: the headline the entry's thought read, else the news window's guess (marked)."""
    headline, source = entry_headline(item.entry, events, item.trade.entry_ns)
    if not headline:
        return "<span class=\"muted\">none read</span>" if source == FROM_THOUGHT else f"<span class=\"muted\">none in {NEWS_WINDOW_MINUTES} min</span>"
    return f"<span class=\"headline\">{_e(headline_cell(headline, source))}</span>"


def _html_events(events: Sequence) -> str:
    if not events:
        return ""
    cells = [[_e(number), _e(time), _e(kind), _e(importance), _e(text)] for number, time, kind, importance, text in event_rows(events)]
    return (f"<h2>Market events ({len(events)})</h2><p class=\"muted\">Releases are dashed lines on the price chart, headlines "
            "diamonds under it with their number (#).</p>" + _html_table(["#", "time (ET)", "kind", "importance", "text"], cells, numeric=(0,)))


def _inline_png(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def html_document(out: Path, data: ReportInput, metrics: dict[str, float], warnings: list[str], charts: dict[str, str]) -> str:
    parts = [f"<h1>{_e(data.title)}</h1>"]
    if data.context:
        parts.append(f"<p class=\"context\">{_e(data.context)}</p>")
    if warnings:
        parts.append("<h2>Warnings</h2>" + "".join(f"<div class=\"warn\">⚠ {_e(line)}</div>" for line in warnings))
    metric_cells = [[_e(label), _e(value), _e(interval), f"<span class=\"w\">⚠ {_e(warning)}</span>" if warning else ""]
                   for label, value, interval, warning in metric_rows(metrics, data.metric_warnings)]
    parts.append("<h2>Metrics</h2>" + _html_table(["metric", "value", "95% interval", "warning"], metric_cells, numeric=(1, 2)))
    parts.append(f"<p class=\"basis\">{_e(STATISTICS_BASIS)}</p>")
    participation = participation_rows(metrics)
    if participation:
        parts.append("<h2>LLM participation</h2>" + _html_table(["measure", "value"], [[_e(label), _e(value)] for label, value in participation], numeric=(1,)))
    if charts:
        parts.append("<h2>Charts</h2>" + "".join(f"<figure><img alt=\"{_e(caption)}\" src=\"{_inline_png(out / name)}\"></figure>" for name, caption in charts.items()))
    evaluation_cells = [[*map(_e, row[:3]), f"<span class=\"{_e(row[3])}\">{_e(row[3])}</span>", *map(_e, row[4:])] for row in evaluation_rows(data.evaluations)]
    parts.append("<h2>Evaluation accounts</h2>" + f"<p>{_e(evaluation_summary(metrics))}</p>"
                 + (_html_table(EVALUATION_HEADER, evaluation_cells, numeric=(0, 5, 6)) if evaluation_cells else ""))
    if data.entries_funnel:
        funnel_cells = [[_e(stage), _e(value), _e(share)] for stage, value, share in funnel_rows(data.entries_funnel)]
        parts.append("<h2>Where entries went</h2>" + f"<p>{_e(entries_sentence(data.entries_funnel))}</p>"
                     + _html_table(["stage", "decisions", "share of proposals"], funnel_cells, numeric=(1, 2)))
    halts = halt_rows(np.asarray(data.halts))
    parts.append("<h2>Halted bars</h2>" + (_html_table(["rule", "bars", "share of bars"], [[_e(r), f"{c:,}", _e(s)] for r, c, s in halts], numeric=(1, 2))
                                           if halts else "<p>No entry-veto rule halted trading.</p>"))
    parts.append(_html_events(data.events))
    news_note = ("<p class=\"muted\">news its entry read: the newest event the entry's thought read (its prompt's news line); where "
                 f"that thought did not reach the env, the latest event public at the entry and at most {NEWS_WINDOW_MINUTES} min old, "
                 "marked.</p>") if shows_news(data.trades, data.events) else ""
    parts.append(f"<h2>Trades ({len(data.trades)})</h2>" + news_note + _html_trades(data.trades, data.events))
    body = "\n".join(parts)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_e(data.title)}</title>"
            f"<style>{_CSS}</style></head><body>\n{body}\n</body></html>\n")
