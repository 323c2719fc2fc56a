"""From out-of-sample daily P&L to evidence: intervals, floors, the ceiling, PSR/DSR, PBO and the success table.

Every figure is computed on the walk-forward's test days only. A verdict is "met" only when
the whole 95 % interval clears the target, "not met" when the whole interval misses it, and
"not evidence" when the interval straddles it, the figure is undefined, or this run did not
measure it (the LLM and fusion rows of a policy-only walk-forward; ``--lockstep-decisions N`` measures them in a
lockstep backtest of the last fold's policy: actors/jobs/evaluation/lockstep_evidence.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import msgspec
import numpy as np

from actors.common.statistics import (
    bootstrap_interval, bootstrap_mean_interval, deflated_sharpe, expected_max_sharpe, min_track_record_length, per_draw,
    probabilistic_sharpe, wilson_interval,
)
from actors.jobs.evaluation.cadence import candidate_series
from actors.jobs.evaluation.floors import FIXED_FLOORS, MOMENTUM, REGIME_RULE, RULE_FLOORS, SUPERVISED
from actors.jobs.evaluation.rule_ratio import rule_ratio
from actors.jobs.evaluation.significance import data_snooping_tests, pbo_cscv
from actors.jobs.evaluation.summary import (
    Beats, Comparison, Deflation, Difference, Ensemble, FloorChoiceRow, LearningPoint, Pbo, PolicyFigures, Snooping, Summary,
    TrackRecord, VariantFigures,
)
from actors.jobs.evaluation.trials import LedgerTrials, counted_trials, deflated_variant, per_day_sharpe
from actors.jobs.evaluation.walkforward import WalkForward, annualised_sharpe, ensemble_name

FLOORS = (*FIXED_FLOORS, MOMENTUM, REGIME_RULE, *RULE_FLOORS, SUPERVISED)
"""Every floor the policy is compared with; the momentum lookback, the regime rule's threshold and the simple rules'
settings were chosen on each fold's training days (actors/jobs/evaluation/floors.py). The regime rule is a threshold on the policy's own
market-regime feature: compared, not a floor the verdict needs."""
BENCHMARK = "flat"
"""SPA / StepM's benchmark for every candidate at once: does anything beat doing nothing, after costs?"""
SNOOPING_REPS = 1000
DSR_TARGET = 0.95
ORACLE_SHARE_TARGET = 0.30


@dataclass(frozen=True)
class Row:
    """One row of the success table."""

    figure: str
    value: float
    low: float
    high: float
    target: str
    verdict: str
    note: str = ""


class FusionEvidence(Protocol):
    """What fills the fusion and LLM rows: a lockstep run's scores (actors/jobs/evaluation/lockstep_evidence.py
    ``LockstepEvidence``; not imported here, it imports this module)."""

    def rows(self) -> list[Row]:
        """Fusion accuracy, LLM accuracy before -> after, RL/LLM agreement, then any further rows."""

    def to_json(self) -> dict:
        """metrics.json's ``lockstep``."""


def verdict_at_least(value: float, low: float, high: float, target: float) -> str:
    if not all(map(math.isfinite, (value, low, high))):
        return "not evidence"
    if low >= target:
        return "met"
    if high < target:
        return "not met"
    return "not evidence"


def verdict_between(value: float, low: float, high: float, lower: float, upper: float) -> str:
    if not all(map(math.isfinite, (value, low, high))):
        return "not evidence"
    if low >= lower and high <= upper:
        return "met"
    if band_side(low, high, lower, upper):
        return "not met"
    return "not evidence"


def band_side(low: float, high: float, lower: float, upper: float) -> str:
    """Which side of the band [lower, upper] a whole interval lies on ("above the band", "below the band"), else ""
    (the interval touches the band; NaN bounds lie on no side)."""
    if low > upper:
        return "above the band"
    if high < lower:
        return "below the band"
    return ""


def _bootstrap_days(daily: np.ndarray, statistic) -> tuple[float, float]:
    """The 95 % interval of ``statistic`` (of one sample of days) over iid resamples of the days."""
    return bootstrap_interval(daily, per_draw(statistic))


def pooled_policy_days(result: WalkForward, budget: int | None = None) -> np.ndarray:
    """The policy's OOS daily P&L averaged over seeds (one series: a seed is a trial, not a day)."""
    names = result.policy_names(budget)
    return np.mean([result.series[name].daily_pnl for name in names], axis=0)


def _variant_figures(s, days: np.ndarray, capital: float) -> VariantFigures:
    return VariantFigures(
        net_pnl=float(days.sum()), pnl_per_day=float(days.mean()) if len(days) else float("nan"),
        pnl_per_day_interval=bootstrap_mean_interval(days), sharpe=annualised_sharpe(days, capital), trades=s.trades,
        median_trades_per_day=float(np.median(s.day_trades)) if s.day_trades else float("nan"),
        win_rate=s.wins / s.trades if s.trades else float("nan"),
        halted_share=s.halted_bars / s.bars if s.bars else float("nan"), breaches=s.breaches)


def _sharpe_interval(days: np.ndarray, capital: float) -> tuple[float, float]:
    return _bootstrap_days(days, lambda d: annualised_sharpe(d, capital))


def summarise(result: WalkForward, capital: float, lockstep: FusionEvidence | None = None,
              trials: LedgerTrials | None = None) -> Summary:
    """Every figure of the evaluation (NaN where undefined); ``lockstep`` fills the fusion and LLM rows;
    ``trials`` (the trials ledger's policy trials on this market, this run's included) are the deflated Sharpe's
    N and V, else this run's own variants alone."""
    series = {name: np.asarray(s.daily_pnl) for name, s in result.series.items()}
    policy = pooled_policy_days(result)
    variants = {name: _variant_figures(result.series[name], days, capital) for name, days in series.items()}
    # Every policy variant tried (budgets x seeds, and each budget's ensemble) is a candidate of SPA / StepM and,
    # with every one the ledger holds for this market, a trial of the deflated Sharpe.
    trial_names = [name for name in series if name.startswith(("policy@", "ensemble@"))]
    own_names = trial_names + ([deflated_variant(result)] if len(result.seeds) > 1 else [])  # the seeds' mean is a trial
    candidates = candidate_series(getattr(result, "policy_choices", []))  # the settings each fold tried on its validation days: trials too
    own = LedgerTrials([per_day_sharpe(series.get(name, policy)) for name in own_names]
                       + [per_day_sharpe(days / capital) for days in candidates.values()], own_names + list(candidates), 1)
    trials = counted_trials(trials, own)
    returns = policy / capital
    floors = [name for name in FLOORS if name in series]
    comparisons = {}
    for floor in floors:
        diff = policy - series[floor]
        low, high = bootstrap_mean_interval(diff)
        # SPA / reality check of every policy variant against this floor: the best of them is tested, all of them counted.
        tests = _snooping({name: series[name] for name in trial_names}, series[floor])
        comparisons[floor] = Comparison(pnl_per_day_difference=float(diff.mean()), interval=(low, high),
                                        p_value_reality_check=tests.p_value_reality_check, p_value_spa=tests.p_value_spa,
                                        variants_beating_it=tests.superior, beats=bool(low > 0))
    snooping = _snooping({name: series[name] for name in [*trial_names, *floors] if name != BENCHMARK}, series[BENCHMARK])
    oracle = series.get("oracle")
    learning_curve = []
    for budget in result.budgets:
        pooled = pooled_policy_days(result, budget)
        per_seed = [annualised_sharpe(np.asarray(result.series[name].daily_pnl), capital) for name in result.policy_names(budget)]
        learning_curve.append(LearningPoint(
            timesteps=budget, pnl_per_day=float(pooled.mean()), pnl_per_day_interval=bootstrap_mean_interval(pooled),
            sharpe=annualised_sharpe(pooled, capital), sharpe_per_seed=per_seed, sharpe_interval=_sharpe_interval(pooled, capital),
            trades_per_day=float(np.mean([result.series[n].trades / max(len(result.series[n].daily_pnl), 1)
                                          for n in result.policy_names(budget)]))))
    names = result.policy_names()
    first = variants[names[0]]
    summary = Summary(
        market=result.market, test_days=len(policy), folds=len(result.folds), seeds=result.seeds, budgets=result.budgets,
        policy=PolicyFigures(
            net_pnl=first.net_pnl, pnl_per_day=float(policy.mean()), pnl_per_day_interval=bootstrap_mean_interval(policy),
            sharpe=annualised_sharpe(policy, capital), trades=int(np.mean([result.series[n].trades for n in names])),
            median_trades_per_day=_median_day_trades([result.series[n] for n in names]),
            win_rate=_pooled_win_rate(result)[0], halted_share=float(np.mean([variants[n].halted_share for n in names])),
            breaches=first.breaches, sharpe_interval=_sharpe_interval(policy, capital)),
        psr=probabilistic_sharpe(returns), deflation=deflation(returns, trials, own.count, dsr_of=deflated_variant(result)),
        pbo=_pbo([series[name] for name in [*trial_names, *[f for f in floors if f != BENCHMARK]]]),
        oracle_share=_oracle_share(policy, oracle), oracle_share_interval=_oracle_share_interval(policy, oracle),
        momentum_floor=MOMENTUM, comparisons=comparisons, snooping=snooping, variants=variants,
        floor_choices=[FloorChoiceRow(fold=k, momentum_lookback=choice.momentum_lookback, regime_threshold=choice.regime_threshold,
                                      train_days=list(choice.train_days),
                                      momentum_nets={str(n): v for n, v in choice.momentum_nets.items()},
                                      regime_nets={str(t): v for t, v in choice.regime_nets.items()},
                                      **(choice.supervised.params() if choice.supervised else {}), **_rule_choice(choice))
                       for k, choice in enumerate(result.floor_choices)],
        simple_rules=rule_ratio(result, policy, verdict_at_least),
        learning_curve=learning_curve, training=result.training, ensemble=_ensemble_summary(result, series, MOMENTUM, capital),
        lockstep=lockstep.to_json() if lockstep is not None else None, diagnostics=result.diagnostics,
        policy_choices=[choice.to_json() for choice in getattr(result, "policy_choices", [])])
    summary = msgspec.structs.replace(summary, success_table=success_rows(summary, result, lockstep))
    return msgspec.structs.replace(summary, verdict=headline(summary))


def _rule_choice(choice) -> dict:
    """A FloorChoiceRow's simple-rule fields (none where the rules were not tried on the fold)."""
    if not choice.rule_train_sharpes:
        return {}
    return {"first_half_hour_hold_minutes": choice.first_half_hour_hold, "fade_sigmas": choice.fade_sigmas,
            "first_half_hour_nets": {str(h): v for h, v in choice.first_half_hour_nets.items()},
            "fade_nets": {f"{s:g}": v for s, v in choice.fade_nets.items()},
            "rule_train_sharpes": dict(choice.rule_train_sharpes), "best_rule": choice.best_rule}


def _snooping(candidates: dict[str, np.ndarray], benchmark: np.ndarray) -> Snooping:
    return msgspec.convert(data_snooping_tests(candidates, benchmark, reps=SNOOPING_REPS), Snooping)


def deflation(returns: np.ndarray, trials: LedgerTrials, this_run: int, **where: str) -> Deflation:
    """The deflated Sharpe of ``returns`` (daily, over the start balance) with N and V of ``trials`` (``this_run`` of
    them tried by this run), the daily Sharpe the best of N trials reaches by luck alone, and the minimum track record
    against 0 and against that: what evaluate's summary and the main job's phase 3 both print (``evidence_lines`` in
    actors/jobs/evaluate.py); ``where``: the ledger read and the market, where known."""
    benchmark = expected_max_sharpe(trials.count, trials.variance)
    return Deflation(dsr=deflated_sharpe(returns, trials.count, trials.variance), dsr_trials=trials.count, dsr_runs=trials.runs,
                     dsr_sharpe_variance=trials.variance, dsr_benchmark_sharpe=benchmark,
                     track_record=track_record(returns, benchmark), dsr_trials_this_run=this_run, **where)


def track_record(returns: np.ndarray, deflated_benchmark: float) -> TrackRecord:
    """How many test days the observed Sharpe needs (Bailey & Lopez de Prado 2012, MinTRL) for PSR 0.95 against 0 and
    against the deflated benchmark, beside how many there are; ``enough`` says whether any verdict on the Sharpe can be
    drawn from these days."""
    days = len(returns)
    against_zero = min_track_record_length(returns, 0.0, DSR_TARGET)
    against_trials = min_track_record_length(returns, deflated_benchmark, DSR_TARGET)
    return TrackRecord(days=days, min_days_vs_zero=against_zero, min_days_vs_trials=against_trials,
                       enough=bool(math.isfinite(against_trials) and days >= against_trials),
                       too_few=bool(math.isfinite(against_trials) and days < against_trials))


def _ensemble_summary(result: WalkForward, series: dict[str, np.ndarray], momentum: str, capital: float) -> Ensemble | None:
    """The last budget's ensemble of seeds (one account trading the seeds' mean distribution), against the momentum
    floor (its lookback chosen on the training days), the oracle and the mean of its seeds; None with one seed."""
    days = series.get(ensemble_name(result.budgets[-1]))
    if days is None:
        return None
    diff = days - series[momentum]
    over_seeds = days - pooled_policy_days(result)
    low, high = bootstrap_mean_interval(diff)
    return Ensemble(name=ensemble_name(result.budgets[-1]), seeds=len(result.seeds), pnl_per_day=float(days.mean()),
                    pnl_per_day_interval=bootstrap_mean_interval(days), sharpe=annualised_sharpe(days, capital),
                    vs_momentum=Beats(pnl_per_day_difference=float(diff.mean()), interval=(low, high), beats=bool(low > 0)),
                    vs_seeds_mean=Difference(pnl_per_day_difference=float(over_seeds.mean()),
                                             interval=bootstrap_mean_interval(over_seeds)),
                    oracle_share=_oracle_share(days, series.get("oracle")),
                    oracle_share_interval=_oracle_share_interval(days, series.get("oracle")))


def oracle_has_an_edge(oracle: np.ndarray | None) -> bool:
    """A share of the oracle means something only where the oracle earns: its daily mean's interval is above 0.
    On ``null`` the hidden regime drives only the volatility, so the oracle makes ~$0 a day and a share of it
    (-9.7 in one run) would be noise divided by noise."""
    if oracle is None or len(oracle) < 2 or oracle.sum() <= 0:
        return False
    return bootstrap_mean_interval(np.asarray(oracle, dtype=np.float64))[0] > 0


def _oracle_share(policy: np.ndarray, oracle: np.ndarray | None) -> float:
    if not oracle_has_an_edge(oracle):
        return float("nan")
    return float(policy.sum() / oracle.sum())


def _oracle_share_interval(policy: np.ndarray, oracle: np.ndarray | None) -> tuple[float, float]:
    if not oracle_has_an_edge(oracle) or len(policy) < 2:
        return float("nan"), float("nan")
    paired = np.stack([policy, oracle], axis=1)
    return _bootstrap_days(paired, lambda d: d[:, 0].sum() / d[:, 1].sum() if d[:, 1].sum() > 0 else float("nan"))


def _pbo(columns: list) -> Pbo:
    matrix = np.stack([np.asarray(c, dtype=np.float64) for c in columns], axis=1)
    splits = min(16, (matrix.shape[0] // 2) * 2)
    if splits < 4 or matrix.shape[1] < 2:
        return Pbo(pbo=float("nan"), n_combinations=0, why="too few test days or variants")
    out = pbo_cscv(matrix, n_splits=splits)
    return Pbo(pbo=float(out["pbo"]), n_combinations=int(out["n_combinations"]), variants=matrix.shape[1], splits=splits)


def _pooled_win_rate(result: WalkForward) -> tuple[float, float, float]:
    wins = sum(result.series[n].wins for n in result.policy_names())
    trades = sum(result.series[n].trades for n in result.policy_names())
    low, high = wilson_interval(wins, trades)
    return (wins / trades if trades else float("nan")), low, high


def success_rows(summary: Summary, result: WalkForward, lockstep: FusionEvidence | None = None) -> list[Row]:
    """The seeds' targets; the fusion and LLM rows come from ``lockstep`` (with fused minus RL-only after them), else
    they are "not evidence" (a policy-only walk-forward does not measure them)."""
    policy, deflated = summary.policy, summary.deflation
    win, win_low, win_high = _pooled_win_rate(result)
    sharpe_low, sharpe_high = policy.sharpe_interval
    share_low, share_high = summary.oracle_share_interval
    dsr = deflated.dsr
    not_here = ("measured by the lockstep backtest and bin/bench lora, not by this policy-only walk-forward "
                "(--lockstep-decisions N measures it)")
    nan = float("nan")
    if lockstep is not None:
        fusion_rows = lockstep.rows()
    else:
        fusion_rows = [Row("fusion accuracy", nan, nan, nan, "0.85-0.90", "not evidence", not_here),
                       Row("LLM accuracy before -> after", nan, nan, nan, "0.60 -> 0.75", "not evidence", not_here),
                       Row("RL/LLM agreement", nan, nan, nan, "0.65-0.75", "not evidence", not_here)]
    return [
        Row("win rate (RL + risk, OOS trades)", win, win_low, win_high, "0.58-0.62", verdict_between(win, win_low, win_high, 0.58, 0.62),
            band_side(win_low, win_high, 0.58, 0.62)),
        Row("daily Sharpe (annualised, OOS)", policy.sharpe, sharpe_low, sharpe_high, ">= 3",
            verdict_at_least(policy.sharpe, sharpe_low, sharpe_high, 3.0)),
        Row("oracle share (net P&L / oracle's)", summary.oracle_share, share_low, share_high, f">= {ORACLE_SHARE_TARGET:.2f}",
            verdict_at_least(summary.oracle_share, share_low, share_high, ORACLE_SHARE_TARGET),
            "" if math.isfinite(summary.oracle_share) else "no oracle (real data), or the oracle has no edge here (null)"),
        Row("deflated-Sharpe probability", dsr, dsr, dsr, f">= {DSR_TARGET}", dsr_verdict(dsr, deflated.track_record),
            f"of {deflated.dsr_of or 'the policy'}, one of {deflated.dsr_trials} trials on this market in the ledger "
            f"({deflated.dsr_trials_this_run} this run)"
            + too_few_note(deflated.track_record)),
        *_ensemble_rows(summary.ensemble),
        *fusion_rows,
    ]


def _median_day_trades(series: list) -> float:
    """The median of the trades entered a test day, over every seed's days (NaN without days)."""
    days = [count for s in series for count in s.day_trades]
    return float(np.median(days)) if days else float("nan")


def dsr_verdict(dsr: float, record: TrackRecord | None) -> str:
    """met / not met, or "not evidence" when undefined or when the test days are fewer than the minimum track record
    (a low probability then says only that there were too few days, not that there is no edge)."""
    if not math.isfinite(dsr) or (record is not None and record.too_few and dsr < DSR_TARGET):
        return "not evidence"
    return "met" if dsr >= DSR_TARGET else "not met"


def too_few_note(record: TrackRecord | None) -> str:
    if record is None or not record.too_few:
        return ""
    return (f"; too few days for a verdict: {record.days} test days, the observed Sharpe needs "
            f"{math.ceil(record.min_days_vs_trials):,}")


def _ensemble_rows(ensemble: Ensemble | None) -> list[Row]:
    """The oracle share of the seeds' ensemble (one more trial of the deflated Sharpe), where there is one."""
    if ensemble is None or not math.isfinite(ensemble.oracle_share):
        return []
    share, (low, high) = ensemble.oracle_share, ensemble.oracle_share_interval
    return [Row(f"oracle share, ensemble of the {ensemble.seeds} seeds", share, low, high, f">= {ORACLE_SHARE_TARGET:.2f}",
                verdict_at_least(share, low, high, ORACLE_SHARE_TARGET), "counted among the deflated Sharpe's trials")]


def headline(summary: Summary) -> str:
    """One sentence a user reads first: is there evidence of an edge, and does it beat the momentum rule?"""
    momentum = summary.comparisons[summary.momentum_floor]
    dsr, record = summary.deflation.dsr, summary.deflation.track_record
    if summary.policy.trades == 0:
        edge = "no evidence of an edge (the policy never traded: it found nothing worth a trade's costs)"
    elif not (math.isfinite(dsr) and dsr >= DSR_TARGET):
        edge = f"no evidence of an edge (deflated-Sharpe probability {dsr:.2f} < {DSR_TARGET})"
    else:
        edge = f"evidence of an edge (deflated-Sharpe probability {dsr:.2f} >= {DSR_TARGET})"
    beats = "beats" if momentum.beats else "does not beat"
    sentence = (f"{summary.market}: {edge}; the policy {beats} the momentum rule (its lookback chosen on the training days) "
                "out of sample")
    if record.too_few:
        sentence += f"; {record.days} test days are too few for a verdict on the Sharpe"
    ensemble = summary.ensemble
    if ensemble is not None:
        versus = ensemble.vs_momentum
        low, high = versus.interval
        sentence += (f"; the ensemble of its {ensemble.seeds} seeds {'beats' if versus.beats else 'does not beat'} it "
                     f"({versus.pnl_per_day_difference:+,.0f} $ a day [{low:+,.0f}, {high:+,.0f}])")
    return sentence
