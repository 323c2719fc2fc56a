"""The LoRA loop without the bus: thoughts and outcomes in, durable experiences, rounds, adapter versions out.

The actor shell calls the cheap methods on its event loop and ``run_round`` (blocking:
model load, training, evaluation, export) through its worker thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import structlog

from actors.common.llm.prompts import PromptBook, PromptSettings
from actors.common.thoughts import ThoughtHeader
from actors.lora.config import LoraConfig
from actors.lora.experience import Experience, thought_record
from actors.common.hindsight import HindsightLabel
from actors.lora.matching import ExperienceMatcher, TradeOutcome
from actors.lora.risk_teach import gate_and_apart
from actors.lora.round_types import RoundResult, StepProgress
from actors.lora.stopping import Plateau
from actors.lora.store import ExperienceStore
from actors.lora.trainer import LoraTrainer
from actors.lora.versions import AdapterVersion, VersionBook

LORA_DIR_NAME = "lora"


@dataclass(frozen=True, slots=True)
class RoundReport:
    result: RoundResult
    version: AdapterVersion
    """Kept in every case; ``version.published`` says whether the reasoner should load it."""


class ReasonerSettings(PromptSettings, Protocol):
    """What the trainer reads of [reasoner] (ReasonerConfig fits): its prompts and mode, so it teaches what
    the reasoner asks, and its model, the base the adapters are trained on."""

    mode: str
    model: str
    model_path: str


def base_model_path(lora: LoraConfig, reasoner: ReasonerSettings) -> str:
    """lora.model_path, else the reasoner's model (reasoner.model_path, else the packaged reasoner.model)."""
    if lora.model_path:
        return lora.model_path
    from actors.common.llm.model import model_file

    return str(model_file(reasoner.model_path, reasoner.model))


class LoraCore:
    def __init__(self, config: LoraConfig, reasoner: ReasonerSettings, run_dir: str | Path) -> None:
        self.config = config
        self.model_path = base_model_path(config, reasoner)
        lora_dir = Path(run_dir) / LORA_DIR_NAME
        self.store = ExperienceStore(config.store_path or lora_dir / "experiences.sqlite",
                                     max_experiences=config.max_experiences,
                                     held_out_fraction=config.held_out_fraction,
                                     min_weight_usd=config.min_sample_weight_usd, balance_actions=config.balance_actions,
                                     balance_levels=config.teach == "risk" and config.balance_levels,
                                     level_rare_share=config.level_rare_share)
        self.versions = VersionBook(config.versions_dir or lora_dir / "versions")
        self.matcher = ExperienceMatcher(target_confidence=config.target_confidence, max_thoughts=config.max_thoughts,
                                         max_pending_outcomes=config.max_pending_outcomes)
        self._prompts = PromptBook(reasoner)
        self._mode = reasoner.mode
        self.trainer: LoraTrainer | None = None
        self.new_experiences = 0
        """Experiences stored since the last round started."""
        self.round_seq: int | None = None
        """A reproducible round's data: the experiences stored when it started (None: whatever is stored as it samples)."""
        self.collapses = 0
        """Rounds refused because their answers collapsed onto one action (lora_collapse)."""

    # ------------------------------------------------------------------ event-loop side (cheap)

    def add_thought(self, thought: ThoughtHeader, *, context: Mapping[str, Any], mask: Sequence[bool],
                    earlier_answers: Mapping[str, str], adapter_version: int = 0) -> int:
        record = thought_record(self._prompts, self._mode, thought, context=context, mask=mask,
                                earlier_answers=earlier_answers, adapter_version=adapter_version)
        return self.add_experiences(self.matcher.add_thought(record))

    def add_outcome(self, outcome: TradeOutcome) -> int:
        return self.add_experiences(self.matcher.add_outcome(outcome))

    def add_hindsight(self, query_id: str, label: HindsightLabel) -> int:
        if self.config.labels != "trades_hindsight":
            return 0
        return self.add_experiences(self.matcher.add_hindsight(query_id, label))

    def add_hindsight_at(self, env_id: int, step: int, label: HindsightLabel) -> int:
        """An env.hindsight row: joined to the thoughts that saw (env_id, step) by the matcher."""
        if self.config.labels != "trades_hindsight":
            return 0
        return self.add_experiences(self.matcher.add_hindsight_at(env_id, step, label))

    def round_due(self) -> bool:
        return self.new_experiences >= self.config.experiences_per_round and self.store.count(held_out=False) > 0

    def start_round(self, snapshot: bool = False) -> None:
        """``snapshot`` (run.reproducible): the round trains and is judged on what is stored now, not on what the loop
        stores while it trains."""
        self.new_experiences = 0
        self.round_seq = self.store.last_seq() if snapshot else None

    def add_experiences(self, experiences: Iterable[Experience]) -> int:
        added = self.store.add(experiences)  # durable when this returns
        self.new_experiences += added
        return added

    # ------------------------------------------------------------------ worker side (blocking)

    def run_round(self, progress: Callable[[StepProgress], None] | None = None) -> RoundReport:
        """Train one round, keep it as a new version (published or not) with its metrics."""
        trainer = self.load_trainer()
        held_out = self.store.held_out(self.config.max_eval_examples, self.round_seq)
        sampler = trainer.store_sampler(self.store, self.round_seq)
        if self.config.teach == "risk":  # judged on the level at held-out event bars (actors/lora/risk_teach.py)
            gate, apart = gate_and_apart(held_out)
            if not gate:
                raise ValueError("lora.teach = risk needs held-out event bars with a risk level (a news market's history, "
                                 "reasoner.risk_read = true)")
            result = trainer.run_risk_round(sampler, gate, apart, progress)
        else:
            result = trainer.run_round(sampler, held_out, progress)
        version = self.versions.next_version()
        metrics = {**result.metrics(), "experiences": float(self.store.count()), "published": float(result.publish)}
        if result.verdict is not None and result.verdict.collapsed:  # the alarm: refused, whatever its match rate
            self.collapses += 1
            structlog.get_logger().warning("lora_collapse", version=version, answer=result.verdict.top_action,
                                           share=round(result.verdict.top_share, 3), held_out=result.held_out,
                                           match_rate_after=round(result.after, 3))
        adapter = trainer.export(self.versions.folder(version) / "adapter.gguf.new", {"version": str(version)})
        return RoundReport(result, self.versions.record(version, adapter, metrics, published=result.publish))

    def rollback(self, version: int) -> AdapterVersion:
        return self.versions.rollback(version)

    def load_trainer(self) -> LoraTrainer:
        """The PEFT model, loaded on first use (seconds: call it from the worker thread)."""
        if self.trainer is None:
            self.trainer = LoraTrainer(self.config, self.model_path)
        return self.trainer

    def close(self) -> None:
        self.store.close()


def train_offline(config: LoraConfig, reasoner: ReasonerSettings, run_dir: str | Path, experiences: list[Experience],
                  rounds: int = 1, progress: Callable[[StepProgress], None] | None = None) -> list[RoundReport]:
    """``bin/run lora --experiences FILE``: store the file's experiences, then train ``rounds`` rounds."""
    core = LoraCore(config, reasoner, run_dir)
    try:
        core.store.add(experiences)
        return [core.run_round(progress) for _ in range(rounds)]
    finally:
        core.close()


def train_until_plateau(config: LoraConfig, reasoner: ReasonerSettings, run_dir: str | Path, experiences: list[Experience],
                        validation: Sequence[Experience], max_rounds: int, patience: int,
                        progress: Callable[[StepProgress], None] | None = None) -> tuple[list[RoundReport], list[float]]:
    """``bin/run lora --market-history N`` with ``lora.early_stop_patience``: rounds as train_offline, after each the
    current weights' match rate on ``validation`` (prompts of validation days, never stored, so never trained on
    nor judged by the publish rule), until ``patience`` rounds bring no better rate or ``max_rounds`` are done.
    (reports, validation match rate after each round)."""
    if not validation:
        raise ValueError("early stopping needs validation prompts (lora.early_stop_prompts of the validation days)")
    core = LoraCore(config, reasoner, run_dir)
    plateau = Plateau(patience)
    prompts = [(e.messages, e.mask) for e in validation]
    reports: list[RoundReport] = []
    rates: list[float] = []
    try:
        core.store.add(experiences)
        for _ in range(max_rounds):
            reports.append(core.run_round(progress))
            answers = core.load_trainer().decisions(prompts)
            rates.append(sum(a == e.action for a, e in zip(answers, validation)) / len(validation))
            structlog.get_logger().info("lora_validation", round=len(reports), match_rate=round(rates[-1], 3),
                                        best=round(plateau.best if plateau.rounds else rates[-1], 3), prompts=len(validation))
            if plateau.update(rates[-1]):
                break
        return reports, rates
    finally:
        core.close()
