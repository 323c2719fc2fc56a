"""``bin/run sweep SPACE.toml``: an Optuna search over settings, each trial a walk-forward on the validation folds.

    bin/run sweep docs/experiments/sweeps/policy_sweep.toml [--ray local|off|ADDRESS] [--set KEY=VALUE ...]

The folds are evaluate's (actors/jobs/evaluation/folds.py) over the SPACE's market: ``validation_folds`` windows the
trials are scored and pruned on, then ``test_folds`` newest windows that only the best trial plays, once, at the end
(beside the reference rules on the same days). Every trial (complete, pruned or failed) and the final test go to the
trials ledger (actors/jobs/evaluation/ledger.py: run.trials_path, default ``<runs_dir>/trials.jsonl``; one record per trial, seed and fold scored), so the deflated Sharpe of whatever is
chosen can count them. Cells run on a local Ray by default (actors/jobs/cells/search.py), cached by configuration
hash: the same SPACE.toml run again reads its finished cells back.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from actors.common.instruments import resolve_instrument
from actors.dashboard.cells import PROGRESS_FILE
from actors.env.factory import build_dataset
from actors.jobs.cells.cache import CellCache
from actors.jobs.cells.pool import LOCAL, CellPool, resolve_address
from actors.jobs.cells.progress import CellProgress
from actors.jobs.cells.search import Search
from actors.jobs.cells.space import SpaceError, load_space
from actors.jobs.common import EXIT_OK, JobError, JobStopped, configure
from actors.jobs.dashboard import run_dir_given
from actors.jobs.evaluate import market_settings
from actors.jobs.evaluation.folds import purge_days_for, walk_forward_folds
from runtime.rundir import create_run_dir

def mode_sweep(args: argparse.Namespace) -> int:
    if args.space is None:
        raise JobError("sweep needs a SPACE.toml: bin/run sweep docs/experiments/sweeps/policy_sweep.toml")
    try:
        space = load_space(args.space)
    except SpaceError as error:
        raise JobError(f"sweep: {error}") from None
    from actors.jobs.evaluation.ledger import append_trials, ledger_path, new_run_id

    wf = space.walk_forward
    data = market_settings(wf.market, wf.days)
    name = Path(args.space).stem

    def make_config(params: dict):
        return configure(args, {**data, **space.fixed, **params, "run.name": f"sweep-{name}"})

    base = make_config({})
    rd = create_run_dir(base, "sweep", args.run_dir)
    instrument = resolve_instrument(base.instrument)
    dataset = build_dataset(base.data, base.account, base.data.seed if base.data.seed >= 0 else base.run.seed,
                            instrument.tick_size, symbol=instrument.symbol)
    purge = purge_days_for(base.lora.hindsight_horizon_bars, 390)
    try:
        folds = walk_forward_folds(len(dataset.session_starts), wf.validation_folds + wf.test_folds, purge_days=purge,
                                   min_train_days=wf.train_days)
    except ValueError as error:
        raise JobError(f"sweep: {args.space}: [walk_forward]: {error}") from None
    ledger = ledger_path(base.run)
    say = (lambda _t: None) if args.quiet else (lambda text: print(f"sweep: {text}", file=sys.stderr, flush=True))
    address = resolve_address(getattr(args, "ray", None), LOCAL)
    cache = CellCache((rd.path / "cells") if run_dir_given(args) else Path(base.run.runs_dir) / "cells")
    say(f"run directory {rd.path}; {space.sweep.trials} trials over {sorted(space.space)}; validation folds "
        f"{[f.index for f in folds[:wf.validation_folds]]}, test folds {[f.index for f in folds[wf.validation_folds:]]}; "
        f"cells on {address}; ledger {ledger}")
    with CellPool(address, cache=cache, progress=CellProgress("sweep cells", enabled=not args.quiet,
                                                                  file=rd.path / PROGRESS_FILE)) as pool:
        run_id = new_run_id()  # one sweep is one run: each trial's records, appended as it ends, carry the same id
        search = Search(space, pool, make_config, dataset, folds, lambda records: append_trials(ledger, records, run_id), say, name)
        try:
            with pool.interruptible():
                outcome = search.run()
        except KeyboardInterrupt:
            pool.cancel()
            raise JobStopped(rd.path, f"Ctrl-C after {len(search.finished)} trials (in the ledger {ledger})") from None
    out = rd.path / "sweep"
    out.mkdir(exist_ok=True)
    (out / "sweep.json").write_text(json.dumps(outcome, indent=2, default=str))
    markdown = sweep_markdown(name, outcome, ledger)
    (out / "sweep.md").write_text(markdown)
    print(markdown)
    return EXIT_OK


def sweep_markdown(name: str, outcome: dict, ledger: Path) -> str:
    lines = [f"# Sweep {name}", "", "| trial | state | validation $ a day (running, by fold) | params |", "| --- | --- | --- | --- |"]
    for entry in outcome["trials"]:
        running = ", ".join(f"{v:+,.0f}" for v in entry["intermediate_pnl_per_day"]) or "-"
        lines.append(f"| {entry['trial']} | {entry['state']}{' (' + entry['error'] + ')' if entry['error'] else ''} | {running} | "
                     f"{', '.join(f'{k}={v}' for k, v in entry['params'].items())} |")
    best, test = outcome.get("best"), outcome.get("test")
    if best is None:
        lines += ["", "No trial completed: nothing to test."]
    elif test is None:
        lines += ["", f"Best trial {best['trial']}; its test did not run: {outcome.get('test_error')}"]
    else:
        refs = test["references_pnl_per_day"]
        momentum = max((k for k in refs if k.startswith("momentum")), key=refs.get, default=None)
        lines += ["", f"Best trial {best['trial']} ({best['params']}): {best['value_pnl_per_day']:+,.0f} $ a day on the validation "
                      f"folds; on the {test['days']} held-out test days (folds {test['folds']}, played once): "
                      f"{test['policy_pnl_per_day']:+,.0f} $ a day"
                      + (f", {momentum} {refs[momentum]:+,.0f}" if momentum else "")
                      + (f", oracle {refs['oracle']:+,.0f}" if "oracle" in refs else "") + ".",
                  "", f"{len(outcome['trials'])} trials tried: all in the ledger {ledger}; a winner picked among them is "
                      "judged by the deflated Sharpe that counts them."]
    return "\n".join(lines) + "\n"
