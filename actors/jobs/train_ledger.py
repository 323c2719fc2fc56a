"""A training run in the trials ledger: its policy scored on the validation days, one more trial of the deflated Sharpe.

``bin/run train`` learns on the training split only; the days after it (``data.validation_fraction``) are unseen by it.
So that the deflated Sharpe of a later evaluate or main job counts the configurations tried here too, the trained
checkpoint plays those days once, frozen, through the env and the risk rules (``play_window``, as a walk-forward's test
window is played), and each day's net P&L over the start balance is appended to the ledger (``run.trials_path``). With
no validation days there is nothing out of sample to score: the record says so (``params.scored``) and carries no
returns, and ``ledger_trials`` leaves it out of N and V rather than count a made-up Sharpe.
"""

from __future__ import annotations

from pathlib import Path

from actors.jobs.config import Config
from actors.jobs.evaluation.ledger import TrialRecord, append_trials, config_hash, ledger_path, utc_now
from actors.jobs.evaluation.trials import ledger_market
from actors.jobs.presets import BACKTEST
from actors.policy import checkpoint_steps, latest_checkpoint

SCORED_SPLIT = "validation"


def policy_variant(checkpoint: Path, seed: int) -> str:
    """'policy@<env steps>#<seed>', as evaluate names its variants (a checkpoint without a step count: 0 steps)."""
    return f"policy@{checkpoint_steps(checkpoint) or 0}#{seed}"


def validation_days_pnl(config: Config, checkpoint: Path) -> list[float]:
    """The checkpoint's net P&L on each validation day, frozen, one account walking the days with the risk rules."""
    from actors.env.factory import load_dataset
    from actors.jobs.evaluation.chain import frozen_checkpoint_decide, play_window

    scored = BACKTEST.apply(config)  # frozen learners, one env in backtest mode: what a backtest of it would play
    split = load_dataset(scored).split(SCORED_SPLIT)
    if len(split.session_open_bars()) == 0:
        return []
    return [float(pnl) for pnl in play_window(scored, split, frozen_checkpoint_decide(checkpoint, scored)).daily_pnl]


def train_trial(config: Config, run_dir: Path, commit: str) -> TrialRecord | None:
    """The training run's record (None when it left no checkpoint: nothing was trained to score)."""
    checkpoint = latest_checkpoint(run_dir)
    if checkpoint is None:
        return None
    days = validation_days_pnl(config, checkpoint)
    scored = f"{SCORED_SPLIT} days, frozen, with the risk rules" if days else "nothing: the data has no validation days"
    return TrialRecord(
        config_hash=config_hash(config), market=ledger_market(config), seed=config.run.seed, fold=0,
        variant=policy_variant(checkpoint, config.run.seed), daily_returns=[pnl / config.account.start_balance for pnl in days],
        date=utc_now(), commit=commit, job="train", role="policy",
        params={"scored": scored, "days": len(days), "checkpoint": str(checkpoint)})


def record_training(config: Config, run_dir: Path, commit: str) -> TrialRecord | None:
    """Append the training run's record to the ledger; returns it (None when there was no checkpoint)."""
    record = train_trial(config, run_dir, commit)
    if record is None:
        return None
    [written] = append_trials(ledger_path(config.run), [record])  # as written: with its code and run id
    return written
