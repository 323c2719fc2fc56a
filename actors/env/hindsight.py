"""Hindsight labels of the env's decision steps, published once their horizon has been played.

Each observation that goes out is a decision step: (env, episode, loop step, dataset bar). Its
label (actors/common/hindsight.py: a long and a short at the next bar's open, ATR stop and
target, the first barrier hit within H bars) needs bars bar+1 .. bar+H. The book hands a step
over when its env has played those bars, so a label never reaches the bus before the loop
itself has seen the bars it reads. A step whose episode ends sooner (a training episode's
last bars, a breach) is labelled when the episode ends, from the data set's bars (historical
data: they exist even if the episode did not play them); a step too close to the end of
the data has no label and is dropped (counted).

Plain Python over the data set's per-bar lists: no bus, no actor.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from actors.common.hindsight import BarrierSpec, HindsightLabel, triple_barrier_label
from actors.common.instruments import InstrumentSpec

HINDSIGHT_MODES = ("train", "backtest")
"""Env modes with a data set to label from (paper trading follows a feed)."""


@dataclass(frozen=True, slots=True)
class DecisionStep:
    env_id: int
    episode_id: int
    step: int
    """Loop step (what env.obs and llm.thought call step / step_seen)."""
    bar: int
    """Index in the data set of the bar the observation described."""


@dataclass(frozen=True, slots=True)
class LabelledStep:
    decision: DecisionStep
    label: HindsightLabel


def barrier_spec(instrument: InstrumentSpec, horizon_bars: int, stop_atr: float, target_atr: float) -> BarrierSpec:
    """Costs per contract as the env charges a round trip: commission on both sides, slippage on both fills."""
    slippage_usd = instrument.slippage_ticks * instrument.tick_size * instrument.multiplier
    cost = 2.0 * instrument.commission_per_side + 2.0 * slippage_usd
    return BarrierSpec(horizon_bars=horizon_bars, stop_atr=stop_atr, target_atr=target_atr,
                       multiplier=instrument.multiplier, cost_per_trade_usd=cost)


def hindsight_wanted(config) -> bool:
    """env.publish_hindsight, a LoRA trainer that learns from hindsight labels ([lora] enabled + labels), or a
    learning fusion network taught by them (fusion.hindsight_lessons)."""
    if config.env.mode not in HINDSIGHT_MODES:
        return False
    fusion = config.fusion
    return (config.env.publish_hindsight or (config.lora.enabled and config.lora.labels == "trades_hindsight")
            or (fusion.method == "network" and fusion.learn and fusion.hindsight_lessons))


class HindsightBook:
    def __init__(self, spec: BarrierSpec, bars: Mapping[str, Sequence[float]]) -> None:
        """``bars``: the data set's per-bar lists (open, high, low, close, atr)."""
        self.spec = spec
        self._open, self._high, self._low, self._close = bars["open"], bars["high"], bars["low"], bars["close"]
        self._atr = bars["atr"]
        self._pending: dict[int, deque[DecisionStep]] = {}
        """Per env, its steps in order: the oldest matures first."""
        self.unlabelled = 0
        """Steps dropped without a label (too close to the end of the data, or no usable ATR)."""

    @property
    def pending(self) -> int:
        return sum(len(steps) for steps in self._pending.values())

    def record(self, decision: DecisionStep) -> None:
        """An observation went out for this step."""
        self._pending.setdefault(decision.env_id, deque()).append(decision)

    def record_steps(self, env_ids: Sequence[int], episode_ids: Sequence[int], step: int, bars: Sequence[int]) -> None:
        """One observation batch went out: a decision step per env."""
        for env_id, episode_id, bar in zip(env_ids, episode_ids, bars):
            self.record(DecisionStep(int(env_id), int(episode_id), int(step), int(bar)))

    def mature(self, now: Mapping[int, tuple[int, int]]) -> list[LabelledStep]:
        """Labels that are due, given each env's (episode id, current bar) after a step; an env absent
        from ``now`` keeps its steps."""
        labelled: list[LabelledStep] = []
        for env_id, (episode_id, bar) in now.items():
            steps = self._pending.get(env_id)
            while steps and (steps[0].episode_id != episode_id or steps[0].bar + self.spec.horizon_bars <= bar):
                labelled.extend(self._label(steps.popleft()))
        return labelled

    def label_all(self) -> list[LabelledStep]:
        """Every pending step, labelled from the data set's bars: the run ends (env.max_steps) before their horizon
        was played, but historical bars exist past it. A step too close to the end of the data stays unlabelled."""
        labelled: list[LabelledStep] = []
        for steps in self._pending.values():
            while steps:
                labelled.extend(self._label(steps.popleft()))
        return labelled

    def _label(self, decision: DecisionStep) -> list[LabelledStep]:
        label = triple_barrier_label(self._open, self._high, self._low, self._close, decision.bar,
                                     float(self._atr[decision.bar]), self.spec)
        if label is None:
            self.unlabelled += 1
            return []
        return [LabelledStep(decision, label)]


def hindsight_book(config, instrument: InstrumentSpec, bars: Mapping[str, Sequence[float]]) -> HindsightBook | None:
    """The env actor's book when hindsight labels are wanted (``hindsight_wanted``), else None.
    Horizon, stop and target are the [lora] hindsight_* keys: the labels are the trainer's."""
    if not hindsight_wanted(config):
        return None
    lora = config.lora
    spec = barrier_spec(instrument, lora.hindsight_horizon_bars, lora.hindsight_stop_atr, lora.hindsight_target_atr)
    return HindsightBook(spec, bars)
