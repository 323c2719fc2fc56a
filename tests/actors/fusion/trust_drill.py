"""Flat steps with known answers, for teaching and testing the fusion network (tests and ``bin/bench fusion``).

RL always holds while flat; a reader (the LLM's part) names a side; the step's hindsight says which side paid
(a right call +$200, a wrong one -$250: costs make a coin flip lose). Entries close the same step with their
side's P&L (their trade teaches them); holds are taught by their hindsight row (fusion.hindsight_lessons).
A reader decides, per step, the market context, the side that pays and what the reader says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import msgspec
import numpy as np

from actors.common.actions import BUY, HOLD, SELL
from actors.fusion.config import FusionConfig
from actors.fusion.fuser import Fuser
from actors.fusion.thoughts import Thought
from bus.messages import MarketContext
from tests.contexts import market_context

FLAT = np.array([True, True, True, False, False, False])
"""No position: HOLD, BUY and SELL are legal."""
RIGHT_USD, WRONG_USD = 200.0, -250.0
"""A side's hindsight P&L when the move goes its way or not (costs make a coin flip lose)."""
LEARN_STEPS, TEST_STEPS = range(1, 401), range(1000, 1400)
"""400 steps to learn from, then 400 others with the network frozen (out of sample)."""


@dataclass(frozen=True, slots=True)
class DrillStep:
    context: MarketContext
    winner: int
    """BUY or SELL: the side that pays."""
    says: int
    """The reader's call."""


Reader = Callable[[np.random.Generator], DrillStep]


def trend_context(trend: str) -> MarketContext:
    """A flat account in a market whose trend words and numbers agree (``up`` or ``down``)."""
    side = 1.0 if trend == "up" else -1.0
    return market_context(trend=trend, rsi=50.0 + 12.0 * side, momentum=15.0 * side, vwap_distance_pct=0.3 * side)


def even_reader(right: float) -> Reader:
    """Right on a share ``right`` of the steps whatever the market; the trend words carry no information."""

    def step(rng: np.random.Generator) -> DrillStep:
        winner = int(rng.choice([BUY, SELL]))
        says = winner if rng.random() < right else (SELL if winner == BUY else BUY)
        return DrillStep(trend_context(str(rng.choice(["up", "down"]))), winner, says)

    return step


def seller(moves_with_trend: float) -> Reader:
    """Always says SELL. The market moves with its trend on a share ``moves_with_trend`` of the steps, so the
    reader is right that often in falls and wrong that often in rises (an LLM that leans SELL)."""

    def step(rng: np.random.Generator) -> DrillStep:
        trend = str(rng.choice(["up", "down"]))
        with_trend = BUY if trend == "up" else SELL
        winner = with_trend if rng.random() < moves_with_trend else (SELL if with_trend == BUY else BUY)
        return DrillStep(trend_context(trend), winner, SELL)

    return step


def play(fuser: Fuser, rng: np.random.Generator, steps: range, reader: Reader) -> dict[str, np.ndarray]:
    """Fuse, execute and teach each step. Per step: the fused action's P&L, RL's (0: it holds), the reader's,
    and the market's trend word."""
    fused, llm, trends = [], [], []
    for step in steps:
        drill = reader(rng)
        loser = SELL if drill.winner == BUY else BUY
        value = {drill.winner: RIGHT_USD, loser: WRONG_USD, HOLD: 0.0}
        fuser.add_thought(Thought(0, 0, step - 1, f"q{step}", drill.says, float(rng.uniform(0.6, 0.9))))
        batch = fuser.fuse(step, [0], [0], np.array([HOLD]), np.array([0.7]), FLAT[None, :], [drill.context])
        action = int(batch.actions[0])
        fuser.record_executed([0], step, batch.actions)
        if action == HOLD:
            fuser.learn_from_hindsight(0, step, value[BUY], value[SELL])
        else:
            fuser.learn_from_outcome(0, [step], value[action])
        if fuser.learner.update_due():
            fuser.learner.update_now()
        fused.append(value[action])
        llm.append(value[drill.says])
        trends.append(drill.context.trend)
    return {"fused": np.array(fused), "rl": np.zeros(len(fused)), "llm": np.array(llm), "trend": np.array(trends)}


def small_network(**overrides) -> FusionConfig:
    """A small network that learns the drill in a few seconds: first update after 48 lessons, then every 32; no
    exploring (RL never enters here)."""
    values = dict(method="network", hidden_dims=(32, 16), dropout=0.2, learning_rate=1e-3, batch_size=64,
                  gradient_steps_per_update=20, min_experiences=48, update_every_experiences=32, explore_rate=0.0)
    return FusionConfig(**{**values, **overrides})


def mean_and_half_width(values: np.ndarray) -> tuple[float, float]:
    """The mean and its 95 % interval's half width (normal approximation)."""
    return float(values.mean()), float(1.96 * values.std(ddof=1) / np.sqrt(len(values)))


def learned_then_tested(config: FusionConfig, seed: int, reader: Reader) -> dict[str, np.ndarray]:
    """LEARN_STEPS with ``config``, then TEST_STEPS with the same network frozen."""
    rng = np.random.default_rng(seed)
    fuser = Fuser(config)
    play(fuser, rng, LEARN_STEPS, reader)
    assert fuser.learner.ready
    return play(Fuser(msgspec.structs.replace(config, learn=False), learner=fuser.learner), rng, TEST_STEPS, reader)
