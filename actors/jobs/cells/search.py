"""The Optuna search behind ``bin/run sweep``: trials on the validation folds, fold by fold on a pool, pruned there;
the best trial played once on the test folds at the end; every trial written to the trials ledger.

A trial's cells are the walk-forward's policy cells (one per seed) of its next validation fold; when a fold's cells
are in, the trial reports its running score (the policy's out-of-sample $ a day at the last budget, mean over the
seeds and the validation days so far) and the pruner may stop it before its next fold. Trials run side by side
(``parallel``), so the pool always has cells to place. The test folds are never seen by a trial: only the winner
plays them, once, beside the reference rules on the same days.
"""

from __future__ import annotations

import json
from functools import cache
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from actors.jobs.cells.cell import Cell, array_fingerprint, config_hash
from actors.jobs.cells.pool import CellFailure, CellPool, Resources
from actors.jobs.cells.space import Space, distributions, setting_value
from actors.jobs.common import JobError
from actors.jobs.evaluation.folds import Fold
from actors.jobs.evaluation.walkforward import WalkForwardPlan, policy_cell, reference_cell, regime_cell

POLICY, REFERENCE, REGIME = "policy", "reference", "regime"


@dataclass(frozen=True)
class TrialPayload:
    """What a trial's cells share: its config, the market (an object-store reference on Ray: shipped once for all
    trials), the folds, seeds and budgets."""

    config: Any
    dataset: Any
    folds: list[Fold]
    seeds: list[int]
    budgets: list[int]
    regimes: dict = field(default_factory=dict)
    """fold -> its regime fit (actors/jobs/evaluation/walkforward.py regime_cell), shared by every trial."""


def run_trial_cell(payload: TrialPayload, cell: Cell):
    """The runner: a policy cell (or, for the test, a reference cell) of the walk-forward with the trial's config."""
    dataset = payload.dataset
    if type(dataset).__name__ == "ObjectRef":
        import ray

        dataset = ray.get(dataset)
    plan = WalkForwardPlan(payload.config, dataset, payload.folds, payload.seeds, payload.budgets, regimes=payload.regimes)
    fold = payload.folds[cell.fold]
    if cell.kind == REGIME:
        return regime_cell(plan, fold)
    if cell.kind == REFERENCE:
        return reference_cell(plan, fold)
    result = policy_cell(plan, fold, cell.seed)
    return {budget: window.daily_pnl for budget, window in result.windows.items()}  # what a score needs, small to cache


@dataclass
class RunningTrial:
    trial: Any
    params: dict[str, Any]
    payload: Any
    digest: str
    payload_seeds: list[int] = field(default_factory=list)
    fold_pos: int = 0
    waiting: set[Cell] = field(default_factory=set)
    days: list[np.ndarray] = field(default_factory=list)
    """Per validation fold done: the seeds' mean daily P&L at the last budget."""
    fold_cells: dict[int, np.ndarray] = field(default_factory=dict)
    per_seed: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    """(fold, seed) -> its daily P&L at the last budget: the ledger's records."""
    config: Any = None
    intermediate: list[float] = field(default_factory=list)
    cpu_secs: float = 0.0


class Search:
    def __init__(self, space: Space, pool: CellPool, make_config: Callable[[dict], Any], dataset, folds: list[Fold],
                 record: Callable[[dict], None], say: Callable[[str], None], name: str) -> None:
        self.space, self.pool, self.make_config, self.record, self.say, self.name = space, pool, make_config, record, say, name
        wf = space.walk_forward
        self.validation, self.test = folds[: wf.validation_folds], folds[wf.validation_folds:]
        self.folds, self.seeds, self.budgets = folds, list(range(wf.seeds)), list(wf.budgets)
        self.dataset_ref = pool.put(dataset)
        self.bars = array_fingerprint(dataset.start_ns, dataset.close, dataset.session_starts)
        self.running: dict[int, RunningTrial] = {}
        self.owner: dict[Cell, list[int]] = {}
        self.finished: list[dict] = []
        self.regimes: dict = {}

    def payload(self, config) -> TrialPayload:
        return TrialPayload(config, self.dataset_ref, self.folds, [config.run.seed + s for s in self.seeds], self.budgets,
                            self.regimes)

    def fit_regimes(self) -> None:
        """Each fold's regime HMM, fitted once on its training days for every trial (it depends on the bars alone)."""
        base = self.make_config({})
        digest = config_hash(base, bars=self.bars, folds=[vars(f) for f in self.folds])
        cells = [Cell(REGIME, digest, fold=f.index) for f in self.folds]
        run = self.pool.run(run_trial_cell, self.payload(base), cells)
        if run.stopped:
            raise KeyboardInterrupt
        if run.failures:
            raise JobError(f"sweep: the regime fits failed: {run.failure_text()}")
        self.regimes = {c.fold: run.result(c) for c in cells}

    def run(self) -> dict:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.fit_regimes()
        settings = self.space.sweep
        pruner = optuna.pruners.MedianPruner(n_startup_trials=2) if settings.pruner == "median" else optuna.pruners.NopPruner()
        study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=settings.seed), pruner=pruner)
        parallel = settings.parallel or max(1, int(self.pool.capacity_cpus // len(self.seeds)) if self.pool.on_ray else 1)
        asked = 0
        while asked < settings.trials or self.running:
            while asked < settings.trials and len(self.running) < parallel:
                asked += 1
                self.start(study, study.ask(distributions(self.space)))
            if self.running:
                self.take(study, self.pool.next_done())
        return self.final(study)

    def start(self, study, trial) -> None:
        params = {key: setting_value(value) for key, value in trial.params.items()}
        try:
            config = self.make_config(params)
        except Exception as error:  # noqa: BLE001 - a setting the config refuses: the trial fails by name, the sweep goes on
            self.close(study, RunningTrial(trial, params, None, ""), "FAIL", error=f"config: {error}")
            return
        digest = config_hash(config, bars=self.bars, folds=[vars(f) for f in self.folds], budgets=self.budgets)
        payload = self.payload(config)
        running = RunningTrial(trial, params, self.pool.put(payload), digest, payload.seeds, config=config)
        self.running[trial.number] = running
        self.submit_fold(running)

    def submit_fold(self, running: RunningTrial) -> None:
        fold = self.validation[running.fold_pos]
        for seed in running.payload_seeds:
            cell = Cell(POLICY, running.digest, seed=seed, fold=fold.index, budget=self.budgets[-1])
            running.waiting.add(cell)
            self.owner.setdefault(cell, []).append(running.trial.number)
            self.pool.submit(run_trial_cell, running.payload, cell, Resources())

    def take(self, study, outcome) -> None:
        owners = self.owner.get(outcome.cell, [])
        number = owners.pop(0) if owners else None
        running = self.running.get(number)
        if running is None:
            return  # a cell of a trial that already failed
        if isinstance(outcome, CellFailure):
            self.close(study, running, "FAIL", error=f"{outcome.cell.name}: {outcome.error}")
            return
        running.waiting.discard(outcome.cell)
        running.cpu_secs += outcome.cpu_secs
        running.fold_cells[outcome.cell.seed] = outcome.result[self.budgets[-1]]
        running.per_seed[(outcome.cell.fold, outcome.cell.seed)] = outcome.result[self.budgets[-1]]
        if running.waiting:
            return
        running.days.append(np.mean([running.fold_cells[s] for s in sorted(running.fold_cells)], axis=0))
        running.fold_cells = {}
        score = float(np.concatenate(running.days).mean())
        running.intermediate.append(score)
        running.trial.report(score, step=running.fold_pos)
        running.fold_pos += 1
        if running.fold_pos == len(self.validation):
            self.close(study, running, "COMPLETE", value=score)
        elif running.trial.should_prune():
            self.close(study, running, "PRUNED", value=score)
        else:
            self.submit_fold(running)

    def close(self, study, running: RunningTrial, state: str, value: float | None = None, error: str = "") -> None:
        import optuna

        self.running.pop(running.trial.number, None)
        states = {"COMPLETE": optuna.trial.TrialState.COMPLETE, "PRUNED": optuna.trial.TrialState.PRUNED,
                  "FAIL": optuna.trial.TrialState.FAIL}
        study.tell(running.trial, value if state == "COMPLETE" else None, state=states[state])
        entry = {"trial": running.trial.number, "state": state.lower(), "params": running.params, "value_pnl_per_day": value,
                 "intermediate_pnl_per_day": running.intermediate, "validation_folds_scored": running.fold_pos,
                 "config_hash": running.digest, "cpu_secs": running.cpu_secs, "error": error}
        if running.config is not None:  # a trial its config refused has no day to record
            self.record([self.ledger_record(running.config, running.params, seed, fold, f"{self.name}-trial{running.trial.number}", days)
                         for (fold, seed), days in sorted(running.per_seed.items())])
        self.finished.append(entry)
        self.say(f"trial {running.trial.number} {state.lower()}: {_money(value)} a day on {running.fold_pos} validation fold(s), "
                 f"{running.params}{'; ' + error if error else ''}")

    def final(self, study) -> dict:
        """The best complete trial, played once on the test folds beside the reference rules."""
        complete = [e for e in self.finished if e["state"] == "complete"]
        if not complete:
            return {"best": None, "trials": self.finished}
        best = max(complete, key=lambda e: e["value_pnl_per_day"])
        config = self.make_config(best["params"])
        payload = self.payload(config)
        digest = config_hash(config, bars=self.bars, folds=[vars(f) for f in self.folds], budgets=self.budgets)
        cells = [Cell(REFERENCE, digest, fold=f.index) for f in self.test]
        cells += [Cell(POLICY, digest, seed=s, fold=f.index, budget=self.budgets[-1]) for f in self.test for s in payload.seeds]
        run = self.pool.run(run_trial_cell, payload, cells)
        if run.stopped or run.failures:
            return {"best": best, "test": None, "test_error": run.failure_text() or "stopped", "trials": self.finished}
        policy = np.concatenate([np.mean([run.result(Cell(POLICY, digest, seed=s, fold=f.index, budget=self.budgets[-1]))[self.budgets[-1]]
                                          for s in payload.seeds], axis=0) for f in self.test])
        references = {name: np.concatenate([run.result(Cell(REFERENCE, digest, fold=f.index)).windows[name].daily_pnl for f in self.test])
                      for name in run.result(cells[0]).windows}
        test = {"folds": [f.index for f in self.test], "days": len(policy), "policy_pnl_per_day": float(policy.mean()),
                "references_pnl_per_day": {name: float(days.mean()) for name, days in references.items()},
                "cpu_secs": sum(r.cpu_secs for r in run.records.values() if not r.cached)}
        label = f"{self.name}-best-trial{best['trial']}"
        records = [self.ledger_record(config, best["params"], s, f.index, label,
                                      run.result(Cell(POLICY, digest, seed=s, fold=f.index, budget=self.budgets[-1]))[self.budgets[-1]])
                   for f in self.test for s in payload.seeds]
        records += [self.ledger_record(config, {}, config.run.seed, f.index, name, run.result(Cell(REFERENCE, digest, fold=f.index)).windows[name].daily_pnl,
                                       role="oracle" if name == "oracle" else "floor")
                    for f in self.test for name in references]
        self.record(records)
        return {"best": best, "test": test, "trials": self.finished}

    def ledger_record(self, config, params: dict, seed: int, fold: int, variant: str, daily_pnl, role: str = "policy"):
        """One (configuration, seed, fold) of the sweep as the trials ledger stores it (actors/jobs/evaluation/ledger.py)."""
        from actors.jobs.evaluation.ledger import TrialRecord, config_hash as ledger_hash, current_commit, utc_now

        budget = f"@{self.budgets[-1]}#{seed}" if role == "policy" else ""
        return TrialRecord(config_hash=ledger_hash(config), market=self.space.walk_forward.market, seed=seed, fold=fold,
                           variant=variant + budget, daily_returns=[float(v) / config.account.start_balance for v in daily_pnl],
                           date=utc_now(), commit=_commit(current_commit), job="sweep", role=role,
                           params={k: v if isinstance(v, (str, int, float, bool)) else json.dumps(v) for k, v in params.items()})


@cache
def _commit(current_commit) -> str:
    return current_commit()  # one git call a sweep, not one a record


def _money(value) -> str:
    return "n/a" if value is None else f"${value:+,.0f}"
