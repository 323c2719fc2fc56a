"""evaluate's news rows: the news floors on each fold's test days only, with the run's barrier."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.instruments import INSTRUMENTS
from actors.common.news_floors import news_floor_figures
from actors.common.market_settings import AccountConfig
from actors.env.config import DataConfig
from actors.env.factory import build_dataset
from actors.env.hindsight import barrier_spec
from actors.jobs.evaluation.folds import walk_forward_folds
from actors.jobs.evaluation.news_rows import news_floor_lines, news_floor_rows

DAYS = 60
SPEC = barrier_spec(INSTRUMENTS["NQ"], 60, 3.0, 3.0)


def _dataset(scenario: str):
    return build_dataset(DataConfig(source="synthetic", scenario=scenario, synthetic_days=DAYS), AccountConfig(), seed=3)


@pytest.fixture(scope="module")
def news():
    return _dataset("news_drift")  # the direction floors' unit test: a drift after each event


def test_each_fold_row_prices_only_the_events_its_test_days_make_public(news):
    folds = walk_forward_folds(DAYS, 2, purge_days=2, min_train_days=30)
    rows = news_floor_rows(news, folds, SPEC)
    assert [r["rows"] for r in rows] == ["fold 1", "fold 2", "all test days"]
    event_bar = news.event_truth["event_bar"]
    test_dates = {news.index[news.session_starts[d]].date() for f in folds for d in f.test_days()}
    in_test = np.array([news.index[b].date() in test_dates for b in event_bar])
    assert 0 < in_test.sum() < len(event_bar)  # the training days' events are left out
    assert rows[-1]["events"] <= in_test.sum() and rows[0]["events"] + rows[1]["events"] == rows[-1]["events"]
    expected = news_floor_figures([e for e, k in zip(news.events, in_test) if k], event_bar[in_test],
                                  news.event_truth["surprise"][in_test], news.event_truth["text_sign"][in_test],
                                  _bars(news), SPEC)
    assert rows[-1]["oracle_usd_per_event"] == pytest.approx(expected["oracle_usd_per_event"])
    assert rows[-1]["keyword_usd_per_event"] == pytest.approx(expected["keyword_usd_per_event"])
    assert rows[-1]["flat_usd_per_event"] == 0.0
    days = rows[-1]["test_days"]
    assert days == sum(len(f.test_days()) for f in folds)
    assert rows[-1]["oracle_usd_per_day"] == pytest.approx(expected["oracle_usd_per_event"] * rows[-1]["events"] / days)


def test_the_oracle_row_earns_on_news_drift(news):
    rows = news_floor_rows(news, walk_forward_folds(DAYS, 2, purge_days=2, min_train_days=30), SPEC)
    assert rows[-1]["oracle_usd_per_event"] > rows[-1]["keyword_usd_per_event"] > 0


def test_a_market_without_news_has_no_rows_and_no_lines():
    plain = _dataset("realistic")
    assert plain.event_truth is None
    assert news_floor_rows(plain, walk_forward_folds(DAYS, 2, min_train_days=30), SPEC) == []
    assert news_floor_lines([]) == []


def test_the_lines_are_a_table_with_a_row_per_fold_and_the_total(news):
    lines = news_floor_lines(news_floor_rows(news, walk_forward_folds(DAYS, 2, purge_days=2, min_train_days=30), SPEC))
    assert lines[0].startswith("| test days of |") and len(lines) == 2 + 3
    assert lines[-1].startswith("| all test days |")


def _bars(dataset):
    import pandas as pd

    return pd.DataFrame({name: getattr(dataset, name) for name in ("open", "high", "low", "close")})


def test_the_rows_price_the_policy_s_contracts_a_trade(news):
    folds = walk_forward_folds(DAYS, 2, purge_days=2, min_train_days=30)
    one, three = news_floor_rows(news, folds, SPEC), news_floor_rows(news, folds, SPEC, contracts=3)
    for name in ("keyword_usd_per_event", "oracle_usd_per_day"):
        assert three[-1][name] == pytest.approx(3 * one[-1][name])
    assert three[-1]["events"] == one[-1]["events"]
