"""Significance of a backtest: PSR, DSR, PBO by CSCV, White's reality check / Hansen's SPA, bootstrap means.

NaN means undefined (too few observations, no variance); callers show it as n/a.
"""

from __future__ import annotations

import math
from itertools import combinations
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()
EULER_GAMMA = 0.5772156649015329


def psr_from_moments(sr: float, skew: float, kurtosis: float, n: int, benchmark: float = 0.0) -> float:
    """Bailey & Lopez de Prado (2012): PSR = Phi((SR - SR*) sqrt(n - 1) / sqrt(1 - g3 SR + (g4 - 1) / 4 SR^2)),
    SR per period (not annualised), g4 the non-excess kurtosis (3 for a normal)."""
    denominator = 1.0 - skew * sr + (kurtosis - 1.0) / 4.0 * sr * sr
    if n < 3 or denominator <= 0:
        return float("nan")
    return _NORMAL.cdf((sr - benchmark) * math.sqrt(n - 1) / math.sqrt(denominator))


def _moments(returns: np.ndarray) -> tuple[float, float, float] | None:
    r = np.asarray(returns, dtype=np.float64)
    if len(r) < 3 or r.std(ddof=1) <= 1e-15:
        return None
    centred = r - r.mean()
    m2 = np.mean(centred**2)
    return float(r.mean() / r.std(ddof=1)), float(np.mean(centred**3) / m2**1.5), float(np.mean(centred**4) / m2**2)


def probabilistic_sharpe(returns: np.ndarray, benchmark_sr: float = 0.0) -> float:
    moments = _moments(returns)
    return float("nan") if moments is None else psr_from_moments(*moments, len(returns), benchmark_sr)


def expected_max_sharpe(n_trials: int, sr_variance: float) -> float:
    """Bailey & Lopez de Prado (2014): E[max SR] ~ sqrt(V) ((1 - gamma) Phi^-1(1 - 1/N) + gamma Phi^-1(1 - 1/(N e)))."""
    if n_trials <= 1 or sr_variance <= 0:
        return 0.0
    return math.sqrt(sr_variance) * ((1 - EULER_GAMMA) * _NORMAL.inv_cdf(1 - 1 / n_trials)
                                     + EULER_GAMMA * _NORMAL.inv_cdf(1 - 1 / (n_trials * math.e)))


def deflated_sharpe(returns: np.ndarray, n_trials: int, sr_variance: float) -> float:
    return probabilistic_sharpe(returns, expected_max_sharpe(n_trials, sr_variance))


def deflated_sharpe_from_trials(returns: np.ndarray, trial_sharpes) -> float:
    """DSR with N = every trial (variant and seed) tried and V = the variance of their per-period Sharpe ratios."""
    trials = np.asarray(trial_sharpes, dtype=np.float64)
    variance = float(trials.var(ddof=1)) if len(trials) > 1 else 0.0
    return deflated_sharpe(returns, len(trials), variance)


def pbo_cscv(performance: np.ndarray, n_splits: int = 16, max_combinations: int = 2000, seed: int = 0) -> dict:
    """Bailey, Borwein, Lopez de Prado & Zhu (2017): the share of CSCV splits where the in-sample best variant
    ranks at or below the median out of sample (logit <= 0). At most ``max_combinations`` splits (seeded sample)."""
    matrix = np.asarray(performance, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise ValueError("PBO needs a [T, N] matrix with at least 2 variants")
    if n_splits < 2 or n_splits % 2 or matrix.shape[0] < n_splits:
        raise ValueError(f"PBO needs an even n_splits >= 2 and at least that many rows, got {n_splits} splits for {matrix.shape[0]} rows")
    groups = np.array_split(np.arange(matrix.shape[0] // n_splits * n_splits), n_splits)
    combos = list(combinations(range(n_splits), n_splits // 2))
    if len(combos) > max_combinations:
        rng = np.random.default_rng(seed)
        combos = [combos[i] for i in rng.choice(len(combos), max_combinations, replace=False)]
    logits = []
    n = matrix.shape[1]
    for in_sample in combos:
        rows_in = np.concatenate([groups[g] for g in in_sample])
        rows_out = np.concatenate([groups[g] for g in range(n_splits) if g not in in_sample])
        best = int(np.argmax(_sharpe_columns(matrix[rows_in])))
        out = _sharpe_columns(matrix[rows_out])
        rank = float((out < out[best]).sum() + 1)
        w = rank / (n + 1)
        logits.append(math.log(w / (1 - w)))
    logits_array = np.array(logits)
    return {"pbo": float((logits_array <= 0).mean()), "n_combinations": len(combos), "logits": logits_array}


def _sharpe_columns(block: np.ndarray) -> np.ndarray:
    std = block.std(axis=0, ddof=1)
    return np.divide(block.mean(axis=0), std, out=np.zeros(block.shape[1]), where=std > 1e-15)


def _stationary_bootstrap_indices(n: int, block_length: float, rng: np.random.Generator) -> np.ndarray:
    """Politis & Romano (1994): blocks of geometric length (mean ``block_length``), wrapping around."""
    indices = np.empty(n, dtype=np.int64)
    indices[0] = rng.integers(n)
    restart = rng.random(n) < 1.0 / block_length
    fresh = rng.integers(0, n, n)
    for t in range(1, n):
        indices[t] = fresh[t] if restart[t] else (indices[t - 1] + 1) % n
    return indices


def reality_check(candidate: np.ndarray, benchmark: np.ndarray, n_bootstrap: int = 1000, block_length: float = 5.0,
                  seed: int = 0) -> dict:
    """White (2000) reality check and Hansen (2005) SPA p-values that no candidate column beats the benchmark
    (higher is better), by the stationary bootstrap of the differences."""
    candidate = np.asarray(candidate, dtype=np.float64)
    if candidate.ndim == 1:
        candidate = candidate[:, None]
    d = candidate - np.asarray(benchmark, dtype=np.float64)[:, None]
    n = d.shape[0]
    if n < 4:
        return {"p_value_rc": float("nan"), "p_value_spa": float("nan"), "statistic": float("nan")}
    mean = d.mean(axis=0)
    sigma = d.std(axis=0, ddof=1)
    sigma = np.where(sigma > 1e-15, sigma, 1.0)
    rng = np.random.default_rng(seed)
    # SPA re-centring: a clearly bad candidate (t below -sqrt(2 log log n)) keeps its negative mean.
    threshold = -math.sqrt(2 * math.log(max(math.log(n), 1.0 + 1e-9))) if n > 2 else -math.inf
    keep = np.where(math.sqrt(n) * mean / sigma <= threshold, mean, 0.0)
    stat_rc = float(np.max(math.sqrt(n) * mean))
    stat_spa = max(float(np.max(math.sqrt(n) * mean / sigma)), 0.0)
    rc_draws, spa_draws = np.empty(n_bootstrap), np.empty(n_bootstrap)
    for b in range(n_bootstrap):
        sample_mean = d[_stationary_bootstrap_indices(n, block_length, rng)].mean(axis=0)
        rc_draws[b] = np.max(math.sqrt(n) * (sample_mean - mean))
        spa_draws[b] = max(float(np.max(math.sqrt(n) * (sample_mean - mean + keep) / sigma)), 0.0)
    return {"p_value_rc": float((rc_draws >= stat_rc).mean()), "p_value_spa": float((spa_draws >= stat_spa).mean()),
            "statistic": stat_rc}


def bootstrap_mean_interval(values, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    data = np.asarray(values, dtype=np.float64)
    if len(data) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(n_resamples, len(data)))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
