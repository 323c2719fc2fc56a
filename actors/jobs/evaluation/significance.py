"""Significance of a backtest: PSR, DSR, MinTRL, PBO by CSCV, bootstrap means, and SPA / StepM / the reality check.

Hansen's SPA, the Romano-Wolf step-down (StepM) and White's reality check come from ``arch.bootstrap``
(``data_snooping_tests``). PSR, DSR, the minimum track record length and PBO are not in arch (nor in
scipy or statsmodels) and stay here as plain numpy, each tested on a worked example
(tests/actors/jobs/evaluation/test_significance.py); the normal CDF and its inverse come from
``statistics.NormalDist``. Sharpe ratios here are per period (per day for daily P&L), never
annualised, and use the sample standard deviation (ddof=1).

NaN means "undefined" (too few observations, no variance); callers show it as n/a.
"""

from __future__ import annotations

import math
from itertools import combinations
from statistics import NormalDist

import numpy as np
import pandas as pd

_NORMAL = NormalDist()
EULER_GAMMA = 0.5772156649015329
"""The Euler-Mascheroni constant."""


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


def min_track_record_length(returns: np.ndarray, benchmark_sr: float = 0.0, probability: float = 0.95) -> float:
    """Minimum track record length, Bailey & Lopez de Prado (2012), "The Sharpe Ratio Efficient Frontier", eq. (11):
    how many returns the observed Sharpe ratio (with the observed skewness and kurtosis) needs before
    PSR(``benchmark_sr``) reaches ``probability``:

        MinTRL = 1 + (1 - g3 SR + (g4 - 1) / 4 SR^2) (Phi^-1(p) / (SR - SR*))^2

    inf when SR <= SR* (no number of days makes it significant), NaN when the moments are undefined.
    """
    moments = _moments(returns)
    if moments is None:
        return float("nan")
    sr, skew, kurtosis = moments
    if sr <= benchmark_sr:
        return float("inf")
    variance_term = 1.0 - skew * sr + (kurtosis - 1.0) / 4.0 * sr * sr
    return 1.0 + variance_term * (_NORMAL.inv_cdf(probability) / (sr - benchmark_sr)) ** 2


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


def data_snooping_tests(candidates: dict[str, np.ndarray], benchmark: np.ndarray, *, reps: int = 1000,
                        block_size: int | None = None, size: float = 0.05, seed: int = 0, label_horizon: int = 1) -> dict:
    """Does any candidate beat the benchmark, once every candidate tried is counted, and which ones do?

    ``candidates`` {name: [T] daily P&L} and ``benchmark`` [T] (higher is better) on the same days. From
    ``arch.bootstrap`` (Sheppard's implementations, stationary bootstrap of Politis & Romano 1994, mean block
    ``block_size``, arch's default int(sqrt(T)) when None), all seeded with ``seed``:

    - ``p_value_spa``: Hansen (2005) "A Test for Superior Predictive Ability", the consistent p-value of H0 "no
      candidate beats the benchmark" (studentised; a clearly poor candidate does not dilute it);
      ``p_value_spa_lower`` / ``p_value_spa_upper`` its bounds.
    - ``p_value_reality_check``: White (2000) "A Reality Check for Data Snooping" (not studentised, every candidate
      re-centred at 0: arch's ``RealityCheck`` upper p-value).
    - ``superior``: Romano & Wolf (2005) "Stepwise Multiple Testing as Formalized Data Snooping" (``StepM``), the
      candidates that beat the benchmark at family-wise level ``size``, in the order given.

    ``label_horizon``: each value is the outcome of a label that looks this many periods ahead (a 60-bar hindsight
    label: 60; daily P&L: 1), so values closer than that share their future and are not independent: the mean block
    is then at least the horizon (None takes max(int(sqrt(T)), label_horizon)), and a ``block_size`` shorter than it
    raises ValueError (it would resample overlapping labels as if they were independent: optimistic p-values).
    ``block_size`` in the result is the mean block used.

    NaN p-values and no superior candidate when there are fewer than 10 days (too few for a block bootstrap). A
    candidate that differs from the benchmark by a constant is left out of the tests (it is in ``candidates``).
    """
    if label_horizon < 1:
        raise ValueError(f"data_snooping_tests: label_horizon must be >= 1 period, got {label_horizon}")
    if block_size is not None and block_size < label_horizon:
        raise ValueError(f"data_snooping_tests: a mean block of {block_size} is shorter than the labels' horizon of "
                         f"{label_horizon} periods: neighbouring values share their future; use a block >= {label_horizon}")
    from arch.bootstrap import SPA, RealityCheck

    names = list(candidates)
    bench = np.asarray(benchmark, dtype=np.float64).reshape(-1)
    table = np.column_stack([np.asarray(candidates[name], dtype=np.float64).reshape(-1) for name in names]) if names else None
    if table is None or table.shape[0] != len(bench):
        raise ValueError(f"data_snooping_tests needs candidates of {len(bench)} days each, got "
                         f"{[len(np.asarray(candidates[n]).reshape(-1)) for n in names]}")
    block_size = block_size if block_size is not None else max(int(np.sqrt(len(bench))), label_horizon)
    nan = float("nan")
    if len(bench) < 10:
        return {"p_value_spa": nan, "p_value_spa_lower": nan, "p_value_spa_upper": nan, "p_value_reality_check": nan,
                "superior": [], "candidates": names, "days": len(bench), "block_size": block_size}
    # A candidate that differs from the benchmark by a constant (a policy that never traded, against flat) has nothing
    # to bootstrap, and arch then reports p = 0 for it: such a candidate is left out, and with none left H0 stands.
    varies = (table - bench[:, None]).std(axis=0) > 1e-12
    if not varies.any():
        return {"p_value_spa": 1.0, "p_value_spa_lower": 1.0, "p_value_spa_upper": 1.0, "p_value_reality_check": 1.0,
                "superior": [], "candidates": names, "days": len(bench), "block_size": block_size}
    losses = pd.DataFrame(-table[:, varies], columns=[name for name, keep in zip(names, varies) if keep])  # arch compares
    # losses (lower is better): a loss is minus the P&L
    options = {"block_size": block_size, "reps": reps, "bootstrap": "stationary"}
    spa = SPA(-bench, losses, seed=seed, **options)
    spa.compute()
    white = RealityCheck(-bench, losses, studentize=False, seed=seed, **options)
    white.compute()
    stepm = _step_m_class()(-bench, losses, size=size, seed=seed, **options)
    stepm.compute()
    superior = set(stepm.superior_models)
    return {"p_value_spa": float(spa.pvalues["consistent"]), "p_value_spa_lower": float(spa.pvalues["lower"]),
            "p_value_spa_upper": float(spa.pvalues["upper"]), "p_value_reality_check": float(white.pvalues["upper"]),
            "superior": [name for name in names if name in superior], "candidates": names, "days": len(bench),
            "block_size": block_size}


def _step_m_class():
    """arch's StepM with its step-down loop ending when every candidate is found superior.

    arch 8.0's ``StepM.compute`` loops while the *last* round found some (fewer than all), not while some are left:
    when two rounds between them find every candidate superior (a strong one, then the rest), it re-runs SPA on an
    empty set and numpy raises "zero-size array to reduction operation maximum" (evaluate on realistic crashed
    there after all its cells, 2026-11-29). The same algorithm (Romano & Wolf 2005, arch's code) with the loop's
    condition on what is left.
    """
    from arch.bootstrap import StepM

    class _StepM(StepM):
        def compute(self) -> None:
            self.spa.compute()
            better = [int(i) for i in self.spa.better_models(self.size)]
            found = better[:]
            while better and len(found) < self.k:
                selector = np.ones(self.k, dtype=np.bool_)
                selector[np.array(found)] = False
                self.spa.subset(selector)
                self.spa.compute()
                better = [int(i) for i in self.spa.better_models(self.size)]
                found.extend(better)
            self.spa.subset(np.ones(self.k, dtype=np.bool_))
            self._superior_models = sorted(found)

    return _StepM


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
