"""Significance of a backtest: worked examples of what is hand-written (PSR, DSR, MinTRL, PBO, bootstrap means), and the
wiring of arch's SPA, reality check and StepM (a planted edge is found among noise; none on noise alone)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actors.jobs.evaluation.significance import (
    bootstrap_mean_interval, data_snooping_tests, deflated_sharpe, deflated_sharpe_from_trials, expected_max_sharpe,
    min_track_record_length, pbo_cscv, probabilistic_sharpe, psr_from_moments,
)


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


def test_pbo_is_zero_when_one_variant_is_better_in_every_period():
    noise = np.random.default_rng(1).normal(0.0, 1.0, (320, 9))
    best = noise.max(axis=1, keepdims=True) + 0.5
    result = pbo_cscv(np.hstack([noise[:, :4], best, noise[:, 4:]]), n_splits=8)
    assert result["n_combinations"] == math.comb(8, 4)
    assert len(result["logits"]) == 70 and np.all(result["logits"] > 0)
    assert result["pbo"] == 0.0


def test_pbo_of_pure_noise_variants_is_near_one_half():
    pbos = [pbo_cscv(np.random.default_rng(seed).normal(0.0, 1.0, (320, 10)), n_splits=8)["pbo"] for seed in range(30)]
    assert np.mean(pbos) == pytest.approx(0.5, abs=0.15)


def test_pbo_samples_a_seeded_subset_when_there_are_too_many_combinations():
    matrix = np.random.default_rng(2).normal(0.0, 1.0, (160, 6))
    first = pbo_cscv(matrix, n_splits=16, max_combinations=300, seed=4)
    again = pbo_cscv(matrix, n_splits=16, max_combinations=300, seed=4)
    assert first["n_combinations"] == 300 and len(first["logits"]) == 300
    assert np.array_equal(first["logits"], again["logits"])


@pytest.mark.parametrize("shape,n_splits,message", [
    ((10, 5), 16, "at least n_splits=16 rows"),
    ((100, 1), 8, "at least 2 variants"),
    ((100,), 8, "at least 2 variants"),
    ((100, 5), 7, "even n_splits"),
])
def test_pbo_rejects_too_few_rows_or_variants_and_odd_splits(shape, n_splits, message):
    with pytest.raises(ValueError, match=message):
        pbo_cscv(np.zeros(shape), n_splits=n_splits)


def _noise_candidates(rng, days: int, count: int, scale: float = 100.0) -> dict[str, np.ndarray]:
    return {f"noise_{k}": rng.normal(0.0, scale, days) for k in range(count)}


def test_a_planted_edge_among_noisy_candidates_is_found_and_named_by_stepm():
    rng = np.random.default_rng(7)
    days = 250
    benchmark = rng.normal(0.0, 100.0, days)
    candidates = _noise_candidates(rng, days, 8)
    candidates["planted"] = benchmark + 40.0 + rng.normal(0.0, 100.0, days)  # +$40 a day over the benchmark

    result = data_snooping_tests(candidates, benchmark, reps=500, seed=1)

    assert result["p_value_spa"] < 0.01 and result["p_value_reality_check"] < 0.05
    assert result["superior"] == ["planted"]  # StepM names the edge and none of the noise
    assert result["candidates"] == list(candidates)


def test_on_noise_alone_nothing_beats_the_benchmark():
    rng = np.random.default_rng(8)
    days = 250
    benchmark = rng.normal(0.0, 100.0, days)
    result = data_snooping_tests(_noise_candidates(rng, days, 9), benchmark, reps=500, seed=1)
    assert result["p_value_spa"] > 0.05 and result["p_value_reality_check"] > 0.05
    assert result["superior"] == []


def test_snooping_tests_compare_profits_not_losses():
    """arch ranks losses (lower is better); P&L must be negated on the way in, or a losing candidate would 'win'."""
    rng = np.random.default_rng(9)
    benchmark = np.zeros(200)
    noise = rng.normal(0.0, 100.0, 200)
    losing = data_snooping_tests({"loser": noise - 40.0}, benchmark, reps=300, seed=0)
    winning = data_snooping_tests({"winner": noise + 40.0}, benchmark, reps=300, seed=0)
    assert losing["p_value_spa"] > 0.2 and losing["superior"] == []
    assert winning["p_value_spa"] < 0.01 and winning["superior"] == ["winner"]


def test_snooping_tests_are_seeded_and_undefined_on_too_few_days():
    rng = np.random.default_rng(10)
    benchmark = rng.normal(0.0, 1.0, 60)
    candidates = {"a": benchmark + 0.1 + rng.normal(0.0, 1.0, 60)}
    assert data_snooping_tests(candidates, benchmark, reps=200, seed=3) == data_snooping_tests(candidates, benchmark, reps=200, seed=3)
    few = data_snooping_tests({"a": np.ones(9)}, np.zeros(9))
    assert math.isnan(few["p_value_spa"]) and few["superior"] == []


def test_a_candidate_identical_to_the_benchmark_does_not_beat_it():
    """A policy that never traded, against flat: nothing to bootstrap (arch alone says p = 0 for it)."""
    rng = np.random.default_rng(4)
    benchmark = np.zeros(60)
    alone = data_snooping_tests({"never_traded": np.zeros(60)}, benchmark, reps=200)
    beside = data_snooping_tests({"never_traded": np.zeros(60), "noise": rng.normal(0.0, 1.0, 60)}, benchmark, reps=200)
    assert alone["p_value_spa"] == 1.0 and alone["superior"] == []
    assert beside["p_value_spa"] > 0.05 and beside["superior"] == []


def test_stepm_that_finds_every_candidate_superior_over_two_rounds_names_them_all():
    """A strong candidate found in StepM's first round, a weaker one only once the strong one is set aside: arch 8.0's
    own loop then re-ran SPA on no candidate at all and raised (evaluate on realistic crashed there)."""
    rng = np.random.default_rng(6)
    benchmark = rng.normal(0.0, 100.0, 150)
    candidates = {"strong": benchmark + rng.normal(120.0, 100.0, 150), "weak": benchmark + rng.normal(25.0, 100.0, 150)}
    result = data_snooping_tests(candidates, benchmark, reps=300, seed=0)
    assert result["superior"] == ["strong", "weak"]
    assert result["p_value_spa"] < 0.05


def test_snooping_tests_reject_candidates_of_other_lengths():
    with pytest.raises(ValueError, match="10 days"):
        data_snooping_tests({"a": np.zeros(9)}, np.zeros(10))


def test_min_track_record_length_of_the_hedge_fund_example_matches_the_formula_by_hand():
    # Bailey & Lopez de Prado (2012), section 4: SR = 0.458 a month, skew -2.448, kurtosis 10.164, SR* = 0, p = 0.95:
    # MinTRL = 1 + 2.601753 * (1.644854 / 0.458)^2 = 1 + 2.601753 * 12.898458 = 34.558 months
    # (the paper's own figure for these moments, "about 2.88 years").
    from actors.jobs.evaluation import significance

    returns = np.zeros(10)
    original = significance._moments
    significance._moments = lambda _r: (0.458, -2.448, 10.164)
    try:
        assert min_track_record_length(returns) == pytest.approx(34.558, abs=0.01)
    finally:
        significance._moments = original


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
