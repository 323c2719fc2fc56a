"""What a LoRA round reports: a step's progress, the training's stats, the round's result. Their own module so that
the trainer (actors/lora/trainer.py) and its risk-read mixin (actors/lora/risk_round.py) both import them without
importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from actors.lora.dollars import DollarGain
from actors.lora.publishing import Verdict


@dataclass(frozen=True, slots=True)
class StepProgress:
    step: int
    steps: int
    loss: float
    tokens_per_sec: float


@dataclass(frozen=True, slots=True)
class TrainStats:
    steps: int
    mean_loss: float
    last_loss: float
    tokens: int
    tokens_per_sec: float
    secs: float


@dataclass(frozen=True, slots=True)
class RoundResult:
    before: float
    """Held-out match rate before the round."""
    after: float
    publish: bool
    stats: TrainStats
    held_out: int
    """Held-out experiences evaluated."""
    verdict: Verdict | None = None
    """Why it was published or not (actors/lora/publishing.py)."""
    before_answers: tuple[int, ...] = ()
    """The current weights' answers to the held-out prompts, in their order ..."""
    after_answers: tuple[int, ...] = ()
    """... and the trained weights' (bin/bench lora compares them with llama.cpp's)."""
    dollars: DollarGain | None = None
    """The same answers in hindsight dollars a held-out prompt (actors/lora/dollars.py); informs, does not decide."""
    extra: dict[str, float] = field(default_factory=dict)
    """lora.teach = "risk": the paired differences to the calendar and keyword rules, the held-out templates' match
    (actors/lora/risk_teach.py)."""

    def metrics(self) -> dict[str, float]:
        return {"match_rate_before": self.before, "match_rate_after": self.after, "held_out": float(self.held_out),
                "train_steps": float(self.stats.steps), "train_loss": self.stats.mean_loss,
                "last_loss": self.stats.last_loss, "tokens_per_sec": self.stats.tokens_per_sec,
                "train_secs": self.stats.secs, **(self.verdict.metrics() if self.verdict else {}),
                **(self.dollars.metrics() if self.dollars else {}), **self.extra}
