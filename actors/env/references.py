"""Reference policies: the floors and the ceiling a trained policy is measured against.

Each one is a function ``(env) -> action`` that decides on the env's current bar the way a
policy would, through the same env (fills, costs, stop and target, forced flat) and, where
the caller adds it, the same risk stage:

- ``flat``: never trades (P&L 0; the floor every cost-paying policy must beat).
- ``random``: a uniformly random allowed action (seeded).
- ``buy_and_hold``: long whenever allowed (re-enters after a stop or the forced flat).
- ``momentum_N``: the sign of close[t] - close[t-N]: long when up, short when down (N = 30, 60, 120),
  the one-line rule that a learner must beat.
- ``regime_rule``: long when the market-regime feature (the belief of the regime HMM fitted on the training days,
  actors/env/regime_model.py) is above +0.4, short below -0.4, flat between. A policy that does
  not beat it has learnt less than a threshold on one of its own features.
- ``first_half_hour_H``: from the close H minutes before 16:00 ET (15:30 for H = 30) to the close, the sign of the
  first half hour's return (the ``first_30m_return`` session feature: prior close to the 10:00 close), flat otherwise:
  Gao, Han, Li and Zhou's (2018) intraday momentum, the edge the ``realistic`` market plants in its last half hour.
- ``fade_S``: after a 15-bar move beyond S sigma (sigma: the root mean square of the session's own one-bar log returns
  so far, times sqrt(15)), the opposite side for 10 bars; a new move restarts the hold (actors/common/market_stats_rules.py's
  ``reversion_15`` and the diagnostics' ``fade15``, bar for bar).
  Both are causal: they read the bar's time, its session features and the session's closes up to the bar.
- ``oracle``: reads the synthetic market's hidden regime of the bar it will trade (long in trend_up,
  short in trend_down, flat otherwise). It is the ceiling, for evaluation only: the regime reaches
  it through the ``regime`` array handed in here, never through an observation.

A target side is reached one step at a time, as a policy would: in a position on the wrong
side the first step closes it (the opposite action), the next opens the new side.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from actors.common.actions import BUY, HOLD, SELL
from actors.common.synthetic import TREND_DOWN, TREND_UP
from actors.env.env import FuturesTradingEnv
from actors.env.features import STATIC_FEATURES

ReferencePolicy = Callable[[FuturesTradingEnv], int]
MOMENTUM_LOOKBACKS = (30, 60, 120)
REGIME_RULE_BELIEF = 0.4
"""The belief the regime rule acts on (chosen for the old synthetic-tuned filter: the best of 0.2 / 0.4 / 0.6 on 300 synthetic days; kept)."""
CLOSE_MINUTE = 16 * 60
"""16:00 ET, the cash close the first-half-hour rule holds to (minute of the day)."""
FIRST_HALF_HOUR_HOLDS = (30, 60)
"""Minutes before the close the first-half-hour rule enters (Gao et al.'s 30, and 60); chosen on training days."""
FADE_LOOKBACK_BARS, FADE_HOLD_BARS = 15, 10
FADE_SIGMAS = (1.5, 2.0, 2.5)
"""The fade's thresholds in sigma (the calibration's 2.0 and one either side); chosen on training days."""


def toward(env: FuturesTradingEnv, target_side: int) -> int:
    """The action that moves the env's position one step toward ``target_side`` (+1 long, -1 short, 0 flat)."""
    position = env.position
    side = 0 if position is None else position.side
    if side == target_side:
        return HOLD
    mask = env.action_masks()
    if side != 0:
        close = SELL if side > 0 else BUY
        return close if mask[close] else HOLD
    entry = BUY if target_side > 0 else SELL
    return entry if mask[entry] else HOLD


def flat_policy(env: FuturesTradingEnv) -> int:
    return HOLD


def buy_and_hold_policy(env: FuturesTradingEnv) -> int:
    return toward(env, 1)


def random_policy(seed: int = 0) -> ReferencePolicy:
    rng = np.random.default_rng(seed)

    def decide(env: FuturesTradingEnv) -> int:
        allowed = np.flatnonzero(env.action_masks())
        return int(allowed[rng.integers(len(allowed))])

    return decide


def momentum_policy(lookback: int) -> ReferencePolicy:
    """Long when the close is above the close ``lookback`` bars ago, short when below (causal: bars <= t)."""
    if lookback < 1:
        raise ValueError(f"lookback must be >= 1, got {lookback}")

    def decide(env: FuturesTradingEnv) -> int:
        t = env.bar
        closes = env.split.dataset.close
        if t < lookback:
            return toward(env, 0)
        return toward(env, int(np.sign(closes[t] - closes[t - lookback])))

    return decide


def regime_rule_policy(threshold: float = REGIME_RULE_BELIEF) -> ReferencePolicy:
    """Long above ``threshold`` of the market-regime feature, short below its negative (causal: the feature is)."""
    column = STATIC_FEATURES.index("market_regime")

    def decide(env: FuturesTradingEnv) -> int:
        belief = float(env.split.dataset.features.static[env.bar, column])
        return toward(env, 1 if belief > threshold else -1 if belief < -threshold else 0)

    return decide


def first_half_hour_policy(hold_minutes: int = FIRST_HALF_HOUR_HOLDS[0]) -> ReferencePolicy:
    """Hold the sign of the first half hour's return from the close ``hold_minutes`` before 16:00 ET to the close.

    Decided on the close of the bar starting at 15:29 (for 30 minutes), filled at the next bar's open, held through
    the bar starting 15:58; on the 15:59 bar's close it wants flat (the env's flat time closes it there on regular-hours
    data). Flat before 10:00 and where the feature is 0 (not known yet, or no prior close)."""
    if not 1 <= hold_minutes <= 360:
        raise ValueError(f"hold_minutes must be 1..360, got {hold_minutes}")
    column = STATIC_FEATURES.index("first_30m_return")
    entry_minute, last_minute = CLOSE_MINUTE - hold_minutes - 1, CLOSE_MINUTE - 2

    def decide(env: FuturesTradingEnv) -> int:
        features = env.split.dataset.features
        t = env.bar
        if not entry_minute <= int(features.minute_et[t]) <= last_minute:
            return toward(env, 0)
        return toward(env, int(np.sign(features.static[t, column])))

    return decide


def fade_side(closes: np.ndarray, sigmas: float, lookback: int = FADE_LOOKBACK_BARS, hold: int = FADE_HOLD_BARS) -> int:
    """The side the fade holds after the last of ``closes`` (one session's closes up to now, oldest first): the opposite
    of the latest ``lookback``-bar move beyond ``sigmas`` x sigma x sqrt(lookback) among the last ``hold`` bars, else 0."""
    n = len(closes)
    if n <= lookback:
        return 0
    logs = np.log(closes)
    one_bar = np.diff(logs, prepend=logs[0])  # a session's first bar has return 0: the gap is not the day's volatility
    sigma = np.sqrt(np.cumsum(one_bar * one_bar) / np.arange(1, n + 1))
    bars = np.arange(max(lookback, n - hold), n)
    moved = logs[bars] - logs[bars - lookback]
    fired = np.flatnonzero(np.abs(moved) > sigmas * sigma[bars] * np.sqrt(lookback))
    return int(-np.sign(moved[fired[-1]])) if len(fired) else 0


def fade_policy(sigmas: float = FADE_SIGMAS[1], lookback: int = FADE_LOOKBACK_BARS, hold: int = FADE_HOLD_BARS) -> ReferencePolicy:
    """Fade a ``lookback``-bar move beyond ``sigmas`` of the session's own volatility for ``hold`` bars: ``fade_side``'s
    answer, kept bar by bar with running sums (the numpy version costs ~0.2 ms a step, the floors play millions)."""
    if sigmas <= 0 or lookback < 1 or hold < 1:
        raise ValueError(f"the fade needs sigmas > 0, lookback >= 1 and hold >= 1, got {sigmas}, {lookback}, {hold}")
    state = _FadeState(sigmas, lookback, hold)

    def decide(env: FuturesTradingEnv) -> int:
        return toward(env, state.side(env.split.dataset, env.bar))

    return decide


class _FadeState:
    """The session's running sum of squared one-bar log returns and its latest signal, advanced one bar at a time up to
    the bar asked about (never past it); a bar of another session, or an earlier one, starts over."""

    def __init__(self, sigmas: float, lookback: int, hold: int) -> None:
        self.sigmas, self.lookback, self.hold = sigmas, lookback, hold
        self._data = None
        self._logs: list[float] = []
        self._first = self._next = -1
        self._squares = 0.0
        self._signal = (-1, 0)  # (bar, side) of the latest move beyond the threshold

    def side(self, data, t: int) -> int:
        session = data.features.session_id
        if data is not self._data:
            self._data, self._logs, self._first = data, np.log(np.asarray(data.close, dtype=np.float64)).tolist(), -1
        if self._first < 0 or t < self._next - 1 or session[t] != session[self._first]:
            self._first = int(np.searchsorted(session, session[t], side="left"))
            self._next, self._squares, self._signal = self._first, 0.0, (-1, 0)
        logs, first = self._logs, self._first
        threshold = self.sigmas * math.sqrt(self.lookback)
        while self._next <= t:
            bar = self._next
            one_bar = logs[bar] - logs[bar - 1] if bar > first else 0.0
            self._squares += one_bar * one_bar
            if bar - first >= self.lookback:
                moved = logs[bar] - logs[bar - self.lookback]
                if abs(moved) > threshold * math.sqrt(self._squares / (bar - first + 1)):
                    self._signal = (bar, -1 if moved > 0 else 1)
            self._next += 1
        bar, side = self._signal
        return side if 0 <= t - bar < self.hold else 0


def oracle_policy(regime: np.ndarray) -> ReferencePolicy:
    """The ceiling: the side of the hidden regime of the bar the action will trade (t + 1)."""
    regime = np.asarray(regime)

    def decide(env: FuturesTradingEnv) -> int:
        upcoming = int(regime[min(env.bar + 1, len(regime) - 1)])
        return toward(env, 1 if upcoming == TREND_UP else -1 if upcoming == TREND_DOWN else 0)

    return decide


def reference_policies(regime: np.ndarray | None, seed: int = 0) -> dict[str, ReferencePolicy]:
    """Every floor, and the oracle when the data has a hidden regime (synthetic markets)."""
    policies: dict[str, ReferencePolicy] = {
        "flat": flat_policy,
        "random": random_policy(seed),
        "buy_and_hold": buy_and_hold_policy,
        **{f"momentum_{n}": momentum_policy(n) for n in MOMENTUM_LOOKBACKS},
        "regime_rule": regime_rule_policy(),
    }
    if regime is not None:
        policies["oracle"] = oracle_policy(regime)
    return policies
