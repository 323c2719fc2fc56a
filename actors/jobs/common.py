"""What every job shares: its error, its result, the config layers and run_job() over the supervisor."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Callable

from actors import LORA, POLICY, REASONER
from actors.common.bar_files import DataError
from actors.env import check_data
from actors.jobs.config import Config, load_config
from actors.policy import check_checkpoint
from actors.reasoner import ModelFileError, check_model_files
from actors.jobs.presets import Preset, preset_settings
from actors.jobs.progress import ProgressView, console_enabled
from bus.messages import Done, Message, Progress, Stats
from config.tree import parse_override
from actors.jobs.errors import JobError  # noqa: F401  (re-exported: every job raises it from here)
from runtime.logs import configure_logging
from runtime.rundir import RunDir, create_run_dir
from runtime.supervisor import EXIT_OK, Supervisor


class JobStopped(Exception):
    """The user stopped the job (Ctrl-C or SIGTERM): a clean stop, not a failure (bin/run exits 0)."""

    def __init__(self, run_dir: Path, signal_name: str) -> None:
        super().__init__(f"stopped by the user ({signal_name}); what had finished is kept in {run_dir}")
        self.run_dir = run_dir


USER_STOP_REASONS = ("sigint", "sigterm")


@dataclass
class JobResult:
    exit_code: int
    run_dir: RunDir
    done: dict[str, Done] = field(default_factory=dict)
    """The sys.done messages received, by actor."""
    last_progress: dict[str, Progress] = field(default_factory=dict)
    last_stats: dict[str, Stats] = field(default_factory=dict)
    last: dict[type, Message] = field(default_factory=dict)
    elapsed_secs: float = 0.0

    def record(self, msg: Message, view: ProgressView, watch: tuple[type[Message], ...]) -> None:
        """Keep the latest message of each kind a job reads afterwards."""
        if isinstance(msg, Progress):
            self.last_progress[msg.actor] = msg
            view.update(msg)
        elif isinstance(msg, Stats):
            self.last_stats[msg.actor] = msg
        elif isinstance(msg, Done):
            self.done[msg.actor] = msg
        elif isinstance(msg, watch):
            self.last[type(msg)] = msg


def configure(args: argparse.Namespace, job_settings: dict[str, Any] | None = None, presets: Sequence[Preset] = ()) -> Config:
    """default.toml, then --config, then the job's ``presets`` (actors/jobs/presets.py), then the job's settings, then
    the user's --set (the user has the last word)."""
    user = list(args.overrides)
    if args.duration_secs is not None:
        user.append(f"run.duration_secs={args.duration_secs}")
    intents = preset_settings(presets, load_config(args.config)) if presets else {}
    overrides: dict[str, Any] = {**intents, **(job_settings or {}), **user_settings(user)}
    config = load_config(args.config, overrides)
    if config.lora.enabled and LORA not in config.runtime.actors:  # [lora] enabled = true starts the trainer in any job
        overrides["runtime.actors"] = [*config.runtime.actors, LORA]
        config = load_config(args.config, overrides)
    return config


def user_settings(texts: list[str]) -> dict[str, Any]:
    """The user's --set overrides (``section.key=value``) as {dotted key: value}."""
    settings: dict[str, Any] = {}
    for text in texts:
        keys, value = parse_override(text)
        settings[".".join(keys)] = value
    return settings


def check_run_files(config: Config) -> None:
    """Read the files the configured actors will read (the bars, the paper history, the LLM's model and adapter, the
    policy's checkpoint) before any process starts: a bad one is one error naming it, not an actor failing until the
    restart limit. The warnings of data that reads but does not fit go to stderr, before any trading."""
    try:
        data_warnings = check_data(config)
    except DataError as exc:
        raise JobError(f"data: {exc}") from None
    if REASONER in config.runtime.actors:
        try:
            check_model_files(config.reasoner)
        except ModelFileError as exc:
            raise JobError(str(exc)) from None
    if POLICY in config.runtime.actors and Path(config.policy.model_path).is_file():
        check_checkpoint(Path(config.policy.model_path))
    if POLICY in config.runtime.actors and config.policy.learn and config.policy.skip_forced_bars:
        raise JobError("policy.skip_forced_bars: only bin/run evaluate's in-process trainer learns from choices only; "
                       "a learning policy actor stores every bar (set it false, or train with bin/run evaluate)")
    for warning in data_warnings:
        print(f"warning: {warning}", file=sys.stderr, flush=True)


def run_job(
    config: Config,
    mode: str,
    *,
    run_dir: Path | None = None,
    done_actor: str | None = None,
    progress_actor: str | None = None,
    progress_label: str = "",
    quiet: bool = False,
    watch: tuple[type[Message], ...] = (),
    stop_when: Callable[[Message], bool] | None = None,
) -> JobResult:
    """Start the runtime with ``config``; stop when ``done_actor`` announces sys.done (or on Ctrl-C/duration),
    or, given ``stop_when``, when it says so of a message. The last message of each ``watch`` type is kept in
    ``JobResult.last``."""
    check_run_files(config)
    rd = create_run_dir(config, mode, run_dir)
    log = configure_logging(
        log_file=rd.log_file("supervisor"), level=config.logging.level, console=console_enabled(config, quiet),
        console_level="warning" if progress_actor else "info", actor="supervisor", run=rd.run_id,
    )
    if not quiet:
        print(f"run directory: {rd.path}\nlogs:          {rd.logs}/*.jsonl  (follow with: bin/tail {rd.path})", file=sys.stderr, flush=True)
    supervisor = Supervisor(config, rd, log)
    supervisor.install_signal_handlers()
    result = JobResult(EXIT_OK, rd)
    view = ProgressView(progress_actor or "", progress_label or mode, enabled=bool(progress_actor) and not quiet)
    started = time.monotonic()
    try:
        supervisor.start()
        if watch:
            supervisor.client.subscribe(*watch, settle_secs=0)
        result.exit_code = supervisor.run(
            on_message=lambda msg: result.record(msg, view, watch),
            stop_when=stop_when or ((lambda m: isinstance(m, Done) and m.actor == done_actor) if done_actor else None),
            duration_secs=config.run.duration_secs,
        )
    finally:
        view.close()
    result.elapsed_secs = time.monotonic() - started
    if result.exit_code != EXIT_OK:
        raise JobError(f"runtime failed: {supervisor.failure} (run directory {rd.path})")
    if supervisor.stop_reason in USER_STOP_REASONS:
        raise JobStopped(rd.path, supervisor.stop_reason)
    return result


def _cell(value: Any) -> str:
    """A whole float as the count it is (51,220, not 5.122e+04); others to 4 significant digits."""
    if isinstance(value, float):
        return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:,.4g}"
    return str(value)


def format_table(rows: list[tuple[str, Any]], title: str = "") -> str:
    """A plain two-column table for the terminal."""
    width = max((len(k) for k, _ in rows), default=0)
    lines = [title, "-" * max(len(title), width + 20)] if title else []
    for key, value in rows:
        text = _cell(value)
        lines.append(f"{key:<{width}}  {text}")
    return "\n".join(lines)
