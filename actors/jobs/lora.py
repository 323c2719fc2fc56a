"""Mode lora: offline fine-tuning from a stored experience file, or a rollback to an earlier adapter version.

- ``bin/run lora --experiences FILE [--rounds N]``: the trainer's rounds (actors/lora/core.py train_offline)
  on the experiences of FILE (JSON lines, actors/lora/store.py write_experiences_file); prints the
  held-out match rate before -> after of each round and where its adapter is.
- ``bin/run lora --rollback VERSION --run-dir RUN``: RUN's adapter VERSION republished as a new version
  (actors/lora/versions.py); announced on lora.adapter when RUN's runtime is running.

``lora_actor_settings`` is how a job runs the trainer actor beside its loop when ``[lora] enabled``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from actors import DECISION_LOOP, LORA
from actors.jobs.common import JobError, configure, format_table
from actors.lora import (LORA_DIR_NAME, AdapterVersion, ExperienceStore, RoundReport, StepProgress, VersionBook,
                         read_experiences_file, train_offline)
from bus.messages import LoraAdapter
from config.schema import Config
from runtime.rundir import RunDir, create_run_dir
from runtime.supervisor import EXIT_OK

COLLECT_EXPERIENCES = {"lora.enabled": True, "lora.experiences_per_round": 1_000_000_000,
                       "runtime.actors": [*DECISION_LOOP, LORA]}
"""A training run that only collects experiences (thoughts + hindsight labels + trades): no round runs during
it; ``adapter_settings`` trains one afterwards, off the clock of the loop."""
ANNOUNCE_SETTLE_SECS = 0.5
"""A fresh PUB socket's connection to the broker needs a moment before its first message gets through."""


def lora_actor_settings(config: Config) -> dict[str, Any]:
    """``runtime.actors`` with the trainer when ``lora.enabled`` (the supervisor starts only what it lists)."""
    actors = list(config.runtime.actors)
    if not config.lora.enabled or LORA in actors:
        return {}
    return {"runtime.actors": actors + [LORA]}


def versions_book(config: Config, run_dir: Path) -> VersionBook:
    return VersionBook(config.lora.versions_dir or Path(run_dir) / LORA_DIR_NAME / "versions")


def print_progress(p: StepProgress) -> None:
    print(f"  step {p.step}/{p.steps}  loss {p.loss:.4f}  {p.tokens_per_sec:,.0f} tokens/s", file=sys.stderr, flush=True)


def round_rows(reports: list[RoundReport]) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for index, report in enumerate(reports, start=1):
        result, version = report.result, report.version
        rows += [
            (f"round {index}: match rate before -> after", f"{result.before:.3f} -> {result.after:.3f} ({result.held_out} held out)"),
            (f"round {index}: version", f"v{version.version} {'published' if version.published else 'kept, not published (worse)'}"),
            (f"round {index}: adapter", str(version.path)),
        ]
    return rows


def run_offline(args: argparse.Namespace) -> int:
    path = Path(args.experiences)
    if not path.is_file():
        raise JobError(f"no experience file {path}")
    experiences = read_experiences_file(path)
    if not experiences:
        raise JobError(f"{path} holds no experiences")
    config = configure(args)
    rd = create_run_dir(config, "lora", args.run_dir)
    rounds = max(1, args.rounds or 1)
    print(f"run directory: {rd.path}\n{len(experiences)} experiences from {path}, {rounds} round(s) of "
          f"{config.lora.steps_per_round} steps on {config.lora.device}", file=sys.stderr, flush=True)
    started = time.monotonic()
    reports = train_offline(config.lora, config.reasoner, rd.path, experiences, rounds,
                            progress=None if args.quiet else print_progress)
    rows = round_rows(reports) + [("elapsed_secs", time.monotonic() - started), ("versions", str(versions_book(config, rd.path).root))]
    print(format_table(rows, "LoRA offline fine-tuning"))
    published = [r.version for r in reports if r.version.published]
    if published:
        last = published[-1]
        print(f"\nuse it: --set reasoner.lora_path={last.path} --set reasoner.lora_version={last.version}")
    return EXIT_OK


def adapter_settings(args: argparse.Namespace, config: Config, trained_in: Path | None, out_dir: Path) -> dict[str, Any]:
    """The reasoner settings of a +LoRA variant: --adapter, else one round trained (into ``out_dir``) on the
    experiences that the training run ``trained_in`` collected (COLLECT_EXPERIENCES). {} when there is none to use."""
    if getattr(args, "adapter", None) is not None:
        if not Path(args.adapter).is_file():
            raise JobError(f"no adapter file {args.adapter}")
        return {"reasoner.lora_path": str(Path(args.adapter).resolve()), "reasoner.lora_version": 1}
    if trained_in is None:
        raise JobError("--lora with --model needs --adapter PATH (no training run here to learn an adapter from)")
    store_path = Path(trained_in) / LORA_DIR_NAME / "experiences.sqlite"
    if not store_path.is_file():
        print(f"LoRA: no experience store in {trained_in}: the base model stands in for the adapter", file=sys.stderr, flush=True)
        return {}
    store = ExperienceStore(store_path, max_experiences=config.lora.max_experiences, held_out_fraction=config.lora.held_out_fraction)
    try:
        experiences = store.all()
    finally:
        store.close()
    if not experiences:
        print(f"LoRA: {trained_in} collected no experiences: the base model stands in for the adapter", file=sys.stderr, flush=True)
        return {}
    print(f"LoRA: one round on {len(experiences)} experiences of {trained_in}", file=sys.stderr, flush=True)
    started = time.monotonic()
    [report] = train_offline(config.lora, config.reasoner, out_dir, experiences, rounds=1)
    version = report.version
    rows = round_rows([report]) + [("experiences", len(experiences)), ("round_secs", time.monotonic() - started)]
    print(format_table(rows, "LoRA round on the collected experiences"), flush=True)
    return {"reasoner.lora_path": str(version.path), "reasoner.lora_version": version.version}


def announce(run_dir: Path, version: AdapterVersion) -> bool:
    """Publish lora.adapter on RUN's bus when it has one (a runtime running there); False when it has none."""
    from bus.broker import BusAddresses
    from bus.client import SyncBus

    try:
        addresses = BusAddresses.read(run_dir)
    except FileNotFoundError:
        return False
    with SyncBus(addresses, sender="lora-rollback") as client:
        time.sleep(ANNOUNCE_SETTLE_SECS)
        client.publish(LoraAdapter(version=version.version, path=str(version.path), metrics=version.metrics))
    return True


def run_rollback(args: argparse.Namespace) -> int:
    if args.run_dir is None:
        raise JobError("--rollback needs --run-dir RUN: the run whose adapter versions to go back in")
    rd = RunDir(Path(args.run_dir).resolve())
    config = rd.load_config() if rd.config_file.is_file() else configure(args)
    book = versions_book(config, rd.path)
    try:
        version = book.rollback(args.rollback)
    except KeyError as exc:
        known = ", ".join(f"v{v.version}" for v in book.versions()) or "none"
        raise JobError(f"{exc.args[0]} (versions: {known})") from None
    announced = announce(rd.path, version)
    print(format_table([
        ("rolled back to", f"v{args.rollback}"), ("new version", f"v{version.version}"), ("adapter", str(version.path)),
        ("announced on lora.adapter", "yes (bus.json found)" if announced else "no (no bus.json: no runtime there)"),
    ], "LoRA rollback"))
    return EXIT_OK


def mode_lora(args: argparse.Namespace) -> int:
    if getattr(args, "rollback", None) is not None:
        return run_rollback(args)
    if getattr(args, "experiences", None) is None:
        raise JobError("lora needs --experiences FILE (offline fine-tuning) or --rollback VERSION --run-dir RUN")
    return run_offline(args)
