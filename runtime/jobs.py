"""The jobs behind ``bin/run``'s modes: each starts the runtime with a job-specific config,
watches the bus (progress, done) and prints a summary. Plain functions over the supervisor."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from bus.messages import Done, Message, Progress, Stats
from config.loader import load_config
from config.schema import Config
from runtime.logs import configure_logging
from runtime.rundir import RunDir, create_run_dir
from runtime.supervisor import EXIT_OK, Supervisor


class JobError(RuntimeError):
    """A job could not do what was asked (missing checkpoint, runtime failure, ...)."""


# ---------------------------------------------------------------------------- helpers


def console_enabled(config: Config, quiet: bool) -> bool:
    if quiet or config.logging.console == "off":
        return False
    return config.logging.console == "on" or sys.stderr.isatty()


@dataclass
class JobResult:
    exit_code: int
    run_dir: RunDir
    done: dict[str, Done] = field(default_factory=dict)
    """The sys.done messages received, by actor."""
    last_progress: dict[str, Progress] = field(default_factory=dict)
    last_stats: dict[str, Stats] = field(default_factory=dict)
    elapsed_secs: float = 0.0


class ProgressView:
    """Renders one actor's sys.progress: a tqdm bar on a terminal, a log line every few seconds otherwise."""

    def __init__(self, actor: str, label: str, enabled: bool) -> None:
        self.actor = actor
        self.label = label
        self.enabled = enabled
        self.bar = None
        self._last_line = 0.0

    def update(self, msg: Progress) -> None:
        if not self.enabled or msg.actor != self.actor:
            return
        figures = {k: f"{v:.3g}" for k, v in list(msg.figures.items())[:4]}
        if sys.stderr.isatty():
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=msg.total_steps or None, desc=self.label, unit="step", dynamic_ncols=True)
            self.bar.n = msg.steps
            self.bar.set_postfix(figures, refresh=False)
            self.bar.refresh()
        elif time.monotonic() - self._last_line > 5.0:
            self._last_line = time.monotonic()
            total = f"/{msg.total_steps}" if msg.total_steps else ""
            eta = ""
            if msg.total_steps and msg.steps_per_sec > 0:
                eta = f" eta {max(0.0, (msg.total_steps - msg.steps) / msg.steps_per_sec):.0f}s"
            extra = " ".join(f"{k}={v}" for k, v in figures.items())
            print(f"{self.label}: {msg.steps}{total} steps, {msg.steps_per_sec:.0f} steps/s{eta} {extra}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def run_job(
    config: Config,
    mode: str,
    *,
    run_dir: Path | None = None,
    done_actor: str | None = None,
    progress_actor: str | None = None,
    progress_label: str = "",
    quiet: bool = False,
) -> JobResult:
    """Start the runtime with ``config``; stop when ``done_actor`` announces sys.done (or on Ctrl-C/duration)."""
    rd = create_run_dir(config, mode, run_dir)
    console = console_enabled(config, quiet)
    log = configure_logging(
        log_file=rd.log_file("supervisor"), level=config.logging.level, console=console,
        console_level="warning" if progress_actor else "info", actor="supervisor", run=rd.run_id,
    )
    if not quiet:
        print(f"run directory: {rd.path}\nlogs:          {rd.logs}/*.jsonl  (follow with: bin/tail {rd.path})", file=sys.stderr, flush=True)
    supervisor = Supervisor(config, rd, log)
    supervisor.install_signal_handlers()
    result = JobResult(EXIT_OK, rd)
    view = ProgressView(progress_actor or "", progress_label or mode, enabled=bool(progress_actor) and not quiet)

    def on_message(msg: Message) -> None:
        if isinstance(msg, Progress):
            result.last_progress[msg.actor] = msg
            view.update(msg)
        elif isinstance(msg, Stats):
            result.last_stats[msg.actor] = msg
        elif isinstance(msg, Done):
            result.done[msg.actor] = msg

    started = time.monotonic()
    try:
        supervisor.start()
        result.exit_code = supervisor.run(
            on_message=on_message,
            stop_when=(lambda m: isinstance(m, Done) and m.actor == done_actor) if done_actor else None,
            duration_secs=config.run.duration_secs,
        )
    finally:
        view.close()
    result.elapsed_secs = time.monotonic() - started
    if result.exit_code != EXIT_OK:
        raise JobError(f"runtime failed: {supervisor.failure} (run directory {rd.path})")
    return result


def format_table(rows: list[tuple[str, Any]], title: str = "") -> str:
    """A plain two-column table for the terminal."""
    width = max((len(k) for k, _ in rows), default=0)
    lines = [title, "-" * max(len(title), width + 20)] if title else []
    for key, value in rows:
        text = f"{value:,.4g}" if isinstance(value, float) else str(value)
        lines.append(f"{key:<{width}}  {text}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- modes


def configure(args: argparse.Namespace, extra: dict[str, Any] | None = None) -> Config:
    overrides: list[str] = list(args.overrides)
    if args.duration_secs is not None:
        overrides.append(f"run.duration_secs={args.duration_secs}")
    config = load_config(args.config, overrides)
    if extra:
        # job settings first, the user's --set last so the user has the final word
        merged = {**extra, **{o.partition("=")[0]: None for o in overrides}}
        job_only = {k: v for k, v in extra.items() if merged[k] is not None}
        config = load_config(args.config, {**job_only, **dict(_parse(o) for o in overrides)})
    return config


def _parse(text: str) -> tuple[str, Any]:
    from config.loader import parse_override

    keys, value = parse_override(text)
    return ".".join(keys), value


def mode_run(args: argparse.Namespace) -> int:
    config = configure(args)
    result = run_job(config, "run", run_dir=args.run_dir, quiet=args.quiet)
    print(format_table([("elapsed_secs", result.elapsed_secs), ("run_dir", str(result.run_dir.path))], "run stopped"))
    return result.exit_code


MODE_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"run": mode_run}


def run_mode(args: argparse.Namespace) -> int:
    handler = MODE_HANDLERS.get(args.mode)
    if handler is None:
        raise JobError(f"mode '{args.mode}' is not available yet in this build")
    return handler(args)
