"""The policy against the best simple rule on the same test days: its Sharpe over the rule's (issue 52's target: 0.8).

The simple rules are the floors that trade the ``realistic`` market's planted edges (actors/jobs/evaluation/floors.py:
``first_half_hour`` and ``fade_15bar``, their settings chosen on each fold's training days). Which of them is "the best"
is chosen the same way: per fold, the one with the higher Sharpe on that fold's training days (``FloorChoice.best_rule``),
so the days the policy's Sharpe is divided by are, fold by fold, the test days of the rule chosen before them. Picking
the rule with the best Sharpe on the test days would be a choice made on the answers (it flatters the rule, so it makes
the ratio smaller); that ratio is shown beside, labelled, with both rules' own test Sharpe.

The ratio is NaN where the chosen rule's Sharpe is not above 0: a share of no edge means nothing (as the oracle share
on the null market). Its interval resamples the test days in pairs (the policy's day and the rule's day together).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from actors.common.statistics import TRADING_DAYS_PER_YEAR, bootstrap_interval, sharpe_ratio
from actors.jobs.evaluation.floors import RULE_FLOORS
from actors.jobs.evaluation.summary import RuleRatio

RULE_RATIO_TARGET = 0.8


def _sharpes(days: np.ndarray):
    """Annualised Sharpe of the days (a float), or of each row of [draws, days]; NaN where they do not vary."""
    return sharpe_ratio(days, TRADING_DAYS_PER_YEAR, no_spread=float("nan"))


def best_rule_days(result) -> tuple[np.ndarray, list[str]] | None:
    """The test days of each fold's rule chosen on its training days, folds joined, and the names chosen; None when the
    rule floors did not play every fold."""
    if not all(name in result.series for name in RULE_FLOORS) or len(result.floor_choices) != len(result.folds):
        return None
    chosen = [choice.best_rule for choice in result.floor_choices]
    days, offset = [], 0
    for fold, name in enumerate(chosen):
        count = result.series[name].fold_days[fold]
        days.append(np.asarray(result.series[name].daily_pnl[offset:offset + count], dtype=np.float64))
        offset += count
    return (np.concatenate(days) if days else np.zeros(0)), chosen


def ratio_interval(policy: np.ndarray, rule: np.ndarray) -> tuple[float, float]:
    """95 % interval of Sharpe(policy) / Sharpe(rule) over the days resampled in pairs; draws whose rule Sharpe is not
    above 0 are left out."""
    def statistic(draws: np.ndarray) -> np.ndarray:
        ours, theirs = _sharpes(draws[..., 0]), _sharpes(draws[..., 1])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(theirs > 0, ours / theirs, np.nan)

    return bootstrap_interval(np.stack([policy, rule], axis=1), statistic)


Verdict = Callable[[float, float, float, float], str]
"""(value, low, high, target) -> met / not met / not evidence (``evidence.verdict_at_least``, which imports this module)."""


def rule_ratio(result, policy: np.ndarray, verdict_at_least: Verdict) -> RuleRatio | None:
    """The policy's pooled test days (``evidence.pooled_policy_days``) against the best simple rule's; None where the
    rules did not play (a walk-forward without them)."""
    best = best_rule_days(result)
    if best is None or len(best[0]) != len(policy):
        return None
    days, chosen = best
    ours, theirs = _sharpes(policy), _sharpes(days)
    ratio = ours / theirs if theirs > 0 else float("nan")
    low, high = ratio_interval(policy, days) if theirs > 0 else (float("nan"), float("nan"))
    sharpes = {name: _sharpes(np.asarray(result.series[name].daily_pnl)) for name in RULE_FLOORS}
    finite = {name: value for name, value in sharpes.items() if value == value}
    test_best = max(finite, key=finite.__getitem__) if finite else RULE_FLOORS[0]
    test_ratio = ours / sharpes[test_best] if sharpes[test_best] > 0 else float("nan")
    return RuleRatio(target=RULE_RATIO_TARGET, policy_sharpe=ours, rule_sharpes=sharpes, chosen_by_fold=chosen,
                     best_rule_sharpe=theirs, best_rule_sharpe_interval=bootstrap_interval(days, _sharpes) if len(days) > 1 else
                     (float("nan"), float("nan")), ratio=ratio, ratio_interval=(low, high),
                     verdict=verdict_at_least(ratio, low, high, RULE_RATIO_TARGET), test_day_best=test_best,
                     test_day_ratio=test_ratio)


def rule_ratio_lines(ratio: RuleRatio | None) -> list[str]:
    """evaluate's sentences: the ratio with its target and verdict, then both rules and the test-day choice."""
    if ratio is None:
        return []
    folds = ", ".join(ratio.chosen_by_fold)
    low, high = ratio.best_rule_sharpe_interval
    lines = [f"policy Sharpe / best simple rule's on the same test days: {_num(ratio.ratio)} "
             f"[{_num(ratio.ratio_interval[0])}, {_num(ratio.ratio_interval[1])}] (target >= {ratio.target:g}: {ratio.verdict}); "
             f"policy {_num(ratio.policy_sharpe)}, best rule {_num(ratio.best_rule_sharpe)} [{_num(low)}, {_num(high)}], "
             f"the rule chosen per fold by its training-day Sharpe ({folds})"
             + ("" if ratio.best_rule_sharpe > 0 else "; the rule has no edge on these days, so no ratio")]
    rules = ", ".join(f"{name} {_num(value)}" for name, value in ratio.rule_sharpes.items())
    lines.append(f"simple rules' Sharpe on the test days: {rules}; against the better of them on the test days "
                 f"({ratio.test_day_best}, a choice made on the test days) the ratio is {_num(ratio.test_day_ratio)}")
    return lines


def rule_choice_text(row) -> str:
    """The end of evaluate's line for one fold's floor choices (a ``FloorChoiceRow``): what each rule chose and which
    was the best by training Sharpe; empty where the rules were not tried."""
    if not row.best_rule:
        return ""
    sharpes = ", ".join(f"{name} {_num(value)}" for name, value in row.rule_train_sharpes.items())
    return (f", first half hour held {row.first_half_hour_hold_minutes} min (training nets {_nets(row.first_half_hour_nets)}), "
            f"fade {row.fade_sigmas:g} sigma (training nets {_nets(row.fade_nets)}); best rule by training Sharpe "
            f"{row.best_rule} ({sharpes})")


def _nets(nets: dict) -> str:
    return ", ".join(f"{key}: ${value:,.0f}" for key, value in nets.items()) or "n/a"


def _num(value: float) -> str:
    return f"{value:.2f}" if isinstance(value, float) and math.isfinite(value) else "n/a"
