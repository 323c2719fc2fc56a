"""Significance of a backtest across variants: PBO by CSCV, and SPA / StepM / the reality check.

Hansen's SPA, the Romano-Wolf step-down (StepM) and White's reality check come from ``arch.bootstrap``
(``data_snooping_tests``). PBO is not in arch (nor in scipy or statsmodels) and stays here as plain numpy, tested on
worked examples (tests/actors/jobs/evaluation/test_significance.py). The figures of one series (Sharpe, PSR, DSR,
MinTRL, bootstrap and Wilson intervals) are in actors/common/statistics.py.

NaN means "undefined" (too few observations, no variance); callers show it as n/a.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from actors.common.statistics import sharpe_ratio


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
        best = int(np.argmax(sharpe_ratio(matrix[rows_in], axis=0, too_few=0.0)))
        out = sharpe_ratio(matrix[rows_out], axis=0, too_few=0.0)
        rank = float((out < out[best]).sum()) + ((out == out[best]).sum() + 1) / 2
        w = rank / (n + 1)
        logits[i] = math.log(w / (1 - w))
    return {"pbo": float((logits <= 0).mean()), "n_combinations": len(combos), "logits": logits}


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
