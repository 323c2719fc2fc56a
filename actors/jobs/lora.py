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
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from actors import DECISION_LOOP, LORA, POLICY
from actors.jobs.common import JobError, configure, format_table
from actors.jobs.config import Config
from actors.jobs.presets import Preset
from actors.lora import (LORA_DIR_NAME, AdapterVersion, RoundReport, StepProgress, VersionBook,
                         read_experiences_file, train_offline, train_until_plateau, usd_text)
from bus.messages import Done, LlmThought, LoraAdapter, Message, Stats
from runtime.rundir import RunDir, create_run_dir
from runtime.supervisor import EXIT_OK

LEARN_IN_RUN = {"lora.enabled": True, "runtime.actors": [*DECISION_LOOP, LORA], "lora.experiences_per_round": 48,
                "lora.steps_per_round": 12}
"""A lockstep run (main's phase 2, the ablation's collection run) with the trainer actor beside the loop: its first
round starts after 48 experiences (the hindsight labels of the first steps' thoughts, closed trades) and trains on
12 x 4 samples while the loop goes on; the reasoner swaps the published adapter in. ``FirstRoundWatch`` ends the run."""
MIN_THOUGHTS_ON_ADAPTER = 4
"""Thoughts under a newly published adapter that FirstRoundWatch waits for, so the run shows the swap working."""
MAX_ROUND_WAIT_SECS = 300.0
"""FirstRoundWatch stops the run this long after the policy's sys.done even when no round has ended."""
ANNOUNCE_SETTLE_SECS = 0.5
"""A fresh PUB socket's connection to the broker needs a moment before its first message gets through."""


def learn_in_run_config(args: argparse.Namespace, settings: dict[str, Any], folder: Path, presets: Sequence[Preset] = (),
                        history: int = 0, held_out: int | None = None) -> Config:
    """``settings`` (over ``presets``) with the trainer beside the loop (LEARN_IN_RUN); with ``--market-history N``
    (else ``history``) it is seeded with N market-history experiences written to ``folder`` (and ``held_out``
    held-out ones: see market_history_settings)."""
    config = configure(args, {**LEARN_IN_RUN, **settings}, presets)  # the caller's settings are the more specific
    count = getattr(args, "market_history", None)
    count = history if count is None else count
    if count <= 0:
        return config
    return configure(args, {**LEARN_IN_RUN, **settings, **market_history_settings(config, folder, count, held_out)}, presets)


def market_history_settings(config: Config, folder: Path, count: int, held_out: int | None = None) -> dict[str, Any]:
    """Writes ``count`` market-history experiences of the training days (and ``held_out``, by default at least
    MIN_HELD_OUT, of the later, held-out days) to ``folder`` and returns the settings that make the trainer store
    them at start and evaluate on every held-out one: its first round then sees up, down and sideways markets, not
    only the few hours the run's own thoughts cover, and is checked on days it never saw."""
    from actors.lora import write_experiences_file

    experiences, _ = market_history(config, count, held_out)
    folder.mkdir(parents=True, exist_ok=True)
    path = write_experiences_file(folder / "market_history.jsonl", experiences)
    held = sum(1 for e in experiences if e.meta.get("held_out"))
    evaluated = held if held_out is not None else max(held, config.lora.max_eval_examples)
    return {"lora.seed_experiences_path": str(path), "lora.max_eval_examples": evaluated}


def market_history(config: Config, count: int, held_out: int | None = None, validation: int = 0):
    """(experiences, learnability ceiling) of ``count`` training-day bars and ``held_out`` (default: see
    history_bars) of the held-out days; with ``validation`` > 0 also that many of validation days (the last
    training days, ``meta["validation"]``: for early stopping, not for training nor the ceiling)."""
    _, experiences, ceiling = market_history_bars(config, count, held_out, validation)
    return experiences, ceiling


def history_market(config: Config) -> Config:
    """``config`` with the synthetic market ``bin/run lora --market-history`` draws from: lora.market_history_days
    days of the same seed and scenario (its own market, so the trainer learns from many regimes; the main job's
    --market-history keeps the run's data instead, whose test days must stay unseen)."""
    days = config.lora.market_history_days
    if config.data.source != "synthetic" or days == 0:
        return config
    return msgspec.structs.replace(config, data=msgspec.structs.replace(config.data, synthetic_days=days))


def market_history_bars(config: Config, count: int, held_out: int | None = None, validation: int = 0):
    """market_history's (experiences, ceiling) after the HistoryBars they come from (their market contexts: what
    a four-step thought is asked from)."""
    from actors.common.llm.prompts import PromptBook
    from actors.lora import history_experiences
    from actors.lora.ceiling import learnability_ceiling

    bars = history_bars(config, count, held_out, validation)
    experiences = history_experiences(PromptBook(config.reasoner), config.reasoner.mode, config.lora.target_confidence, bars)
    sides = {False: [], True: []}
    for bar in bars:
        if not bar.validation:
            sides[bool(bar.held_out)].append((str(bar.context.get("tape", "")), bar.label.action, str(bar.context.get("trend", ""))))
    return bars, experiences, learnability_ceiling(sides[False], sides[True])


def history_bars(config: Config, count: int, held_out: int | None = None, validation: int = 0):
    """HistoryBars at ``count`` random bars of the training split's earlier days and ``held_out`` (default: at
    least MIN_HELD_OUT, else lora.held_out_fraction of ``count``) of its later days (actors/lora/history.py
    split_days); ``validation`` > 0 sets the last of the earlier days apart (split_days again) as validation
    days and draws that many bars there. Each is what a thought at that bar would have been shown flat (an env
    reset there) and the triple-barrier label of its next bars; only bars where an entry is allowed and whose label horizon ends the
    same day, so no label reads across a night or into another day."""
    if config.lora.teach == "risk" and not config.reasoner.risk_read:
        raise JobError("lora.teach = risk teaches the reasoner's risk read: set reasoner.risk_read = true")
    import numpy as np

    from actors.common.hindsight import triple_barrier_label
    from actors.common.instruments import resolve_instrument
    from actors.common.llm.tape import TAPE_BARS
    from actors.env.factory import make_env
    from actors.env.hindsight import barrier_spec
    from actors.lora.history import MIN_HELD_OUT, HistoryBar, HistoryNews, split_days, with_event_bars

    lora = config.lora
    spec = barrier_spec(resolve_instrument(config.instrument), lora.hindsight_horizon_bars, lora.hindsight_stop_atr,
                        lora.hindsight_target_atr)
    env = make_env(config, "train", seed=config.run.seed)
    split, data = env.split, env.split.dataset
    day = data.features.session_id
    horizon = lora.hindsight_horizon_bars
    bars = np.arange(max(split.start, TAPE_BARS), split.stop - horizon - 1)
    bars = bars[(day[bars] == day[bars + horizon]) & data.schedule.entry_allowed[bars]]
    train_days, held_days = split_days(day[bars].tolist(), lora.held_out_fraction)
    validation_days: list[int] = []
    if validation > 0:
        train_days, validation_days = split_days(train_days, lora.held_out_fraction)
    held = held_out if held_out is not None else max(MIN_HELD_OUT, round(count * lora.held_out_fraction))
    rng = np.random.default_rng(config.run.seed)
    rows: list[HistoryBar] = []
    news = HistoryNews.of(data.events, config.reasoner)  # the news market's prompts carry their bar's news
    # (held out, validation, days, bars wanted)
    for side, checks, days, wanted in ((False, False, train_days, count), (True, False, held_days, held),
                                       (False, True, validation_days, validation)):
        pool = bars[np.isin(day[bars], days)]
        for bar in sorted(with_event_bars(pool, data.lists["start_ns"], data.events, rng, wanted).tolist()):
            env.reset(options={"start": bar, "n_bars": 1})
            label = triple_barrier_label(data.open, data.high, data.low, data.close, bar, float(data.features.atr[bar]), spec)
            if label is not None:
                rows.append(HistoryBar(str(bar), news.context(env.context()), env.action_masks().tolist(), label, int(day[bar]), side, checks))
    if lora.teach == "risk":  # the hindsight volatility level and the floors (actors/lora/risk_teach.py)
        from actors.lora.risk_teach import annotate_risk

        rows = annotate_risk(rows, data.high, data.low, data.close, day, bars[np.isin(day[bars], train_days)],
                             data.events, data.event_truth)
    return rows


def lora_actor_settings(config: Config) -> dict[str, Any]:
    """``runtime.actors`` with the trainer when ``lora.enabled`` (the supervisor starts only what it lists)."""
    actors = list(config.runtime.actors)
    if not config.lora.enabled or LORA in actors:
        return {}
    return {"runtime.actors": actors + [LORA]}


class FirstRoundWatch:
    """``stop_when`` of a LEARN_IN_RUN training run: after the policy's sys.done, wait for the trainer's first round
    (and, when it published, a few thoughts under the new adapter), at most MAX_ROUND_WAIT_SECS.

    Until then the loop keeps stepping in lockstep with a policy that has stopped learning, so the trainer's
    experiences keep coming and the reasoner keeps thinking (on the new adapter once it is swapped in)."""

    def __init__(self, max_wait_secs: float = MAX_ROUND_WAIT_SECS) -> None:
        self.max_wait_secs = max_wait_secs
        self.policy_done_at: float | None = None
        self.rounds = 0
        self.adapter: LoraAdapter | None = None
        self.thoughts_by_version: Counter[int] = Counter()
        self.timed_out = False

    def __call__(self, msg: Message) -> bool:
        match msg:
            case Done(actor=actor) if actor == POLICY:
                self.policy_done_at = self.policy_done_at or time.monotonic()
            case Stats(actor=actor) if actor == LORA:
                self.rounds = max(self.rounds, int(msg.gauges.get("rounds", 0)))
            case LoraAdapter():
                self.adapter = msg
            case LlmThought():
                self.thoughts_by_version[msg.adapter_version] += 1
        if self.policy_done_at is None:
            return False
        if self.adapter is not None:
            return self.thoughts_by_version[self.adapter.version] >= MIN_THOUGHTS_ON_ADAPTER or self._past_deadline()
        return self.rounds >= 1 or self._past_deadline()

    def _past_deadline(self) -> bool:
        self.timed_out = time.monotonic() - (self.policy_done_at or time.monotonic()) > self.max_wait_secs
        return self.timed_out


def run_round_rows(book: VersionBook, watch: FirstRoundWatch) -> list[tuple[str, Any]]:
    """What the trainer did in a LEARN_IN_RUN run, from its version book and what the watch saw."""
    versions = book.versions()
    if not versions:
        why = "no round ended in time" if watch.timed_out else "no round ran"
        return [("LoRA rounds", f"0 ({why}): the base model stands in")]
    rows: list[tuple[str, Any]] = []
    for version in versions:
        m = version.metrics
        state = "published, swapped into the reasoner" if version.published else publish_state(version)
        rows += [(f"LoRA v{version.version}", state),
                 (f"LoRA v{version.version} held-out match rate",
                  f"{m.get('match_rate_before', 0):.3f} -> {m.get('match_rate_after', 0):.3f} ({m.get('held_out', 0):.0f} held out)"),
                 *([(f"LoRA v{version.version} held-out hindsight $", usd_text(m))] if usd_text(m) else []),
                 (f"LoRA v{version.version} training", f"{m.get('train_steps', 0):.0f} steps, {m.get('train_secs', 0):.0f} s, "
                  f"{m.get('tokens_per_sec', 0):,.0f} tokens/s, {m.get('experiences', 0):.0f} experiences stored")]
    by_version = ", ".join(f"v{v}: {n}" for v, n in sorted(watch.thoughts_by_version.items()))
    rows.append(("thoughts by adapter version", by_version or "none"))
    return rows


def published_adapter_settings(config: Config, run_dir: Path) -> dict[str, Any]:
    """The reasoner on ``run_dir``'s newest published adapter; {} (the base model) when it has none."""
    version = versions_book(config, run_dir).latest_published()
    return {} if version is None else reasoner_adapter_settings(version.path, version.version)


def versions_book(config: Config, run_dir: Path) -> VersionBook:
    return VersionBook(config.lora.versions_dir or Path(run_dir) / LORA_DIR_NAME / "versions")


def print_progress(p: StepProgress) -> None:
    print(f"  step {p.step}/{p.steps}  loss {p.loss:.4f}  {p.tokens_per_sec:,.0f} tokens/s", file=sys.stderr, flush=True)


def round_rows(reports: list[RoundReport], validation_rates: list[float] | None = None) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for index, report in enumerate(reports, start=1):
        if validation_rates and index <= len(validation_rates):
            rows.append((f"round {index}: validation-day match (early stopping)", f"{validation_rates[index - 1]:.3f}"))
        result, version = report.result, report.version
        verdict = result.verdict
        gain = f", gain [{verdict.gain_low:+.3f}, {verdict.gain_high:+.3f}]" if verdict else ""
        rows += [
            (f"round {index}: match rate before -> after", f"{result.before:.3f} -> {result.after:.3f} ({result.held_out} held out{gain})"),
            (f"round {index}: version", f"v{version.version} {publish_state(version)}"),
        ]
        if usd_text(result.metrics()):
            rows.append((f"round {index}: hindsight $ of the answers (held out)", usd_text(result.metrics())))
        rows += risk_rows(index, result.extra)
        if verdict:
            mix = ", ".join(f"{name} {share:.2f}" for name, share in verdict.answer_mix.items())
            rows.append((f"round {index}: answers", f"{mix}{'  COLLAPSED' if verdict.collapsed else ''}"))
        rows.append((f"round {index}: adapter", str(version.path)))
    return rows


def risk_rows(index: int, extra: dict[str, float]) -> list[tuple[str, Any]]:
    """lora.teach = risk: the floors' level match on the same held-out event bars and the new adapter's paired gain
    over each, then the held-out templates' (scored apart)."""
    rows: list[tuple[str, Any]] = []
    for prefix, what in (("", "held-out event bars"), ("apart_", "held-out templates (never trained on)")):
        if f"{prefix}risk_events" not in extra:
            continue
        n = int(extra[f"{prefix}risk_events"])
        if prefix:
            rows.append((f"round {index}: risk read on {n} {what}",
                         f"{extra['apart_match_before']:.3f} -> {extra['apart_match_after']:.3f}"))
        for floor in ("calendar", "keyword"):
            if f"{prefix}risk_match_{floor}" in extra:
                rows.append((f"round {index}: {floor} rule on {n} {what}",
                             f"{extra[f'{prefix}risk_match_{floor}']:.3f}; adapter minus it "
                             f"{extra[f'{prefix}risk_gain_{floor}']:+.3f} [{extra[f'{prefix}risk_gain_{floor}_low']:+.3f}, "
                             f"{extra[f'{prefix}risk_gain_{floor}_high']:+.3f}]"))
    return rows


def _plateaued(rates: list[float], patience: int) -> bool:
    """The last ``patience`` validation rates brought no better one (what stopped train_until_plateau)."""
    return len(rates) > patience and max(rates[-patience:]) <= max(rates[:-patience])


def publish_state(version: AdapterVersion) -> str:
    if version.published:
        return "published"
    if version.metrics.get("collapse"):
        return "refused: collapsed onto one answer (lora_collapse)"
    if version.metrics.get("gain_low", 0.0) > 0 and version.metrics.get("one_answer_gain_low", 1.0) <= 0:
        return "kept, not published (not above one answer everywhere beyond its interval)"
    return "kept, not published (not better beyond its interval)"


def ceiling_rows(ceiling) -> list[tuple[str, Any]]:
    mix = ", ".join(f"{name} {share:.2f}" for name, share in ceiling.label_mix.items())
    return [("learnability ceiling (logistic regression on the tape)", f"{ceiling.classifier} on {ceiling.classifier.n} held-out prompts"),
            ("one answer everywhere (held-out commonest label)", f"{ceiling.chance.value:.3f}"),
            ("held-out labels", mix)]


def run_offline(args: argparse.Namespace) -> int:
    config = configure(args)
    ceiling = None
    validation: list = []
    if getattr(args, "experiences", None) is not None:
        path = Path(args.experiences)
        if not path.is_file():
            raise JobError(f"no experience file {path}")
        experiences = read_experiences_file(path)
        if not experiences:
            raise JobError(f"{path} holds no experiences")
        source = str(path)
    else:
        # Every held-out prompt is evaluated; the draws are balanced between BUY and SELL (the labels of the market's
        # days lean one way), the rare HOLD (~1 %) keeps its own share (store.py RARE_ACTION_SHARE).
        early_stop = config.lora.early_stop_patience > 0
        market = history_market(config)
        experiences, ceiling = market_history(market, args.market_history,
                                              validation=config.lora.early_stop_prompts if early_stop else 0)
        validation = [e for e in experiences if e.meta.get("validation")]
        experiences = [e for e in experiences if not e.meta.get("validation")]
        days = f", {market.data.synthetic_days} days" if market.data.source == "synthetic" else ""
        source = f"market history ({config.data.scenario}{days}: training days; later days held out)"
        if early_stop:
            source += f"; {len(validation)} validation prompts of the last training days for early stopping"
        held_out = sum(1 for e in experiences if e.meta.get("held_out"))
        config = msgspec.structs.replace(config, lora=msgspec.structs.replace(
            config.lora, max_eval_examples=max(held_out, config.lora.max_eval_examples)))
    rd = create_run_dir(config, "lora", args.run_dir)
    rounds = max(1, args.rounds or 1)
    print(f"run directory: {rd.path}\n{len(experiences)} experiences from {source}, {rounds} round(s) of "
          f"{config.lora.steps_per_round} steps on {config.lora.device}", file=sys.stderr, flush=True)
    if ceiling is not None:
        print(format_table(ceiling_rows(ceiling), "What the prompt can tell"), file=sys.stderr, flush=True)
    started = time.monotonic()
    progress = None if args.quiet else print_progress
    validation_rates: list[float] = []
    if validation:
        reports, validation_rates = train_until_plateau(config.lora, config.reasoner, rd.path, experiences, validation,
                                                        rounds, config.lora.early_stop_patience, progress)
    else:
        reports = train_offline(config.lora, config.reasoner, rd.path, experiences, rounds, progress=progress)
    rows = (ceiling_rows(ceiling) if ceiling is not None else []) + round_rows(reports, validation_rates)
    if validation:
        patience = config.lora.early_stop_patience
        stopped = "patience reached" if len(reports) < rounds or _plateaued(validation_rates, patience) else "--rounds reached"
        rows.append(("early stopping", f"{len(reports)} of at most {rounds} rounds ({stopped}); best validation match "
                                       f"{max(validation_rates):.3f} in round {validation_rates.index(max(validation_rates)) + 1} "
                                       f"of {len(validation)} validation prompts"))
    rows += [("elapsed_secs", time.monotonic() - started), ("versions", str(versions_book(config, rd.path).root))]
    print(format_table(rows, "LoRA offline fine-tuning"))
    published = [r.version for r in reports if r.version.published]
    if published:
        last = published[-1]
        print(f"\nuse it: --set reasoner.lora_path={last.path} --set reasoner.lora_version={last.version}")
    return EXIT_OK


def adapter_file_settings(path: Path) -> dict[str, Any]:
    """The reasoner on a given GGUF LoRA adapter file (``--adapter``)."""
    if not Path(path).is_file():
        raise JobError(f"no adapter file {path}")
    return reasoner_adapter_settings(Path(path).resolve(), 1)


def reasoner_adapter_settings(path: Path, version: int) -> dict[str, Any]:
    return {"reasoner.lora_path": str(path), "reasoner.lora_version": version}


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
    config = rd.load_settings(Config) if rd.config_file.is_file() else configure(args)
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
    if getattr(args, "experiences", None) is None and not (getattr(args, "market_history", 0) or 0) > 0:
        raise JobError("lora needs --experiences FILE or --market-history N (offline fine-tuning), "
                       "or --rollback VERSION --run-dir RUN")
    return run_offline(args)
