"""Whom should fusion have trusted? The seeds' fusion and LLM accuracy, scored against hindsight on held-out bars.

A lockstep backtest (every decision has the previous step's thought) publishes, per decision step,
what the policy proposed, what the LLM advised, what fusion chose (fusion.decision), whether the
account was flat (env.obs masks: BUY and SELL both allowed; in a position only the closing side is), and, once the horizon has been
played, the step's hindsight label (env.hindsight: BUY if a long at the next open with the ATR stop and
target pays more than a short after costs, SELL the other way, HOLD if neither pays).

On the flat decisions that had a thought and a label:

- RL accuracy and LLM accuracy: the share whose advice equals the label (the seeds' "LLM accuracy");
- fusion accuracy, the seeds' way ("choosing the source that was right"): of the decisions where the
  two sources disagree and exactly one of them matches the label, the share where fusion chose it;
- fused accuracy: the share where fusion's action equals the label, beside the better single source;
- RL/LLM agreement: the share where both advised the same action;
- fused minus RL-only: fused accuracy minus RL accuracy on the same decisions, a paired difference (per decision,
  fused hit minus RL hit) with its normal interval (actors/lora/publishing.py ``paired_gain``);
- the same in hindsight dollars: per decision, what the fused action would have made (the long's P&L for BUY, the
  short's for SELL, nothing for HOLD, one contract, costs paid) minus what RL's would have; with each source's mean.
  Accuracy counts a $5 label like a $500 one; the dollars weigh them.

Each with a Wilson 95 % interval over decisions. Decisions are not independent (neighbouring bars
share their future), so the intervals are optimistic; they still say when a figure rests on a handful.

Plain Python over bus messages: no process, no socket.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from actors.common.actions import BUY, HOLD, NO_ACTION, SELL, flat_mask
from actors.common.hindsight import action_pnl_usd
from actors.common.statistics import wilson_interval
from actors.jobs.evaluation.evidence import verdict_at_least, verdict_between
from actors.lora.publishing import paired_gain
from bus.messages import EnvHindsight, EnvObs, FusionDecision, Message

FUSION_ACCURACY_TARGET = (0.85, 0.90)
USD_SOURCES = ("fused", "rl", "llm", "trend")
TREND_ADVICE = {"up": BUY, "down": SELL}
"""The trend word's advice; any other word (sideways) advises HOLD."""
LLM_ACCURACY_TARGET = 0.75
AGREEMENT_TARGET = (0.65, 0.75)


class Estimate:
    """A figure over n decisions with its 95 % interval, as the tables write it; a subclass gives ``n``, ``value``
    and ``interval``, and ``SIGN`` ('+' where the figure is a difference)."""

    SIGN: ClassVar[str] = ""
    n: int

    @property
    def value(self) -> float:
        raise NotImplementedError

    @property
    def interval(self) -> tuple[float, float]:
        raise NotImplementedError

    def bracketed(self) -> str:
        """``value [low, high]``, two decimals."""
        low, high = self.interval
        return f"{self.value:{self.SIGN}.2f} [{low:{self.SIGN}.2f}, {high:{self.SIGN}.2f}]"

    def text(self) -> str:
        return f"{self.bracketed()} of {self.n}{self.detail()}" if self.n else "n/a (no such decision)"

    def detail(self) -> str:
        """What the text adds after the count."""
        return ""


@dataclass(frozen=True)
class Share(Estimate):
    """hits of n, with its Wilson 95 % interval (NaN when n = 0)."""

    hits: int
    n: int

    @property
    def value(self) -> float:
        return self.hits / self.n if self.n else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.hits, self.n)

    def to_json(self) -> dict:
        low, high = self.interval
        return {"value": finite_or_none(self.value), "low": finite_or_none(low), "high": finite_or_none(high),
                "hits": self.hits, "n": self.n}


@dataclass(frozen=True)
class PairedDifference(Estimate):
    """One source's hits minus another's on the same n decisions: ``gained`` where only the first was right, ``lost``
    where only the second was (the decisions where both or neither were right add 0)."""

    SIGN: ClassVar[str] = "+"
    gained: int = 0
    lost: int = 0
    n: int = 0

    @property
    def value(self) -> float:
        return (self.gained - self.lost) / self.n if self.n else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        """The 95 % interval of the mean difference (mean +- 1.96 sd / sqrt(n)); NaN for none, infinite for one."""
        if not self.n:
            return float("nan"), float("nan")
        ties = self.n - self.gained - self.lost
        first = [True] * self.gained + [False] * self.lost + [False] * ties
        second = [False] * self.gained + [True] * self.lost + [False] * ties
        _, low, high = paired_gain(second, first, 1.96)
        return low, high

    def detail(self) -> str:
        return f" (+{self.gained} / -{self.lost})"


@dataclass(frozen=True)
class MeanDifference(Estimate):
    """Per decision, one source's hindsight dollars minus another's, kept as sums (so runs pool): the mean with its
    normal 95 % interval (NaN for none, infinite for one)."""

    SIGN: ClassVar[str] = "+"
    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0

    @classmethod
    def of(cls, differences: list[float]) -> MeanDifference:
        return cls(len(differences), float(sum(differences)), float(sum(d * d for d in differences)))

    def __add__(self, other: MeanDifference) -> MeanDifference:
        return MeanDifference(self.n + other.n, self.total + other.total, self.total_sq + other.total_sq)

    @property
    def value(self) -> float:
        return self.total / self.n if self.n else float("nan")

    @property
    def interval(self) -> tuple[float, float]:
        if not self.n:
            return float("nan"), float("nan")
        if self.n == 1:
            return float("-inf"), float("inf")
        variance = max(self.total_sq - self.n * self.value ** 2, 0.0) / (self.n - 1)
        half = 1.96 * math.sqrt(variance / self.n)
        return self.value - half, self.value + half

    def bracketed(self) -> str:
        low, high = self.interval
        return f"{self.value:+,.1f} [{low:+,.1f}, {high:+,.1f}]"

    def to_json(self) -> dict:
        low, high = self.interval
        return {"value": finite_or_none(self.value), "low": finite_or_none(low), "high": finite_or_none(high), "n": self.n}


@dataclass(frozen=True)
class SourceScores:
    decisions: int
    """Flat decisions that had a thought and a hindsight label."""
    rl: Share
    llm: Share
    fused: Share
    chose_right_source: Share
    """Of the decisions where exactly one source matched the label, how often fusion chose that one."""
    agreement: Share
    label_mix: dict[str, int] = field(default_factory=dict)
    fused_vs_rl: PairedDifference = PairedDifference()
    """Fused accuracy minus RL accuracy on the same decisions: what fusion with the LLM adds over RL alone."""
    in_position: int = 0
    """Decisions with a thought and a label taken in a position: not scored (there the policy's advice is to hold or
    close, not a side), and counted so that a table of none scored says why."""
    fused_vs_rl_usd: MeanDifference = MeanDifference()
    """Per scored decision, the fused action's hindsight dollars minus RL's (one contract, costs paid)."""
    usd_totals: dict[str, float] = field(default_factory=dict)
    """Hindsight dollars summed over the scored decisions, per source: fused, rl, llm, and trend (the trend word alone:
    BUY where the observation said up, SELL where down, HOLD where sideways: a reference, not a source fusion hears;
    does the LLM read more than the one word the policy sees too?)."""

    def mean_usd(self, source: str) -> float:
        return self.usd_totals.get(source, 0.0) / self.decisions if self.decisions else float("nan")

    @property
    def better_single_source(self) -> str:
        if not self.decisions:
            return "n/a"
        return "RL" if self.rl.value >= self.llm.value else "LLM"

    def rows(self) -> list[tuple[str, str]]:
        """The terminal table's rows: figure, value [interval] of n, and the verdict beside the seeds' target."""
        lower, upper = FUSION_ACCURACY_TARGET
        low, high = AGREEMENT_TARGET
        return [
            ("decisions scored (flat, with a thought and a hindsight label)", str(self.decisions)),
            ("decisions in a position (not scored: the policy's advice there is hold or close, not a side)", str(self.in_position)),
            ("hindsight labels among them", ", ".join(f"{name} {count}" for name, count in self.label_mix.items()) or "none"),
            (f"fusion accuracy: chose the source that was right (target {lower:.2f}-{upper:.2f})",
             f"{self.chose_right_source.text()}: {verdict_between(self.chose_right_source.value, *self.chose_right_source.interval, lower, upper)}"),
            ("fused action = hindsight label", self.fused.text()),
            ("RL advice = hindsight label", self.rl.text()),
            ("fused minus RL advice (paired, same decisions)", self.fused_vs_rl.text()),
            ("hindsight $ a decision: fused / RL / LLM / the trend word alone (one contract, costs paid)",
             " / ".join(f"{self.mean_usd(source):+,.1f}" for source in USD_SOURCES) if self.decisions else "n/a"),
            ("fused minus RL advice, hindsight $ a decision (paired)", self.fused_vs_rl_usd.text()),
            (f"LLM advice = hindsight label (target >= {LLM_ACCURACY_TARGET:.2f})",
             f"{self.llm.text()}: {verdict_at_least(self.llm.value, *self.llm.interval, LLM_ACCURACY_TARGET)}"),
            ("better single source", self.better_single_source),
            (f"RL/LLM agreement (target {low:.2f}-{high:.2f})",
             f"{self.agreement.text()}: {verdict_between(self.agreement.value, *self.agreement.interval, low, high)}"),
        ]

    def to_json(self) -> dict:
        paired = self.fused_vs_rl
        low, high = paired.interval
        return {"decisions": self.decisions, "in_position": self.in_position, "label_mix": dict(self.label_mix),
                "better_single_source": self.better_single_source,
                **{name: getattr(self, name).to_json() for name in ("rl", "llm", "fused", "chose_right_source", "agreement")},
                "fused_vs_rl": {"value": finite_or_none(paired.value), "low": finite_or_none(low), "high": finite_or_none(high),
                                "gained": paired.gained, "lost": paired.lost, "n": paired.n},
                "fused_vs_rl_usd": self.fused_vs_rl_usd.to_json(),
                "mean_usd": {source: finite_or_none(self.mean_usd(source)) for source in USD_SOURCES}}


def finite_or_none(value: float) -> float | None:
    """A figure for JSON: None where it is NaN or infinite (JSON has neither)."""
    return value if math.isfinite(value) else None


@dataclass(frozen=True, slots=True)
class _Decision:
    fused: int
    rl: int
    llm: int


class SourceBook:
    """Collects a run's decisions, flat flags and hindsight labels from the bus, keyed by (env, step)."""

    WATCH: tuple[type[Message], ...] = (EnvObs, FusionDecision, EnvHindsight)

    def __init__(self) -> None:
        self.flat: dict[tuple[int, int], bool] = {}
        self.decisions: dict[tuple[int, int], _Decision] = {}
        self.labels: dict[tuple[int, int], int] = {}
        self.side_usd: dict[tuple[int, int], tuple[float, float]] = {}
        """Per (env, step): what a long and a short from there made in hindsight."""
        self.trends: dict[tuple[int, int], int] = {}
        """Per (env, step): the trend word's advice (TREND_ADVICE)."""

    def add(self, msg: Message) -> None:
        match msg:
            case EnvObs():
                for row, env_id in enumerate(msg.env_ids):
                    self.flat[(env_id, msg.step)] = flat_mask(msg.masks[row])
                    self.trends[(env_id, msg.step)] = TREND_ADVICE.get(msg.contexts[row].trend, HOLD)
            case FusionDecision():
                for row, env_id in enumerate(msg.env_ids):
                    self.decisions[(env_id, msg.step)] = _Decision(int(msg.actions[row]), int(msg.rl_actions[row]), int(msg.llm_actions[row]))
            case EnvHindsight():
                for row, env_id in enumerate(msg.env_ids):
                    self.labels[(env_id, msg.steps[row])] = int(msg.actions[row])
                    self.side_usd[(env_id, msg.steps[row])] = (float(msg.long_pnl_usd[row]), float(msg.short_pnl_usd[row]))

    def scores(self) -> SourceScores:
        return score_sources(self.decisions, self.labels, self.flat, self.side_usd, self.trends)

    def usd_series(self) -> dict[str, np.ndarray]:
        """Per source (USD_SOURCES), the hindsight $ of each scored, priced decision in step order: the series the
        data-snooping test of fused against its floors reads (flat is zero everywhere)."""
        _, scored = _scored_keys(self.decisions, self.labels, self.flat)
        keys = [key for key in scored if key in self.side_usd]
        return {source: np.array([action_pnl_usd(source_action(self.decisions, self.trends, key, source), *self.side_usd[key])
                                  for key in keys], dtype=np.float64) for source in USD_SOURCES}


def _scored_keys(decisions: dict[tuple[int, int], _Decision], labels: dict[tuple[int, int], int],
                 flat: dict[tuple[int, int], bool]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(decisions with a thought and a label, those of them taken flat: the scored ones), in step order."""
    thought_and_label = [key for key, d in sorted(decisions.items()) if key in labels and d.llm != NO_ACTION]
    return thought_and_label, [key for key in thought_and_label if flat.get(key, False)]


def source_action(decisions: dict[tuple[int, int], _Decision], trends: dict[tuple[int, int], int], key: tuple[int, int],
                  source: str) -> int:
    """The action a source (fused, rl, llm, or trend: the trend word's advice, HOLD where unknown) took at ``key``."""
    return trends.get(key, HOLD) if source == "trend" else getattr(decisions[key], source)


def score_sources(decisions: dict[tuple[int, int], _Decision], labels: dict[tuple[int, int], int],
                  flat: dict[tuple[int, int], bool], side_usd: dict[tuple[int, int], tuple[float, float]] | None = None,
                  trends: dict[tuple[int, int], int] | None = None) -> SourceScores:
    """``side_usd``: per key, the hindsight dollars of a long and a short (none: the dollar rows stay empty);
    ``trends``: per key, the trend word's advice (none: HOLD, which makes nothing)."""
    thought_and_label, scored_keys = _scored_keys(decisions, labels, flat)
    scored = [(decisions[key], labels[key]) for key in scored_keys]
    priced = [(key, side_usd[key]) for key in scored_keys if key in side_usd] if side_usd else []

    def usd(key: tuple[int, int], source: str, sides: tuple[float, float]) -> float:
        return action_pnl_usd(source_action(decisions, trends or {}, key, source), *sides)

    contested = [(d, label) for d, label in scored if d.rl != d.llm and label in (d.rl, d.llm)]
    mix = np.bincount([label for _, label in scored], minlength=3) if scored else np.zeros(3, dtype=int)
    return SourceScores(
        decisions=len(scored),
        rl=Share(sum(d.rl == label for d, label in scored), len(scored)),
        llm=Share(sum(d.llm == label for d, label in scored), len(scored)),
        fused=Share(sum(d.fused == label for d, label in scored), len(scored)),
        chose_right_source=Share(sum(d.fused == label for d, label in contested), len(contested)),
        agreement=Share(sum(d.rl == d.llm for d, _ in scored), len(scored)),
        label_mix={"HOLD": int(mix[0]), "BUY": int(mix[1]), "SELL": int(mix[2])},
        fused_vs_rl=PairedDifference(sum(d.fused == label != d.rl for d, label in scored),
                                     sum(d.rl == label != d.fused for d, label in scored), len(scored)),
        in_position=len(thought_and_label) - len(scored),
        fused_vs_rl_usd=MeanDifference.of([usd(key, "fused", sides) - usd(key, "rl", sides) for key, sides in priced]),
        usd_totals={source: float(sum(usd(key, source, sides) for key, sides in priced)) for source in USD_SOURCES}
        if priced else {},
    )


def pooled(scores: list[SourceScores]) -> SourceScores:
    """Several runs' scores as one (hits and counts summed: the seeds of an ablation variant)."""
    def share(name: str) -> Share:
        return Share(sum(getattr(s, name).hits for s in scores), sum(getattr(s, name).n for s in scores))

    mix: dict[str, int] = {}
    for s in scores:
        for label, count in s.label_mix.items():
            mix[label] = mix.get(label, 0) + count
    paired = PairedDifference(sum(s.fused_vs_rl.gained for s in scores), sum(s.fused_vs_rl.lost for s in scores),
                              sum(s.fused_vs_rl.n for s in scores))
    totals: dict[str, float] = {}
    for s in scores:
        for source, total in s.usd_totals.items():
            totals[source] = totals.get(source, 0.0) + total
    return SourceScores(decisions=sum(s.decisions for s in scores), rl=share("rl"), llm=share("llm"), fused=share("fused"),
                        chose_right_source=share("chose_right_source"), agreement=share("agreement"), label_mix=mix,
                        fused_vs_rl=paired, in_position=sum(s.in_position for s in scores),
                        fused_vs_rl_usd=sum((s.fused_vs_rl_usd for s in scores), MeanDifference()), usd_totals=totals)
