"""evaluate's cells on a pool: the reference policies per fold, one policy per (fold, seed) through every budget,
and (two seeds or more) the seeds' ensemble per (fold, budget) once their policies are in.

A policy cell keeps its budgets together: the learning curve trains one learner on, stopping at each budget,
so splitting the budgets would train the first steps again for each of them.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from actors.dashboard.cells import PROGRESS_FILE
from actors.jobs.cells.cache import CellCache
from actors.jobs.cells.cell import Cell, array_fingerprint, config_hash
from actors.jobs.cells.pool import LOCAL, OFF, CellPool, CellRun, Resources, resolve_address
from actors.jobs.cells.progress import CellProgress
from actors.jobs.common import JobError, JobStopped
from actors.jobs.dashboard import run_dir_given
from actors.jobs.evaluation.walkforward import (WalkForward, WalkForwardPlan, ensemble_cell, gather_walk_forward, policy_cell,
                                                choice_cell, reference_cell, regime_cell)

REGIME, CHOICE, REFERENCE, POLICY, ENSEMBLE = "regime", "choice", "reference", "policy", "ensemble"


def plan_hash(plan: WalkForwardPlan) -> str:
    """Settings, the bars (a file market's settings do not say what is in it), the folds and the seeds' budgets."""
    data = plan.dataset
    return config_hash(plan.config, bars=array_fingerprint(data.start_ns, data.close, data.session_starts),
                       folds=[vars(f) for f in plan.folds], budgets=plan.budgets, seeds=plan.seeds,
                       policy_grid=[vars(c) for c in plan.policy_grid])


def walk_forward_cells(plan: WalkForwardPlan) -> tuple[list[Cell], list[Cell], list[Cell]]:
    """Three stages: each fold's regime fit; the references and policies, which read it; the ensembles, which read
    the policies' checkpoints."""
    digest = plan_hash(plan)
    regimes = [Cell(REGIME, digest, fold=fold.index) for fold in plan.folds]
    first = [Cell(REFERENCE, digest, fold=fold.index) for fold in plan.folds]
    first += [Cell(POLICY, digest, seed=seed, fold=fold.index, budget=plan.budgets[-1]) for fold in plan.folds for seed in plan.seeds]
    second = [Cell(ENSEMBLE, digest, fold=fold.index, budget=budget) for fold in plan.folds for budget in plan.budgets
              if len(plan.seeds) > 1]
    return regimes, first, second


def run_cell(plan: WalkForwardPlan, cell: Cell):
    """The runner: a pure function of (plan, cell)."""
    fold = plan.folds[cell.fold]
    if cell.kind == REGIME:
        return regime_cell(plan, fold)
    if cell.kind == CHOICE:
        return choice_cell(plan, fold)
    if cell.kind == REFERENCE:
        return reference_cell(plan, fold)
    if cell.kind == POLICY:
        return policy_cell(plan, fold, cell.seed)
    if cell.kind == ENSEMBLE:
        return ensemble_cell(plan, fold, cell.budget)
    raise ValueError(f"evaluate has no cell kind {cell.kind!r}")


def cell_resources(plan: WalkForwardPlan):
    """A walk-forward cell is one Python loop plus torch's threads (policy.torch_threads); no GPU (a small MLP)."""
    cpus = float(plan.config.policy.torch_threads)
    return lambda _cell: Resources(num_cpus=cpus)


def run_walk_forward_cells(pool: CellPool, plan: WalkForwardPlan, market: str, progress=None) -> tuple[WalkForward | None, CellRun]:
    """Every cell on ``pool``; the WalkForward when all finished (None when one failed or Ctrl-C stopped the run)."""
    regimes, first, second = walk_forward_cells(plan)
    choices = [Cell(CHOICE, plan_hash(plan), fold=fold.index, budget=plan.budgets[0]) for fold in plan.folds] if plan.policy_grid else []
    pool.progress.expect(len(regimes) + len(choices) + len(first) + len(second))
    run = pool.run(run_cell, plan, regimes, cell_resources(plan))
    if run.stopped or run.failures:
        return None, run
    plan = replace(plan, regimes={c.fold: run.result(c) for c in regimes})
    if choices:  # the policy settings each fold trains with, chosen on its validation days (actors/jobs/evaluation/cadence.py)
        pool.run(run_cell, plan, choices, cell_resources(plan), into=run)
        if run.stopped or run.failures:
            return None, run
        plan = replace(plan, choices={c.fold: run.result(c) for c in choices})
    pool.run(run_cell, plan, first, cell_resources(plan), into=run)
    if run.stopped or run.failures:
        return None, run
    policies = {(c.fold, c.seed): run.result(c) for c in first if c.kind == POLICY}
    checkpoints = {(f, s, b): ckpt for (f, s), cell in policies.items() for b, (_, ckpt) in cell.checkpoints.items()}
    if second:
        pool.run(run_cell, replace(plan, checkpoints=checkpoints), second, cell_resources(plan), into=run)
        if run.stopped or run.failures:
            return None, run
    references = {c.fold: run.result(c) for c in first if c.kind == REFERENCE}
    ensembles = {(c.fold, c.budget): run.result(c) for c in second}
    return gather_walk_forward(plan, market, references, policies, ensembles, progress, plan.choices), run


RAY_WORTH_STEPS = 60_000
"""Below this many training steps over the grid, evaluate runs its cells in this process by default: a local Ray
costs about 6 s to start and stop on the 2-core box (bin/bench cells), which a grid of a few seconds would not
win back; above it the cells share the machine's CPUs (``--ray off`` keeps them in one process)."""


def default_address(plan: WalkForwardPlan) -> str:
    steps = len(plan.folds) * len(plan.seeds) * plan.budgets[-1]
    return LOCAL if (os.cpu_count() or 1) >= 2 and len(plan.folds) * len(plan.seeds) >= 2 and steps >= RAY_WORTH_STEPS else OFF


def cache_dir(config, run_dir: Path, given: bool) -> Path:
    """``--run-dir`` given: its own cells/ (rerun with the same --run-dir to resume); else <runs_dir>/cells, which
    every evaluate of the same settings, data and code shares."""
    return (run_dir / "cells") if given else Path(config.run.runs_dir) / "cells"


def evaluate_on_cells(args, plan: WalkForwardPlan, market: str, run_dir: Path, say) -> tuple[WalkForward, dict]:
    """bin/run evaluate's cell loop: the pool (--ray, $RAY_ADDRESS or the default above), the cache, the progress
    bar; (the WalkForward, its cost) or JobError naming the failed cells, JobStopped on Ctrl-C."""
    address = resolve_address(getattr(args, "ray", None), default_address(plan))
    cache = CellCache(cache_dir(plan.config, run_dir, run_dir_given(args)))
    progress = CellProgress("evaluate cells", enabled=not args.quiet, file=run_dir / PROGRESS_FILE)
    say(f"cells on {'this process' if address == OFF else 'Ray (' + address + ')'}, cache {cache.directory}")
    with CellPool(address, cache=cache, progress=progress) as pool:
        result, run = run_walk_forward_cells(pool, plan, market, say)
    if run.stopped:
        raise JobStopped(cache.directory, f"Ctrl-C; {len(run.records)} cells finished, cached: rerun to resume")
    if run.failures:
        raise JobError(f"evaluate: {len(run.failures)} cell(s) failed ({len(run.records)} finished and cached under "
                       f"{cache.directory}): {run.failure_text()}")
    return result, {**run.cost(), "address": address}

