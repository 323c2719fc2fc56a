"""A planted task for the trainer: short single-shot prompts where one action (BUY) always wins."""

from __future__ import annotations

import numpy as np

from actors.common.llm.prompts import SAMPLE_CONTEXT, PromptBook
from actors.lora.experience import Experience, decide_messages, target_answer
from actors.reasoner.config import ReasonerConfig

BUY = 1
ENTRY_MASK = (True, True, True, False, False, False)

# Short prompts keep a training step cheap on 2 cores; the format is still the reasoner's single shot.
PLANTED_REASONER = ReasonerConfig(
    mode="single_shot",
    single_shot_system_prompt="You are a futures trader. Answer: ACTION | confidence | reason.",
    single_shot_context_template="{symbol} at {price:.2f}, trend {trend}, RSI {rsi:.0f}, ATR {atr:.1f}. Allowed actions: {allowed_actions}",
)


def planted_experiences(n: int, seed: int = 0, reasoner: ReasonerConfig = PLANTED_REASONER) -> list[Experience]:
    """``n`` single-shot decide prompts (``reasoner``'s templates) whose target is BUY."""
    rng = np.random.default_rng(seed)
    book = PromptBook(reasoner)
    experiences = []
    for i in range(n):
        context = {**SAMPLE_CONTEXT, "price": float(rng.uniform(15000, 20000)), "rsi": float(rng.uniform(20, 80)),
                   "atr": float(rng.uniform(5, 30)), "trend": str(rng.choice(["up", "down", "sideways"]))}
        messages = decide_messages(book, "single_shot", context, ENTRY_MASK)
        pnl = float(rng.uniform(50, 500))
        experiences.append(Experience(id=f"planted-{seed}-{i}", messages=messages, mask=ENTRY_MASK,
                                      target=target_answer(BUY, 0.8, "long won by target"), action=BUY,
                                      pnl_usd=pnl, source="trade"))
    return experiences


SELL = 2
TREND_ACTION = {"up": BUY, "down": SELL}
"""The planted rule of ``trend_experiences``: the prompt's trend word alone decides the label."""
TREND_REASONER = ReasonerConfig(
    mode="single_shot",
    single_shot_system_prompt="You are a futures trader. Answer: ACTION | confidence | reason.",
    single_shot_context_template="{symbol} at {price:.2f}, RSI {rsi:.0f}, ATR {atr:.1f}. Allowed actions: {allowed_actions}. Trend: {trend}",
)
"""The word last, next to the answer, as the tape is in the reasoner's prompts: a few steps teach it."""


def trend_experiences(n: int, seed: int = 0, reasoner: ReasonerConfig = TREND_REASONER) -> list[Experience]:
    """``n`` single-shot decide prompts, half "trend up" (target BUY) and half "trend down" (target SELL), in a
    seeded order; price, RSI and ATR are random noise the label does not depend on."""
    rng = np.random.default_rng(seed)
    book = PromptBook(reasoner)
    trends = rng.permutation(["up", "down"] * (n // 2) + ["up"] * (n % 2))
    experiences = []
    for i, trend in enumerate(trends):
        context = {**SAMPLE_CONTEXT, "price": float(rng.uniform(15000, 20000)), "rsi": float(rng.uniform(20, 80)),
                   "atr": float(rng.uniform(5, 30)), "trend": str(trend)}
        action = TREND_ACTION[str(trend)]
        experiences.append(Experience(id=f"trend-{seed}-{i}", messages=decide_messages(book, "single_shot", context, ENTRY_MASK),
                                      mask=ENTRY_MASK, target=target_answer(action, 0.8, f"{trend}trend"), action=action,
                                      pnl_usd=100.0, source="hindsight"))
    return experiences
