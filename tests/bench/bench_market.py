"""Synthetic market benchmark (``bin/bench market``): is the market as hard as real NQ, and what do simple rules earn?

For each scenario (default ``realistic`` and ``realistic_null``) and seed (default 3 seeds of 500 sessions):
- the calibration table (actors/common/market_stats.py calibration_table): every figure per seed beside
  real NQ's band, and how many seeds fall in it (the variance ratios in their textbook form, as the real
  bands were measured; the debiased form on the line below each, information only);
- the simple rules of actors/common/market_stats_rules.py after the configured costs (instrument and
  env.contracts_per_trade of config/default.toml, 3 MNQ: $0.62 commission + 1 tick a side a contract):
  net dollars a day and the annualised Sharpe with its 95 % interval, pooled over the seeds' days,
  then per seed.

    bin/bench market [--days 500] [--seeds 3] [--scenarios realistic,realistic_null] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from actors.common.instruments import resolve_instrument
from actors.common.market_stats import REAL_NQ_RANGES, calibration_table
from actors.common.market_stats_rules import RuleCosts, rule_daily_pnl, summarise
from actors.common.realistic import generate_scenario
from actors.jobs.config import load_config
from tests.bench.common import machine_line


def calibration_lines(tables: list) -> list[str]:
    seeds = len(tables)
    lines = [f"{'figure':<28} {'real range':>17}  " + "  ".join(f"{f'seed {k}':>9}" for k in range(seeds)) + "  in range"]
    for name, real in REAL_NQ_RANGES.items():
        values = [next(row for row in table.rows if row.figure == name) for table in tables]
        band = f"{real.low:.4g} .. {real.high:.4g}{'' if real.measured else '*'}"
        lines.append(f"{name:<28} {band:>17}  " + "  ".join(f"{row.value:>9.4g}" for row in values)
                     + f"  {sum(row.in_range for row in values)}/{seeds}")
        if values[0].debiased is not None:
            lines.append(f"{'  debiased (information)':<28} {'':>17}  " + "  ".join(f"{row.debiased:>9.4g}" for row in values))
    lines.append("* = band from the literature or assumed (REAL_NQ_RANGES says which)")
    return lines


def rule_lines(per_seed: list[dict[str, tuple[np.ndarray, np.ndarray]]]) -> list[str]:
    lines = [f"{'rule':<27} {'$/day':>8} {'Sharpe':>7} {'95 % interval':>17} {'trips/day':>9}   per seed Sharpe"]
    for rule in per_seed[0]:
        net = np.concatenate([seed[rule][0] for seed in per_seed])
        trips = np.concatenate([seed[rule][1] for seed in per_seed])
        pooled = summarise(rule, net, trips)
        each = [summarise(rule, *seed[rule]).sharpe for seed in per_seed]
        lines.append(f"{rule:<27} {pooled.mean_usd:>8.1f} {pooled.sharpe:>7.2f} [{pooled.sharpe_low:>6.2f}, {pooled.sharpe_high:>6.2f}] "
                     f"{pooled.round_trips_a_day:>9.1f}   " + " ".join(f"{value:.2f}" for value in each))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=500, help="sessions per seed (default 500)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1 (default 3)")
    parser.add_argument("--scenarios", default="realistic,realistic_null", help="comma-separated data.scenario names")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config override (instrument.symbol=NQ ...)")
    args = parser.parse_args()
    config = load_config(overrides=args.set)
    instrument = resolve_instrument(config.instrument)
    costs = RuleCosts.of(instrument, config.env.contracts_per_trade)
    print(machine_line())
    print(f"costs: {costs.contracts} {instrument.symbol}, ${costs.per_side_usd:.2f} a side a contract "
          f"(commission {instrument.commission_per_side} + {instrument.slippage_ticks} tick); {args.days} sessions x {args.seeds} seeds")
    for name in args.scenarios.split(","):
        started = time.perf_counter()
        markets = [generate_scenario(args.days, seed=seed, start_price=config.data.synthetic_start_price, market=name) for seed in range(args.seeds)]
        generated = time.perf_counter() - started
        print(f"\n== {name}: generated {args.days * args.seeds} sessions in {generated:.2f} s")
        print("\n".join(calibration_lines([calibration_table(market.bars) for market in markets])))
        print()
        print("\n".join(rule_lines([rule_daily_pnl(market.bars, costs) for market in markets])))


if __name__ == "__main__":
    main()
