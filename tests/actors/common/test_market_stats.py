"""The calibration statistics on inputs whose answer is known, and the calibration table's shape."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.signal import lfilter

from actors.common.market_stats import REAL_NQ_RANGES, calibration_table
from actors.common.market_stats_multibar import (
    consecutive_block_correlation, first_last_half_hour_correlation, gap_frequency, jump_frequency, naive_variance_ratio,
    session_returns, variance_ratio,
)
from actors.common.synthetic import BARS_PER_SESSION, session_timestamps


def bars_from_returns(returns: np.ndarray, gaps: np.ndarray | None = None, start: float = 16_000.0) -> pd.DataFrame:
    """Sessions of bars whose in-session log returns are ``returns`` (days x 389) and whose opens gap by ``gaps``."""
    days = returns.shape[0]
    steps = np.concatenate([np.zeros((days, 1)) if gaps is None else gaps[:, None], returns], axis=1).ravel()
    close = start * np.exp(np.cumsum(steps))
    index = session_timestamps(days, "2024-01-02")
    return pd.DataFrame({"open": close, "high": close, "low": close, "close": close, "volume": 100.0}, index=index)


def ar1_variance_ratio(phi: float, q: int) -> float:
    """Lo and MacKinlay: VR(q) = 1 + 2 sum_k (1 - k/q) rho_k, rho_k = phi^k for an AR(1)."""
    k = np.arange(1, q)
    return float(1.0 + 2.0 * np.sum((1.0 - k / q) * phi**k))


def test_a_random_walk_has_variance_ratios_near_one_even_with_a_u_shaped_volatility():
    rng = np.random.default_rng(0)
    minute = np.arange(BARS_PER_SESSION - 1)
    u_shape = 1.0 + 1.6 * np.exp(-minute / 30.0) + 0.5 * np.exp(-(388 - minute) / 30.0)  # synthetic.py's curve
    frame = bars_from_returns(rng.standard_normal((300, 389)) * 0.0003 * u_shape)
    r, _, day = session_returns(frame)
    tolerance = {5: 0.03, 15: 0.05, 60: 0.08, 240: 0.2}  # about 2.5 standard errors at 300 sessions
    for q, within in tolerance.items():
        assert variance_ratio(r, day, q) == pytest.approx(1.0, abs=within)
    # the textbook estimator reads the same walk as mean-reverting: what variance_ratio corrects
    assert naive_variance_ratio(r, day, 60) < 0.93


def test_the_table_bands_the_textbook_variance_ratio_and_prints_the_debiased_one_beside_it():
    """The real bands were measured with ordinary tools: the table's VR is the textbook figure, whose U-shape bias
    puts this pure walk's VR(60) inside real NQ's 0.67-0.90 band; the debiased figure (~1) is shown, not banded."""
    rng = np.random.default_rng(5)
    minute = np.arange(BARS_PER_SESSION - 1)
    u_shape = 1.0 + 1.6 * np.exp(-minute / 30.0) + 0.5 * np.exp(-(388 - minute) / 30.0)
    frame = bars_from_returns(rng.standard_normal((200, 389)) * 0.00025 * u_shape)
    r, _, day = session_returns(frame)
    rows = {row.figure: row for row in calibration_table(frame).rows}
    for q in (5, 15, 60, 240):
        assert rows[f"vr_{q}"].value == pytest.approx(naive_variance_ratio(r, day, q))
        assert rows[f"vr_{q}"].debiased == pytest.approx(variance_ratio(r, day, q))
    assert rows["vr_60"].value < 0.90 and rows["vr_60"].in_range
    assert rows["vr_60"].debiased == pytest.approx(1.0, abs=0.1)
    assert rows["sigma_midday_pct"].debiased is None
    table = calibration_table(frame)
    assert f"{rows['vr_60'].debiased:.4g}" in table.text() and "debiased" in table.text()
    assert table.as_dict()["rows"]["vr_60"]["debiased"] == rows["vr_60"].debiased


@pytest.mark.parametrize("phi", [0.3, -0.2])
def test_an_ar1_has_the_variance_ratio_of_its_autocorrelations(phi):
    rng = np.random.default_rng(1)
    returns = lfilter([1.0], [1.0, -phi], rng.standard_normal((300, 389)) * 0.0002, axis=1)
    r, _, day = session_returns(bars_from_returns(returns))
    for q in (5, 15):
        assert variance_ratio(r, day, q) == pytest.approx(ar1_variance_ratio(phi, q), rel=0.05)


def test_consecutive_block_correlation_of_a_worked_example():
    # Each session: 13 blocks of 30 returns; block k sums to +1 or -1 alternately, so consecutive blocks correlate -1.
    block_sums = np.where(np.arange(13) % 2 == 0, 1.0, -1.0) * 0.003
    returns = np.repeat(block_sums / 30.0, 30)[None, :].repeat(5, axis=0)[:, :389]
    r, minute, day = session_returns(bars_from_returns(returns))
    correlation, pairs = consecutive_block_correlation(r, minute, day, 30)
    assert pairs == 5 * 11  # the 13th block is one return short (389 returns a session): 12 full blocks, 11 pairs
    assert correlation == pytest.approx(-1.0, abs=1e-6)


def test_first_and_last_half_hour_correlation_finds_a_planted_link_and_none_in_noise():
    rng = np.random.default_rng(2)
    returns = rng.standard_normal((400, 389)) * 0.0002
    first = returns[:, :29].sum(axis=1)  # returns ending 09:31 .. 09:59
    returns[:, 359:] += 0.8 * first[:, None] / 30.0  # the 30 returns ending 15:30 .. 15:59
    planted, days = first_last_half_hour_correlation(bars_from_returns(returns))
    noise, _ = first_last_half_hour_correlation(bars_from_returns(rng.standard_normal((400, 389)) * 0.0002))
    assert days == 399 and planted > 0.4 and abs(noise) < 0.15


def test_gap_and_jump_frequencies_count_what_was_planted():
    rng = np.random.default_rng(3)
    days = 100
    gaps = np.where(np.arange(days) % 4 == 0, 0.01, 0.0001)  # every fourth open is 1 % away
    returns = rng.standard_normal((days, 389)) * 0.0002
    returns[:, 200] = 0.004  # a 20-sigma minute each session
    frame = bars_from_returns(returns, gaps)
    assert gap_frequency(frame) == pytest.approx(24 / 99)  # the first session has no prior close
    r, minute, day = session_returns(frame)
    assert jump_frequency(r, minute, day) == pytest.approx(1 / 389, abs=2e-4)


def test_calibration_table_gives_every_figure_a_band_a_value_and_a_verdict():
    rng = np.random.default_rng(4)
    table = calibration_table(bars_from_returns(rng.standard_normal((30, 389)) * 0.00025))
    assert [row.figure for row in table.rows] == list(REAL_NQ_RANGES)
    as_dict = table.as_dict()
    assert as_dict["sessions"] == 30 and as_dict["figures"] == len(REAL_NQ_RANGES)
    vr60 = as_dict["rows"]["vr_60"]
    assert vr60["in_range"] is False and vr60["low"] == 0.67 and vr60["measured"] is True  # a random walk does not revert
    assert as_dict["rows"]["sigma_midday_pct"]["in_range"] is True
    assert "variance ratio VR(60)" in table.text() and "NO" in table.text()
