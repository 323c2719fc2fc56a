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
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np

from actors.common.statistics import sharpe_ratio
from actors.jobs.evaluation.ledger import TrialRecord, append_trials, config_hash, ledger_path, utc_now

SEEDS_MEAN = "seeds-mean@"
"""The prefix of the seeds' mean trial: 'seeds-mean@<budget>', the mean daily P&L of the budget's seeds."""
CANDIDATE_PREFIX = "candidate@"
"""'candidate@<budget>:<setting>': one policy setting trained inside a fold and scored on its validation days
(actors/jobs/evaluation/cadence.py); a trial like any other policy variant."""
POLICY_PREFIXES = ("policy@", "ensemble@", SEEDS_MEAN, CANDIDATE_PREFIX)


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
            role = role_of(name)
            if role == "policy":  # the settings the fold chose on its validation days (cadence.py), {} without a grid
                choices = getattr(result, "policy_choices", [])
                choice = dict(choices[fold].params) if fold < len(choices) else {}
                if fold < len(choices) and choices[fold].stood_aside:  # evaluate --stand-aside: flat on this fold's days
                    choice["stood_aside"] = True
            else:
                choice = result.floor_choices[fold].params_of(name) if fold < len(result.floor_choices) else {}
            records.append(TrialRecord(
                config_hash=config_hash, market=market or result.market, seed=seed_of(name, base_seed), fold=fold, variant=name,
                daily_returns=[float(pnl) / capital for pnl in days], date=date, commit=commit, job=job, role=role,
                params=choice))
    records += candidate_records(result, capital, config_hash=config_hash, commit=commit, date=date, job=job,
                                 market=market or result.market)
    if len(result.seeds) > 1:
        mean = deflated_variant(result)
        records += [msgspec.structs.replace(r, variant=mean, seed=base_seed, daily_returns=days, params={**r.params, "seeds": len(result.seeds)})
                    for r, days in zip(_first_seed_records(records, result), _seeds_mean_returns(records, result))]
    return records


def candidate_records(result, capital: float, *, config_hash: str, commit: str, date: str, job: str,
                      market: str) -> list[TrialRecord]:
    """Each policy setting a fold trained to choose among (actors/jobs/evaluation/cadence.py): one policy trial per
    candidate, its validation days (out of sample for it: it trained on the days before them) as its returns."""
    records = []
    for choice in getattr(result, "policy_choices", []):
        for name, days in choice.validation_daily_pnl.items():
            params = {**choice.candidate_params.get(name, {}), "chosen": name == choice.chosen.name,
                      "validation_first_day": choice.validation_days[0], "validation_stop_day": choice.validation_days[1]}
            records.append(TrialRecord(
                config_hash=config_hash, market=market, seed=choice.seed, fold=choice.fold,
                variant=f"{CANDIDATE_PREFIX}{choice.budget}:{name}", daily_returns=[float(pnl) / capital for pnl in days],
                date=date, commit=commit, job=job, role="policy", params=params))
    return records


def record_walk_forward(config, result, *, commit: str, job: str) -> Path:
    """Append a walk-forward's records under ``config`` (its hash, market, start balance and seed; one run) to the
    ledger; returns the ledger's path. For the jobs that score a walk-forward besides evaluate (the cells bench)."""
    ledger = ledger_path(config.run)
    append_trials(ledger, walk_forward_records(result, config.account.start_balance, config_hash=config_hash(config),
                                               commit=commit, date=utc_now(), job=job, base_seed=config.run.seed,
                                               market=ledger_market(config)))
    return ledger


def deflated_variant(result) -> str:
    """The trial evaluate's policy row is and its deflated Sharpe deflates: the one seed's variant at the last budget,
    or with several seeds their mean there ('seeds-mean@<budget>', recorded as a trial of its own)."""
    names = result.policy_names()
    return names[0] if len(names) == 1 else f"{SEEDS_MEAN}{result.budgets[-1]}"


def _first_seed_records(records: list[TrialRecord], result) -> list[TrialRecord]:
    first = result.policy_names()[0]
    return sorted((r for r in records if r.variant == first), key=lambda r: r.fold)


def _seeds_mean_returns(records: list[TrialRecord], result) -> list[list[float]]:
    """Per fold, the mean over the last budget's seeds of each day's return (the seeds share the fold's days)."""
    names = set(result.policy_names())
    by_fold: dict[int, list[list[float]]] = {}
    for r in records:
        if r.variant in names:
            by_fold.setdefault(r.fold, []).append(r.daily_returns)
    return [np.mean(by_fold[fold], axis=0).tolist() for fold in sorted(by_fold)]


@dataclass(frozen=True)
class LedgerTrials:
    """The policy trials of one market, as the deflated Sharpe counts them."""

    sharpes: list[float]
    """Per-day Sharpe ratio of each trial (its folds joined in fold order)."""
    names: list[str]
    """'<config hash> <variant>' of each trial (with ' run <run id>' for a trial read from the ledger)."""
    runs: int
    """Distinct runs the trials came from (run ids; before they were recorded, distinct (configuration, commit, date))."""
    returns: list[np.ndarray] = field(default_factory=list)
    """Each trial's daily returns, its folds joined (``bin/run trials`` deflates the best of them); empty when not read
    from a ledger."""

    @property
    def count(self) -> int:
        return len(self.sharpes)

    @property
    def variance(self) -> float:
        return float(np.var(self.sharpes, ddof=1)) if len(self.sharpes) > 1 else 0.0


TrialKey = tuple[str, str, str, int, str]
"""(config hash, code, run id, seed, variant): one trial."""


def ledger_trials(records: Iterable[TrialRecord], market: str) -> LedgerTrials:
    """Every policy trial recorded on ``market``: records grouped by (config hash, code, run id, seed, variant), so the
    same configuration run again is more trials, never the earlier ones replaced. A record with no days (a train run
    with no validation days to score) has no Sharpe to give: it stays in the file, not in N or V."""
    folds: dict[TrialKey, dict[int, list[float]]] = {}
    legacy_seen: dict[tuple[str, int, str, int], int] = {}
    runs = set()
    for record in records:
        if record.market != market or record.role != "policy" or not record.daily_returns:
            continue
        run_id = record.run_id
        if not run_id:  # an old line: the k-th time this fold appears is the k-th run of the trial
            seen = (record.config_hash, record.seed, record.variant, record.fold)
            legacy_seen[seen] = legacy_seen.get(seen, 0) + 1
            run_id = f"legacy-{legacy_seen[seen]}"
            runs.add((record.config_hash, record.commit, record.date))
        else:
            runs.add(run_id)
        folds.setdefault((record.config_hash, record.code, run_id, record.seed, record.variant), {})[record.fold] = record.daily_returns
    sharpes, names, returns = [], [], []
    for (config, _code, run_id, _seed, variant), by_fold in folds.items():
        days = np.concatenate([np.asarray(by_fold[k], dtype=np.float64) for k in sorted(by_fold)])
        sharpes.append(per_day_sharpe(days))
        names.append(f"{config} {variant} run {run_id}")
        returns.append(days)
    return LedgerTrials(sharpes, names, len(runs), returns)


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
