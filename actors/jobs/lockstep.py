"""A lockstep backtest through the actors: every decision waits for the previous step's thought, and each source is
scored against the hindsight label of its bar.

The main job's phase 4 (actors/jobs/main.py) and ``bin/run evaluate --lockstep-decisions N``
(actors/jobs/evaluation/lockstep_evidence.py) both run it: a frozen policy on the first ``steps`` decisions of a
split, the LLM in every decision (the LOCKSTEP preset), hindsight labels published (env.publish_hindsight), and a
``SourceBook`` on the bus that scores RL advice, LLM advice and the fused action (actors/jobs/evaluation/decision_sources.py).
It prints the LLM's figures, the sources' table and the last thought, and writes ``sources.json`` beside the report.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from actors.common.actions import Action
from actors.jobs.backtest import run_backtest
from actors.jobs.common import configure, format_table
from actors.jobs.evaluation.event_sources import EventReads
from actors.jobs.evaluation.decision_sources import SourceBook, SourceScores
from actors.jobs.evaluation.thought_ages import ThoughtAges, ages_text, fusion_figures
from actors.jobs.presets import BACKTEST, LOCKSTEP, REPRODUCIBLE
from bus.messages import LlmThought

LLM_FIGURES = (
    ("query_rate", "LLM query rate (decisions with a usable thought)"),
    ("lag_query_rate", "decisions with a thought at most 1 step old"), ("llm_staleness_steps", "LLM staleness (steps, mean)"),
    ("llm_staleness_max_steps", "LLM staleness (steps, max)"), ("late_steps", "late steps (thought past its deadline)"),
    ("thought_wait_share", "share of wall time the loop waited for the LLM"),
    ("llm_confidence", "LLM confidence (mean)"), ("agreement_rate", "RL/LLM agreement"), ("llm_trust", "fusion LLM trust (mean)"),
    ("veto_rate", "risk veto rate"), ("net_pnl_usd", "net P&L $ (marked to market: closed trades + any position still open)"), ("trades", "trades"),
)
"""The backtest's figures (its sys.done summary) that say how the LLM took part, with their labels."""
MAX_STEP_CHARS = 300
"""A reasoning step longer than this is cut when printed."""


@dataclass(frozen=True)
class LockstepRun:
    """What one lockstep backtest measured."""

    scores: SourceScores
    metrics: dict[str, float]
    """The backtest's sys.done summary (query rate, RL/LLM agreement, fusion LLM trust, P&L, ...)."""
    run_dir: Path
    report_dir: Path
    book: SourceBook | None = None
    """What the scores were made from (the data-snooping test reads its per-decision $)."""
    reads: EventReads | None = None
    """The decisions whose thought had just read an event (actors/jobs/evaluation/event_sources.py)."""
    label_horizon_bars: int = 1
    """The hindsight labels' horizon (lora.hindsight_horizon_bars): neighbouring decisions' $ share that many bars."""
    ages: dict[str, float] = field(default_factory=dict)
    """The real age of the thoughts behind the decisions and of the carried answers, with fusion's count of the
    decisions whose thought was too old (actors/jobs/evaluation/thought_ages.py)."""

    def llm_figures(self) -> dict[str, float]:
        """The LLM_FIGURES keys this run reported."""
        return {key: float(self.metrics[key]) for key, _ in LLM_FIGURES if key in self.metrics}


def llm_table(metrics: dict[str, float], title: str, extra: list[tuple[str, Any]]) -> str:
    return format_table([(label, metrics[key]) for key, label in LLM_FIGURES if key in metrics] + extra, title)


def lockstep_backtest(args: argparse.Namespace, settings: dict[str, Any], run_dir: Path, steps: int, *,
                      window: str = "the test days", extra: list[tuple[str, Any]] | None = None) -> LockstepRun:
    """The first ``steps`` decisions (0: all) of the split ``settings`` name, in lockstep (``settings`` laid over BACKTEST and
    LOCKSTEP: a checkpoint in policy.model_path, and any fusion or reasoner settings); ``window`` names the bars in the
    printed title, ``extra`` adds rows to the LLM's table."""
    config = configure(args, {**settings, "env.max_steps": steps, "env.publish_hindsight": True}, [BACKTEST, LOCKSTEP, REPRODUCIBLE])
    sources, reads, thought_ages = SourceBook(), EventReads(), ThoughtAges()

    def observe(msg) -> None:
        sources.add(msg)
        reads.add(msg)
        thought_ages.add(msg)

    live, live_metrics = run_backtest(config, args, run_dir, label="lockstep backtest",
                                      watch=tuple(dict.fromkeys((LlmThought, *SourceBook.WATCH, *EventReads.WATCH, *ThoughtAges.WATCH))),
                                      observe=observe)
    report = live.run_dir.path / config.env.report_dir
    report.mkdir(parents=True, exist_ok=True)
    fusion = fusion_figures(live.run_dir.path)
    ages = {**thought_ages.figures(config.fusion.max_staleness_steps),
            **{key: fusion[key] for key in ("stale_thought_decisions", "stale_carried_thought_decisions") if key in fusion}}
    print()
    played = f"{steps} decisions" if steps else "every decision"  # steps 0: the whole split (evaluate --gate-walk)
    print(llm_table(live_metrics, f"lockstep backtest: {played} of {window}, each with the previous step's thought",
                    [*(extra or []), ("thought ages", ages_text(ages)), ("report", str(report / "report.html"))]))
    scores = sources.scores()
    (report / "sources.json").write_text(json.dumps(scores.to_json(), indent=2))
    print()
    print(format_table(scores.rows(), "whom fusion should have trusted: each source against the hindsight label of its bar"))
    thought = live.last.get(LlmThought)
    if thought is not None:
        print("\n" + format_thought(thought))
    return LockstepRun(scores, dict(live_metrics), live.run_dir.path, report, sources, reads, config.lora.hindsight_horizon_bars, ages)


def format_thought(thought: LlmThought) -> str:
    """The LLM's last chain of thought, as a person would read it."""
    bar = f"bar {thought.built_on}" + (f", carried to bar {thought.step_seen}" if thought.carried else "")
    parts = [f"last thought (env {thought.env_id}, {bar}, {thought.latency_ms:.0f} ms, adapter v{thought.adapter_version}):"]
    for title, text in (("analyse", thought.analysis), ("options", thought.options), ("risks", thought.risks), ("decide", thought.decision)):
        if text.strip():
            parts.append(f"  {title:>8}: {' '.join(text.split())[:MAX_STEP_CHARS]}")
    parts.append(f"  -> {Action(thought.action).name} with confidence {thought.confidence:.2f}")
    return "\n".join(parts)
