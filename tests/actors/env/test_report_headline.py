"""A trade's row names the headline its entry's thought read (the thought records the events of its prompt), not the
latest event of a 90-minute window; the window's guess only where the thought did not reach the env, marked."""

from __future__ import annotations

import dataclasses
import json

from actors.common.events import MarketEvent
from actors.env.report import ReportTrade, write_backtest_report
from actors.env.report.events import FROM_THOUGHT, FROM_WINDOW, entry_headline
from tests.actors.env.test_report_html import MINUTE_NS, START_NS, decision, report_input

READ = "Fed signals a pause"
LATER = MarketEvent(time_ns=START_NS + 3 * MINUTE_NS, kind="headline", text="Chipmakers rally on a rumour", event_id="h2")


def _with_entry_news(trade: ReportTrade, news: tuple[str, ...] | None) -> ReportTrade:
    entry = decision(trade.trade.entry_bar, "reads the news")
    return dataclasses.replace(trade, entry=dataclasses.replace(entry, thought=dataclasses.replace(entry.thought, news=news)))


def test_the_row_shows_what_the_thought_read_none_when_it_read_nothing_and_the_marked_guess_without_it(tmp_path):
    data = report_input(n_trades=3)
    # trade 0 enters at bar 5, two minutes after LATER: the window's guess would be LATER for each
    data.trades = [_with_entry_news(data.trades[0], (READ,)), _with_entry_news(data.trades[1], ()), _with_entry_news(data.trades[2], None)]
    data.events = [LATER]
    write_backtest_report(tmp_path, data)

    rows = json.loads((tmp_path / "metrics.json").read_text())["trade_list"]
    assert [(row["entry_headline"], row["entry_headline_from"]) for row in rows] == [(READ, FROM_THOUGHT), ("", FROM_THOUGHT),
                                                                                     (LATER.text, FROM_WINDOW)]
    markdown = (tmp_path / "report.md").read_text()
    trade_lines = [line for line in markdown.splitlines() if line.startswith(("| 0 | long", "| 1 | long", "| 2 | long"))]
    assert READ in trade_lines[0] and LATER.text not in trade_lines[0]
    assert LATER.text not in trade_lines[1] and "| - |" in trade_lines[1]
    assert f"{LATER.text} (not from its thought" in trade_lines[2]
    page = (tmp_path / "report.html").read_text()
    assert READ in page and "none read" in page


def test_without_events_in_the_window_a_thought_that_read_news_still_gets_the_column(tmp_path):
    data = report_input(n_trades=1)
    data.trades = [_with_entry_news(data.trades[0], (READ, "an older headline"))]  # a live feed's events outside the bars
    write_backtest_report(tmp_path, data)
    assert "news its entry read" in (tmp_path / "report.md").read_text() and READ in (tmp_path / "report.md").read_text()


def test_no_thought_and_no_event_gives_no_headline():
    assert entry_headline(None, [], START_NS) == ("", "")
