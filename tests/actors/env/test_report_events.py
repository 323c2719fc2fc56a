"""The report shows the market events of a news-market backtest: marked on the price chart, listed in a table, and
each trade's row names the latest news before its entry. A few days of the ``news`` market played by a real
EnvBatch with random legal actions through the DecisionBook and the report writer (no training, no bus)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.common.instruments import resolve_instrument
from actors.env.batch import EnvBatch
from actors.env.config import DataConfig, EnvConfig
from actors.env.decision_book import DecisionBook, backtest_report
from actors.env.env import FuturesTradingEnv
from actors.env.factory import build_dataset
from actors.env.random_verdicts import random_legal_actions
from actors.env.report.charts import price_figure
from actors.env.report.events import NEWS_WINDOW_MINUTES, MINUTE_NS, headline_before


pytestmark = pytest.mark.slow  # the module's backtest plays ~2,000 bars (about 10 s on a busy box)


@pytest.fixture(scope="module")
def news_backtest(tmp_path_factory):
    dataset = build_dataset(DataConfig(scenario="news", synthetic_days=30), AccountConfig(), seed=1)
    split = dataset.test
    env = FuturesTradingEnv(split, resolve_instrument(InstrumentConfig()), AccountConfig(), EnvConfig(stop_loss_atr=2.0, take_profit_atr=2.0))
    batch = EnvBatch([env], mode="backtest", seed=0)
    batch.reset()
    book = DecisionBook(n_envs=1)
    rng = np.random.default_rng(0)
    step = 0
    while not batch.finished:
        ids = batch.active_ids()
        _, masks = batch.observations(ids)
        result = batch.step(ids, random_legal_actions(masks, rng), loop_step=step)
        for closed in result.closed_trades:
            book.keep_trade(step, closed.env_id, closed.trade, closed.decision_steps)
        step += 1
    data = book.report_input(batch, "Backtest", {}, [], "news market, split test")
    out = tmp_path_factory.mktemp("news-report")
    backtest_report(out, data, seed=0)
    return out, data, dataset


def test_the_report_holds_the_events_of_the_played_bars_and_only_those(news_backtest):
    out, data, dataset = news_backtest
    times = data.bars.times_ns
    inside = [event for event in dataset.events if times[0] <= event.time_ns < times[-1] + MINUTE_NS]
    assert len(inside) >= 3 and {event.kind for event in inside} == {"release", "headline"}
    assert [event.event_id for event in data.events] == [event.event_id for event in inside]
    document = json.loads((out / "metrics.json").read_text())
    assert [row["event_id"] for row in document["events"]] == [event.event_id for event in inside]
    page = (out / "report.html").read_text()
    markdown = (out / "report.md").read_text()
    assert f"Market events ({len(inside)})" in page and f"Market events ({len(inside)})" in markdown
    for event in inside:
        assert (event.text or event.name) in markdown


def test_the_price_chart_draws_a_line_per_release_and_a_marker_per_headline(news_backtest):
    _, data, _ = news_backtest
    figure = price_figure(data)
    axis = figure.axes[0]
    texts = [text.get_text() for text in axis.texts]
    releases = [event for event in data.events if event.kind == "release"]
    headlines = [event for event in data.events if event.kind == "headline"]
    assert releases and headlines
    for release in releases:
        assert release.name in texts
    numbers = {f"#{number}" for number, event in enumerate(data.events, start=1) if event.kind == "headline"}
    assert numbers <= set(texts)
    legend = [text.get_text() for text in axis.get_legend().get_texts()]
    assert any(label.startswith("release") for label in legend) and any(label.startswith("headline") for label in legend)
    assert (news_backtest[0] / "price.png").stat().st_size > 10_000


def test_a_trade_row_carries_the_latest_news_before_its_entry(news_backtest):
    out, data, _ = news_backtest
    document = json.loads((out / "metrics.json").read_text())
    assert len(document["trade_list"]) == len(data.trades) > 0
    with_news = 0
    for row, item in zip(document["trade_list"], data.trades):
        before = [event for event in data.events
                  if item.trade.entry_ns - NEWS_WINDOW_MINUTES * MINUTE_NS <= event.time_ns <= item.trade.entry_ns]
        expected = (before[-1].text or before[-1].name) if before else ""
        assert row["entry_headline"] == expected
        with_news += bool(expected)
        if expected:
            assert expected in (out / "report.html").read_text()
    assert with_news >= 1


def test_the_headline_is_the_latest_event_at_or_before_the_entry_within_the_window():
    from actors.common.events import MarketEvent

    at = 1_700_000_000 * 10**9
    events = [MarketEvent(time_ns=at, kind="headline", text="tariffs weighed"),
              MarketEvent(time_ns=at + 10 * MINUTE_NS, kind="release", importance="high", name="CPI m/m", text="CPI m/m 0.4% vs 0.2%")]
    assert headline_before(events, at - 1) == ""
    assert headline_before(events, at) == headline_before(events, at + 9 * MINUTE_NS) == "tariffs weighed"
    assert headline_before(events, at + 10 * MINUTE_NS) == "CPI m/m 0.4% vs 0.2%"
    assert headline_before(events, at + (10 + NEWS_WINDOW_MINUTES + 1) * MINUTE_NS) == ""
    assert headline_before((), at) == ""


def test_a_market_without_events_writes_no_events_table(tmp_path):
    from tests.actors.env.test_report_html import report_input

    from actors.env.report import write_backtest_report

    data = report_input()
    write_backtest_report(tmp_path, data)
    assert "Market events" not in (tmp_path / "report.html").read_text()
    assert json.loads((tmp_path / "metrics.json").read_text())["events"] == []


def test_an_event_between_sessions_is_marked_at_the_bar_that_makes_it_public():
    from actors.common.events import MarketEvent
    from actors.env.report.events import event_bars

    day = 1_700_000_000 * 10**9
    times = np.array([day, day + MINUTE_NS, day + 20 * 60 * MINUTE_NS, day + (20 * 60 + 1) * MINUTE_NS], dtype=np.int64)  # a gap: the night
    inside = MarketEvent(time_ns=day + MINUTE_NS + 30 * 10**9, kind="headline", text="inside the 2nd bar")
    overnight = MarketEvent(time_ns=day + 10 * 60 * MINUTE_NS, kind="release", name="CPI m/m")
    assert event_bars(times, [inside, overnight]).tolist() == [1, 2]
