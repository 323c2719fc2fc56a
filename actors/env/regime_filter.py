"""The market-regime feature: a causal Bayes filter's belief that the market trends up rather than down.

A hidden-Markov model of four regimes reads each bar's close-to-close change, in units of ATR(14) and
of its own slow running scale (so the number means the same on NQ, MNQ or a file of another market):

- trend up: the standardised change has mean +``TREND_DRIFT``;
- trend down: mean -``TREND_DRIFT``;
- quiet: mean 0;
- volatile: mean 0 and ``VOLATILE_SCALE`` times the spread.

Each bar a regime ends with probability ``HAZARD`` and the next is any of the four alike. The feature
is P(trend up) - P(trend down) after the bar, in [-1, 1]: the filter's forward recursion (Hamilton,
1989), so bar t uses bars <= t only, and the batch and streaming versions share this one class, which
keeps them identical bit for bit.

Why a filter: a momentum rule reads a trend from the sign of one return, so it waits a full lookback
after each switch and flips on noise inside it. The filter weighs every change by how much evidence it
carries and forgets at the rate regimes end. On the default synthetic market (actors/common/synthetic.py)
the rule "long above +0.4, short below -0.4" of this feature (``regime_rule`` in actors/env/references.py)
took 0.45 of the oracle's net P&L through the env, the risk stage and costs, where the best momentum
rule took 0.31 (the main job's 300 days, test split); on 638 test days of a 2,640-day market, 0.42
against 0.26 (docs/experiments/README.md).

The same belief names the context's ``trend`` (``BELIEF_FOR_A_TREND``), the word the LLM's prompt shows.

The parameters are deliberately not the generator's (drift 0.2 sigma a bar, regimes of 165 bars on
average, volatile 2.2x, quiet 35 %): a filter is robust to them being off by 1.5-2x either way (0.42-0.57
of the oracle without the env in that experiment), and a real market's are unknown.
"""

from __future__ import annotations

import math

import numpy as np

TREND_DRIFT = 0.15
"""Mean standardised change of a trending bar (units of the change's own scale)."""
VOLATILE_SCALE = 2.0
HAZARD = 0.01
"""Chance a regime ends at each bar (regimes of 100 bars on average)."""
SCALE_ALPHA = 0.001
"""Weight of each bar in the running mean square of the ATR-normalised change (a memory of ~1,000 bars)."""
FIRST_SCALE = 0.35
"""The running mean square before any bar (ATR-normalised 1-minute changes of the synthetic NQ bars: 0.34)."""
MAX_SURPRISE = 25.0
"""A change counts toward the scale as at most 5 standard deviations (jumps would inflate it for hours)."""
MAX_EVIDENCE = 4.0
"""A standardised change is clipped to +-4 before it is weighed: one jump is not a trend."""

BELIEF_FOR_A_TREND = 0.5
"""The context's ``trend`` word (what the LLM's prompt says) is "up" above this belief, "down" below its negative.

On 120 synthetic days (seed 7) the word then names the hidden regime on 70 % of bars, the wrong way round on 1.3 %
and a trend where there is none on 11 %; the SMA20-SMA50 word it replaced: 42 %, 7 % and 48 %."""

_STAY = 1.0 - HAZARD
_ENTER = HAZARD / 4.0
_INVERSE_VOLATILE = 1.0 / VOLATILE_SCALE
_TREND_PENALTY = 0.5 * TREND_DRIFT * TREND_DRIFT


class RegimeFilter:
    """P(trend up) - P(trend down), updated one bar at a time (``push``)."""

    def __init__(self) -> None:
        self._up = self._down = self._quiet = self._volatile = 0.25
        self._mean_square = FIRST_SCALE

    def push(self, change: float, atr: float, new_session: bool) -> float:
        """The belief after a bar whose close moved ``change`` from the one before; ``atr`` is this bar's ATR.

        A session's first change (it holds the overnight gap) and a bar without a usable ATR carry no
        evidence: the belief only decays toward even, as it does between any two bars."""
        up = self._up * _STAY + _ENTER
        down = self._down * _STAY + _ENTER
        quiet = self._quiet * _STAY + _ENTER
        volatile = self._volatile * _STAY + _ENTER
        if not new_session and atr > 0.0 and math.isfinite(change) and math.isfinite(atr):
            normalised = change / atr
            z = normalised / math.sqrt(self._mean_square)
            self._mean_square += SCALE_ALPHA * (min(normalised * normalised, MAX_SURPRISE * self._mean_square) - self._mean_square)
            z = min(max(z, -MAX_EVIDENCE), MAX_EVIDENCE)
            # Likelihoods up to a common factor exp(-z^2 / 2), which cancels in the normalisation below.
            up *= math.exp(TREND_DRIFT * z - _TREND_PENALTY)
            down *= math.exp(-TREND_DRIFT * z - _TREND_PENALTY)
            volatile *= _INVERSE_VOLATILE * math.exp(0.5 * z * z * (1.0 - _INVERSE_VOLATILE * _INVERSE_VOLATILE))
        total = up + down + quiet + volatile
        self._up, self._down, self._quiet, self._volatile = up / total, down / total, quiet / total, volatile / total
        return self._up - self._down


def trend_of(belief: float) -> int:
    """+1 up, -1 down, 0 sideways: the context's trend (``BELIEF_FOR_A_TREND``)."""
    return 1 if belief > BELIEF_FOR_A_TREND else (-1 if belief < -BELIEF_FOR_A_TREND else 0)


def trends_of(belief: np.ndarray) -> np.ndarray:
    """``trend_of`` for every bar."""
    return np.where(belief > BELIEF_FOR_A_TREND, 1, np.where(belief < -BELIEF_FOR_A_TREND, -1, 0))


def regime_belief(change: np.ndarray, atr: np.ndarray, session: np.ndarray) -> np.ndarray:
    """The filter over every bar at once (the batch features): float64 [N] in [-1, 1]."""
    regime = RegimeFilter()
    new_session = np.ones(len(session), dtype=bool)
    new_session[1:] = session[1:] != session[:-1]
    return np.array([regime.push(c, a, s) for c, a, s in zip(change.tolist(), atr.tolist(), new_session.tolist())], dtype=np.float64)
