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
- ``oracle``: reads the synthetic market's hidden regime of the bar it will trade (long in trend_up,
  short in trend_down, flat otherwise). It is the ceiling, for evaluation only: the regime reaches
  it through the ``regime`` array handed in here, never through an observation.

A target side is reached one step at a time, as a policy would: in a position on the wrong
side the first step closes it (the opposite action), the next opens the new side.
"""

from __future__ import annotations

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
