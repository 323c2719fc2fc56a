"""Mode train: the policy learns inside the full decision loop; the job prints the training summary, then scores the
trained policy on the validation days and appends that trial to the trials ledger (actors/jobs/train_ledger.py)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any, Callable

import msgspec

from actors import ENV, POLICY
from actors.common.figures import labelled
from actors.jobs.common import JobError, JobResult, configure, format_table, run_job
from actors.jobs.config import Config
from actors.jobs.evaluation.ledger import current_commit, ledger_path, read_trials_or_stop
from actors.jobs.fingerprint import record_reproducibility, without_free_running_reasoner
from actors.jobs.presets import REPRODUCIBLE, TRAIN
from actors.jobs.train_ledger import record_training
from actors.policy import CheckpointNotFound, checkpoint_steps, find_checkpoint, latest_checkpoint
from bus.messages import Done, Message
from runtime.rundir import CONFIG_FILE
from runtime.supervisor import EXIT_OK

SUMMARY_KEYS = (
    "num_timesteps", "updates", "approx_kl", "clip_fraction", "explained_variance", "entropy_loss",
    "mean_episode_return", "episodes", "win_rate", "trades", "net_pnl_usd", "apex_violations",
    "query_rate", "agreement_rate", "veto_rate", "llm_staleness_steps",
    "lag_query_rate", "llm_staleness_min_steps", "llm_staleness_max_steps", "late_steps", "thought_wait_share",
)
ENV_FIGURES = ("mean_episode_return", "episodes", "lag_query_rate", "llm_staleness_min_steps", "llm_staleness_max_steps",
               "late_steps", "thought_wait_share")
"""Figures the env counts (episodes, thought lag) that the training summary takes from its progress."""


MAIN_STAGES = {"train": "1-train", "hybrid": "2-hybrid", "backtest": "3-backtest", "lockstep": "4-lockstep-backtest"}
"""The stage folders of a main run (actors/jobs/main.py); the policy it chose is the one its backtest stage played."""
MAIN_BACKTEST_STAGE = MAIN_STAGES["backtest"]


def policy_checkpoint(location: Path | str) -> Path:
    """find_checkpoint as a job error (bin/run prints it and exits 1); a main run's folder (its checkpoints are in its
    stages) gives the policy that run chose for its backtests, and says so."""
    location = Path(location)
    chosen = policy_chosen_by_main_run(location)
    if chosen is not None:
        print(f"policy: {chosen} (the one the main run {location} chose for its backtests: "
              f"policy.model_path of {location / MAIN_BACKTEST_STAGE / CONFIG_FILE})", file=sys.stderr)
        return chosen
    try:
        return find_checkpoint(location)
    except CheckpointNotFound as exc:
        stages = [stage for stage in MAIN_STAGES.values() if latest_checkpoint(location / stage) is not None] if location.is_dir() else []
        hint = (f"; a main run that has not chosen its policy yet (no {MAIN_BACKTEST_STAGE}): give one of its stages, "
                + " or ".join(str(location / stage) for stage in stages)) if stages else ""
        raise JobError(f"{exc}{hint}") from None


def policy_chosen_by_main_run(run: Path) -> Path | None:
    """The checkpoint a main run's backtest stage played (policy.model_path of its config), or None when ``run`` is
    no main run that got that far."""
    import tomllib

    config = run / MAIN_BACKTEST_STAGE / CONFIG_FILE
    if not run.is_dir() or latest_checkpoint(run) is not None or not config.is_file():
        return None
    try:
        model = tomllib.loads(config.read_text()).get("policy", {}).get("model_path", "")
    except (OSError, ValueError):
        return None
    return Path(model) if model and Path(model).is_file() else None


def train_settings(args: argparse.Namespace, name: str = "") -> dict[str, Any]:
    """--timesteps, --resume and the run's name, laid over the TRAIN preset (actors/jobs/presets.py)."""
    settings: dict[str, Any] = {}
    if args.timesteps is not None:
        settings["policy.total_timesteps"] = args.timesteps
    if getattr(args, "resume", None):
        settings["policy.resume_from"] = str(policy_checkpoint(args.resume))
    if name:
        settings["run.name"] = name
    return settings


def exact_budget(config: Config) -> Config:
    """A reproducible run's loop stops at an exact step: env.max_steps = the policy's budget in loop steps, plus the one
    observation that closes its last rollout (its values end the GAE). What the env reports (episodes, returns) is
    then counted at that step, not whenever the runtime happened to stop. Unchanged when run.reproducible is off, the
    policy does not learn, either budget is 0 (open-ended) or env.max_steps is already set."""
    policy, env = config.policy, config.env
    if not (config.run.reproducible and policy.learn and policy.total_timesteps and not env.max_steps):
        return config
    start = 0
    if policy.resume_from:
        found = latest_checkpoint(policy.resume_from)
        start = (checkpoint_steps(found) or 0) if found is not None else 0
    to_go = max(policy.total_timesteps - start, 1)
    return msgspec.structs.replace(config, env=msgspec.structs.replace(env, max_steps=math.ceil(to_go / env.n_envs) + 1))


def both_done(first: str, second: str) -> Callable[[Message], bool]:
    """``stop_when``: once both actors have sent sys.done."""
    done: set[str] = set()

    def stop(msg: Message) -> bool:
        if isinstance(msg, Done):
            done.add(msg.actor)
        return {first, second} <= done

    return stop


def run_training(config: Config, args: argparse.Namespace, run_dir: Path | None = None, *,
                 watch: tuple[type[Message], ...] = (), stop_when: Callable[[Message], bool] | None = None) -> JobResult:
    """A training run until the policy's sys.done (or ``stop_when``, which must wait for that sys.done too); with an
    exact budget (``exact_budget``) until the env's too, so its figures are counted at the budget's step."""
    if stop_when is None and config.run.reproducible and config.env.max_steps:
        stop_when = both_done(POLICY, ENV)
    config = without_free_running_reasoner(config)
    result = run_job(config, "train", run_dir=run_dir, done_actor=POLICY, progress_actor=POLICY, progress_label="train",
                     quiet=args.quiet, watch=watch, stop_when=stop_when)
    record_reproducibility(config, result.run_dir.path)
    if POLICY not in result.done:
        raise JobError(f"training stopped before the policy finished (run directory {result.run_dir.path})")
    return result


def training_summary(result: JobResult) -> list[tuple[str, Any]]:
    """(label, value) rows of a training run's figures, labelled from the figures registry, then where it is."""
    figures: dict[str, float] = {}
    if POLICY in result.last_progress:
        figures.update(result.last_progress[POLICY].figures)
    figures.update(result.done[POLICY].summary)  # final, where progress may be a second old
    if ENV in result.last_progress:  # episodes are the env's to count
        env = result.last_progress[ENV].figures
        figures.update({k: env[k] for k in ENV_FIGURES if k in env})
    if ENV in result.done:  # an exact budget: the env's figures at its last step, not at its last progress report
        env = result.done[ENV].summary
        figures.update({k: env[k] for k in ENV_FIGURES if k in env})
    if not figures.get("episodes"):  # no episode ended in this run: a mean return of 0 would be made up
        figures.pop("mean_episode_return", None)
    rows: list[tuple[str, Any]] = labelled((k, figures[k]) for k in SUMMARY_KEYS if k in figures)
    rows += [("elapsed_secs", result.elapsed_secs), ("run_dir", str(result.run_dir.path))]
    checkpoint = latest_checkpoint(result.run_dir.path)
    if checkpoint is not None:
        rows.append(("checkpoint", str(checkpoint)))
    return rows


def mode_train(args: argparse.Namespace) -> int:
    config = exact_budget(configure(args, train_settings(args), [TRAIN, REPRODUCIBLE]))
    ledger = ledger_path(config.run)
    read_trials_or_stop(ledger, "train")  # a corrupt ledger stops the run now, not after the training
    commit = current_commit()  # the code that trains (a commit made meanwhile is not it)
    result = run_training(config, args, args.run_dir)
    print(format_table(training_summary(result), "training summary"))
    record = record_training(config, result.run_dir.path, commit)
    if record is not None:
        print(f"\ntrials ledger {ledger}: {record.variant} on {record.market}, {record.params['days']} out-of-sample day(s) "
              f"recorded (scored: {record.params['scored']})")
    return EXIT_OK
