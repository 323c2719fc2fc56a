"""The held-out match rate through the reasoner's own path: llama.cpp, the decide grammar, the parser.

The trainer measures its match rate in peft (actors/lora/trainer.py); what counts is what the running
reasoner answers once the exported GGUF adapter is hot-swapped into its llama.cpp context. The answer's
action comes first under the grammar, so a few tokens are enough to read it.
"""

from __future__ import annotations

from collections.abc import Sequence

from actors.common.llm.grammar import decision_grammar
from actors.common.llm.parser import DecisionParser
from actors.lora.experience import Experience

ACTION_TOKENS = 8
"""Tokens generated per prompt: the action and the confidence (the reason does not change the action)."""


def llama_answers(engine, experiences: Sequence[Experience], max_tokens: int = ACTION_TOKENS,
                  parser: DecisionParser | None = None) -> list[int]:
    """The action the engine (a reasoner ChatEngine, greedy) answers to each experience's decide prompt."""
    parser = parser or DecisionParser()
    answers = []
    for e in experiences:
        text = engine.chat(e.messages, max_tokens=max_tokens, grammar=decision_grammar(e.mask)).text
        answers.append(parser.parse(text, e.mask).action)
    return answers
