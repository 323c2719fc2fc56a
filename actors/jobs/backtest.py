"""Mode backtest: the loop with a frozen policy on held-out data (or a file); the job prints the report. A backtest of
test days is appended to the trials ledger as one trial (actors/jobs/backtest_ledger.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from actors import ENV, FUSION
from actors.env.report import entries_sentence, format_metrics_table
from actors.env.statistics import MIN_TRADES
from actors.fusion import trained_model_path
from actors.jobs.backtest_ledger import backtest_record, backtest_session_pnl, record_backtests
from actors.jobs.common import JobError, JobResult, configure, run_job
from actors.jobs.evaluation.ledger import current_commit
from actors.jobs.config import Config
from actors.jobs.fingerprint import record_reproducibility, without_free_running_reasoner
from actors.jobs.presets import BACKTEST, REPRODUCIBLE
from actors.jobs.train import policy_checkpoint
from actors.jobs.train_ledger import policy_variant
from bus.messages import Done, Message
from runtime.supervisor import EXIT_OK


def backtest_settings(checkpoint: Path, data: Path | None, name: str = "") -> dict[str, Any]:
    """The backtest's own settings, laid over the BACKTEST preset: the checkpoint, a data file (--data: all of it) and
    the run's name."""
    settings: dict[str, Any] = {"policy.model_path": str(checkpoint)}
    if data is not None:
        settings.update(data_file_settings(data))
    if name:
        settings["run.name"] = name
    return settings


def data_file_settings(data: Path) -> dict[str, Any]:
    """--data FILE: all of the file is the test (env.split = all); a missing file is a JobError."""
    if not data.is_file():
        raise JobError(f"no such data file: {data}")
    return {"data.source": "file", "data.path": str(data.resolve()), "env.split": "all"}


def trained_fusion_settings(run_dir: Path) -> dict[str, Any]:
    """Start the fusion network from the one a training run saved, if it saved one."""
    model = trained_model_path(run_dir)
    return {f"{FUSION}.model_path": str(model)} if model is not None else {}


def run_backtest(
    config: Config, args: argparse.Namespace, run_dir: Path | None = None, label: str = "backtest",
    watch: tuple[type[Message], ...] = (),
    observe: Callable[[Message], None] | None = None,
) -> tuple[JobResult, dict[str, float]]:
    """A backtest until the env has played its pass; ``observe`` sees every message of the ``watch`` types."""
    stop_when = None
    if observe is not None:
        def stop_when(msg: Message) -> bool:
            observe(msg)
            return isinstance(msg, Done) and msg.actor == ENV

    config = without_free_running_reasoner(config)
    result = run_job(config, "backtest", run_dir=run_dir, done_actor=ENV, progress_actor=ENV, progress_label=label, quiet=args.quiet,
                     watch=watch, stop_when=stop_when)
    record_reproducibility(config, result.run_dir.path)
    if ENV not in result.done:
        raise JobError(f"backtest stopped before the env finished its pass (run directory {result.run_dir.path})")
    return result, dict(result.done[ENV].summary)


def print_backtest(result: JobResult, metrics: dict[str, float], config: Config) -> None:
    report = result.run_dir.path / config.env.report_dir
    print(format_metrics_table(metrics))
    if metrics.get("trades", 0.0) < MIN_TRADES:  # few or no trades: say where the entries went
        print("\n" + entries_sentence({key.removeprefix("entries_"): value for key, value in metrics.items() if key.startswith("entries_")}))
    print(f"\nreport: {report}/report.html (self-contained)")
    print(f"report: {report}/report.md  equity curve: {report}/equity.png  metrics: {report}/metrics.json")


def mode_backtest(args: argparse.Namespace) -> int:
    if args.model is None:
        raise JobError("backtest needs --model CHECKPOINT (a checkpoint file or a training run directory)")
    checkpoint = policy_checkpoint(args.model)
    config = configure(args, backtest_settings(checkpoint, args.data), [BACKTEST, REPRODUCIBLE])
    commit = current_commit()  # the code that plays (a commit made meanwhile is not it)
    result, metrics = run_backtest(config, args, args.run_dir)
    # Test days were played: a trial of the deflated Sharpe (actors/jobs/backtest_ledger.py), recorded before printing.
    pnl = backtest_session_pnl(result.run_dir.path, config)
    variant = policy_variant(checkpoint, config.run.seed)
    ledger = record_backtests(config, [backtest_record(config, pnl, commit, job="backtest", variant=variant)])
    print_backtest(result, metrics, config)
    if ledger is not None:
        print(f"trials ledger {ledger}: this backtest's {len(pnl)} test day(s) recorded as one trial (bin/run trials lists them)")
    return EXIT_OK
