"""From a walk-forward to trials-ledger records, and from the ledger back to the deflated Sharpe's trials.

Every policy variant a run tries (each budget x seed, each ensemble) is recorded per fold with its daily
returns, and so are the floors and the oracle it played beside them (role ``floor`` / ``oracle``: shown, never
counted as trials). ``ledger_trial_sharpes`` reads every policy trial ever recorded on the same market, joins
each one's folds back into one series and returns their per-day Sharpe ratios: N and V of the deflated
Sharpe (Bailey & Lopez de Prado 2014) then count the defaults' whole history, not one run's budgets x seeds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from actors.common.statistics import sharpe_ratio
from actors.jobs.evaluation.ledger import TrialRecord

POLICY_PREFIXES = ("policy@", "ensemble@")


def role_of(variant: str) -> str:
    if variant.startswith(POLICY_PREFIXES):
        return "policy"
    return "oracle" if variant == "oracle" else "floor"


def seed_of(variant: str, default: int) -> int:
    """'policy@<budget>#<seed>' -> seed; ``default`` for an ensemble or a floor."""
    _, _, seed = variant.partition("#")
    return int(seed) if seed.lstrip("-").isdigit() else default


def walk_forward_records(result, capital: float, *, config_hash: str, commit: str, date: str, job: str = "evaluate",
                         base_seed: int = 0, market: str | None = None) -> list[TrialRecord]:
    """One record per (variant, fold) of a ``WalkForward``: its test days' P&L over ``capital``, under ``market``
    (default the walk-forward's own name; a bars file's absolute path keeps two files apart). A floor's record
    carries what it chose on that fold's training days (``params``)."""
    records = []
    for name, series in result.series.items():
        start = 0
        for fold, count in enumerate(series.fold_days):
            days = series.daily_pnl[start:start + count]
            start += count
            choice = result.floor_choices[fold].params_of(name) if fold < len(result.floor_choices) else {}
            role = role_of(name)
            records.append(TrialRecord(
                config_hash=config_hash, market=market or result.market, seed=seed_of(name, base_seed), fold=fold, variant=name,
                daily_returns=[float(pnl) / capital for pnl in days], date=date, commit=commit, job=job, role=role,
                params=choice if role == "floor" else {}))
    return records


@dataclass(frozen=True)
class LedgerTrials:
    """The policy trials of one market, as the deflated Sharpe counts them."""

    sharpes: list[float]
    """Per-day Sharpe ratio of each trial (its folds joined in fold order)."""
    names: list[str]
    """'<config hash> <variant>' of each trial."""
    runs: int
    """Distinct (configuration, commit, date) the trials came from: how many runs the history holds."""

    @property
    def count(self) -> int:
        return len(self.sharpes)

    @property
    def variance(self) -> float:
        return float(np.var(self.sharpes, ddof=1)) if len(self.sharpes) > 1 else 0.0


def ledger_trials(records: Iterable[TrialRecord], market: str) -> LedgerTrials:
    """Every policy trial recorded on ``market``: records grouped by (config hash, seed, variant), a fold recorded
    twice (the same configuration run again) counting once, its latest line kept. A record with no days (a train run
    with no validation days to score) has no Sharpe to give: it stays in the file, not in N or V."""
    folds: dict[tuple[str, int, str], dict[int, list[float]]] = {}
    runs = set()
    for record in records:
        if record.market != market or record.role != "policy" or not record.daily_returns:
            continue
        folds.setdefault((record.config_hash, record.seed, record.variant), {})[record.fold] = record.daily_returns
        runs.add((record.config_hash, record.commit, record.date))
    sharpes, names = [], []
    for (config, _seed, variant), by_fold in folds.items():
        days = np.concatenate([np.asarray(by_fold[k], dtype=np.float64) for k in sorted(by_fold)])
        sharpes.append(per_day_sharpe(days))
        names.append(f"{config} {variant}")
    return LedgerTrials(sharpes, names, len(runs))


def per_day_sharpe(days: np.ndarray) -> float:
    """mean / std (ddof=1) of daily values; 0 with fewer than 2 days or no variance (a policy that never traded)."""
    return sharpe_ratio(days, too_few=0.0)


def counted_trials(ledger: LedgerTrials | None, own: LedgerTrials) -> LedgerTrials:
    """The deflated Sharpe's trials: the ledger's, unless it holds fewer than this run's own (no ledger, or one this
    run could not write to), so N never undercounts what the run itself tried."""
    return ledger if ledger is not None and ledger.count >= own.count else own


def ledger_market(config) -> str:
    """The market a run's records are filed under: the synthetic scenario's name, or its bars files' absolute paths
    joined by os.pathsep (as evaluate writes them), so a file named from two folders is one market."""
    if config.data.source != "file":
        return config.data.scenario
    return os.pathsep.join(str(Path(part).resolve()) for part in config.data.path.split(os.pathsep))
