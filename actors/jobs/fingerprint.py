"""A run's fingerprint (what made its figures) and whether it was reproducible, written as fingerprint.json beside them.

One seed gives one result only on the same code, configuration, platform, package versions and thread counts
(docs/reliability.md, "Reproducible runs"): the fingerprint names each, so two runs whose figures differ can be told
apart by what differed. The code is named three ways: the commit, whether the checkout had uncommitted changes, and the
cells cache's hash of the sources (actors/jobs/cells/cell.py); the configuration by the trials ledger's hash
(actors/jobs/evaluation/ledger.py).

``run_reproducibility`` reads a finished run's logs for what breaks reproducibility in a run.reproducible run: an actor
restarted (the supervisor's ``actor_restarting``, ``broker_restarted``), a deadline that passed and changed the data
(MISSED_DEADLINES: a HOLD for a late verdict, a degraded verdict, a decision without its thought, a step without its
thoughts), a step the policy's rollout could not store. Any of them and the run says "not reproducible".
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec

from actors import REASONER

from actors.jobs.cells.cell import code_fingerprint
from actors.jobs.evaluation.ledger import config_hash, current_commit

FINGERPRINT_FILE = "fingerprint.json"
PACKAGES = ("torch", "stable-baselines3", "sb3-contrib", "numpy", "llama_cpp_python", "gymnasium", "msgspec", "pyzmq",
            "scipy", "pandas", "hmmlearn", "peft", "transformers")
"""The packages whose versions can move a figure (a missing one is recorded as absent)."""
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
MISSED_DEADLINES: dict[str, tuple[str, ...]] = {
    "env": ("verdict_timeouts", "fusion_decisions_missing"),
    "risk": ("degraded_verdicts",),
    "fusion": ("thought_waits_expired", "outcomes_without_verdict"),
}
"""Per actor, the counters of deadlines that passed and changed what the run did (read from its last stats)."""
LATE_STEP_EVENT = "thoughts_late"
"""The env's warning for a lockstep step that went on without its thoughts (one per late step)."""
DROPPED_STEPS: dict[str, tuple[str, ...]] = {"policy": ("steps_dropped",)}
RESTART_EVENTS = ("actor_restarting", "broker_restarted")


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def checkout_dirty(repo: Path | None = None) -> bool | None:
    """Whether the checkout this code runs from has uncommitted changes to tracked files; None outside a checkout."""
    where = repo or Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where, capture_output=True,
                              text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return bool(done.stdout.strip())


def thread_counts(config) -> dict[str, Any]:
    """The thread counts a figure can depend on: the config's, the machine's, and the BLAS variables of the environment."""
    return {
        "policy.torch_threads": config.policy.torch_threads,
        "reasoner.n_threads": config.reasoner.n_threads,
        "cpu_count": os.cpu_count(),
        **{name: os.environ.get(name, "") for name in THREAD_VARIABLES},
    }


def fingerprint(config) -> dict[str, Any]:
    """What a run's figures were made with (config: the run's resolved Config)."""
    return {
        "commit": current_commit(),
        "dirty": checkout_dirty(),
        "code": code_fingerprint(),
        "config_hash": config_hash(config),
        "seed": config.run.seed,
        "reproducible_mode": config.run.reproducible,
        "packages": package_versions(),
        "threads": thread_counts(config),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def _last_counters(log_file: Path) -> dict[str, float]:
    """The counters and gauges of an actor's last stats line (``actor_stopped`` at its end, else the newest ``stats``)."""
    last: dict[str, float] = {}
    for record in _records(log_file):
        if record.get("event") in ("stats", "actor_stopped"):
            last = record
    return {key: value for key, value in last.items() if isinstance(value, (int, float))}


def _records(log_file: Path):
    try:
        lines = log_file.read_text(errors="replace").splitlines()
    except OSError:
        return
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _events(log_file: Path, names: tuple[str, ...]) -> int:
    return sum(1 for record in _records(log_file) if record.get("event") in names)


def run_reproducibility(run_dir: Path, reproducible_mode: bool) -> dict[str, Any]:
    """Restarts, missed deadlines and dropped steps of a finished run (its ``logs/``), and the verdict."""
    logs = Path(run_dir) / "logs"
    restarts = _events(logs / "supervisor.jsonl", RESTART_EVENTS)
    missed: dict[str, int] = {}
    for actor, keys in {**MISSED_DEADLINES, **DROPPED_STEPS}.items():
        counters = _last_counters(logs / f"{actor}.jsonl")
        for key in keys:
            if counters.get(key):
                missed[f"{actor}.{key}"] = int(counters[key])
    late = _events(logs / "env.jsonl", (LATE_STEP_EVENT,))
    if late:
        missed[f"env.{LATE_STEP_EVENT}"] = late
    dropped = sum(count for key, count in missed.items() if key.split(".", 1)[1] in DROPPED_STEPS["policy"])
    deadlines = sum(missed.values()) - dropped
    return {
        "reproducible_mode": reproducible_mode,
        "restarts": restarts,
        "missed_deadlines": deadlines,
        "dropped_steps": dropped,
        "breaks": missed,
        "reproducible": reproducible_mode and restarts == 0 and deadlines == 0 and dropped == 0,
    }


def verdict_line(figures: dict[str, Any]) -> str:
    """One line for the job's output: reproducible or not, and why."""
    counts = f"{figures['restarts']} restart(s), {figures['missed_deadlines']} missed deadline(s), {figures['dropped_steps']} dropped step(s)"
    if not figures["reproducible_mode"]:
        return f"reproducibility: off (run.reproducible = false: timing may move the figures); {counts}"
    if figures["reproducible"]:
        return f"reproducibility: reproducible ({counts})"
    detail = ", ".join(f"{key} {value}" for key, value in figures["breaks"].items())
    return f"reproducibility: NOT reproducible ({counts}{': ' + detail if detail else ''})"


def write_fingerprint(run_dir: Path, config, figures: dict[str, Any]) -> Path:
    """fingerprint.json in ``run_dir``: the fingerprint and the run's reproducibility figures."""
    path = Path(run_dir) / FINGERPRINT_FILE
    path.write_text(json.dumps({**fingerprint(config), "reproducibility": figures}, indent=2, sort_keys=True) + "\n")
    return path


def without_free_running_reasoner(config):
    """A reproducible run has no free-running reasoner: which steps its thoughts reach depends on the machine's pace.
    In lockstep (env.thought_lag_steps >= 1) every step waits for its thought, so the reasoner stays."""
    if not config.run.reproducible or config.env.thought_lag_steps or REASONER not in config.runtime.actors:
        return config
    print("reproducible run: the reasoner is left out (free-running, its thoughts would land where the machine's pace puts "
          "them; lockstep keeps it)", file=sys.stderr, flush=True)
    actors = [actor for actor in config.runtime.actors if actor != REASONER]
    return msgspec.structs.replace(config, runtime=msgspec.structs.replace(config.runtime, actors=actors))


def record_reproducibility(config, run_dir: Path) -> dict[str, Any]:
    """After a run through the actors (train, backtest and what runs them): fingerprint.json in the run directory, the
    figures in its report's metrics.json (a backtest's), and, for a reproducible run, one line saying whether it was."""
    figures = run_reproducibility(run_dir, config.run.reproducible)
    path = write_fingerprint(run_dir, config, figures)
    add_to_metrics(Path(run_dir) / config.env.report_dir / "metrics.json", figures)
    if config.run.reproducible:
        print(f"{verdict_line(figures)}; fingerprint: {path}", flush=True)
    return figures


def add_to_metrics(metrics_file: Path, figures: dict[str, Any]) -> None:
    """The reproducibility figures in a report's metrics.json (where the run wrote one)."""
    try:
        metrics = json.loads(metrics_file.read_text())
    except (OSError, ValueError):
        return
    if isinstance(metrics, dict):
        metrics["reproducibility"] = figures
        metrics_file.write_text(json.dumps(metrics, indent=2) + "\n")
