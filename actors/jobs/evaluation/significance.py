"""Significance of a backtest: PSR, DSR, PBO by CSCV, White's reality check / Hansen's SPA, bootstrap means.

Plain numpy functions (no scipy, no ``arch``): the normal CDF and its inverse come from
``statistics.NormalDist``. Sharpe ratios here are per period (per day for daily P&L), never
annualised, and use the sample standard deviation (ddof=1).

NaN means "undefined" (too few observations, no variance); callers show it as n/a.
"""

from __future__ import annotations

import math
from itertools import combinations
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()
EULER_GAMMA = 0.5772156649015329
"""The Euler-Mascheroni constant."""
_BOOTSTRAP_CELLS = 4_000_000
"""Draws x observations x columns held in memory at once by the stationary bootstrap."""


def psr_from_moments(sr: float, skew: float, kurtosis: float, n: int, benchmark: float = 0.0) -> float:
    """Probabilistic Sharpe ratio from the moments, Bailey & Lopez de Prado (2012), "The Sharpe Ratio
    Efficient Frontier", eq. (8):

        PSR(SR*) = Phi( (SR - SR*) sqrt(n - 1) / sqrt(1 - g3 SR + (g4 - 1) / 4 SR^2) )

    ``sr`` per period (not annualised), ``skew`` = g3, ``kurtosis`` = g4 non-excess (3 for a normal),
    ``n`` the number of returns. NaN (undefined) for n < 3 or a non-positive variance term.
    """
    denominator = 1.0 - skew * sr + (kurtosis - 1.0) / 4.0 * sr * sr
    if n < 3 or not denominator > 0:
        return float("nan")
    return _NORMAL.cdf((sr - benchmark) * math.sqrt(n - 1) / math.sqrt(denominator))


def _moments(returns: np.ndarray) -> tuple[float, float, float] | None:
    """(Sharpe with ddof=1, skewness, non-excess kurtosis), or None when undefined."""
    r = np.asarray(returns, dtype=np.float64)
    if len(r) < 3 or not np.all(np.isfinite(r)):
        return None
    std = r.std(ddof=1)
    if std <= 1e-12 * max(float(np.abs(r).max()), 1e-300):
        return None
    centred = r - r.mean()
    m2 = np.mean(centred**2)
    return float(r.mean() / std), float(np.mean(centred**3) / m2**1.5), float(np.mean(centred**4) / m2**2)


def probabilistic_sharpe(returns: np.ndarray, benchmark_sr: float = 0.0) -> float:
    """Probability that the true per-period Sharpe ratio exceeds ``benchmark_sr``, Bailey & Lopez de Prado
    (2012), "The Sharpe Ratio Efficient Frontier", eq. (8) (see ``psr_from_moments``), with SR = mean / std
    (ddof=1), g3 the sample skewness and g4 the sample (non-excess) kurtosis of ``returns``.

    NaN means undefined: fewer than 3 returns, a non-finite return, or zero variance; callers show n/a.
    """
    moments = _moments(returns)
    return float("nan") if moments is None else psr_from_moments(*moments, len(returns), benchmark_sr)


def expected_max_sharpe(n_trials: int, sr_variance: float) -> float:
    """Expected maximum Sharpe ratio of ``n_trials`` unskilled trials, Bailey & Lopez de Prado (2014),
    "The Deflated Sharpe Ratio", eq. (2) (false strategy theorem, with E[SR] = 0):

        E[max SR] ~ sqrt(V) ((1 - gamma) Phi^-1(1 - 1/N) + gamma Phi^-1(1 - 1/(N e)))

    gamma the Euler-Mascheroni constant, V the variance of the trials' per-period Sharpe ratios.
    0 for a single trial (nothing was selected) or no variance.
    """
    if n_trials <= 1 or not sr_variance > 0:
        return 0.0
    return math.sqrt(sr_variance) * ((1 - EULER_GAMMA) * _NORMAL.inv_cdf(1 - 1 / n_trials)
                                     + EULER_GAMMA * _NORMAL.inv_cdf(1 - 1 / (n_trials * math.e)))


def deflated_sharpe(returns: np.ndarray, n_trials: int, sr_variance: float) -> float:
    """Deflated Sharpe ratio, Bailey & Lopez de Prado (2014), "The Deflated Sharpe Ratio", eq. (1):
    DSR = PSR(SR*) with SR* = ``expected_max_sharpe(n_trials, sr_variance)``: the probability that the
    selected strategy's Sharpe ratio beats the best of ``n_trials`` unskilled trials. NaN when the PSR is.
    """
    return probabilistic_sharpe(returns, expected_max_sharpe(n_trials, sr_variance))


def deflated_sharpe_from_trials(returns: np.ndarray, trial_sharpes) -> float:
    """``deflated_sharpe`` with N = len(trial_sharpes) and V = var(trial_sharpes, ddof=1).

    ``trial_sharpes`` are per-period (not annualised) Sharpe ratios and must include EVERY variant and seed
    that was tried, the selected one among them: leaving trials out deflates too little.
    """
    trials = np.asarray(trial_sharpes, dtype=np.float64)
    variance = float(trials.var(ddof=1)) if len(trials) > 1 else 0.0
    return deflated_sharpe(returns, len(trials), variance)


def pbo_cscv(performance: np.ndarray, n_splits: int = 16, max_combinations: int = 2000, seed: int = 0) -> dict:
    """Probability of backtest overfitting by combinatorially symmetric cross-validation, Bailey, Borwein,
    Lopez de Prado & Zhu (2017), "The Probability of Backtest Overfitting", section 2.

    ``performance`` is [T, N]: T periods (rows, in time order) of N variants (columns). The rows are cut
    into ``n_splits`` = S even groups (the last T mod S rows are dropped). For each choice of S/2 groups as
    in-sample (the rest out-of-sample) the in-sample best column by Sharpe (mean / std) is ranked out of
    sample, rank 1 = worst .. N = best (ties share their mid-rank); w = rank / (N + 1) and the logit is
    lambda = ln(w / (1 - w)). PBO = the share of combinations with lambda <= 0 (the in-sample winner at
    or below the out-of-sample median).

    C(S, S/2) combinations when that is at most ``max_combinations``; otherwise ``max_combinations``
    distinct ones drawn with ``np.random.default_rng(seed)`` (C(16, 8) = 12870 > 2000: sampled).
    Returns {"pbo", "n_combinations", "logits"}. Raises ValueError for N < 2, an odd S or T < S.
    """
    matrix = np.asarray(performance, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise ValueError(f"PBO needs a [T, N] matrix with at least 2 variants (columns), got shape {matrix.shape}")
    if n_splits < 2 or n_splits % 2:
        raise ValueError(f"PBO needs an even n_splits >= 2, got {n_splits}")
    if matrix.shape[0] < n_splits:
        raise ValueError(f"PBO needs at least n_splits={n_splits} rows (periods), got {matrix.shape[0]}")
    groups = np.array_split(np.arange(matrix.shape[0] // n_splits * n_splits), n_splits)
    half = n_splits // 2
    if math.comb(n_splits, half) <= max_combinations:
        combos = list(combinations(range(n_splits), half))
    else:
        rng = np.random.default_rng(seed)
        drawn: dict[tuple[int, ...], None] = {}
        while len(drawn) < max_combinations:
            drawn[tuple(sorted(int(g) for g in rng.choice(n_splits, half, replace=False)))] = None
        combos = list(drawn)
    n = matrix.shape[1]
    logits = np.empty(len(combos))
    for i, in_sample in enumerate(combos):
        rows_in = np.concatenate([groups[g] for g in in_sample])
        rows_out = np.concatenate([groups[g] for g in range(n_splits) if g not in in_sample])
        best = int(np.argmax(_sharpe_columns(matrix[rows_in])))
        out = _sharpe_columns(matrix[rows_out])
        rank = float((out < out[best]).sum()) + ((out == out[best]).sum() + 1) / 2
        w = rank / (n + 1)
        logits[i] = math.log(w / (1 - w))
    return {"pbo": float((logits <= 0).mean()), "n_combinations": len(combos), "logits": logits}


def _sharpe_columns(block: np.ndarray) -> np.ndarray:
    """Per-column mean / std (ddof=1); 0 where a column has no variance or a single row."""
    if block.shape[0] < 2:
        return np.zeros(block.shape[1])
    std = block.std(axis=0, ddof=1)
    return np.divide(block.mean(axis=0), std, out=np.zeros(block.shape[1]), where=std > 1e-15)


def _stationary_bootstrap_indices(n: int, block_length: float, rng: np.random.Generator, draws: int) -> np.ndarray:
    """Politis & Romano (1994), "The Stationary Bootstrap": [draws, n] indices in blocks that start at a
    uniform position and have geometric length with mean ``block_length``, wrapping around the end."""
    t = np.arange(n)
    restart = rng.random((draws, n)) < 1.0 / block_length
    restart[:, 0] = True
    fresh = rng.integers(0, n, (draws, n))
    block_start = np.maximum.accumulate(np.where(restart, t, 0), axis=1)
    return (np.take_along_axis(fresh, block_start, axis=1) + t - block_start) % n


def _bootstrap_means(d: np.ndarray, n_bootstrap: int, block_length: float, rng: np.random.Generator) -> np.ndarray:
    """[n_bootstrap, K] column means of stationary-bootstrap resamples of the rows of ``d`` [T, K]."""
    n, k = d.shape
    chunk = max(1, _BOOTSTRAP_CELLS // (n * k))
    means = np.empty((n_bootstrap, k))
    for start in range(0, n_bootstrap, chunk):
        stop = min(start + chunk, n_bootstrap)
        means[start:stop] = d[_stationary_bootstrap_indices(n, block_length, rng, stop - start)].mean(axis=1)
    return means


def reality_check(candidate: np.ndarray, benchmark: np.ndarray, n_bootstrap: int = 1000, block_length: float = 5.0,
                  seed: int = 0) -> dict:
    """p-values of H0 "no candidate beats the benchmark" (higher is better, e.g. daily P&L), by the
    stationary bootstrap (Politis & Romano 1994, mean block length ``block_length``) of d_k = candidate_k -
    benchmark, ``candidate`` [T, K] (or [T]) and ``benchmark`` [T]:

    - White (2000), "A Reality Check for Data Snooping": V = max_k sqrt(T) mean(d_k), compared with
      V*_b = max_k sqrt(T) (mean(d*_k,b) - mean(d_k)); p_value_rc = share of V*_b >= V.
    - Hansen (2005), "A Test for Superior Predictive Ability", the consistent p-value: studentised
      T_SPA = max(max_k sqrt(T) mean(d_k) / omega_k, 0), omega_k^2 = the bootstrap variance of
      sqrt(T) mean(d*_k) (Hansen's bootstrap estimator); the resamples are re-centred at
      mu_k = mean(d_k) 1{sqrt(T) mean(d_k) / omega_k <= -sqrt(2 log log T)}, so a clearly poor candidate
      keeps its negative mean and no longer inflates the null distribution; p_value_spa = share of
      max(max_k sqrt(T) (mean(d*_k,b) - mean(d_k) + mu_k) / omega_k, 0) >= T_SPA.

    Returns {"p_value_rc", "p_value_spa", "statistic"} (statistic = White's V); all NaN when T < 4.
    """
    candidate = np.asarray(candidate, dtype=np.float64)
    if candidate.ndim == 1:
        candidate = candidate[:, None]
    benchmark = np.asarray(benchmark, dtype=np.float64).reshape(-1)
    if candidate.ndim != 2 or candidate.shape[0] != benchmark.shape[0]:
        raise ValueError(f"reality_check needs candidate [T, K] and benchmark [T], got {candidate.shape} and {benchmark.shape}")
    if block_length < 1:
        raise ValueError(f"reality_check needs block_length >= 1, got {block_length}")
    d = candidate - benchmark[:, None]
    n = d.shape[0]
    if n < 4:
        return {"p_value_rc": float("nan"), "p_value_spa": float("nan"), "statistic": float("nan")}
    root_n = math.sqrt(n)
    mean = d.mean(axis=0)
    centred_draws = root_n * (_bootstrap_means(d, n_bootstrap, block_length, np.random.default_rng(seed)) - mean)
    stat_rc = float(np.max(root_n * mean))
    p_rc = float((centred_draws.max(axis=1) >= stat_rc).mean())
    omega = np.sqrt(np.mean(centred_draws**2, axis=0))
    omega = np.where(omega > 1e-15, omega, 1.0)
    threshold = -math.sqrt(2 * math.log(math.log(n)))  # n >= 4: log log n > 0
    keep = np.where(root_n * mean / omega <= threshold, mean, 0.0)
    stat_spa = max(float(np.max(root_n * mean / omega)), 0.0)
    spa_draws = np.maximum(((centred_draws + root_n * keep) / omega).max(axis=1), 0.0)
    return {"p_value_rc": p_rc, "p_value_spa": float((spa_draws >= stat_spa).mean()), "statistic": stat_rc}


def bootstrap_mean_interval(values, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, Efron (1979) / Efron & Tibshirani (1993), ch. 13: the
    (1 - c)/2 and (1 + c)/2 quantiles of the means of ``n_resamples`` iid resamples (with replacement),
    seeded. Meant for small per-fold samples, where it is only approximate (it runs narrow for n < ~10).
    (NaN, NaN) when there are fewer than 2 values.
    """
    data = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(data) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(n_resamples, len(data)))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
