"""The evaluation's figures (actors/common/statistics.py), each against a published worked example where there is one:
Lo (2002) for the Sharpe ratio's standard error, Bailey & Lopez de Prado (2012) for PSR and MinTRL, (2014) for DSR,
Newcombe (1998) for the Wilson interval; and the bootstraps' draws (iid as the reports always drew, seeded blocks)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from actors.common import statistics
from actors.common.statistics import (
    TRADING_DAYS_PER_YEAR, bootstrap_indices, bootstrap_interval, bootstrap_mean_interval, deflated_sharpe,
    deflated_sharpe_from_trials, expected_max_sharpe, min_track_record_length, per_draw, probabilistic_sharpe,
    psr_from_moments, sharpe_interval, sharpe_ratio, sharpe_standard_error, sortino_ratio, wilson_interval,
)


def test_sharpe_and_sortino_match_the_hand_computed_daily_series():
    # Daily returns 1%, -1%, 2%: mean 1/150; sample std sqrt(7/30000); Sharpe = 4 x sqrt(3) = 6.9282 annualised.
    # Downside deviation sqrt(0.0001 / 3) = 0.0057735; Sortino = sqrt(3)/1.5 x sqrt(252) = 18.3303.
    daily = np.array([0.01, -0.01, 0.02])
    assert sharpe_ratio(daily, TRADING_DAYS_PER_YEAR) == pytest.approx(6.9282, abs=1e-4)
    assert sharpe_ratio(daily) == pytest.approx(6.9282 / math.sqrt(252), abs=1e-6)  # per period
    assert sortino_ratio(daily, TRADING_DAYS_PER_YEAR) == pytest.approx(18.3303, abs=1e-4)
    assert sharpe_ratio(daily, ddof=0) == pytest.approx(daily.mean() / daily.std())


def test_sharpe_without_spread_or_with_too_few_values_is_what_the_caller_asks():
    assert sharpe_ratio(np.zeros(10)) == 0.0 and math.isnan(sharpe_ratio(np.zeros(10), no_spread=float("nan")))
    assert sharpe_ratio(np.full(5, 0.1)) == 0.0  # a constant's rounding noise is no spread
    assert math.isnan(sharpe_ratio(np.array([0.01]))) and sharpe_ratio(np.array([0.01]), too_few=0.0) == 0.0
    assert sharpe_ratio(np.array([0.01]), ddof=0) == 0.0  # one value has a (zero) population deviation
    assert sortino_ratio(np.full(5, 0.01)) == 0.0 and math.isnan(sortino_ratio(np.array([0.01])))
    assert sortino_ratio(np.array([-0.01]), min_periods=1) == -1.0


def test_sharpe_along_an_axis_is_the_sharpe_of_each_row():
    rows = np.random.default_rng(1).normal(0.001, 0.01, (5, 40))
    rows[2] = 0.0
    each = [sharpe_ratio(row, TRADING_DAYS_PER_YEAR) for row in rows]
    assert sharpe_ratio(rows, TRADING_DAYS_PER_YEAR, axis=1) == pytest.approx(each, rel=1e-12)
    assert sharpe_ratio(rows.T, axis=0) == pytest.approx([sharpe_ratio(row) for row in rows], rel=1e-12)
    assert list(sharpe_ratio(rows[:, :1], axis=1, too_few=0.0)) == [0.0] * 5


def test_the_sharpe_standard_error_is_los_iid_formula_and_matches_a_simulation():
    # Lo (2002), "The Statistics of Sharpe Ratios", eq. (9): SE = sqrt((1 + SR^2 / 2) / T); SR 0.1 a day over
    # T = 250 days: sqrt(1.005 / 250) = 0.063403.
    assert sharpe_standard_error(0.1, 250) == pytest.approx(0.063403, abs=1e-6)
    estimates = sharpe_ratio(np.random.default_rng(2).normal(0.1, 1.0, (4000, 250)), axis=1)
    assert estimates.std() == pytest.approx(0.063403, rel=0.05)


def test_the_sharpe_interval_is_the_estimate_plus_minus_196_standard_errors_annualised():
    daily = np.random.default_rng(3).normal(50.0, 400.0, 120)
    sr = daily.mean() / daily.std(ddof=1)
    half = 1.96 * math.sqrt((1 + sr**2 / 2) / 120)
    scale = math.sqrt(252)
    assert sharpe_interval(daily, TRADING_DAYS_PER_YEAR) == pytest.approx((sr * scale, (sr - half) * scale, (sr + half) * scale))
    assert sharpe_interval(np.zeros(30), no_spread=0.0) == (0.0, 0.0, 0.0)
    assert all(math.isnan(v) for v in sharpe_interval(np.array([1.0])))


@pytest.mark.parametrize("successes,n,low,high", [
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3 (Wilson score).
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_the_wilson_interval_reproduces_newcombes_table(successes, n, low, high):
    assert wilson_interval(successes, n) == pytest.approx((low, high), abs=1e-4)
    exact = scipy_stats.binomtest(successes, n).proportion_ci(0.95, method="wilson")  # z = 1.95996: within 1e-4
    assert wilson_interval(successes, n) == pytest.approx((exact.low, exact.high), abs=1e-4)


def test_the_wilson_interval_is_undefined_without_trials_and_stays_inside_zero_one():
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0


def test_psr_of_the_hedge_fund_example_matches_the_formula_by_hand():
    # Bailey & Lopez de Prado (2012): monthly returns, annual SR 1.59 -> SR = 0.458 per month, n = 24,
    # skew -2.448, kurtosis 10.164, SR* = 0.
    # variance term: 1 - (-2.448)(0.458) + (10.164 - 1)/4 * 0.458^2 = 1 + 1.121184 + 0.480569 = 2.601753
    # z = 0.458 * sqrt(23) / sqrt(2.601753) = 2.196491 / 1.612995 = 1.361747;  Phi(1.361747) = 0.91336
    assert psr_from_moments(0.458, -2.448, 10.164, 24, 0.0) == pytest.approx(0.91336, abs=1e-4)


def test_psr_matches_the_mlfinlab_example_with_normal_moments():
    # SR 1.14 against SR* 1, n = 250, skew 0, kurtosis 3:
    # z = 0.14 * sqrt(249) / sqrt(1 + 2/4 * 1.14^2) = 2.209162 / 1.284445 = 1.719934;  Phi(z) = 0.95728
    assert psr_from_moments(1.14, 0.0, 3.0, 250, 1.0) == pytest.approx(0.95728, abs=1e-4)


def test_psr_of_returns_uses_their_sample_moments():
    rng = np.random.default_rng(11)
    returns = rng.standard_t(5, 120) * 0.01 + 0.002
    centred = returns - returns.mean()
    m2 = np.mean(centred**2)
    sr = returns.mean() / returns.std(ddof=1)
    expected = psr_from_moments(sr, np.mean(centred**3) / m2**1.5, np.mean(centred**4) / m2**2, 120, 0.05)
    assert probabilistic_sharpe(returns, 0.05) == pytest.approx(expected, rel=1e-12)


def test_psr_of_zero_sharpe_noise_is_a_coin_flip_on_average():
    rng = np.random.default_rng(7)
    psrs = [probabilistic_sharpe(rng.normal(0.0, 1.0, 250)) for _ in range(300)]
    assert np.mean(psrs) == pytest.approx(0.5, abs=0.05)


def test_psr_of_strongly_positive_returns_is_near_one():
    returns = np.random.default_rng(3).normal(0.5, 1.0, 250)
    assert probabilistic_sharpe(returns) > 0.999


@pytest.mark.parametrize("returns", [[], [0.01, 0.02], [0.01, 0.01, 0.01, 0.01], [0.1, 0.1, 0.1]])
def test_psr_is_undefined_for_too_few_returns_or_no_variance(returns):
    assert math.isnan(probabilistic_sharpe(np.array(returns)))


def test_expected_max_sharpe_is_zero_for_one_trial_and_grows_with_the_number_of_trials():
    assert expected_max_sharpe(1, 1.0) == 0.0
    values = [expected_max_sharpe(n, 1.0) for n in (2, 10, 100, 1000)]
    assert all(a < b for a, b in zip(values, values[1:]))


def test_expected_max_sharpe_of_a_hundred_unit_variance_trials_matches_the_closed_form():
    # (1 - 0.5772157) Phi^-1(1 - 1/100) + 0.5772157 Phi^-1(1 - 1/(100 e))
    #   = 0.4227843 * 2.3263479 + 0.5772157 * 2.6802104 = 0.983543 + 1.547060 = 2.5306
    assert expected_max_sharpe(100, 1.0) == pytest.approx(2.5306, abs=1e-3)
    assert expected_max_sharpe(100, 4.0) == pytest.approx(2 * 2.5306, abs=2e-3)  # scales with sqrt(V)


def test_dsr_reproduces_the_deflated_sharpe_paper_example():
    # Bailey & Lopez de Prado (2014): annual SR 2.5 on T = 1250 daily returns, skew -3, kurtosis 10,
    # N = 100 trials whose annual SRs have variance 0.5. Per day: SR = 2.5 / sqrt(250) = 0.158114,
    # V = 0.5 / 250, SR* = sqrt(0.002) * 2.5306 = 0.113172 (1.789 annual);
    # z = (0.158114 - 0.113172) sqrt(1249) / sqrt(1 + 3 * 0.158114 + 9/4 * 0.158114^2) = 1.2838; DSR = Phi(1.2838) = 0.9004
    sr = 2.5 / math.sqrt(250)
    benchmark = expected_max_sharpe(100, 0.5 / 250)
    assert benchmark * math.sqrt(250) == pytest.approx(1.7894, abs=1e-3)
    assert psr_from_moments(sr, -3.0, 10.0, 1250, benchmark) == pytest.approx(0.9004, abs=1e-3)


def test_dsr_is_below_psr_once_more_than_one_trial_was_run():
    returns = np.random.default_rng(5).normal(0.1, 1.0, 250)
    psr = probabilistic_sharpe(returns)
    assert deflated_sharpe(returns, 1, 0.01) == pytest.approx(psr)
    assert deflated_sharpe(returns, 20, 0.01) < psr
    assert deflated_sharpe(returns, 200, 0.01) < deflated_sharpe(returns, 20, 0.01)


def test_dsr_from_trials_uses_their_count_and_sample_variance():
    returns = np.random.default_rng(9).normal(0.1, 1.0, 250)
    trials = [0.02, 0.05, 0.1, -0.01, 0.07]
    expected = deflated_sharpe(returns, 5, float(np.var(trials, ddof=1)))
    assert deflated_sharpe_from_trials(returns, trials) == pytest.approx(expected)
    assert deflated_sharpe_from_trials(returns, trials) < probabilistic_sharpe(returns)




def test_min_track_record_length_of_the_hedge_fund_example_matches_the_formula_by_hand(monkeypatch):
    # Bailey & Lopez de Prado (2012), section 4: SR = 0.458 a month, skew -2.448, kurtosis 10.164, SR* = 0, p = 0.95:
    # MinTRL = 1 + 2.601753 * (1.644854 / 0.458)^2 = 1 + 2.601753 * 12.898458 = 34.558 months
    # (the paper's own figure for these moments, "about 2.88 years").
    monkeypatch.setattr(statistics, "_moments", lambda _r: (0.458, -2.448, 10.164))
    assert min_track_record_length(np.zeros(10)) == pytest.approx(34.558, abs=0.01)


def test_min_track_record_length_is_where_the_psr_reaches_the_probability():
    rng = np.random.default_rng(12)
    returns = rng.normal(0.1, 1.0, 400)
    days = min_track_record_length(returns, 0.0, 0.95)
    sr = returns.mean() / returns.std(ddof=1)
    centred = returns - returns.mean()
    m2 = np.mean(centred**2)
    moments = (sr, np.mean(centred**3) / m2**1.5, np.mean(centred**4) / m2**2)
    assert psr_from_moments(*moments, math.ceil(days), 0.0) >= 0.95 > psr_from_moments(*moments, math.floor(days) - 1, 0.0)
    assert min_track_record_length(-returns) == math.inf  # a Sharpe below the benchmark: never
    assert math.isnan(min_track_record_length(np.ones(50)))  # no variance: undefined


def test_bootstrap_mean_interval_brackets_the_mean_and_is_undefined_below_two_values():
    low, high = bootstrap_mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert 1.0 <= low < 3.0 < high <= 5.0
    assert bootstrap_mean_interval([1.0, 2.0, 3.0, 4.0, 5.0]) == (low, high)  # seeded
    assert all(math.isnan(v) for v in bootstrap_mean_interval([1.0]))
    assert all(math.isnan(v) for v in bootstrap_mean_interval([]))


def test_the_iid_bootstrap_draws_as_the_reports_always_drew():
    """Same seed, same figures: the indices are numpy's default_rng(seed).integers, the bounds its percentiles."""
    values = np.random.default_rng(4).normal(0.0, 1.0, 50)
    means = values[np.random.default_rng(9).integers(0, 50, size=(2000, 50))].mean(axis=1)
    expected = (np.percentile(means, (1 - 0.95) / 2 * 100), np.percentile(means, 100 - (1 - 0.95) / 2 * 100))
    assert bootstrap_mean_interval(values, seed=9) == expected
    assert bootstrap_interval(values, per_draw(np.mean), seed=9) == expected


def test_the_bootstrap_leaves_out_undefined_estimates():
    values = np.array([0.0, 0.0, 0.0, 1.0])
    low, high = bootstrap_interval(values, per_draw(lambda d: 1.0 / d.sum() if d.sum() else float("nan")))
    assert 0 < low <= high <= 1.0
    assert all(math.isnan(v) for v in bootstrap_interval(np.zeros(5), per_draw(lambda d: float("nan"))))


def test_a_stationary_bootstrap_keeps_neighbouring_rows_together():
    draws = bootstrap_indices(200, 300, seed=1, block_length=10.0)
    assert draws.shape == (300, 200)
    # A block ends with probability 1 / 10 at each row (Politis & Romano 1994): ~90 % of steps go to the next row.
    assert np.mean(np.diff(draws, axis=1) == 1) == pytest.approx(0.9, abs=0.02)
    assert np.array_equal(draws, bootstrap_indices(200, 300, seed=1, block_length=10.0))  # seeded
    moving = bootstrap_indices(200, 50, seed=1, block_length=8, blocks="moving")
    assert np.mean(np.diff(moving, axis=1) == 1) == pytest.approx(7 / 8, abs=0.02)


def test_a_block_bootstrap_widens_the_interval_of_a_dependent_series():
    """An AR(1) with phi 0.8: the iid bootstrap ignores the dependence and runs ~3x too narrow; blocks see it."""
    rng = np.random.default_rng(5)
    noise = rng.normal(0.0, 1.0, 400)
    series = np.zeros(400)
    for t in range(1, 400):
        series[t] = 0.8 * series[t - 1] + noise[t]
    iid_low, iid_high = bootstrap_mean_interval(series, n_resamples=500)
    block_low, block_high = bootstrap_mean_interval(series, n_resamples=500, block_length=20.0)
    assert (block_high - block_low) > 2.0 * (iid_high - iid_low)


@pytest.mark.parametrize("length,blocks,message", [(0.5, "stationary", "at least 1"), (5.0, "circular", "one of")])
def test_a_block_bootstrap_rejects_a_short_block_or_an_unknown_kind(length, blocks, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_indices(20, 10, seed=0, block_length=length, blocks=blocks)


@pytest.mark.parametrize("case,gross_profit,gross_loss,expected", [
    ("profit over loss", 300.0, 200.0, 1.5),
    ("a ratio past the cap", 1e6, 1.0, statistics.PROFIT_FACTOR_CAP),
    ("profit and no loss", 50.0, 0.0, statistics.PROFIT_FACTOR_CAP),
    ("loss and no profit", 0.0, 80.0, 0.0),
    ("no trades", 0.0, 0.0, 0.0),
])
def test_the_profit_factor_is_profit_over_loss_capped_where_there_is_no_loss(case, gross_profit, gross_loss, expected):
    assert statistics.profit_factor(gross_profit, gross_loss) == pytest.approx(expected)
