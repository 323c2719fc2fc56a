"""The main job's phase 3 in the trials ledger: its backtest is a trial, and its deflated Sharpe counts them all.

The backtest's test days (its report's P&L per session, through the actors and the risk rules) are appended to the
ledger (``run.trials_path``) as one policy trial of the market, under the hash of phase 1's configuration (the one
that shapes the policy; the backtest's own settings name run-specific checkpoint paths). Then, exactly as
``bin/run evaluate`` does (``ledger_trials``, ``counted_trials``, ``evidence.deflation``), the deflated Sharpe takes N and
the variance of the trials' Sharpe from every policy trial the ledger holds on that market, and the job prints
evaluate's sentence (``evidence_lines``).

Phase 2's candidate that the validation days did not choose is not recorded: only its net is played on the test days
(the evidence table's row), not its days; the choice itself was made on the validation days.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from actors.jobs.config import Config
from actors.jobs.evaluation.evidence import deflation
from actors.jobs.evaluation.summary import Deflation
from actors.jobs.evaluation.ledger import TrialRecord, append_trials, config_hash, ledger_path, read_trials_or_stop, utc_now
from actors.jobs.evaluation.trials import LedgerTrials, counted_trials, ledger_market, ledger_trials, per_day_sharpe
from actors.jobs.train_ledger import policy_variant


def phase3_record(backtest_config: Config, policy_config: Config, session_pnl: list[float], checkpoint: Path,
                  chosen: str, commit: str) -> TrialRecord:
    """The backtest's test days as one policy trial (``chosen``: which phase's policy played)."""
    seed = policy_config.run.seed
    return TrialRecord(
        config_hash=config_hash(policy_config), market=ledger_market(backtest_config), seed=seed, fold=0,
        variant=policy_variant(checkpoint, seed),
        daily_returns=[pnl / backtest_config.account.start_balance for pnl in session_pnl], date=utc_now(), commit=commit,
        job="main", role="policy", params={"split": backtest_config.env.split, "policy": chosen, "days": len(session_pnl)})


def record_phase3(backtest_config: Config, policy_config: Config, session_pnl: list[float], checkpoint: Path,
                  chosen: str, commit: str) -> Deflation:
    """Append phase 3's trial and return the deflated Sharpe over every policy trial on the market, as evaluate's
    ``evidence_lines`` reads it (with ``ledger``, and this run's 1 trial)."""
    ledger = ledger_path(backtest_config.run)
    record = phase3_record(backtest_config, policy_config, session_pnl, checkpoint, chosen, commit)
    append_trials(ledger, [record])
    returns = np.asarray(record.daily_returns, dtype=np.float64)
    own = LedgerTrials([per_day_sharpe(returns)], [f"{record.config_hash} {record.variant}"], 1)
    trials = counted_trials(ledger_trials(read_trials_or_stop(ledger, "main"), record.market), own)
    return deflation(returns, trials, own.count, ledger=str(ledger), market=record.market, dsr_of=record.variant)
