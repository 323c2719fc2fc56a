"""Data that does not fit the env's rules says so, naming the file and the setting to change."""

from __future__ import annotations

import numpy as np
import pandas as pd

from actors.env.datafit import check_fit
from actors.common.synthetic import generate_bars

FLAT_1659 = 16 * 60 + 59


def _frame(index: pd.DatetimeIndex, close: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"open": close, "high": close + 0.5, "low": close - 0.5, "close": close, "volume": 100.0}, index=index)


def test_synthetic_nq_minute_bars_fit_without_warnings() -> None:
    bars = generate_bars(days=5, seed=1)
    report = check_fit(bars, source="synthetic", symbol="NQ", tick_size=0.25, flat_minute_of_day=FLAT_1659)
    assert report.warnings == ()
    assert report.bar_secs == 60.0


def test_daily_bars_warn_that_intraday_rules_expect_minute_bars() -> None:
    index = pd.date_range("2024-01-02 16:00", periods=300, freq="B", tz="America/New_York")
    close = 100.0 + np.cumsum(np.random.default_rng(0).normal(0, 2.0, len(index)))
    report = check_fit(_frame(index, close), source="spy_daily.csv", symbol="NQ", tick_size=0.25, flat_minute_of_day=FLAT_1659)
    assert any("spy_daily.csv" in w and "1-day bars" in w and "1-minute" in w for w in report.warnings)


def test_sub_tick_prices_name_the_instrument_setting() -> None:
    index = pd.date_range("2024-01-02 09:30", periods=400, freq="min", tz="America/New_York")
    close = 1.07 + np.cumsum(np.random.default_rng(1).normal(0, 0.0002, len(index)))
    report = check_fit(_frame(index, close), source="eurusd.csv", symbol="NQ", tick_size=0.25, flat_minute_of_day=FLAT_1659)
    [warning] = [w for w in report.warnings if "ticks per bar" in w]
    assert "eurusd.csv" in warning and "instrument.symbol" in warning and "NQ" in warning
    assert report.ticks_per_bar < 0.01


def test_round_the_clock_bars_warn_about_the_flat_window_unless_the_preset_has_none() -> None:
    index = pd.date_range("2024-01-02 00:00", periods=3 * 1440, freq="min", tz="UTC")
    close = 40_000.0 + np.cumsum(np.random.default_rng(2).normal(0, 20.0, len(index)))
    frame = _frame(index, close)
    with_flat = check_fit(frame, source="btc.csv", symbol="BTC", tick_size=0.1, flat_minute_of_day=FLAT_1659)
    without = check_fit(frame, source="btc.csv", symbol="BTC", tick_size=0.1, flat_minute_of_day=None)
    assert any('account.preset = "none"' in w for w in with_flat.warnings)
    assert 0.03 < with_flat.flat_window_share < 0.05  # 61 of 1440 minutes a day
    assert without.warnings == ()
