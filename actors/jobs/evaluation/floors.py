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
- ``first_half_hour``: the minutes before the close the first-half-hour rule holds (``FIRST_HALF_HOUR_HOLDS``: 30, 60).
- ``fade_15bar``: the fade's threshold in sigma (``FADE_SIGMAS``: 1.5, 2.0, 2.5; 15-bar move, 10-bar hold).
  These two are the simple rules that find ``realistic``'s planted edges (actors/common/market_stats_rules.py);
  ``FloorChoice.best_rule`` is the one of them with the higher Sharpe on the training days, the rule the policy's
  Sharpe is divided by (actors/jobs/evaluation/rule_ratio.py).
- ``supervised``: a gradient-boosted classifier of the next 30 bars' side, fitted on the training days less their
  last quarter, its probability threshold chosen on that quarter (actors/jobs/evaluation/supervised_floor.py):
  what a user of FreqAI would pick instead of reinforcement learning.

``flat``, ``random`` and ``buy_and_hold`` tune nothing; ``oracle`` is the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from actors.env.dataset import DataSplit
from actors.common.statistics import TRADING_DAYS_PER_YEAR, sharpe_ratio
from actors.env.references import (
    FADE_HOLD_BARS, FADE_LOOKBACK_BARS, FADE_SIGMAS, FIRST_HALF_HOUR_HOLDS, MOMENTUM_LOOKBACKS, ReferencePolicy, fade_policy,
    first_half_hour_policy, momentum_policy, reference_policies, regime_rule_policy,
)
from actors.jobs.evaluation.supervised_floor import SUPERVISED, SupervisedChoice, fit_supervised

MOMENTUM = "momentum"
"""The momentum floor with its lookback fitted on the training days."""
REGIME_RULE = "regime_rule"
REGIME_THRESHOLDS = (0.2, 0.4, 0.6)
"""The regime rule's belief thresholds tried on the training days (actors/env/references.py's 0.4 was the best of
these on one 300-day test split: chosen on test data, so here it is only one candidate)."""
FIXED_FLOORS = ("flat", "random", "buy_and_hold")
FIRST_HALF_HOUR = "first_half_hour"
"""The first half hour's sign held to the close, its hold chosen on the training days."""
FADE = "fade_15bar"
"""The fade of a 15-bar move, its threshold in sigma chosen on the training days."""
RULE_FLOORS = (FIRST_HALF_HOUR, FADE)
"""The simple rules the policy's Sharpe is measured against (issue 52: at least 0.8 of the best one's)."""


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
    first_half_hour_hold: int = FIRST_HALF_HOUR_HOLDS[0]
    """Minutes before the close the first-half-hour rule holds, the candidate that netted most on the training days."""
    fade_sigmas: float = FADE_SIGMAS[1]
    """The fade's threshold in sigma that netted most on the training days."""
    first_half_hour_nets: dict[int, float] = field(default_factory=dict)
    fade_nets: dict[float, float] = field(default_factory=dict)
    rule_train_sharpes: dict[str, float] = field(default_factory=dict)
    """Each rule floor at its chosen setting: the annualised Sharpe of its training days' daily P&L ({} untried)."""

    @property
    def best_rule(self) -> str:
        """The rule floor with the higher Sharpe on the training days (ties and no training days: the first half hour)."""
        finite = {name: s for name, s in self.rule_train_sharpes.items() if s == s}
        return max(RULE_FLOORS, key=lambda name: finite.get(name, float("-inf")))

    def params(self) -> dict[str, float | int]:
        return {"momentum_lookback": self.momentum_lookback, "regime_threshold": self.regime_threshold,
                **(self.supervised.params() if self.supervised else {}),
                **self.params_of(FIRST_HALF_HOUR), **self.params_of(FADE)}

    def params_of(self, floor: str) -> dict[str, float | int | str | bool]:
        """What ``floor`` chose (the trials ledger's ``params``, with a rule's candidate grid); {} for a floor that
        tunes nothing."""
        return {MOMENTUM: {"momentum_lookback": self.momentum_lookback},
                REGIME_RULE: {"regime_threshold": self.regime_threshold},
                SUPERVISED: self.supervised.params() if self.supervised else {},
                FIRST_HALF_HOUR: {"first_half_hour_hold_minutes": self.first_half_hour_hold,
                                  "first_half_hour_hold_grid": _grid(FIRST_HALF_HOUR_HOLDS), **self._rule_params(FIRST_HALF_HOUR)},
                FADE: {"fade_sigmas": self.fade_sigmas, "fade_sigmas_grid": _grid(FADE_SIGMAS),
                       "fade_lookback_bars": FADE_LOOKBACK_BARS, "fade_hold_bars": FADE_HOLD_BARS, **self._rule_params(FADE)},
                }.get(floor, {})

    def _rule_params(self, rule: str) -> dict[str, float | bool]:
        sharpe = self.rule_train_sharpes.get(rule)
        return {} if sharpe is None else {"train_sharpe": sharpe, "best_rule": self.best_rule == rule}

    def text(self) -> str:
        first, stop = self.train_days
        rules = f"first half hour held {self.first_half_hour_hold} min, fade {self.fade_sigmas:g} sigma"
        if stop <= first:
            return (f"momentum {self.momentum_lookback} bars, regime rule {self.regime_threshold:g}, {rules} "
                    "(no training days: the defaults)")
        supervised = f", {self.supervised.text()}" if self.supervised else ""
        sharpes = ", ".join(f"{name} {value:.2f}" for name, value in self.rule_train_sharpes.items())
        best = f"; best rule by training Sharpe: {self.best_rule} ({sharpes})" if sharpes else ""
        return (f"momentum {self.momentum_lookback} bars, regime rule {self.regime_threshold:g}, {rules} "
                f"(chosen on training days {first}-{stop - 1}, decisions alone){supervised}{best}")


def _grid(values) -> str:
    return ",".join(f"{value:g}" for value in values)


def fit_floors(config, train: DataSplit, train_days: tuple[int, int], regime_feature: bool = True,
               supervised: bool = True, rules: bool = True) -> FloorChoice:
    """Each tunable floor's setting with the highest net P&L on ``train`` (decisions alone, costs paid); ties go to
    the first candidate. ``train`` must hold the training days only: this function never sees the test window.
    ``supervised``: also fit the supervised floor (its threshold on the last of those days); ``rules``: also choose
    the simple rules' settings (and which of them has the higher Sharpe there)."""
    from actors.jobs.evaluation.chain import play_window

    momentum = {n: play_window(config, train, momentum_policy(n), risk=False).net_pnl for n in MOMENTUM_LOOKBACKS}
    regime = ({t: play_window(config, train, regime_rule_policy(t), risk=False).net_pnl for t in REGIME_THRESHOLDS}
              if regime_feature else {})
    first_half_hour = ({h: play_window(config, train, first_half_hour_policy(h), risk=False) for h in FIRST_HALF_HOUR_HOLDS}
                       if rules else {})
    fade = {s: play_window(config, train, fade_policy(s), risk=False) for s in FADE_SIGMAS} if rules else {}
    hold, sigmas = _best(first_half_hour, FIRST_HALF_HOUR_HOLDS[0]), _best(fade, FADE_SIGMAS[1])
    sharpes = ({FIRST_HALF_HOUR: _sharpe(first_half_hour[hold].daily_pnl), FADE: _sharpe(fade[sigmas].daily_pnl)}
               if rules else {})
    return FloorChoice(momentum_lookback=max(momentum, key=momentum.__getitem__),
                       regime_threshold=max(regime, key=regime.__getitem__) if regime else REGIME_THRESHOLDS[1],
                       train_days=train_days, momentum_nets=momentum, regime_nets=regime,
                       supervised=fit_supervised(config, train, train_days, config.run.seed) if supervised else None,
                       first_half_hour_hold=hold, fade_sigmas=sigmas,
                       first_half_hour_nets={h: w.net_pnl for h, w in first_half_hour.items()},
                       fade_nets={s: w.net_pnl for s, w in fade.items()}, rule_train_sharpes=sharpes)


def _best(windows: dict, default):
    """The candidate whose window netted most (ties: the first); ``default`` when none was played."""
    return max(windows, key=lambda key: windows[key].net_pnl) if windows else default


def _sharpe(daily_pnl) -> float:
    """Annualised Sharpe of daily dollars (scale-free, so the account's balance does not enter); 0 for a rule that never
    traded, NaN with fewer than 2 days."""
    return sharpe_ratio(np.asarray(daily_pnl, dtype=np.float64), TRADING_DAYS_PER_YEAR, no_spread=0.0)


def fit_floors_on_split(config, split: DataSplit) -> FloorChoice:
    """``fit_floors`` on a dataset's named split (the main job's ``train``); with no training day there (a file that
    is all test) the middle candidates, which were chosen on nothing."""
    days = split.session_open_bars()
    first = int(np.searchsorted(split.dataset.session_starts, days[0])) if len(days) else 0
    if len(days) < 2:
        return FloorChoice(momentum_lookback=MOMENTUM_LOOKBACKS[1], regime_threshold=REGIME_THRESHOLDS[1], train_days=(first, first))
    return fit_floors(config, split, (first, first + len(days)))


def chosen_floors(choice: FloorChoice, regime, seed: int) -> dict[str, ReferencePolicy]:
    """The floors the test window plays: the fixed ones, the fitted momentum, regime rule, simple rules and supervised
    classifier, and the oracle where the data has a hidden regime."""
    fixed = reference_policies(regime, seed=seed)
    floors = {name: fixed[name] for name in FIXED_FLOORS}
    floors[MOMENTUM] = momentum_policy(choice.momentum_lookback)
    floors[REGIME_RULE] = regime_rule_policy(choice.regime_threshold)
    floors[FIRST_HALF_HOUR] = first_half_hour_policy(choice.first_half_hour_hold)
    floors[FADE] = fade_policy(choice.fade_sigmas)
    if choice.supervised is not None:
        floors[SUPERVISED] = choice.supervised.policy()
    if "oracle" in fixed:
        floors["oracle"] = fixed["oracle"]
    return floors
