"""Floors chosen like the policy: what a floor tunes is fitted on the fold's training days, never on its test window.

A policy is trained on the days before its test window and tested once, frozen. A floor that picks its
best setting on the test window itself (the momentum rule with the best test P&L of 30/60/120, say) has
seen the answers: it is flattered, and "the policy beats the best momentum rule" means less than it says.
So each tunable floor is fitted here the way the policy is: on the training days, by its decisions alone
(no risk stage: the halts depend on the path, and ``choose_on_validation`` chooses the same
way), and the test window plays only the setting chosen.

Tunable floors (actors/env/references.py builds each rule):

- ``momentum``: the lookback N of ``momentum_N`` (``MOMENTUM_LOOKBACKS``: 30, 60, 120 bars).
- ``regime_rule``: the belief threshold of the regime rule (``REGIME_THRESHOLDS``: 0.2, 0.4, 0.6).
- ``supervised``: a gradient-boosted classifier of the next 30 bars' side, fitted on the training days less their
  last quarter, its probability threshold chosen on that quarter (actors/jobs/evaluation/supervised_floor.py):
  what a user of FreqAI would pick instead of reinforcement learning.

``flat``, ``random`` and ``buy_and_hold`` tune nothing; ``oracle`` is the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from actors.env.dataset import DataSplit
from actors.env.references import (
    MOMENTUM_LOOKBACKS, ReferencePolicy, momentum_policy, reference_policies, regime_rule_policy,
)
from actors.jobs.evaluation.supervised_floor import SUPERVISED, SupervisedChoice, fit_supervised

MOMENTUM = "momentum"
"""The momentum floor with its lookback fitted on the training days."""
REGIME_RULE = "regime_rule"
REGIME_THRESHOLDS = (0.2, 0.4, 0.6)
"""The regime rule's belief thresholds tried on the training days (actors/env/references.py's 0.4 was the best of
these on one 300-day test split: chosen on test data, so here it is only one candidate)."""
FIXED_FLOORS = ("flat", "random", "buy_and_hold")


@dataclass(frozen=True)
class FloorChoice:
    """What the tunable floors chose on one fold's training days, and what each candidate netted there."""

    momentum_lookback: int
    regime_threshold: float
    train_days: tuple[int, int]
    """[first, stop) trading days the choice was made on."""
    momentum_nets: dict[int, float] = field(default_factory=dict)
    regime_nets: dict[float, float] = field(default_factory=dict)
    supervised: SupervisedChoice | None = None
    """The supervised floor's classifier and threshold; None when the training days were too few to fit it."""

    def params(self) -> dict[str, float | int]:
        return {"momentum_lookback": self.momentum_lookback, "regime_threshold": self.regime_threshold,
                **(self.supervised.params() if self.supervised else {})}

    def params_of(self, floor: str) -> dict[str, float | int]:
        """What ``floor`` chose (the trials ledger's ``params``); {} for a floor that tunes nothing."""
        return {MOMENTUM: {"momentum_lookback": self.momentum_lookback},
                REGIME_RULE: {"regime_threshold": self.regime_threshold},
                SUPERVISED: self.supervised.params() if self.supervised else {}}.get(floor, {})

    def text(self) -> str:
        first, stop = self.train_days
        if stop <= first:
            return f"momentum {self.momentum_lookback} bars, regime rule {self.regime_threshold:g} (no training days: the defaults)"
        supervised = f", {self.supervised.text()}" if self.supervised else ""
        return (f"momentum {self.momentum_lookback} bars, regime rule {self.regime_threshold:g} "
                f"(chosen on training days {first}-{stop - 1}, decisions alone){supervised}")


def fit_floors(config, train: DataSplit, train_days: tuple[int, int], regime_feature: bool = True,
               supervised: bool = True) -> FloorChoice:
    """Each tunable floor's setting with the highest net P&L on ``train`` (decisions alone, costs paid); ties go to
    the first candidate. ``train`` must hold the training days only: this function never sees the test window.
    ``supervised``: also fit the supervised floor (its threshold on the last of those days)."""
    from actors.jobs.evaluation.chain import play_window

    momentum = {n: play_window(config, train, momentum_policy(n), risk=False).net_pnl for n in MOMENTUM_LOOKBACKS}
    regime = ({t: play_window(config, train, regime_rule_policy(t), risk=False).net_pnl for t in REGIME_THRESHOLDS}
              if regime_feature else {})
    return FloorChoice(momentum_lookback=max(momentum, key=momentum.__getitem__),
                       regime_threshold=max(regime, key=regime.__getitem__) if regime else REGIME_THRESHOLDS[1],
                       train_days=train_days, momentum_nets=momentum, regime_nets=regime,
                       supervised=fit_supervised(config, train, train_days, config.run.seed) if supervised else None)


def fit_floors_on_split(config, split: DataSplit) -> FloorChoice:
    """``fit_floors`` on a dataset's named split (the main job's ``train``); with no training day there (a file that
    is all test) the middle candidates, which were chosen on nothing."""
    days = split.session_open_bars()
    first = int(np.searchsorted(split.dataset.session_starts, days[0])) if len(days) else 0
    if len(days) < 2:
        return FloorChoice(momentum_lookback=MOMENTUM_LOOKBACKS[1], regime_threshold=REGIME_THRESHOLDS[1], train_days=(first, first))
    return fit_floors(config, split, (first, first + len(days)))


def chosen_floors(choice: FloorChoice, regime, seed: int) -> dict[str, ReferencePolicy]:
    """The floors the test window plays: the fixed ones, the fitted momentum and regime rule, and the oracle where
    the data has a hidden regime."""
    fixed = reference_policies(regime, seed=seed)
    floors = {name: fixed[name] for name in FIXED_FLOORS}
    floors[MOMENTUM] = momentum_policy(choice.momentum_lookback)
    floors[REGIME_RULE] = regime_rule_policy(choice.regime_threshold)
    if choice.supervised is not None:
        floors[SUPERVISED] = choice.supervised.policy()
    if "oracle" in fixed:
        floors["oracle"] = fixed["oracle"]
    return floors
