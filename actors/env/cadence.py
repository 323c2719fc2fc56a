"""When the policy may act: a decision cadence and a minimum holding time, as a gate on the env's action mask.

A policy that may act on every 1-minute bar learns to trade often and short, and commission and slippage eat what
it makes (docs/experiments/features.md: 4-18 trades a day of ~5 bars on ``realistic``). Two [env] settings make
trading rarer by taking choices away, never by changing the account:

- ``decision_every_bars = k``: the policy acts only on the close of a bar whose next minute (ET) is a multiple of k,
  so its order fills at the open of a bar starting on the k-minute grid (k = 30: the 9:59, 10:29, ..., 15:29
  closes; the clock, not the episode's start, sets the grid, so the 15:29 decision of the intraday-momentum edge
  is one of them whenever k divides 30). On the other bars every action but HOLD is masked: the env holds.
- ``min_hold_bars = n``: a position held fewer than n bars may not be closed or reversed by the policy (the
  opposite signal is masked). Stop-loss management stays allowed (it only tightens risk).

Both act through the mask (``FuturesTradingEnv.action_masks``), so the learner, the risk rules and every actor see
the same choices, and a masked step's HOLD is certain (its log-probability 0: PPO learns nothing from it but the
value). The env's own risk handling acts on every bar regardless: the stop, the target, the trailing drawdown, the
daily loss limit and the forced flat at the close. A risk-actor halt that would close a position (it closes through
the mask) waits for the next bar the gate allows. Both default off (k = 1, n = 0): the main job and train trade as
before; ``bin/run evaluate`` chooses them per fold on validation days (actors/jobs/evaluation/cadence.py).
"""

from __future__ import annotations

from actors.common.actions import BUY, HOLD, N_ACTIONS, SELL

HOLD_ONLY = [True] + [False] * (N_ACTIONS - 1)


def is_forced(mask) -> bool:
    """True when ``mask`` (bool [6]) allows HOLD and nothing else: the bar is no choice of the policy's."""
    return bool(mask[HOLD]) and not any(bool(allowed) for action, allowed in enumerate(mask) if action != HOLD)


def is_decision_bar(minute_et: int, every_bars: int) -> bool:
    """True when the policy may act on the close of the bar starting at ``minute_et`` (minutes after midnight ET)."""
    return every_bars <= 1 or (int(minute_et) + 1) % every_bars == 0


def gated_mask(mask: list[bool], *, decision_bar: bool, bars_held: int | None, min_hold_bars: int) -> list[bool]:
    """``mask`` (the trading mask) with the cadence and the minimum hold applied; ``bars_held`` None when flat."""
    if not decision_bar:
        return list(HOLD_ONLY)
    if bars_held is not None and bars_held < min_hold_bars:
        mask = list(mask)
        mask[BUY] = mask[SELL] = False
    return mask
