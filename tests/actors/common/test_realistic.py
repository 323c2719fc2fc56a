"""The realistic market: its figures sit in real NQ's bands, its planted edges are in its bars, its null twin has none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from actors.common.bar_files import load_bars
from actors.common.market_stats import REAL_NQ_RANGES, all_statistics, calibration_table
from actors.common.market_stats_multibar import first_last_half_hour_returns
from actors.common.realistic import (
    LAST_HALF_HOUR, generate_realistic, generate_scenario, realistic_pieces, realistic_returns, realistic_scenario,
)
from actors.common.synthetic import TREND_DOWN, TREND_UP, generate_market
from actors.env.config import DataConfig
from actors.common.markets import MarketRequest, make_market

ROOT = Path(__file__).resolve().parents[3]
TOO_NOISY_AT_80 = {"vr_60"}
"""The textbook VR(60) of 3 x 80 sessions swings 0.86-0.96 with the seeds (its mean over 3 x 500 sessions, 0.89, sits
just inside real NQ's 0.67-0.90: realistic.py REALISTIC); its direction is checked here, its band by the slow test."""
MEASURED_BANDS = ("vr_5", "vr_15", "vr_60", "corr_consecutive_60")


def fisher_interval(correlation: float, n: int) -> tuple[float, float]:
    half = 1.96 / np.sqrt(n - 3)
    return float(np.tanh(np.arctanh(correlation) - half)), float(np.tanh(np.arctanh(correlation) + half))


@pytest.fixture(scope="module")
def realistic_figures():
    """Each figure averaged over three seeds of 80 sessions."""
    figures = [all_statistics(generate_realistic(80, seed=seed, start_price=16_000.0).bars) for seed in range(3)]
    return {name: float(np.mean([f[name] for f in figures])) for name in figures[0]}


def test_realistic_figures_fall_in_real_nq_bands(realistic_figures):
    figures = realistic_figures
    scale = 16_000.0 / figures["price"]
    outside = {name: figures[name] * (scale if "points" in name else 1.0) for name, real in REAL_NQ_RANGES.items()
               if name not in TOO_NOISY_AT_80 and not real.holds(figures[name] * (scale if "points" in name else 1.0))}
    assert outside == {}
    # short continuation, then reversion: consecutive half hours move against each other, VR falls from 15 to 60 bars
    assert figures["vr_60"] < figures["vr_15"] - 0.1 and figures["corr_consecutive_30"] < -0.02


@pytest.mark.slow
def test_over_3_seeds_of_500_sessions_the_measured_figures_sit_in_real_nq_bands():
    """Issue 43's bands measured on real bars (VR(5), VR(15), VR(60) textbook, consecutive 60-bar correlation), as
    bin/bench market --days 500 --seeds 3 reads them: the mean over the seeds is in each band."""
    figures = [all_statistics(generate_realistic(500, seed=seed).bars) for seed in range(3)]
    means = {name: float(np.mean([f[name] for f in figures])) for name in MEASURED_BANDS}
    assert {name: value for name, value in means.items() if not REAL_NQ_RANGES[name].holds(value)} == {}
    # the textbook VR(60) is below the debiased one: the U-shaped volatility's bias the bands were measured with
    assert np.mean([f["vr_60"] for f in figures]) < np.mean([f["vr_60_debiased"] for f in figures]) - 0.05


def test_the_null_twin_has_the_same_volatility_gaps_jumps_and_volume_and_no_memory():
    realistic = realistic_pieces(30, 7, realistic_scenario("realistic"))
    null = realistic_pieces(30, 7, realistic_scenario("realistic_null"))
    assert np.array_equal(realistic.sigma, null.sigma) and np.array_equal(realistic.gaps, null.gaps)
    assert np.array_equal(realistic.jumps, null.jumps)
    bars = generate_realistic(30, seed=7).bars, generate_realistic(30, seed=7, market="realistic_null").bars
    assert np.array_equal(bars[0]["volume"], bars[1]["volume"])
    assert not np.array_equal(bars[0]["close"], bars[1]["close"])


@pytest.mark.slow
def test_realistic_null_shows_no_intraday_momentum_and_realistic_recovers_it_with_the_right_sign():
    days = 500
    null = all_statistics(generate_realistic(days, seed=11, market="realistic_null").bars)
    realistic = all_statistics(generate_realistic(days, seed=11).bars)
    low, high = fisher_interval(null["corr_first30_last30"], int(null["days_first30_last30"]))
    assert low < 0 < high
    low, _ = fisher_interval(realistic["corr_first30_last30"], int(realistic["days_first30_last30"]))
    assert low > 0


def test_the_planted_intraday_momentum_is_beta_times_the_first_half_hour():
    market = realistic_scenario("realistic", trend_day_sigmas=0.0)
    off = realistic_scenario("realistic", trend_day_sigmas=0.0, intraday_momentum_beta=0.0)
    pieces = realistic_pieces(40, 3, market)
    moved = realistic_returns(pieces, market)[:, LAST_HALF_HOUR].sum(axis=1) - realistic_returns(pieces, off)[:, LAST_HALF_HOUR].sum(axis=1)
    first = pieces.gaps + realistic_returns(pieces, off)[:, :30].sum(axis=1)
    assert np.allclose(moved, market.intraday_momentum_beta * first)


def test_a_callers_extra_drift_in_the_first_half_hour_feeds_the_intraday_momentum():
    market = realistic_scenario("realistic")
    pieces = realistic_pieces(5, 1, market)
    extra = np.zeros_like(pieces.sigma)
    extra[:, 10] = 0.01  # a news move at 09:40
    base, news = realistic_returns(pieces, market), realistic_returns(pieces, market, extra_drift=extra)
    assert np.allclose(news[:, 10] - base[:, 10], 0.01)
    assert np.allclose((news - base)[:, LAST_HALF_HOUR].sum(axis=1), market.intraday_momentum_beta * 0.01)


def test_the_hidden_regime_marks_the_planted_drift():
    """Bars the regime calls up rise on average, down ones fall, measured in bar sigmas; the null twin's marks mean nothing."""
    def drift_by_mark(name: str) -> tuple[float, float]:
        market = generate_realistic(120, seed=4, market=name)
        returns = np.diff(np.log(market.bars["close"].to_numpy()))
        regime = market.regime[1:]
        scale = returns.std()
        return float(returns[regime == TREND_UP].mean() / scale), float(returns[regime == TREND_DOWN].mean() / scale)

    up, down = drift_by_mark("realistic")
    assert up > 0.03 and down < -0.03
    null_up, null_down = drift_by_mark("realistic_null")
    assert abs(null_up) < 0.03 and abs(null_down) < 0.03


def test_generate_scenario_makes_every_scenario_and_leaves_regimes_and_null_as_they_were():
    for name in ("regimes", "null"):
        assert generate_scenario(5, seed=2, market=name).bars.equals(generate_market(5, seed=2, market=name).bars)
    assert generate_scenario(5, seed=2, market="realistic").bars.equals(generate_realistic(5, seed=2).bars)
    assert make_market("realistic", MarketRequest(5, seed=2, settings=DataConfig())).bars.equals(generate_realistic(5, seed=2).bars)


def test_bad_shares_are_refused_with_the_field_named():
    with pytest.raises(ValueError, match="continuation_share \\+ reversion_share"):
        realistic_scenario("realistic", reversion_share=0.95)
    with pytest.raises(ValueError, match="unknown realistic scenario 'real'"):
        realistic_scenario("real")


@pytest.mark.slow
def test_bin_run_paper_writes_the_realistic_market_and_the_file_reads_back_in_range(tmp_path):
    path = tmp_path / "realistic.csv"
    subprocess.run([sys.executable, "-m", "actors.jobs.cli", "paper", "--write-bars", str(path), "--days", "60",
                    "--set", 'data.scenario="realistic"'], cwd=ROOT, check=True, capture_output=True, timeout=300)
    frame, _ = load_bars(str(path), timezone="America/New_York")
    assert len(frame) == 60 * 390
    table = calibration_table(frame)
    rows = {row.figure: row for row in table.rows}
    for name in ("sigma_midday_pct", "range_midday_points", "vr_5", "corr_consecutive_60", "vol_first30_to_midday",
                 "volume_first30_to_midday", "gap_frequency"):
        assert rows[name].in_range, rows[name]
    first, last = first_last_half_hour_returns(frame)
    assert len(first) == 59
