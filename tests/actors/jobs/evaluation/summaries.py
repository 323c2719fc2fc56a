"""A small evaluation summary for tests of what reads it (the headline, the success table, the chart)."""

from __future__ import annotations

import msgspec

from actors.jobs.evaluation.summary import (
    Comparison, Deflation, Pbo, PolicyFigures, Snooping, Summary, TrackRecord, VariantFigures,
)

NAN = float("nan")


def a_variant(pnl_per_day: float = 0.0, sharpe: float = NAN, **changes) -> VariantFigures:
    figures = VariantFigures(net_pnl=pnl_per_day * 10, pnl_per_day=pnl_per_day, pnl_per_day_interval=(NAN, NAN), sharpe=sharpe,
                             trades=10, median_trades_per_day=1.0, win_rate=0.5, halted_share=0.0, breaches=0)
    return msgspec.structs.replace(figures, **changes)


def a_track_record(**changes) -> TrackRecord:
    return msgspec.structs.replace(TrackRecord(days=100, min_days_vs_zero=50.0, min_days_vs_trials=80.0, enough=True,
                                               too_few=False), **changes)


def a_deflation(dsr: float = 0.99, **changes) -> Deflation:
    return msgspec.structs.replace(Deflation(dsr=dsr, dsr_trials=1, dsr_runs=1, dsr_sharpe_variance=0.0, dsr_benchmark_sharpe=0.0,
                                             track_record=a_track_record(), dsr_trials_this_run=1), **changes)


def a_summary(**changes) -> Summary:
    """A walk-forward on regimes with one policy seed, the momentum floor it does not beat and a DSR of 0.99."""
    policy = PolicyFigures(**msgspec.structs.asdict(a_variant(100.0, 4.0)), sharpe_interval=(3.5, 4.5))
    summary = Summary(
        market="regimes", test_days=100, folds=2, seeds=[0], budgets=[100], policy=policy, psr=0.99, deflation=a_deflation(),
        pbo=Pbo(pbo=0.1, n_combinations=70),
        oracle_share=0.4, oracle_share_interval=(0.35, 0.45), momentum_floor="momentum",
        comparisons={"momentum": Comparison(pnl_per_day_difference=-5.0, interval=(-20.0, 10.0), p_value_reality_check=0.5,
                                            p_value_spa=0.5, variants_beating_it=[], beats=False)},
        snooping=Snooping(p_value_spa=0.5, p_value_spa_lower=0.5, p_value_spa_upper=0.5, p_value_reality_check=0.5, superior=[],
                          candidates=["policy@100#0"], days=100),
        variants={"policy@100#0": policy}, floor_choices=[], learning_curve=[], training=[], ensemble=None)
    return msgspec.structs.replace(summary, **changes)
