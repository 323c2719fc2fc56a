"""ablation's cells on a pool: one cell per seed (its training, fusion network and adapter), then one per
(seed, variant) backtest once its seed's cell is in.

Default: in this process (``--ray off``): each variant cell is a whole runtime of actor processes (the LLM variants
keep both cores of the 2-core box busy), so a local Ray would run them one at a time all the same and add its
start-up. On a bigger machine or a cluster, ``--ray local|ADDRESS`` runs them side by side; the run directory
(``--run-dir``) must then be on storage every node shares, since a variant reads its seed's checkpoint from it
(docs/ray.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from actors.dashboard.cells import PROGRESS_FILE
from actors.jobs.cells.cache import CellCache
from actors.jobs.cells.cell import Cell, config_hash
from actors.jobs.cells.pool import OFF, CellPool, Resources, resolve_address
from actors.jobs.cells.progress import CellProgress
from actors.jobs.common import JobError, JobStopped

TRAIN, VARIANT = "ablation-train", "ablation-variant"
UNHASHED_ARGS = ("quiet", "ray", "dashboard", "run_dir", "mode", "space")
"""Arguments that change where or how loudly the ablation runs, never a result."""
RUNTIME_CPUS = 2.0
"""A cell that runs the actors (a training run, an LLM variant in lockstep) keeps about two cores busy."""


@dataclass(frozen=True)
class AblationPlan:
    args: argparse.Namespace
    root: Path
    variants: list
    train: Callable
    """actors.jobs.ablation.seed_inputs (passed in: this package does not import the mode that uses it)."""
    backtest: Callable
    """actors.jobs.ablation.variant_backtest."""
    inputs: dict[int, object] = field(default_factory=dict)
    """seed -> its SeedInputs (the variant cells' input, filled once the seed cells finished)."""


def run_cell(plan: AblationPlan, cell: Cell):
    if cell.kind == TRAIN:
        return plan.train(plan.args, plan.root, cell.seed)
    index = next(i for i, v in enumerate(plan.variants) if v.name == cell.variant)
    return plan.backtest(plan.args, plan.root, cell.seed, index, plan.variants[index], plan.inputs[cell.seed])


def resources(plan: AblationPlan, base):
    def of(cell: Cell) -> Resources:
        gpu = 1.0 if cell.kind == TRAIN and getattr(plan.args, "lora", False) and base.lora.device == "cuda" else 0.0
        llm = cell.kind == TRAIN or next(v for v in plan.variants if v.name == cell.variant).lockstep is not None
        return Resources(num_cpus=RUNTIME_CPUS if llm else 1.0, num_gpus=gpu)

    return of


def ablation_on_cells(args: argparse.Namespace, base, root: Path, seeds: list[int], variants: list, train: Callable,
                      backtest: Callable):
    """{(seed, variant index): VariantResult} and the cost; JobError naming failed cells, JobStopped on Ctrl-C."""
    digest = config_hash(base, args={k: v for k, v in sorted(vars(args).items()) if k not in UNHASHED_ARGS})
    address = resolve_address(getattr(args, "ray", None), OFF)
    cache = CellCache(root / "cells")
    plan = AblationPlan(args, root, variants, train, backtest)
    trains = [Cell(TRAIN, digest, seed=seed) for seed in seeds]
    tests = [Cell(VARIANT, digest, seed=seed, variant=v.name) for seed in seeds for v in variants]
    with CellPool(address, cache=cache, progress=CellProgress("ablation cells", enabled=not args.quiet,
                                                                  file=root / PROGRESS_FILE)) as pool:
        run = pool.run(run_cell, plan, trains, resources(plan, base))
        if not (run.stopped or run.failures):
            inputs = {c.seed: run.result(c) for c in trains}
            run = pool.run(run_cell, replace(plan, inputs=inputs), tests, resources(plan, base), into=run)
    if run.stopped:
        raise JobStopped(root, f"Ctrl-C; {len(run.records)} cells finished, cached in {cache.directory}: rerun with --run-dir {root}")
    if run.failures:
        raise JobError(f"ablation: {len(run.failures)} cell(s) failed ({len(run.records)} finished, cached in {cache.directory}): "
                       f"{run.failure_text()}")
    names = [v.name for v in variants]
    results = {(c.seed, names.index(c.variant)): run.result(c) for c in tests}
    return results, {**run.cost(), "address": address}
