"""``bin/run trials``: what the trials ledger holds, market by market, and how lucky its best trial looks.

    bin/run trials [--ledger PATH] [--market NAME]

Reads the ledger every scoring run appends to (``run.trials_path``, default ``<runs_dir>/trials.jsonl``;
actors/jobs/evaluation/ledger.py) and prints, per market: N (the policy trials the deflated Sharpe counts, reruns
included: actors/jobs/evaluation/trials.py ``ledger_trials``), the runs they came from, the variance of their daily
Sharpe, the daily Sharpe the best of N reaches by luck alone, and the best trial with its deflated Sharpe given that N
(``evidence.deflation``, the formula evaluate uses). Then the newest runs: when, which job, commit, code and how many
policy trials each added. A missing or unreadable ledger is one line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from actors.jobs.common import EXIT_OK, JobError, configure
from actors.jobs.evaluation.ledger import LedgerError, TrialRecord, ledger_path, read_trials
from actors.jobs.evaluation.trials import LedgerTrials, ledger_trials
from actors.jobs.evaluation.summary import Deflation

RUNS_SHOWN = 20
"""The newest runs listed under the markets (the whole history stays in the file)."""


@dataclass(frozen=True)
class MarketSummary:
    """One market's trials and its luckiest one."""

    market: str
    trials: LedgerTrials
    best: str
    """The trial with the highest daily Sharpe ('<config hash> <variant> run <run id>')."""
    best_sharpe: float
    best_days: int
    deflation: Deflation
    """``evidence.deflation`` of the best trial's returns with N and V of every trial on the market."""


def mode_trials(args: argparse.Namespace) -> int:
    path = (args.ledger.resolve() if args.ledger is not None else ledger_path(configure(args).run))
    records = load(path)
    markets = sorted({r.market for r in records})
    wanted = market_filter(args.trials_market, markets) if args.trials_market else markets
    summaries = [s for s in (summarise_market(records, m) for m in wanted) if s is not None]
    policy_trials = sum(s.trials.count for s in summaries)
    print(f"trials ledger {path}: {len(records)} records, {policy_trials} policy trials on {len(summaries)} market(s)")
    if summaries:
        print("\n".join(market_lines(summaries)))
    print()
    print("\n".join(run_lines([r for r in records if r.market in wanted])))
    return EXIT_OK


def load(path: Path) -> list[TrialRecord]:
    """The ledger's records, or a one-line ``JobError``: no file, not a file, or unreadable lines (the first named)."""
    if not path.is_file():
        raise JobError(f"trials ledger {path}: no such file (runs append to it: run.trials_path, or --ledger PATH, names another)")
    try:
        return read_trials(path)
    except LedgerError as error:
        lines = str(error).splitlines()
        raise JobError(f"{lines[0].split(' (')[0]}, first {lines[1].strip()}") from None
    except OSError as error:
        raise JobError(f"trials ledger {path}: cannot be read ({error.strerror or error})") from None


def market_filter(name: str, markets: list[str]) -> list[str]:
    """``--market``: the name as the ledger files it, or a bars file's path (the ledger files it resolved)."""
    candidates = {name, str(Path(name).resolve())}
    chosen = [m for m in markets if m in candidates]
    if not chosen:
        raise JobError(f"trials: no records on market {name!r} in the ledger (its markets: {', '.join(markets) or 'none'})")
    return chosen


def summarise_market(records: list[TrialRecord], market: str) -> MarketSummary | None:
    """N, runs and the best trial of one market with its deflated Sharpe; None where no policy trial has days."""
    from actors.jobs.evaluation.evidence import deflation  # scipy and arch: loaded only once there is a ledger to read

    trials = ledger_trials(records, market)
    if trials.count == 0:
        return None
    best = int(np.argmax(trials.sharpes))
    return MarketSummary(market, trials, trials.names[best], trials.sharpes[best], len(trials.returns[best]),
                         deflation(trials.returns[best], trials, 0, dsr_of=trials.names[best]))


def market_lines(summaries: list[MarketSummary]) -> list[str]:
    lines = ["| market | trials (N) | runs | variance of daily Sharpe | lucky best of N | best trial | its daily Sharpe | "
             "days | its deflated Sharpe given N |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in summaries:
        lines.append(f"| {s.market} | {s.trials.count} | {s.trials.runs} | {s.trials.variance:.2e} | "
                     f"{s.deflation.dsr_benchmark_sharpe:.3f} | {s.best} | {s.best_sharpe:.3f} | {s.best_days} | "
                     f"{s.deflation.dsr:.3f} |")
    lines.append("(daily Sharpe: mean / std of daily returns; the deflated Sharpe is the probability that the best trial's "
                 "true Sharpe beats the best of N by luck alone: below 0.95 it looks lucky)")
    return lines


def run_lines(records: list[TrialRecord]) -> list[str]:
    """The newest ``RUNS_SHOWN`` runs (a line written before run ids were recorded: its (commit, date) is its run)."""
    runs: dict[str, dict] = {}
    for r in records:
        key = r.run_id or f"(no run id) {r.commit[:8]} {r.date}"
        run = runs.setdefault(key, {"date": r.date, "job": r.job, "commit": r.commit[:8], "code": r.code[:8] or "-",
                                    "markets": set(), "trials": set()})
        run["markets"].add(r.market)
        if r.role == "policy" and r.daily_returns:
            run["trials"].add((r.market, r.config_hash, r.seed, r.variant))
    newest = sorted(runs.items(), key=lambda item: item[1]["date"])[-RUNS_SHOWN:]
    lines = [f"runs: {len(runs)} in all" + (f", the newest {len(newest)}:" if len(runs) > len(newest) else ":"),
             "| run | date | job | commit | code | market(s) | policy trials |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for key, run in newest:
        lines.append(f"| {key} | {run['date']} | {run['job']} | {run['commit']} | {run['code']} | "
                     f"{', '.join(sorted(run['markets']))} | {len(run['trials'])} |")
    return lines
