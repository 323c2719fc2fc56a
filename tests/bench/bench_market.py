"""Synthetic market benchmark (``bin/bench market``): is the market as hard as real NQ, and what do simple rules earn?

For each scenario (default ``realistic`` and ``realistic_null``) and seed (default 3 seeds of 500 sessions):
- the calibration table (actors/common/market_stats.py calibration_table): every figure per seed beside
  real NQ's band, and how many seeds fall in it (the variance ratios in their textbook form, as the real
  bands were measured; the debiased form on the line below each, information only);
- the simple rules of actors/common/market_stats_rules.py after the configured costs (instrument and
  env.contracts_per_trade of config/default.toml, 3 MNQ: $0.62 commission + 1 tick a side a contract):
  net dollars a day and the annualised Sharpe with its 95 % interval, pooled over the seeds' days,
  then per seed;
- with ``--window-sessions N`` (issue 43's real figures came from samples of 9-10 sessions): each figure
  of issue 43 measured on such samples (VR(5), VR(15), VR(60), consecutive 60-bar correlation), over every
  non-overlapping N-session window of every seed: median, 10-90 % range and the share of windows inside
  the band (how far a real sample of that length can stray from the market it came from).

    bin/bench market [--days 500] [--seeds 3] [--scenarios realistic,realistic_null] [--window-sessions 10] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from actors.common.instruments import resolve_instrument
from actors.common.market_stats import REAL_NQ_RANGES, calibration_table
from actors.common.market_stats_rules import RuleCosts, rule_daily_pnl, summarise
from actors.common.realistic import generate_scenario
from actors.common.synthetic import BARS_PER_SESSION
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


WINDOW_FIGURES = ("vr_5", "vr_15", "vr_60", "corr_consecutive_60")
"""Issue 43's figures measured on real samples of 9-10 sessions."""


def window_lines(frames: list, sessions: int) -> list[str]:
    """Median and 10-90 % range of each of WINDOW_FIGURES over non-overlapping ``sessions``-session windows."""
    bars = sessions * BARS_PER_SESSION
    tables = [calibration_table(frame.iloc[start : start + bars])
              for frame in frames for start in range(0, len(frame) - bars + 1, bars)]
    lines = [f"{len(tables)} windows of {sessions} sessions: figure, real band, median [10 %, 90 %], windows in band"]
    for name in WINDOW_FIGURES:
        real = REAL_NQ_RANGES[name]
        values = np.array([next(row.value for row in table.rows if row.figure == name) for table in tables])
        low, median, high = np.nanpercentile(values, [10, 50, 90])
        inside = np.mean([real.holds(value) for value in values])
        lines.append(f"{name:<22} {real.low:.4g} .. {real.high:.4g}   {median:>7.3f} [{low:>7.3f}, {high:>7.3f}]   {inside:>4.0%}")
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
    parser.add_argument("--window-sessions", type=int, default=0, metavar="N",
                        help="also the spread of issue 43's measured figures over N-session windows (its samples: 10)")
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
        if args.window_sessions:
            print()
            print("\n".join(window_lines([market.bars for market in markets], args.window_sessions)))
        print()
        print("\n".join(rule_lines([rule_daily_pnl(market.bars, costs) for market in markets])))


if __name__ == "__main__":
    main()
