"""``bin/run evaluate --lockstep-decisions N [--adapter PATH]``: the success table's fusion and LLM rows, measured.

The walk-forward itself is policy-only (in one process, no LLM). With the flag, after it, the last fold's policy
(its first seed at the last budget, frozen as tested) is saved as a checkpoint the policy actor loads
(``<run>/evaluate/lockstep-policy/``), and the main job's lockstep backtest (actors/jobs/lockstep.py) plays the
first N decisions of that fold's test window through the actors, every decision with the previous step's thought:
once on the base model (``<run>/evaluate/lockstep-base``) and, given ``--adapter``, once more with that GGUF LoRA
adapter in the reasoner (``lockstep-adapter``). Each run scores RL advice, LLM advice and the fused action against
the hindsight label of every flat decision (actors/jobs/evaluation/decision_sources.py).

``--fusion-warmup M`` (with ``fusion.method = network``): before each of those runs, the same model plays M lockstep
decisions of the last training days (they end a purge before the test window, so no hindsight label looks into it)
with the fusion network learning, from closed trades and from the hindsight of the flat steps that stayed flat
(fusion.hindsight_lessons); the test run starts from that network (``<run>/fusion/fusion_network.pt``), frozen as the
backtest preset leaves it. Each model gets its own network: what to trust depends on whose thoughts they are.

The test window is chosen through the data split: data.train_fraction puts the start of the test split on the
fold's first test day (the cut snaps to a session start) and data.validation_fraction = 0, so the env actor's
backtest pass starts there; the bars, features and seed are the walk-forward's.

``lockstep_rows`` turns the scores into the success table's rows: fusion accuracy (the seeds' definition: of the
decisions where exactly one source was right, the share where fusion chose it) against 0.85-0.90, LLM accuracy
base -> adapter against 0.75, RL/LLM agreement against 0.65-0.75, and fused minus RL-only (paired, in accuracy and in
hindsight dollars) above 0. The
fusion, agreement and fused rows read the adapter's run when there is one (the system as it would trade), else the
base model's.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from actors.env.dataset import Dataset
from actors.jobs.config import Config
from actors.jobs.evaluation.event_sources import EventScores, event_scores, event_signs_by_id
from actors.jobs.evaluation.evidence import Row, verdict_at_least, verdict_between
from actors.jobs.evaluation.decision_sources import (AGREEMENT_TARGET, FUSION_ACCURACY_TARGET, LLM_ACCURACY_TARGET, Share, SourceScores,
                                           finite_or_none)
from actors.jobs.evaluation.risk_reads import RiskReadScores, event_levels, risk_read_scores
from actors.jobs.evaluation.walkforward import WalkForward

POLICY_DIR = "lockstep-policy"
WARMUP_SUFFIX = "-fusion-warmup"
"""Run directory of a model's fusion warm-up: lockstep-base-fusion-warmup, lockstep-adapter-fusion-warmup."""
WARMUP_LEARNING = {"fusion.method": "network", "fusion.learn": True, "fusion.min_experiences": 32,
                   "fusion.update_every_experiences": 16}
"""The warm-up's fusion: the network learns, with a first update after 32 lessons (a few hundred decisions give a
hundred or two; a training run's 256 would never come)."""
BARS_PER_DAY = 390
BASE_DIR = "lockstep-base"
ADAPTER_DIR = "lockstep-adapter"
LLM_BEFORE_TARGET = 0.60
"""The seeds' LLM accuracy before fine-tuning; the target after is LLM_ACCURACY_TARGET (0.75)."""
EVENT_THINKING = {"reasoner.think_on": "news"}
"""On a market with events the lockstep runs think when something new arrives (an event, an entry or exit, every
reasoner.think_every_bars bars) and answer quiet bars with the env's latest thought: a few thousand decisions then take
minutes on 2 cores instead of hours, and the decisions right after an event still wait for the thought that read it.
A carried answer is aged from the step its prompt read: fusion drops it past fusion.max_staleness_steps, and the
reports give the share of decisions with a thought and its real age (actors/jobs/evaluation/thought_ages.py).
The user's --set reasoner.think_on=every_bar has the last word (actors/jobs/common.py configure)."""
EVENTS_WINDOW = {"env.backtest_window": "events", "reasoner.risk_read": True, "reasoner.think_on": "events",
                 "reasoner.think_every_bars": 100_000}
"""--lockstep-window events: the env plays only the bars from 5 before to 30 after each event's bar (env.backtest_window,
actors/env/batch.py event_windows), the reasoner answers with its risk read and thinks when an event comes out (not on
an entry or exit, nor on a timer: the decisions that count are those right after an event), so several hundred event
decisions cost one thought each. The user's --set keys have the last word."""
SPA_FLOORS = ("rl", "flat", "trend")
"""The floors fused is tested against, per flat decision in hindsight $: the policy alone, staying flat, the trend word."""
SPA_LEVEL = 0.05
SPA_REPS = 1000


@dataclass(frozen=True)
class FusionWarmup:
    """A model's fusion warm-up on the training days: where it played and what the network learned."""

    decisions: int
    start_day: int
    run_dir: str
    network: str
    """The saved fusion_network.pt the test run starts from; '' when too few lessons came for a first update."""
    figures: dict[str, float] = field(default_factory=dict)
    """Its fusion actor's last counters and gauges: hindsight_experiences, experiences, network_updates, ..."""
    scores: SourceScores | None = None
    """Each source against the hindsight labels of the warm-up days: what the network had to learn from."""

    def to_json(self) -> dict:
        return {"decisions": self.decisions, "start_day": self.start_day, "run_dir": self.run_dir, "network": self.network,
                "figures": dict(self.figures), "scores": self.scores.to_json() if self.scores is not None else None}


@dataclass(frozen=True)
class LockstepEvidence:
    """The lockstep run(s) of the last fold's frozen policy."""

    decisions: int
    """Decisions asked for (--lockstep-decisions); the scores count the flat ones that had a thought and a label."""
    base: SourceScores
    adapter: SourceScores | None = None
    base_figures: dict[str, float] = field(default_factory=dict)
    """The base run's LLM figures (query rate, RL/LLM agreement, fusion LLM trust, ...: actors/jobs/lockstep.py)."""
    adapter_figures: dict[str, float] = field(default_factory=dict)
    fold: int = -1
    test_start_day: int = -1
    checkpoint: str = ""
    adapter_path: str = ""
    warmups: dict[str, FusionWarmup] = field(default_factory=dict)
    """Per run (base, adapter), its fusion warm-up (--fusion-warmup); empty without one."""
    events: dict[str, EventScores] = field(default_factory=dict)
    """Per run (base, adapter), the decisions right after an event read (a market with events only)."""
    spa: dict[str, dict] = field(default_factory=dict)
    """The run the rows read: per floor (SPA_FLOORS), the data-snooping test of fused against it (significance.py)."""
    thought_ages: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per run (base, adapter), the share of decisions with a thought and its real age, the carried answers' real age
    and fusion's count of the decisions whose thought was too old (actors/jobs/evaluation/thought_ages.py)."""
    risk_reads: dict[str, RiskReadScores] = field(default_factory=dict)
    """Per run (base, adapter), the risk read right after an event against the hindsight level, beside the calendar
    and keyword rules (actors/jobs/evaluation/risk_reads.py; a market with events only)."""
    window: str = "all"
    """--lockstep-window: all (the first decisions of the test window) | events (the minutes around its events)."""

    @property
    def after(self) -> SourceScores:
        """The run the fusion rows read: the adapter's when there is one, else the base model's."""
        return self.adapter if self.adapter is not None else self.base

    @property
    def after_figures(self) -> dict[str, float]:
        return self.adapter_figures if self.adapter is not None else self.base_figures

    @property
    def after_name(self) -> str:
        return "adapter" if self.adapter is not None else "base model"

    def rows(self) -> list[Row]:
        return lockstep_rows(self)

    def to_json(self) -> dict:
        runs = {"base": {"dir": BASE_DIR, "scores": self.base.to_json(), "llm": dict(self.base_figures)}}
        if self.adapter is not None:
            runs["adapter"] = {"dir": ADAPTER_DIR, "path": self.adapter_path, "scores": self.adapter.to_json(),
                               "llm": dict(self.adapter_figures)}
        for name, warmup in self.warmups.items():
            runs[name]["fusion_warmup"] = warmup.to_json()
        for name, scores in self.events.items():
            runs[name]["events"] = scores.to_json()
        for name, ages in self.thought_ages.items():
            runs[name]["thought_ages"] = {key: finite_or_none(value) for key, value in ages.items()}
        for name, reads in self.risk_reads.items():
            runs[name]["risk_reads"] = reads.to_json()
        return {"decisions_requested": self.decisions, "window": self.window, "fold": self.fold, "test_start_day": self.test_start_day,
                "policy_checkpoint": self.checkpoint, "rows_read": self.after_name,
                "fused_against_floors": {floor: _spa_json(test) for floor, test in self.spa.items()}, **runs}


def _share_text(share: Share) -> str:
    return share.bracketed() if share.n else "n/a (no decision)"


def _row(figure: str, share: Share, target: str, verdict: str, note: str) -> Row:
    low, high = share.interval
    return Row(figure, share.value, low, high, target, verdict, note)


def lockstep_rows(evidence: LockstepEvidence) -> list[Row]:
    """The success table's fusion accuracy, LLM accuracy before -> after and RL/LLM agreement rows, and fused minus
    RL-only, from the lockstep scores (verdicts as everywhere: the whole interval on one side of the target)."""
    after, base = evidence.after, evidence.base
    run = f"lockstep, {evidence.after_name}, {after.decisions} scored of {evidence.decisions} decisions"
    trust = evidence.after_figures.get("llm_trust", float("nan"))
    lower, upper = FUSION_ACCURACY_TARGET
    chose = after.chose_right_source
    fusion = _row("fusion accuracy", chose, f"{lower:.2f}-{upper:.2f}",
                  verdict_between(chose.value, *chose.interval, lower, upper),
                  f"{run}: {chose.n} where exactly one source was right; fusion LLM trust (mean) "
                  + (f"{trust:.2f}" if math.isfinite(trust) else "n/a"))
    if evidence.adapter is not None:
        llm_note = f"base {_share_text(base.llm)} -> adapter {_share_text(evidence.adapter.llm)}"
    else:
        llm_note = f"base {_share_text(base.llm)}; base model only; --adapter to compare"
    llm = after.llm
    accuracy = _row("LLM accuracy before -> after", llm, f"{LLM_BEFORE_TARGET:.2f} -> {LLM_ACCURACY_TARGET:.2f}",
                    verdict_at_least(llm.value, *llm.interval, LLM_ACCURACY_TARGET), f"{llm_note} ({run})")
    low, high = AGREEMENT_TARGET
    agree = after.agreement
    agreement = _row("RL/LLM agreement", agree, f"{low:.2f}-{high:.2f}", verdict_between(agree.value, *agree.interval, low, high), run)
    paired = after.fused_vs_rl
    paired_low, paired_high = paired.interval
    fused = Row("fused minus RL-only (accuracy, paired)", paired.value, paired_low, paired_high, "> 0",
                verdict_above(paired.value, paired_low, paired_high, 0.0),
                f"{run}: fused {_share_text(after.fused)}, RL {_share_text(after.rl)}; fusion right where RL was wrong "
                f"{paired.gained}, the other way {paired.lost}")
    dollars = after.fused_vs_rl_usd
    usd_low, usd_high = dollars.interval
    fused_usd = Row("fused minus RL-only (hindsight $ a flat decision, paired)", dollars.value, usd_low, usd_high, "> 0",
                    verdict_above(dollars.value, usd_low, usd_high, 0.0),
                    f"{run}: a decision's action valued at what a long (BUY) or a short (SELL) from there made, one "
                    f"contract, costs paid; fused {after.mean_usd('fused'):+,.1f}, RL {after.mean_usd('rl'):+,.1f}, "
                    f"LLM {after.mean_usd('llm'):+,.1f}, the trend word alone {after.mean_usd('trend'):+,.1f} a decision")
    return [fusion, accuracy, agreement, fused, fused_usd, *_spa_rows(evidence, run), *_event_rows(evidence),
            *_risk_rows(evidence)]


def fused_against_floors(series: dict[str, np.ndarray], label_horizon: int, reps: int = SPA_REPS) -> dict[str, dict]:
    """Per floor (SPA_FLOORS; flat is zero), Hansen's SPA test of "fused does not beat it" on the per-decision
    hindsight $: each is a ``label_horizon``-bar label, so neighbouring decisions share their future and the
    stationary bootstrap's mean block is at least that horizon (in decisions: each spans a bar or more)."""
    from actors.jobs.evaluation.significance import data_snooping_tests

    fused = series["fused"]
    floors = {"rl": series["rl"], "flat": np.zeros_like(fused), "trend": series["trend"]}
    return {floor: data_snooping_tests({"fused": fused}, floors[floor], reps=reps, label_horizon=label_horizon) for floor in SPA_FLOORS}


def _spa_json(test: dict) -> dict:
    return {"p_value_spa": finite_or_none(test["p_value_spa"]), "decisions": test["days"], "block": test.get("block_size")}


def _spa_rows(evidence: LockstepEvidence, run: str) -> list[Row]:
    if not evidence.spa:
        return []
    p = {floor: float(test["p_value_spa"]) for floor, test in evidence.spa.items()}
    worst = max(p.values())
    first = next(iter(evidence.spa.values()))
    n, block = first["days"], first.get("block_size")
    if not math.isfinite(worst):
        verdict = "not evidence"
    else:
        verdict = "met" if worst < SPA_LEVEL else "not met"
    return [Row("fused against its floors (SPA p, the largest)", worst, float("nan"), float("nan"), f"< {SPA_LEVEL:.2f} each",
                verdict, f"{run}: Hansen's SPA on {n} flat decisions' hindsight $"
                + (f" (mean block {block} decisions, at least the labels' horizon)" if block else "") + ", fused against "
                + ", ".join(f"{floor} p " + (f"{value:.3f}" if math.isfinite(value) else "n/a (under 10 decisions)")
                           for floor, value in p.items()))]


def _event_rows(evidence: LockstepEvidence) -> list[Row]:
    """On a market with events: the LLM on the decisions right after an event read, beside the floors there."""
    name = "adapter" if evidence.adapter is not None else "base"
    scores = evidence.events.get(name)
    if scores is None:
        return []
    llm = scores.llm_label
    before = (f"base {_share_text(evidence.events['base'].llm_label)} -> adapter {_share_text(llm)}; "
              if name == "adapter" and "base" in evidence.events else "")
    note = (f"{before}{evidence.after_name}, {scores.decisions} flat decisions right after a thought read a new event "
            f"({scores.read} read): keyword rule {_share_text(scores.keyword_label)}, always BUY {_share_text(scores.buy_label)}, "
            f"the words' own sign (the ceiling of reading) {_share_text(scores.words_label)}; LLM = the surprise's side "
            f"{_share_text(scores.llm_surprise)}; hindsight $ a decision: {scores.usd_text()}")
    gain = scores.llm_vs_keyword_usd
    gain_low, gain_high = gain.interval
    return [_row("LLM advice = hindsight label, right after an event", llm, f">= {LLM_ACCURACY_TARGET:.2f}",
                 verdict_at_least(llm.value, *llm.interval, LLM_ACCURACY_TARGET), note),
            Row("LLM minus the keyword rule, hindsight $ right after an event (paired)", gain.value, gain_low, gain_high, "> 0",
                verdict_above(gain.value, gain_low, gain_high, 0.0), f"{evidence.after_name}, {gain.n} priced decisions")]


def _risk_rows(evidence: LockstepEvidence) -> list[Row]:
    """With reasoner.risk_read: the LLM's risk read right after an event against the hindsight level, and paired against
    the calendar and keyword rules on the same decisions, with the thoughts' real age beside."""
    from actors.jobs.evaluation.thought_ages import ages_text

    name = "adapter" if evidence.adapter is not None else "base"
    scores = evidence.risk_reads.get(name)
    if scores is None or scores.missing == scores.decisions:  # none, or reasoner.risk_read was off
        return []
    before = (f"base {_share_text(evidence.risk_reads['base'].llm)} -> adapter {_share_text(scores.llm)}; "
              if name == "adapter" and "base" in evidence.risk_reads else "")
    ages = ages_text(evidence.thought_ages.get(name, {}))
    run = f"{evidence.after_name}, {scores.decisions} decisions right after a thought read a new event"
    note = (f"{before}{run} ({scores.missing} without a readable read): calendar rule {_share_text(scores.calendar)}, keyword "
            f"rule {_share_text(scores.keyword)}; held-out templates ({scores.held_out}): LLM {_share_text(scores.llm_held_out)}, "
            f"keyword {_share_text(scores.keyword_held_out)}; thought ages: {ages}")
    rows = [_row("LLM risk read = hindsight level, right after an event", scores.llm, f">= {LLM_ACCURACY_TARGET:.2f}",
                 verdict_at_least(scores.llm.value, *scores.llm.interval, LLM_ACCURACY_TARGET), note)]
    for floor, gain in (("calendar", scores.llm_vs_calendar), ("keyword", scores.llm_vs_keyword)):
        low, high = gain.interval
        rows.append(Row(f"LLM risk read minus the {floor} rule (match, paired)", gain.value, low, high, "> 0",
                        verdict_above(gain.value, low, high, 0.0), f"{run}; thought ages: {ages}"))
    return rows


def verdict_above(value: float, low: float, high: float, target: float) -> str:
    """Strictly above ``target``: "met" when the whole interval is, "not met" when none of it is (a zero difference
    on every decision is no gain), else "not evidence"."""
    if not all(map(math.isfinite, (value, low, high))):
        return "not evidence"
    if low > target:
        return "met"
    if high <= target:
        return "not met"
    return "not evidence"


def window_settings(dataset: Dataset, first_day: int) -> dict[str, Any]:
    """The data split whose test part starts at trading day ``first_day`` and runs to the end of the data."""
    bar = int(dataset.session_starts[first_day])
    return {"data.train_fraction": bar / len(dataset), "data.validation_fraction": 0.0}


def news_window_start_day(dataset: Dataset, first_day: int, decisions: int) -> int:
    """The lockstep window's first day: on the news market, the first test day from ``first_day`` whose first
    ``decisions`` bars make an event public (``first_day`` when none does, or on any other market). N decisions from
    an open cover N minutes; with ~2.5 events a day, the test window's first N bars often show none, and the LLM
    rows would then say nothing about reading the news. Still a test day: no training bar is played."""
    truth = getattr(dataset, "event_truth", None)
    if not getattr(dataset, "events", ()) or truth is None:
        return first_day
    event_bars = np.asarray(truth["event_bar"], dtype=np.int64)
    starts = np.asarray(dataset.session_starts, dtype=np.int64)
    for day in range(first_day, len(starts)):
        if np.any((event_bars >= starts[day]) & (event_bars < starts[day] + decisions)):
            return day
    return first_day


def check_lockstep_ready(config: Config, adapter: Path | None) -> dict[str, Any]:
    """Before the walk-forward's minutes: the reasoner's model file and the adapter exist (a JobError names what is
    missing); returns the adapter's reasoner settings ({} without one)."""
    from actors.jobs.common import JobError
    from actors.jobs.lora import adapter_file_settings
    from actors.reasoner import ModelFileError, check_model_files

    try:
        check_model_files(config.reasoner)
    except ModelFileError as exc:
        raise JobError(f"--lockstep-decisions needs the reasoner's model: {exc}") from None
    return adapter_file_settings(adapter) if adapter is not None else {}


def warmup_start_day(test_start_day: int, decisions: int, purge_days: int) -> int:
    """The first day of a warm-up of ``decisions`` lockstep decisions (one a bar) that ends ``purge_days`` before the
    test window (its hindsight labels look ahead; they must not see the test days)."""
    return max(0, test_start_day - purge_days - math.ceil(decisions / BARS_PER_DAY))


def save_lockstep_policy(directory: Path, steps: int, checkpoint) -> tuple[Path, dict[str, Any]]:
    """The walk-forward's kept policy as a checkpoint the policy actor loads, with its fold's regime HMM beside it
    (regime_model.json, from the checkpoint's meta): the path and the backtest settings that play it on the belief it
    was trained on. Without data.regime_model_path the lockstep env would fit the HMM again on every bar before its
    window (its own data split), and the policy would read a market_regime it never saw."""
    from actors.env.regime_model import RegimeModel, save_regime_model
    from actors.jobs.backtest import backtest_settings
    from actors.policy.checkpoint import write_checkpoint

    path = write_checkpoint(directory, steps, checkpoint)
    settings = backtest_settings(path, None)
    regime = checkpoint.meta.get("regime_model")
    if regime:
        settings["data.regime_model_path"] = str(save_regime_model(directory, RegimeModel.from_dict(regime)))
    return path, settings


def run_lockstep_evidence(args: argparse.Namespace, data_settings: dict[str, Any], dataset: Dataset, result: WalkForward,
                          out: Path, decisions: int, adapter_settings: dict[str, Any],
                          say: Callable[[str], None] = lambda _text: None, fusion_warmup: int = 0,
                          purge_days: int = 2, window: str = "all") -> LockstepEvidence:
    """Save the last fold's policy, play the first ``decisions`` of its test window in lockstep on the base model and
    (``adapter_settings``) on the adapter; ``data_settings``: the walk-forward's market keys. ``fusion_warmup``: before
    each, that many decisions on the training days teach the fusion network the test run starts from. ``window`` =
    events: only the minutes around the test window's events are played (EVENTS_WINDOW), ``decisions`` at most."""
    from actors.jobs.lockstep import lockstep_backtest

    if result.last_policy is None:
        raise ValueError("the walk-forward kept no policy to play in lockstep")
    path, saved = save_lockstep_policy(out / POLICY_DIR, *result.last_policy)
    fold = result.folds[-1]
    events_window = window == "events"
    thinking = EVENT_THINKING if getattr(dataset, "events", ()) else {}
    choices = getattr(result, "policy_choices", [])  # the cadence the last fold's policy was trained and tested with
    chosen = {key: choices[-1].params[key] for key in ("env.decision_every_bars", "env.min_hold_bars")} if choices else {}
    policy = {**data_settings, **saved, **thinking, **chosen}
    start_day = fold.test_start_day if events_window else news_window_start_day(dataset, fold.test_start_day, decisions)
    settings = {**policy, **window_settings(dataset, start_day), **(EVENTS_WINDOW if events_window else {})}
    played = window
    window = f"fold {fold.index + 1}'s test window (day {start_day} on" + (", T-5 to T+30 bars around each event)" if events_window else ")")
    if start_day != fold.test_start_day:
        window += f", its first day from day {fold.test_start_day} whose first {decisions} bars make an event public"
    warmups: dict[str, FusionWarmup] = {}

    def play(name: str, directory: str, model: dict[str, Any], title: str):
        if fusion_warmup:
            warmup = _warm_up_fusion(args, {**policy, **model}, dataset, fold.test_start_day, fusion_warmup, purge_days,
                                     out / (directory + WARMUP_SUFFIX), title, say)
            warmups[name] = warmup
            model = {**model, "fusion.method": "network", **({"fusion.model_path": warmup.network} if warmup.network else {})}
        return lockstep_backtest(args, {**settings, **model, "run.name": f"evaluate-{directory}"}, out / directory, decisions,
                                 window=f"{window}, {title}")

    say(f"lockstep: {decisions} decisions of {window} through the actors, policy {path}")
    base = play("base", BASE_DIR, {}, "base model")
    tuned = None
    if adapter_settings:
        say(f"lockstep: the same decisions with the adapter {adapter_settings['reasoner.lora_path']}")
        tuned = play("adapter", ADAPTER_DIR, adapter_settings, "adapter")
    signs = event_signs_by_id(tuple(getattr(dataset, "events", ())), getattr(dataset, "event_truth", None))
    runs = {"base": base, **({"adapter": tuned} if tuned else {})}
    events = {name: event_scores(run.reads, run.book, signs) for name, run in runs.items()
              if signs and run.reads is not None and run.book is not None}
    after = tuned or base
    spa = fused_against_floors(after.book.usd_series(), after.label_horizon_bars) if after.book is not None else {}
    levels = event_levels(dataset, int(dataset.session_starts[start_day])) if signs else None
    risk = {name: risk_read_scores(run.reads.decision_event, run.reads.decision_risk, levels) for name, run in runs.items()
            if levels is not None and run.reads is not None}
    return LockstepEvidence(decisions, base.scores, tuned.scores if tuned else None, base.llm_figures(),
                            tuned.llm_figures() if tuned else {}, fold.index, start_day, str(path),
                            adapter_settings.get("reasoner.lora_path", ""), warmups, events, spa,
                            {name: dict(run.ages) for name, run in runs.items()}, risk, played)


def _warm_up_fusion(args: argparse.Namespace, settings: dict[str, Any], dataset: Dataset, test_start_day: int,
                    decisions: int, purge_days: int, run_dir: Path, title: str, say: Callable[[str], None]) -> FusionWarmup:
    """``decisions`` lockstep decisions of the training days with the fusion network learning; its saved network."""
    from actors.fusion.actor import SAVE_DIR_NAME
    from actors.fusion.network import MODEL_FILE_NAME
    from actors.jobs.evaluation.thought_ages import fusion_figures
    from actors.jobs.lockstep import lockstep_backtest

    start = warmup_start_day(test_start_day, decisions, purge_days)
    say(f"lockstep: fusion warm-up, {title}: {decisions} decisions of the training days from day {start}, the network learning")
    run = lockstep_backtest(args, {**settings, **window_settings(dataset, start), **WARMUP_LEARNING,
                                   "run.name": f"evaluate-{run_dir.name}"}, run_dir, decisions,
                            window=f"training days from day {start}, {title}, fusion learning")
    network = run.run_dir / SAVE_DIR_NAME / MODEL_FILE_NAME
    figures = fusion_figures(run.run_dir)
    if not network.is_file():
        say(f"lockstep: the fusion warm-up ({title}) gave too few lessons for a first update; the test run fuses by the rules")
    return FusionWarmup(decisions, start, str(run.run_dir), str(network) if network.is_file() else "", figures, run.scores)

