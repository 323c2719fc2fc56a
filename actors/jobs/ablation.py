"""Mode ablation: train once (or take --model), backtest each variant on the same data, write one table."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from actors import ENV, FUSION, POLICY, RISK
from actors.common.figures import brief_of
from actors.jobs.backtest import backtest_settings, run_backtest, trained_fusion_settings
from actors.jobs.backtest_ledger import record_ablation
from actors.jobs.evaluation.ledger import current_commit
from actors.jobs.common import JobError, configure, format_table
from actors.jobs.config import Config
from actors.jobs.cells.ablation import ablation_on_cells
from actors.jobs.cells.pool import cost_markdown
from actors.jobs.presets import BACKTEST, LOCKSTEP, REPRODUCIBLE, TRAIN, Lockstep, Preset, Thoughts, preset_settings
from actors.jobs.evaluate import success_lines
from actors.jobs.inputs import check_option_files
from actors.jobs.evaluation.evidence import Row, verdict_at_least, verdict_between
from actors.jobs.evaluation.decision_sources import SourceBook, SourceScores, pooled
from actors.jobs.lora import (FirstRoundWatch, learn_in_run_config, adapter_file_settings, published_adapter_settings,
                              run_round_rows, versions_book)
from actors.jobs.main import HYBRID, MAIN_TRAINING, hybrid_settings
from actors.jobs.train import exact_budget, policy_checkpoint, run_training, train_settings, training_summary
from bus.messages import LlmThought, LoraAdapter
from runtime.supervisor import EXIT_OK

LLM_OFF = [ENV, POLICY, FUSION, RISK]


@dataclass(frozen=True)
class Variant:
    """One row of the table: a backtest (BACKTEST) with the variant's own settings; an LLM variant thinks in
    ``lockstep`` (each decision has the previous step's thought) with its own thought form, so it can differ from RL
    only: at full speed no thought arrives in time and every variant would be RL only."""

    name: str
    settings: dict[str, Any]
    lockstep: Lockstep | None = None

    @property
    def presets(self) -> list[Preset]:
        return [BACKTEST, REPRODUCIBLE] + ([self.lockstep] if self.lockstep else [])


ABLATION_VARIANTS: list[Variant] = [
    Variant("RL only", {"fusion.method": "rl_only", "risk.veto_enabled": False, "risk.account_guard_enabled": False, "runtime.actors": LLM_OFF}),
    Variant("RL only + risk veto", {"fusion.method": "rl_only", "runtime.actors": LLM_OFF}),
    Variant("RL + rule fusion (single-shot)", {"fusion.method": "rules"}, LOCKSTEP),
    Variant("RL + neural fusion (single-shot)", {"fusion.method": "network"}, LOCKSTEP),
    Variant("RL + rule fusion (single-shot), no veto", {"fusion.method": "rules", "risk.veto_enabled": False}, LOCKSTEP),
]
FOUR_STEP_VARIANT = Variant("RL + rule fusion (four-step)", {"fusion.method": "rules"}, Lockstep(Thoughts("four_step")))
"""Added by --four-step: a four-step thought per decision costs seconds on 2 cores."""
LORA_VARIANT = Variant("RL + rule fusion (single-shot) +LoRA", {"fusion.method": "rules"}, LOCKSTEP)
"""Added by --lora: the rule-fusion variant above with the reasoner on a trained adapter (reasoner.lora_path, set per
seed: --adapter, or the one a lockstep run with the trainer learns from that seed's policy on the training days); it
costs that run (about two minutes on 2 cores) per seed."""
ABLATION_STEPS = 120
"""Decisions per backtest (the same slice of the test days for every variant and seed); --set env.max_steps=0 = the whole split."""
COMPARED_METRICS = ("net_pnl_usd", "sharpe", "win_rate", "max_drawdown_usd")
"""The figures whose differences from the baseline variant are tested against their intervals."""
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
"""Student t quantiles (0.975) by degrees of freedom, for 95% intervals over a handful of seeds."""
ABLATION_COLUMNS = ("win_rate", "sharpe", "max_drawdown_usd", "profit_factor", "trades", "apex_violations", "agreement_rate",
                    "veto_rate", "query_rate", "llm_staleness_steps", "net_pnl_usd")
"""The table's columns, headed by each figure's compact label (actors/common/figures.py)."""


def ablation_markdown(rows: list[dict[str, Any]], notes: str) -> str:
    head = "| variant | " + " | ".join(brief_of(key) for key in ABLATION_COLUMNS) + " |"
    sep = "| --- |" + " ---: |" * len(ABLATION_COLUMNS)
    lines = ["# Ablation", "", notes, "", head, sep]
    for row in rows:
        half = row.get("half_widths", {})
        with_interval = len(row.get("per_seed", ())) != 1  # one seed has no interval: no "± 0"
        cells = [_cell(row["metrics"].get(key)) + (f" ± {_cell(half[key])}" if key in half and with_interval else "")
                 for key in ABLATION_COLUMNS]
        lines.append(f"| {row['variant']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def mean_and_half_width(values: list[float]) -> tuple[float, float]:
    """Mean over seeds and the half-width of its 95% t-interval (0 for one seed; NaNs ignored)."""
    finite = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=np.float64)
    if finite.size == 0:
        return float("nan"), float("nan")
    if finite.size == 1:
        return float(finite[0]), 0.0
    t = T_975.get(finite.size - 1, 1.96)
    return float(finite.mean()), float(t * finite.std(ddof=1) / np.sqrt(finite.size))


def summarise_seeds(per_seed: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Means and 95% half-widths per metric over the seeds' backtests."""
    keys = sorted({key for metrics in per_seed for key in metrics})
    means, halves = {}, {}
    for key in keys:
        means[key], halves[key] = mean_and_half_width([m.get(key, float("nan")) for m in per_seed])
    return means, halves


def significant_differences(rows: list[dict[str, Any]], baseline: str = "RL only") -> list[str]:
    """Per variant and compared metric, the paired (same seed) difference from ``baseline`` whose 95%
    interval excludes zero: differences larger than their intervals. Sentences, one per finding."""
    base = next((row for row in rows if row["variant"] == baseline), None)
    if base is None or len(base["per_seed"]) < 2:
        return []
    findings = []
    for row in rows:
        if row is base:
            continue
        for key in COMPARED_METRICS:
            diffs = [a.get(key, float("nan")) - b.get(key, float("nan")) for a, b in zip(row["per_seed"], base["per_seed"])]
            mean, half = mean_and_half_width(diffs)
            if np.isfinite(mean) and np.isfinite(half) and abs(mean) > half:
                findings.append(f"{row['variant']}: {key} differs from {baseline} by {mean:+,.3f} ± {half:,.3f} (95%, paired by seed)")
    return findings


def _cell(value: float | None) -> str:
    if value is None or not np.isfinite(value):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:.3f}"


def ablation_notes(config: Config, seeds: list[int], trained: str) -> str:
    data = config.data
    source = f"file {data.path}" if data.source == "file" else f"synthetic NQ 1-minute bars, {data.synthetic_days} sessions, data seed {data.seed if data.seed >= 0 else 'run seed'}"
    steps = f"the first {config.env.max_steps} decisions of the test split" if config.env.max_steps else "the whole test split"
    return (
        f"Data: {source}; train/validation/test split {data.train_fraction:.2f}/{data.validation_fraction:.2f}/rest by time. "
        f"Every variant walks the same evaluation accounts ({config.account.preset}) over {steps} with one env, for each of the "
        f"seeds {seeds} (run.seed: the policy's training, the LLM's sampling and the fusion network's start). {trained}. "
        f"LLM: {config.reasoner.model_path or config.reasoner.model}; the LLM variants run in lockstep "
        "(env.thought_lag_steps = 1: every decision has the previous step's thought), the RL-only ones at full speed. "
        "Cells: mean ± half-width of the 95% t-interval over seeds. Numbers are what this run measured, not a claim about live trading."
    )


SYSTEM_VARIANT = "RL + neural fusion (single-shot)"
"""The seeds' system (policy, LLM, fusion network, risk veto): the success table's subject."""


def _seed_interval(per_seed: list[dict[str, float]], key: str) -> tuple[float, float, float]:
    mean, half = mean_and_half_width([m.get(key, float("nan")) for m in per_seed])
    return mean, mean - half, mean + half


def _share_row(figure: str, scores: SourceScores | None, name: str, target: str, verdict_of, note: str = "") -> Row:
    nan = float("nan")
    if scores is None or not getattr(scores, name).n:
        return Row(figure, nan, nan, nan, target, "not evidence", note or "no scored decision (flat, with a thought and a label)")
    share = getattr(scores, name)
    low, high = share.interval
    return Row(figure, share.value, low, high, target, verdict_of(share.value, low, high), note or f"{share.hits} of {share.n} decisions")


def ablation_success_rows(rows: list[dict[str, Any]], scores: dict[str, SourceScores]) -> list[Row]:
    """The seeds' targets for the seeds' system (SYSTEM_VARIANT): win rate and Sharpe over seeds (t-interval),
    fusion accuracy, LLM accuracy and agreement over its pooled decisions (Wilson), LLM accuracy after LoRA from
    the +LoRA variant when it ran."""
    nan = float("nan")
    system = next((row for row in rows if row["variant"] == SYSTEM_VARIANT), None)
    if system is None:
        return []
    per_seed = system["per_seed"]
    several = len(per_seed) > 1
    win = _seed_interval(per_seed, "win_rate")
    sharpe = _seed_interval(per_seed, "sharpe")
    one_seed = "one seed: no interval (--seeds 3 or more)"
    return [
        Row("win rate (mean over seeds)", *win, "0.58-0.62", verdict_between(*win, 0.58, 0.62) if several else "not evidence",
            "" if several else one_seed),
        Row("daily Sharpe (annualised, mean over seeds)", *sharpe, ">= 3", verdict_at_least(*sharpe, 3.0) if several else "not evidence",
            "" if several else one_seed),
        _share_row("fusion accuracy (chose the source that was right)", scores.get(SYSTEM_VARIANT), "chose_right_source", "0.85-0.90",
                   lambda v, lo, hi: verdict_between(v, lo, hi, 0.85, 0.90)),
        _share_row("LLM accuracy, base model (advice = hindsight label)", scores.get(SYSTEM_VARIANT), "llm", ">= 0.60",
                   lambda v, lo, hi: verdict_at_least(v, lo, hi, 0.60)),
        _share_row("LLM accuracy, after LoRA", scores.get(LORA_VARIANT.name), "llm", ">= 0.75",
                   lambda v, lo, hi: verdict_at_least(v, lo, hi, 0.75), "" if LORA_VARIANT.name in scores else "run with --lora"),
        _share_row("RL/LLM agreement", scores.get(SYSTEM_VARIANT), "agreement", "0.65-0.75",
                   lambda v, lo, hi: verdict_between(v, lo, hi, 0.65, 0.75)),
        Row("oracle share, deflated Sharpe", nan, nan, nan, ">= 0.30, >= 0.95", "not evidence", "bin/run evaluate (walk-forward)"),
    ]


def ablation_root(args: argparse.Namespace, base: Config) -> Path:
    root = Path(args.run_dir) if args.run_dir else Path(base.run.runs_dir) / f"{time.strftime('%Y%m%d-%H%M%S')}-ablation"
    root.mkdir(parents=True, exist_ok=True)
    return root


def checkpoint_for_seed(args: argparse.Namespace, root: Path, seed: int) -> tuple[Path, Path | None]:
    """--model's checkpoint, else one trained now with this seed: (checkpoint, the run directory it was trained in)."""
    if args.model is not None:
        return policy_checkpoint(args.model), None
    # Train with the neural fusion on, so its network learns from the same outcomes as the policy.
    settings = {**MAIN_TRAINING, **train_settings(args), "fusion.method": "network", "run.seed": seed}
    train = run_training(exact_budget(configure(args, settings, [TRAIN, REPRODUCIBLE])), args, root / f"train-seed{seed}")
    print(format_table(training_summary(train), f"training summary (seed {seed})"))
    return policy_checkpoint(train.run_dir.path), train.run_dir.path


def adapter_for_seed(args: argparse.Namespace, root: Path, seed: int, trained_in: Path | None) -> dict[str, Any]:
    """The +LoRA variant's reasoner settings: --adapter, else the adapter a lockstep run on the training days
    learns (main's phase 2 with the trainer beside the loop, from this seed's policy); {} = the base model."""
    if getattr(args, "adapter", None) is not None:
        return adapter_file_settings(args.adapter)
    if trained_in is None:
        raise JobError("--lora with --model needs --adapter PATH (no training run here to learn an adapter from)")
    config = learn_in_run_config(args, {**MAIN_TRAINING, **hybrid_settings(args, trained_in), "run.seed": seed}, root / f"lora-seed{seed}-history",
                                 HYBRID)
    watch = FirstRoundWatch()
    run = run_training(config, args, root / f"lora-seed{seed}", watch=(LlmThought, LoraAdapter), stop_when=watch)
    print(format_table(run_round_rows(versions_book(config, run.run_dir.path), watch), f"LoRA learned in lockstep (seed {seed})"))
    return published_adapter_settings(config, run.run_dir.path)


def ablation_variants(args: argparse.Namespace) -> list[Variant]:
    return (ABLATION_VARIANTS + ([FOUR_STEP_VARIANT] if getattr(args, "four_step", False) else [])
            + ([LORA_VARIANT] if getattr(args, "lora", False) else []))


@dataclass
class SeedInputs:
    """What every variant of one seed starts from: the seed's policy, its fusion network and (--lora) its adapter."""

    checkpoint: Path
    fusion: dict[str, Any]
    lora: dict[str, Any]


@dataclass
class VariantResult:
    metrics: dict[str, float]
    run_dir: str
    sources: SourceScores | None
    config: Config


def seed_inputs(args: argparse.Namespace, root: Path, seed: int) -> SeedInputs:
    """One seed's training (or --model), fusion network and adapter: an ablation cell (actors/jobs/cells/ablation.py)."""
    checkpoint, trained_in = checkpoint_for_seed(args, root, seed)
    fusion = trained_fusion_settings(trained_in or Path(args.model))
    lora = adapter_for_seed(args, root, seed, trained_in) if getattr(args, "lora", False) else {}
    return SeedInputs(checkpoint, fusion, lora)


def variant_backtest(args: argparse.Namespace, root: Path, seed: int, index: int, variant: Variant, inputs: SeedInputs) -> VariantResult:
    """One variant's backtest for one seed: an ablation cell."""
    settings = {**backtest_settings(inputs.checkpoint, args.data), "env.max_steps": ABLATION_STEPS, "run.seed": seed,
                "reasoner.seed": seed, **variant.settings}
    if settings.get("fusion.method") == "network":
        settings.update(inputs.fusion)
    if variant.name == LORA_VARIANT.name:
        settings.update(inputs.lora)  # {} when no adapter could be trained: the variant then runs the base model
    print(f"\n[seed {seed}, variant {index + 1}] {variant.name}", file=sys.stderr, flush=True)
    book = SourceBook() if variant.lockstep else None
    config = configure(args, {**settings, "env.publish_hindsight": True} if variant.lockstep else settings, variant.presets)
    result, metrics = run_backtest(config, args, root / f"seed{seed}" / f"variant-{index + 1}",
                                   watch=SourceBook.WATCH if book else (), observe=book.add if book else None)
    return VariantResult(metrics, str(result.run_dir.path), book.scores() if book is not None else None, config)


def mode_ablation(args: argparse.Namespace) -> int:
    base = configure(args)
    check_option_files(args)  # --data, --model, --adapter: a broken file stops the job before the training
    root = ablation_root(args, base)
    n_seeds = max(1, getattr(args, "seeds", None) or 3)
    seeds = [base.run.seed + i for i in range(n_seeds)]
    variants = ablation_variants(args)
    results: dict[str, list[dict[str, float]]] = {variant.name: [] for variant in variants}
    run_dirs: dict[str, list[str]] = {variant.name: [] for variant in variants}
    sources: dict[str, list[SourceScores]] = {variant.name: [] for variant in variants}
    config = base
    commit = current_commit()
    cells, cost = ablation_on_cells(args, base, root, seeds, variants, seed_inputs, variant_backtest)
    ledger = record_ablation(cells, [variant.name for variant in variants], commit)  # test days played: trials, at once
    for seed in seeds:
        for index, variant in enumerate(variants):
            cell = cells[(seed, index)]
            if cell.sources is not None:
                sources[variant.name].append(cell.sources)
            results[variant.name].append(cell.metrics)
            run_dirs[variant.name].append(cell.run_dir)
            config = cell.config
    rows = []
    for variant in variants:
        means, halves = summarise_seeds(results[variant.name])
        thinking = preset_settings([variant.lockstep] if variant.lockstep else [], base)
        settings = {**thinking, **variant.settings}  # what the variant changes on top of the backtest
        rows.append({"variant": variant.name, "settings": settings, "run_dirs": run_dirs[variant.name], "metrics": means,
                     "half_widths": halves, "per_seed": results[variant.name]})
    trained = "Policy given with --model (the same for every seed)" if args.model else "One policy trained per seed"
    notes = ablation_notes(config, seeds, trained)  # data, split and env settings are the same in every variant
    findings = significant_differences(rows)
    verdict = ("Differences larger than their intervals:\n" + "\n".join(f"- {f}" for f in findings)) if findings else \
        "No difference from RL only is larger than its 95% interval over these seeds." if len(seeds) > 1 else \
        "One seed: no interval and no test of the differences (--seeds 3 or more for that)."
    scores = {variant: pooled(found) for variant, found in sources.items() if found}
    table = ablation_success_rows(rows, scores)
    success = [asdict(row) for row in table]
    markdown = ablation_markdown(rows, notes) + "\n" + verdict + "\n"
    if success:
        markdown += f"\n## Success table (the seeds' targets, {SYSTEM_VARIANT})\n\n" + "\n".join(success_lines(table)) + "\n"
    markdown += cost_markdown(cost)
    (root / "ablation.md").write_text(markdown)
    (root / "ablation.json").write_text(json.dumps({"notes": notes, "seeds": seeds, "findings": findings, "variants": rows,
                                                    "success_table": success, "cells": cost,
                                                    "sources": {variant: score.to_json() for variant, score in scores.items()}},
                                                   indent=2, default=str))
    print("\n" + markdown)
    print(f"ablation table: {root}/ablation.md and ablation.json")
    if ledger is not None:
        print(f"trials ledger {ledger}: {len(cells)} backtests on test days recorded (one trial each; bin/run trials lists them)")
    return EXIT_OK
