"""The evaluation's figures, in one place: Sharpe and Sortino, their standard error, PSR, DSR, MinTRL, bootstrap
and Wilson intervals, the capped profit factor. Pure functions of arrays; every job and actor that reports one of these calls it from here.

Conventions:
- A Sharpe ratio is mean / standard deviation (ddof=1 unless the caller says otherwise) of per-period returns;
  ``periods_per_year`` annualises it by sqrt(periods): TRADING_DAYS_PER_YEAR for daily returns, 1 for the
  per-period ratio PSR, DSR and MinTRL work in.
- "No spread": a standard deviation at or below SPREAD_TOLERANCE x the largest |value| (a constant series, its
  rounding noise included). The ratio is then undefined; each caller says what it shows (``no_spread``: 0 for a
  policy that never traded, NaN where the report prints n/a).
- Intervals are two-sided at CONFIDENCE; NaN bounds mean undefined (fewer than two values, or no estimate).

Written here by hand, each checked against its published worked example (tests/actors/common/test_statistics.py):
the Sharpe ratio and its iid standard error (Lo 2002; scipy has neither), PSR / MinTRL (Bailey & Lopez de Prado 2012)
and DSR (Bailey & Lopez de Prado 2014), which no installed library has, and the Wilson interval at z = 1.96
(scipy's ``binomtest(...).proportion_ci("wilson")`` uses z = 1.95996..., which would move every reported bound in
its fourth decimal). The block bootstraps draw their indices from ``arch.bootstrap`` (Politis & Romano 1994's
stationary bootstrap, Kunsch 1989's moving blocks); the iid bootstrap draws with numpy's seeded generator as the
reports always have, so the same seed gives the same figures. The normal distribution comes from the standard
library's ``statistics.NormalDist``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

import numpy as np

TRADING_DAYS_PER_YEAR = 252
"""Trading days in a year: a daily Sharpe ratio is annualised by sqrt(252)."""
CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 2000
Z_95 = 1.96
"""The two-sided 95 % normal quantile, rounded as the textbooks' worked examples round it."""
SPREAD_TOLERANCE = 1e-12
"""A standard deviation at or below this share of the largest |value| is no spread (rounding noise)."""
BLOCK_KINDS = ("stationary", "moving")
"""Politis & Romano (1994)'s stationary bootstrap (geometric blocks), Kunsch (1989)'s moving blocks (fixed length)."""
EULER_GAMMA = 0.5772156649015329
"""The Euler-Mascheroni constant."""
PROFIT_FACTOR_CAP = 100.0
"""Profit factor with profit and no loss (JSON has no infinity)."""

_NORMAL = NormalDist()


def _no_spread(deviation, values: np.ndarray, axis: int):
    """True where ``deviation`` (of ``values`` along ``axis``) is rounding noise or zero."""
    return deviation <= SPREAD_TOLERANCE * np.abs(values).max(axis=axis)


def sharpe_ratio(returns, periods_per_year: float = 1, *, axis: int = -1, ddof: int = 1, no_spread: float = 0.0,
                 too_few: float = float("nan")):
    """mean / std(ddof) x sqrt(``periods_per_year``) along ``axis`` (a float for 1-D input, else an array);
    ``too_few`` with no more values than ``ddof`` (one, at ddof=1), ``no_spread`` where they do not vary."""
    values = np.asarray(returns, dtype=np.float64)
    if values.shape[axis] <= ddof:
        shape = tuple(np.delete(values.shape, axis if axis >= 0 else values.ndim + axis))
        return float(too_few) if values.ndim == 1 else np.full(shape, float(too_few))
    deviation = values.std(axis=axis, ddof=ddof)
    flat = _no_spread(deviation, values, axis)
    safe = np.where(flat, 1.0, deviation)
    ratio = np.where(flat, no_spread, values.mean(axis=axis) / safe * np.sqrt(periods_per_year))
    return float(ratio) if values.ndim == 1 else ratio


def sortino_ratio(returns, periods_per_year: float = 1, *, no_spread: float = 0.0, too_few: float = float("nan"),
                  min_periods: int = 2) -> float:
    """mean / downside deviation x sqrt(``periods_per_year``), downside deviation = sqrt(mean(min(r, 0)^2)) over
    every period (Sortino & Price 1994, target 0); ``too_few`` below ``min_periods`` values, ``no_spread`` with no loss."""
    values = np.asarray(returns, dtype=np.float64)
    if len(values) < max(min_periods, 1):
        return float(too_few)
    downside = float(np.sqrt(np.mean(np.minimum(values, 0.0) ** 2)))
    if _no_spread(downside, values, -1):
        return float(no_spread)
    return float(values.mean() / downside * np.sqrt(periods_per_year))


def sharpe_standard_error(sharpe_per_period: float, n: int) -> float:
    """Standard error of a per-period Sharpe ratio estimated on ``n`` iid normal returns, Lo (2002), "The Statistics
    of Sharpe Ratios", eq. (9): sqrt((1 + SR^2 / 2) / n)."""
    return math.sqrt((1.0 + sharpe_per_period**2 / 2.0) / n)


def sharpe_interval(returns, periods_per_year: float = 1, *, z: float = Z_95,
                    no_spread: float = float("nan")) -> tuple[float, float, float]:
    """(Sharpe, low, high), annualised by sqrt(``periods_per_year``), the interval SR +- z x Lo's iid standard error;
    all three ``no_spread`` with fewer than two values or no spread."""
    values = np.asarray(returns, dtype=np.float64)
    per_period = sharpe_ratio(values, no_spread=float("nan"), too_few=float("nan"))
    if not math.isfinite(per_period):
        return float(no_spread), float(no_spread), float(no_spread)
    error = sharpe_standard_error(per_period, len(values))
    scale = np.sqrt(periods_per_year)
    return float(per_period * scale), float((per_period - z * error) * scale), float((per_period + z * error) * scale)


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


def _moments(returns) -> tuple[float, float, float] | None:
    """(Sharpe with ddof=1, skewness, non-excess kurtosis), or None when undefined. The moments by hand (the biased
    sample moments the paper uses; scipy.stats' skew and kurtosis(fisher=False) agree to rounding)."""
    r = np.asarray(returns, dtype=np.float64)
    if len(r) < 3 or not np.all(np.isfinite(r)):
        return None
    sr = sharpe_ratio(r, no_spread=float("nan"))
    if not math.isfinite(sr):
        return None
    centred = r - r.mean()
    m2 = np.mean(centred**2)
    return sr, float(np.mean(centred**3) / m2**1.5), float(np.mean(centred**4) / m2**2)


def probabilistic_sharpe(returns, benchmark_sr: float = 0.0) -> float:
    """Probability that the true per-period Sharpe ratio exceeds ``benchmark_sr``, Bailey & Lopez de Prado
    (2012), eq. (8) (see ``psr_from_moments``), with SR = mean / std (ddof=1), g3 the sample skewness and g4 the
    sample (non-excess) kurtosis of ``returns``.

    NaN means undefined: fewer than 3 returns, a non-finite return, or zero variance; callers show n/a.
    """
    moments = _moments(returns)
    return float("nan") if moments is None else psr_from_moments(*moments, len(returns), benchmark_sr)


def min_track_record_length(returns, benchmark_sr: float = 0.0, probability: float = CONFIDENCE) -> float:
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


def deflated_sharpe(returns, n_trials: int, sr_variance: float) -> float:
    """Deflated Sharpe ratio, Bailey & Lopez de Prado (2014), "The Deflated Sharpe Ratio", eq. (1):
    DSR = PSR(SR*) with SR* = ``expected_max_sharpe(n_trials, sr_variance)``: the probability that the
    selected strategy's Sharpe ratio beats the best of ``n_trials`` unskilled trials. NaN when the PSR is.
    """
    return probabilistic_sharpe(returns, expected_max_sharpe(n_trials, sr_variance))


def deflated_sharpe_from_trials(returns, trial_sharpes) -> float:
    """``deflated_sharpe`` with N = len(trial_sharpes) and V = var(trial_sharpes, ddof=1).

    ``trial_sharpes`` are per-period (not annualised) Sharpe ratios and must include EVERY variant and seed
    that was tried, the selected one among them: leaving trials out deflates too little.
    """
    trials = np.asarray(trial_sharpes, dtype=np.float64)
    variance = float(trials.var(ddof=1)) if len(trials) > 1 else 0.0
    return deflated_sharpe(returns, len(trials), variance)


def per_draw(statistic: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], np.ndarray]:
    """A statistic of one sample, made a statistic of every draw of ``bootstrap_interval`` (one call a draw)."""
    return lambda draws: np.array([statistic(draw) for draw in draws], dtype=np.float64)


def bootstrap_indices(n: int, n_resamples: int, seed: int, block_length: float | None = None,
                      blocks: str = "stationary") -> np.ndarray:
    """[n_resamples, n] row indices: iid draws (Efron 1979) when ``block_length`` is None, else blocks that keep
    neighbouring rows together: ``blocks="stationary"`` (Politis & Romano 1994, geometric blocks of mean
    ``block_length``) or ``"moving"`` (Kunsch 1989, blocks of ``block_length``), from arch.bootstrap, seeded."""
    if block_length is None:
        return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    if not block_length >= 1:
        raise ValueError(f"a block bootstrap needs a block length of at least 1, got {block_length}")
    if blocks not in BLOCK_KINDS:
        raise ValueError(f"blocks is one of {', '.join(BLOCK_KINDS)}, got {blocks!r}")
    from arch.bootstrap import MovingBlockBootstrap, StationaryBootstrap

    if blocks == "stationary":
        resampler = StationaryBootstrap(block_length, np.arange(n), seed=seed)
    else:
        resampler = MovingBlockBootstrap(int(round(block_length)), np.arange(n), seed=seed)
    return np.stack([data[0] for data, _ in resampler.bootstrap(n_resamples)])


def bootstrap_interval(values, statistic: Callable[[np.ndarray], np.ndarray], *, seed: int = 0,
                       n_resamples: int = BOOTSTRAP_RESAMPLES, confidence: float = CONFIDENCE,
                       block_length: float | None = None, blocks: str = "stationary") -> tuple[float, float]:
    """Percentile interval (Efron & Tibshirani 1993, ch. 13) of ``statistic`` over resamples of the rows of
    ``values`` (``bootstrap_indices``: iid, or blocks of ``block_length`` rows when the rows are serially dependent).

    ``statistic`` takes the [n_resamples, n, ...] resampled rows and returns [n_resamples] estimates (``per_draw``
    makes one from a statistic of one sample); non-finite estimates are left out. (NaN, NaN) with fewer than two
    rows (every resample would be the one row) or no finite estimate.
    """
    data = np.asarray(values)
    if len(data) < 2:
        return float("nan"), float("nan")
    draws = data[bootstrap_indices(len(data), n_resamples, seed, block_length, blocks)]
    estimates = np.asarray(statistic(draws), dtype=np.float64)
    estimates = estimates[np.isfinite(estimates)]
    if not len(estimates):
        return float("nan"), float("nan")
    tail = (1.0 - confidence) / 2.0 * 100.0
    return float(np.percentile(estimates, tail)), float(np.percentile(estimates, 100.0 - tail))


def bootstrap_mean_interval(values, confidence: float = CONFIDENCE, n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0,
                            block_length: float | None = None) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (``bootstrap_interval``). With iid draws it is meant for small
    per-fold samples, where it is only approximate (it runs narrow for n < ~10). (NaN, NaN) below 2 values."""
    data = np.asarray(values, dtype=np.float64).reshape(-1)
    return bootstrap_interval(data, lambda draws: draws.mean(axis=1), seed=seed, n_resamples=n_resamples,
                              confidence=confidence, block_length=block_length)


def profit_factor(gross_profit: float, gross_loss: float) -> float:
    """Gross profit / gross loss (both in dollars, >= 0), capped at PROFIT_FACTOR_CAP: the cap with profit and no
    loss, 0 with no profit."""
    if gross_loss > 0:
        return float(min(gross_profit / gross_loss, PROFIT_FACTOR_CAP))
    return PROFIT_FACTOR_CAP if gross_profit > 0 else 0.0


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson (1927) score interval of a proportion ``successes`` / ``n``; (NaN, NaN) for n = 0."""
    if n == 0:
        return float("nan"), float("nan")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)  # clamped: 0 of 5 gave -1e-17 (printed "-0.00")
