"""Honest statistics: daily (session) returns, Sharpe/Sortino, per-trade figures, exposure, bootstrap intervals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from actors.common.statistics import bootstrap_interval
from actors.env.report import format_metrics_table
from actors.env.statistics import (
    MIN_TRADES,
    compute_statistics,
    exposure,
    session_returns,
    trade_figures,
)


def utc_ns(text: str) -> int:
    return int(pd.Timestamp(text, tz="UTC").value)


def trade(pnl: float, bars: int = 1, exit_ns: int = 0):
    return SimpleNamespace(pnl_usd=pnl, bars_held=bars, exit_ns=exit_ns)


# Three sessions (January: ET = UTC - 5). The 23:30 UTC bar is 18:30 ET: it opens the next date's session.
TIMES_NS = np.array([
    utc_ns("2024-01-02 14:30"),  # 09:30 ET, session of Jan 2
    utc_ns("2024-01-02 20:00"),  # 15:00 ET, session of Jan 2 closes at 10,100 (+100 = +1% of 10,000)
    utc_ns("2024-01-02 23:30"),  # 18:30 ET, session of Jan 3
    utc_ns("2024-01-03 20:00"),  # 15:00 ET, session of Jan 3 closes at 9,999 (-101 = -1% of 10,100)
    utc_ns("2024-01-04 15:00"),  # 10:00 ET, session of Jan 4 closes at 10,198.98 (+199.98 = +2% of 9,999)
])
EQUITY = np.array([10_000.0, 10_100.0, 10_150.0, 9_999.0, 10_198.98])


def test_session_returns_cut_days_at_the_globex_reopen():
    sessions = session_returns(TIMES_NS, EQUITY)
    assert list(sessions.dates().strftime("%Y-%m-%d")) == ["2024-01-02", "2024-01-03", "2024-01-04"]
    assert sessions.pnl_usd == pytest.approx([100.0, -101.0, 199.98])
    assert sessions.returns == pytest.approx([0.01, -0.01, 0.02])


def test_the_report_sharpe_and_sortino_are_those_of_the_session_returns():
    # Daily returns 1%, -1%, 2% (tests/actors/common/test_statistics.py computes these by hand).
    metrics = compute_statistics(TIMES_NS, EQUITY, np.zeros(5), []).metrics
    assert metrics["sharpe"] == pytest.approx(6.9282, abs=1e-4)
    assert metrics["sortino"] == pytest.approx(18.3303, abs=1e-4)


def test_a_one_session_report_shows_sharpe_and_its_intervals_as_na_with_the_reason():
    # One session (2024-03-04 ET), a winning trade: Sharpe and every interval are undefined, not 0 or [x, x].
    times = pd.date_range("2024-03-04 14:30", periods=30, freq="1min", tz="UTC").as_unit("ns").asi8
    equity = 50_000.0 + np.linspace(0.0, 300.0, 30)
    trade = SimpleNamespace(pnl_usd=300.0, bars_held=29, exit_ns=int(times[-1]))

    stats = compute_statistics(times, equity, np.ones(30, dtype=np.int64), [trade])
    table = format_metrics_table(stats.metrics, stats.warnings)

    assert stats.metrics["sessions"] == 1.0 and stats.metrics["net_pnl_usd"] == pytest.approx(300.0)
    for key in ("sharpe", "sortino", "sharpe_ci_low", "net_pnl_usd_ci_low", "net_pnl_usd_ci_high", "win_rate_ci_high"):
        assert np.isnan(stats.metrics[key]), key
    sharpe_row = next(line for line in table.splitlines() if line.startswith("| Sharpe"))
    pnl_row = next(line for line in table.splitlines() if line.startswith("| Net P&L"))
    assert "| n/a | n/a |" in sharpe_row and "one session has no spread" in sharpe_row
    assert "300" in pnl_row and "| n/a |" in pnl_row and "[300" not in pnl_row and "interval n/a" in pnl_row
    assert "only 1 trade(s)" in stats.warnings["win_rate"] and "interval n/a" in stats.warnings["win_rate"]


def test_exposure_is_the_share_of_bars_in_a_position():
    assert exposure(np.array([0, 1, 1, 0, -2, 0, 0, 0])) == 0.375
    assert exposure(np.array([], dtype=np.int64)) == 0.0


def test_trade_figures_on_a_tiny_case():
    figures = trade_figures([trade(300.0, 2), trade(-100.0, 4), trade(-50.0, 6), trade(150.0, 8)])
    assert figures["trades"] == 4 and figures["win_rate"] == 0.5
    assert figures["avg_trade_usd"] == 75.0 and figures["median_trade_usd"] == 50.0
    assert figures["avg_win_usd"] == 225.0 and figures["avg_loss_usd"] == -75.0
    assert figures["expectancy_usd"] == 75.0  # 0.5 x 225 + 0.5 x -75
    assert figures["profit_factor"] == pytest.approx(3.0) and figures["avg_bars_held"] == 5.0


def test_bootstrap_intervals_cover_the_true_mean_about_95_percent_of_the_time():
    true_mean, repetitions = 5.0, 200
    rng = np.random.default_rng(7)
    covered = 0
    for repetition in range(repetitions):
        daily_pnl = rng.normal(true_mean, 20.0, size=60)
        low, high = bootstrap_interval(daily_pnl, lambda draws: draws.mean(axis=1), seed=repetition, n_resamples=1000)
        covered += low <= true_mean <= high
    assert 0.90 <= covered / repetitions <= 0.99


def test_compute_statistics_gives_intervals_and_warns_below_the_minimum_of_trades():
    trades = [trade(100.0, 3, TIMES_NS[1]), trade(-101.0, 2, TIMES_NS[3]), trade(199.98, 1, TIMES_NS[4])]
    stats = compute_statistics(TIMES_NS, EQUITY, np.array([0, 1, 0, 1, 0]), trades, seed=1)
    metrics = stats.metrics
    assert metrics["net_pnl_usd"] == pytest.approx(198.98) and metrics["sessions"] == 3 and metrics["exposure"] == 0.4
    assert metrics["max_drawdown_usd"] == pytest.approx(151.0)  # 10,150 -> 9,999
    assert metrics["net_pnl_usd_ci_low"] <= metrics["net_pnl_usd_ci_high"]
    assert 0.0 <= metrics["win_rate_ci_low"] <= metrics["win_rate_ci_high"] <= 1.0
    assert len(trades) < MIN_TRADES and "3 trade(s)" in stats.warnings["win_rate"] and "sharpe" in stats.warnings
