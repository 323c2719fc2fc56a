"""Backtests on test days in the trials ledger: ``bin/run backtest`` and every ablation variant are trials too.

A backtest that plays the test split (or a whole bars file, ``env.split = all``, which holds test days) looks at days
a verdict may later be drawn on, so its days are recorded as soon as its report exists, one policy trial per backtest
(``run.trials_path``; actors/jobs/evaluation/ledger.py stamps the code fingerprint and the run id). A backtest of the
training or validation days is not a look at the test days and is not recorded. The P&L per session comes from the
backtest's report (``session_pnl`` of its metrics.json), as the main job's phase 3 reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

from actors.jobs.config import Config
from actors.jobs.evaluation.ledger import TrialRecord, append_trials, config_hash, ledger_path, utc_now
from actors.jobs.evaluation.trials import ledger_market

TEST_SPLITS = ("test", "all")
"""The env splits that hold test days (``all``: a bars file played whole)."""


def backtest_session_pnl(run_dir: Path, config: Config) -> list[float]:
    """The backtest's P&L per session, from its report (empty when the report has none)."""
    path = run_dir / config.env.report_dir / "metrics.json"
    try:
        return [float(row["pnl_usd"]) for row in json.loads(path.read_text()).get("session_pnl", [])]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def backtest_record(config: Config, session_pnl: list[float], commit: str, *, job: str, variant: str,
                    params: dict | None = None) -> TrialRecord:
    """One backtest's sessions as a policy trial of ``config``'s market (its hash names the checkpoint it played)."""
    return TrialRecord(
        config_hash=config_hash(config), market=ledger_market(config), seed=config.run.seed, fold=0, variant=variant,
        daily_returns=[pnl / config.account.start_balance for pnl in session_pnl], date=utc_now(), commit=commit,
        job=job, role="policy", params={"split": config.env.split, "days": len(session_pnl), **(params or {})})


def plays_test_days(config: Config) -> bool:
    return config.env.split in TEST_SPLITS


def record_backtests(config: Config, records: list[TrialRecord]) -> Path | None:
    """Append ``records`` (one run: one run id) when ``config`` plays test days; the ledger's path, else None."""
    if not plays_test_days(config) or not records:
        return None
    ledger = ledger_path(config.run)
    append_trials(ledger, records)
    return ledger


def record_ablation(cells: dict, names: list[str], commit: str) -> Path | None:
    """Every ablation backtest (``cells``: {(seed, variant index): its result, with ``config`` and ``run_dir``}) as one
    trial 'ablation:<variant>#<seed>', all in one run; the ledger's path, or None when they played no test days."""
    if not cells:
        return None
    records = [backtest_record(cell.config, backtest_session_pnl(Path(cell.run_dir), cell.config), commit, job="ablation",
                               variant=f"ablation:{names[index]}#{seed}") for (seed, index), cell in sorted(cells.items())]
    return record_backtests(next(iter(cells.values())).config, records)
