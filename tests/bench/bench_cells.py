"""Cells benchmark (``bin/bench cells``): evaluate's walk-forward grid on a local Ray beside the same cells one after
another in this process, on the same machine.

Sequential: ``CellPool("off")``, every cell in this process in order (what ``bin/run evaluate --ray off`` does).
Ray: ``CellPool("local")`` over the machine's CPUs, its start-up and shutdown inside the measured wall time (what
``bin/run evaluate`` pays). No cache in either. Both must give the same series (checked, not assumed).

Also printed: Ray's start-up and shutdown alone, the scheduling overhead per cell (N no-op cells on the started Ray
against N in process, per cell), and each kind of cell's mean wall and CPU time (per 1,000 training steps for the
policy cells), the figures docs/ray.md extrapolates a cluster's cost from.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from actors.common.instruments import resolve_instrument
from actors.env.factory import build_dataset
from actors.jobs.cells.cell import Cell
from actors.jobs.cells.pool import LOCAL, OFF, CellPool
from actors.jobs.cells.walkforward import run_walk_forward_cells
from actors.jobs.evaluate import market_settings
from actors.jobs.evaluation.folds import purge_days_for
from actors.jobs.evaluation.ledger import current_commit
from actors.jobs.evaluation.trials import record_walk_forward
from actors.jobs.evaluation.walkforward import plan_walk_forward
from actors.jobs.config import load_config
from tests.bench.common import print_table


def noop(_payload, cell: Cell) -> int:
    return cell.seed


def build_plan(args: argparse.Namespace):
    config = load_config(None, {**market_settings("regimes", args.days), "policy.torch_threads": 1})
    instrument = resolve_instrument(config.instrument)
    dataset = build_dataset(config.data, config.account, config.run.seed, instrument.tick_size, symbol=instrument.symbol)
    n_days = len(dataset.session_starts)
    return plan_walk_forward(config, dataset, n_folds=args.folds, seeds=list(range(args.seeds)), budgets=args.budgets,
                             purge_days=purge_days_for(config.lora.hindsight_horizon_bars, 390), min_train_days=int(n_days * 0.57))


def timed_grid(address: str, plan):
    started = time.monotonic()
    with CellPool(address) as pool:
        ready = time.monotonic()
        result, run = run_walk_forward_cells(pool, plan, "regimes")
        finished = time.monotonic()
    return result, run, time.monotonic() - started, ready - started, time.monotonic() - finished


def overhead_per_cell(n: int) -> tuple[float, float]:
    cells = [Cell("noop", "bench", seed=i) for i in range(n)]
    started = time.monotonic()
    CellPool(OFF).run(noop, None, cells)
    inline = time.monotonic() - started
    with CellPool(LOCAL) as pool:
        pool.run(noop, None, cells[:4])  # the workers started
        started = time.monotonic()
        pool.run(noop, None, cells)
        on_ray = time.monotonic() - started
    return inline / n, on_ray / n


def per_kind(run, budget: int) -> list[tuple[str, str, str, str, str]]:
    rows = []
    for kind in ("regime", "reference", "policy", "ensemble"):
        records = [r for r in run.records.values() if r.cell.kind == kind]
        if not records:
            continue
        wall, cpu = np.mean([r.wall_secs for r in records]), np.mean([r.cpu_secs for r in records])
        per_k = f", {1000 * wall / budget:.2f} s per 1k steps" if kind == "policy" else ""
        rows.append((f"{kind} cell (mean of {len(records)}, on Ray)", f"{wall:.1f} s wall{per_k}", f"{cpu:.1f} s CPU", "", ""))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bin/bench cells", description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=400, help="synthetic days of the evaluate grid (default 400)")
    parser.add_argument("--folds", type=int, default=2, help="walk-forward folds of the grid (default 2)")
    parser.add_argument("--seeds", type=int, default=2, help="seeds per fold (default 2)")
    parser.add_argument("--budgets", type=lambda t: [int(x) for x in t.split(",")], default=[4000, 8000],
                        help="training steps of the learning curve, comma-separated (default 4000,8000)")
    parser.add_argument("--noop-cells", type=int, default=200,
                        help="cells that do nothing, run to measure the scheduling overhead per cell (default 200)")
    args = parser.parse_args(argv)
    plan = build_plan(args)
    print(f"grid: {args.days} days, {args.folds} folds, seeds {args.seeds}, budgets {args.budgets}; {os.cpu_count()} CPUs", flush=True)
    seq_result, seq_run, seq_wall, _, _ = timed_grid(OFF, plan)
    # Policies scored on test days: trials of the deflated Sharpe (once: the Ray grid replays the same cells).
    ledger = record_walk_forward(plan.config, seq_result, commit=current_commit(), job="bench cells")
    print(f"trials ledger {ledger}: the grid's {len(seq_result.series)} variants recorded (bin/run trials lists them)", flush=True)
    ray_result, ray_run, ray_wall, start_secs, stop_secs = timed_grid(LOCAL, plan)
    same = all(np.array_equal(seq_result.series[n].daily_pnl, ray_result.series[n].daily_pnl) for n in seq_result.series)
    inline, on_ray = overhead_per_cell(args.noop_cells)
    rows = [
        (f"evaluate grid, {len(ray_run.records)} cells: wall", f"{ray_wall:.1f} s (local Ray)", f"{seq_wall:.1f} s (sequential)",
         f"{ray_wall / seq_wall:.2f}x", "< 1 on 2+ CPUs"),
        ("Ray start-up + shutdown (in the Ray wall)", f"{start_secs:.1f} s + {stop_secs:.1f} s", "0", "", ""),
        ("CPU time of the cells", f"{sum(r.cpu_secs for r in ray_run.records.values()):.0f} s",
         f"{sum(r.cpu_secs for r in seq_run.records.values()):.0f} s", "", ""),
        (f"scheduling per cell ({args.noop_cells} no-op cells)", f"{1000 * on_ray:.2f} ms", f"{1000 * inline:.3f} ms",
         f"{on_ray / max(inline, 1e-9):.0f}x", ""),
        ("same series on Ray as sequential", str(same), "", "", "True"),
        *per_kind(ray_run, args.budgets[-1]),
    ]
    print_table("Cells: the evaluate grid on local Ray against the sequential run", rows)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
