"""The simple rules as floors: chosen on the training days, in evaluate's table, SPA and ledger, and the policy's Sharpe
over the best rule's on the same test days."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actors.common.statistics import TRADING_DAYS_PER_YEAR, sharpe_ratio
from actors.env.references import FADE_SIGMAS, FIRST_HALF_HOUR_HOLDS, fade_policy, first_half_hour_policy
from actors.jobs.config import load_config
from actors.jobs.evaluation.chain import play_window
from actors.jobs.evaluation import evidence
from actors.jobs.evaluation.evidence import summarise, verdict_at_least
from actors.jobs.evaluation.floors import FADE, FIRST_HALF_HOUR, FloorChoice, chosen_floors, fit_floors
from actors.jobs.evaluation.folds import Fold
from actors.jobs.evaluation.rule_ratio import rule_choice_text, rule_ratio, rule_ratio_lines
from actors.jobs.evaluation.trials import walk_forward_records
from actors.jobs.evaluation.walkforward import VariantSeries, WalkForward, day_split

DAYS = 3


def sharpe(days) -> float:
    return sharpe_ratio(np.asarray(days, dtype=np.float64), TRADING_DAYS_PER_YEAR)


def test_each_rule_takes_the_setting_that_nets_most_on_the_training_days_and_the_best_rule_has_the_higher_sharpe():
    from actors.env.factory import build_dataset

    config = load_config(None, {"data.scenario": "realistic", "data.synthetic_days": DAYS})
    dataset = build_dataset(config.data, config.account, 0, 0.25)
    train = day_split(dataset, "train", 1, DAYS)

    choice = fit_floors(config, train, (1, DAYS), regime_feature=False, supervised=False)

    first = {h: play_window(config, train, first_half_hour_policy(h), risk=False) for h in FIRST_HALF_HOUR_HOLDS}
    fade = {s: play_window(config, train, fade_policy(s), risk=False) for s in FADE_SIGMAS}
    assert choice.first_half_hour_nets == {h: w.net_pnl for h, w in first.items()}
    assert choice.fade_nets == {s: w.net_pnl for s, w in fade.items()}
    assert choice.first_half_hour_hold == max(first, key=lambda h: first[h].net_pnl)
    assert choice.fade_sigmas == max(fade, key=lambda s: fade[s].net_pnl)
    sharpes = {FIRST_HALF_HOUR: sharpe(first[choice.first_half_hour_hold].daily_pnl),
               FADE: sharpe(fade[choice.fade_sigmas].daily_pnl)}
    assert choice.rule_train_sharpes == pytest.approx(sharpes)
    assert choice.best_rule == max(sharpes, key=sharpes.get)
    assert {FIRST_HALF_HOUR, FADE} <= set(chosen_floors(choice, None, seed=0))
    # the ledger's params: the choice, the grid it was made from, and the training Sharpe
    assert choice.params_of(FADE) == {"fade_sigmas": choice.fade_sigmas, "fade_sigmas_grid": "1.5,2,2.5", "fade_lookback_bars": 15,
                                      "fade_hold_bars": 10, "train_sharpe": pytest.approx(sharpes[FADE]),
                                      "best_rule": choice.best_rule == FADE}
    assert choice.params_of(FIRST_HALF_HOUR)["first_half_hour_hold_grid"] == "30,60"


def series_of(name: str, folds: list[list[float]], trades: int = 10) -> VariantSeries:
    s = VariantSeries(name, trades=trades, day_trades=[1] * sum(map(len, folds)))
    for days in folds:
        s.daily_pnl.extend(days)
        s.fold_days.append(len(days))
    return s


def a_walk_forward(best_rules: tuple[str, str], days: int = 30) -> WalkForward:
    """Two folds of ``days`` days: a policy, the two rules (the first half hour earns steadily in fold 1, the fade in
    fold 2), momentum and flat; each fold's best rule by training Sharpe as given."""
    rng = np.random.default_rng(0)
    folds = [Fold(k, 0, 10, 10 + days * k, 10 + days * (k + 1), 11 + days * (k + 1)) for k in range(2)]
    policy = [list(rng.normal(20.0, 100.0, days)) for _ in folds]
    first = [list(rng.normal(40.0, 100.0, days)), list(rng.normal(-10.0, 100.0, days))]
    fade = [list(rng.normal(-10.0, 100.0, days)), list(rng.normal(40.0, 100.0, days))]
    series = {"policy@100#0": series_of("policy@100#0", policy), FIRST_HALF_HOUR: series_of(FIRST_HALF_HOUR, first, days),
              FADE: series_of(FADE, fade, 3 * days),
              "momentum": series_of("momentum", [list(rng.normal(0, 100, days)) for _ in folds]),
              "flat": series_of("flat", [[0.0] * days, [0.0] * days], 0)}
    choices = [FloorChoice(60, 0.4, (0, 10), rule_train_sharpes={FIRST_HALF_HOUR: 2.0 if best == FIRST_HALF_HOUR else 1.0,
                                                                  FADE: 2.0 if best == FADE else 1.0})
               for best in best_rules]
    return WalkForward("realistic", folds, [0], [100], series, floor_choices=choices)


def test_the_ratio_divides_by_the_rule_each_fold_chose_on_its_training_days_and_shows_the_test_day_choice_beside():
    result = a_walk_forward((FIRST_HALF_HOUR, FADE))
    policy = np.asarray(result.series["policy@100#0"].daily_pnl)
    chosen_days = np.concatenate([result.series[FIRST_HALF_HOUR].daily_pnl[:30], result.series[FADE].daily_pnl[30:]])

    ratio = rule_ratio(result, policy, verdict_at_least)

    assert ratio.chosen_by_fold == [FIRST_HALF_HOUR, FADE]
    assert ratio.best_rule_sharpe == pytest.approx(sharpe(chosen_days))
    assert ratio.ratio == pytest.approx(sharpe(policy) / sharpe(chosen_days)) and ratio.target == 0.8
    low, high = ratio.ratio_interval
    assert low < ratio.ratio < high and ratio.verdict in ("met", "not met", "not evidence")
    assert ratio.rule_sharpes == pytest.approx({name: sharpe(result.series[name].daily_pnl) for name in (FIRST_HALF_HOUR, FADE)})
    test_best = max(ratio.rule_sharpes, key=ratio.rule_sharpes.get)
    assert ratio.test_day_best == test_best and ratio.test_day_ratio == pytest.approx(sharpe(policy) / ratio.rule_sharpes[test_best])
    lines = rule_ratio_lines(ratio)
    assert "target >= 0.8" in lines[0] and "training-day Sharpe (first_half_hour, fade_15bar)" in lines[0]
    assert "a choice made on the test days" in lines[1]

    # The other choice per fold divides by the other days: the rule is not picked on the test days.
    flipped = rule_ratio(a_walk_forward((FADE, FIRST_HALF_HOUR)), policy, verdict_at_least)
    assert flipped.chosen_by_fold == [FADE, FIRST_HALF_HOUR] and flipped.best_rule_sharpe < ratio.best_rule_sharpe


def test_no_ratio_where_the_best_rule_has_no_edge_and_none_where_the_rules_did_not_play():
    result = a_walk_forward((FIRST_HALF_HOUR, FIRST_HALF_HOUR))
    for k, days in enumerate(([-50.0, 10.0] * 15, [-40.0, 5.0] * 15)):
        result.series[FIRST_HALF_HOUR].daily_pnl[30 * k:30 * (k + 1)] = days
    ratio = rule_ratio(result, np.asarray(result.series["policy@100#0"].daily_pnl), verdict_at_least)
    assert math.isnan(ratio.ratio) and ratio.verdict == "not evidence" and "no edge" in rule_ratio_lines(ratio)[0]

    del result.series[FADE]
    assert rule_ratio(result, np.zeros(60), verdict_at_least) is None and rule_ratio_lines(None) == []


def test_the_rules_are_floors_of_evaluates_table_its_spa_and_its_ledger(monkeypatch):
    monkeypatch.setattr(evidence, "SNOOPING_REPS", 100)  # what is asserted is who is compared, not the p-values' digits
    result = a_walk_forward((FIRST_HALF_HOUR, FADE), days=5)  # 10 days: PBO's blocks stay few

    summary = summarise(result, 100_000.0)

    for name in (FIRST_HALF_HOUR, FADE):
        assert name in summary.variants and summary.variants[name].trades == result.series[name].trades
        assert name in summary.comparisons and math.isfinite(summary.comparisons[name].p_value_spa)
        assert name in summary.snooping.candidates  # every floor is a candidate of SPA against flat
    assert summary.simple_rules is not None and summary.simple_rules.chosen_by_fold == [FIRST_HALF_HOUR, FADE]
    assert summary.to_json()["simple_rules"]["target"] == 0.8  # metrics.json
    assert [row.best_rule for row in summary.floor_choices] == [FIRST_HALF_HOUR, FADE]
    assert rule_choice_text(summary.floor_choices[1]).endswith("best rule by training Sharpe fade_15bar (first_half_hour 1.00, fade_15bar 2.00)")
    records = walk_forward_records(result, 100_000.0, config_hash="h", commit="c", date="d")
    rules = {(r.variant, r.fold): r for r in records if r.variant in (FIRST_HALF_HOUR, FADE)}
    assert len(rules) == 4 and {r.role for r in rules.values()} == {"floor"}
    assert rules[(FADE, 1)].params["best_rule"] is True and rules[(FADE, 0)].params["best_rule"] is False
    assert rules[(FIRST_HALF_HOUR, 0)].params["first_half_hour_hold_grid"] == "30,60"
