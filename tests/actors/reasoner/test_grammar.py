import random
import re

import pytest

from actors.reasoner.config import (
    SINGLE_SHOT_CONTEXT_TEMPLATE,
    SINGLE_SHOT_PROMPT,
    SINGLE_SHOT_SYSTEM_PROMPT,
    SYSTEM_PROMPT,
    ReasonerConfig,
)
from actors.common.llm.grammar import at_reason_start, decision_grammar
from actors.common.llm.prompts import SAMPLE_CONTEXT
from actors.reasoner.engines import build_engine
from actors.reasoner.thinker import Thinker

FLAT = [True, True, True, False, False, False]

# Pieces the old grammar ("| " then a forced letter) made SmolLM2 start its reasons with.
KNOWN_FRAGMENTS = {"inance", "ipsilon", "xtra", "xt", "ico", "nance", "psilon"}
# Plain English: every word of the prompts the model reads, plus common words a reason opens with.
PLAIN_WORDS = {w.lower() for w in re.findall(r"[A-Za-z]+", SYSTEM_PROMPT + SINGLE_SHOT_SYSTEM_PROMPT + SINGLE_SHOT_CONTEXT_TEMPLATE + SINGLE_SHOT_PROMPT)} | {
    "i", "the", "a", "an", "it", "this", "my", "we", "market", "price", "trend", "strong", "weak", "bullish",
    "bearish", "momentum", "risk", "low", "high", "rsi", "volume", "support", "resistance", "no", "wait",
    "buy", "sell", "hold", "because", "upward", "downward", "entry", "stop", "position",
}


def test_the_reason_rule_starts_with_a_space_so_a_word_initial_token_fits():
    grammar = decision_grammar(FLAT)

    assert 'root ::= action " | " confidence " |" reason' in grammar
    assert 'reason ::= " " [a-zA-Z]' in grammar


@pytest.mark.parametrize(
    ("generated", "expected"),
    [("BUY | 0.71 |", True), ("BUY |", False), ("BUY | 0.71 | Strong", False), ("", False)],
)
def test_the_reason_starts_right_after_the_second_separator(generated, expected):
    assert at_reason_start(generated) is expected


def _contexts(n: int, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    return [
        dict(SAMPLE_CONTEXT, rsi=rng.uniform(20, 80), trend=rng.choice(["up", "down", "flat"]),
             price=18000 + rng.uniform(-300, 300), momentum=rng.uniform(-2, 2),
             pattern=rng.choice(["higher_highs", "lower_lows", "double_top", "none"]))
        for _ in range(n)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("batched", [True, False])
def test_reasons_on_the_real_model_start_with_whole_words(batched):
    # 16 tokens: the action and confidence take about 8, so the reason's first words are whole (it was 24: a third of
    # the test's generation read words the assertions never look at).
    config = ReasonerConfig(mode="single_shot", batched=batched, max_decide_tokens=16, cache_enabled=False)
    engine = build_engine(config)
    thinker = Thinker(engine, config)

    reasons = [thinker.think(context, FLAT).reason for context in _contexts(8)]
    engine.close()

    first_words = [re.match(r"[A-Za-z]+", reason).group(0).lower() for reason in reasons]
    assert not set(first_words) & KNOWN_FRAGMENTS, reasons
    assert set(first_words) <= PLAIN_WORDS, reasons
    assert all(reason == reason.strip() for reason in reasons)
