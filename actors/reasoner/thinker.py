"""One thought: four growing-conversation steps (or one shot) over a chat engine, then parse.

The four steps are turns of ONE conversation: each step's prompt is the previous prompt
plus the previous answer plus the new question, so the engine re-reads only the new
turn (prefix reuse). With ``reuse_prefix = false`` the engine forgets its cache before
every step, which is the baseline the benchmark compares against.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import ChatEngine, Completion
from actors.reasoner.grammar import decision_grammar
from actors.reasoner.parser import DecisionParser, ParsedDecision
from actors.reasoner.prompts import FOUR_STEPS, Message, PromptBook, prompt_fields


@dataclass(frozen=True, slots=True)
class Thought:
    action: int
    confidence: float
    mode: str
    analysis: str
    options: str
    risks: str
    decision: str
    """Raw text of the decide step (or of the single-shot answer)."""
    reason: str
    fallback: bool
    parse_how: str
    latency_ms: float
    prompt_tokens: int
    """Prompt tokens actually read over all steps (tokens reused from the KV cache excluded)."""
    reused_prompt_tokens: int
    """Prompt tokens served from the KV cache over all steps."""
    generated_tokens: int
    generation_secs: float
    adapter_version: int
    cached: bool = False


class Thinker:
    """Turns a market context + action mask into a Thought with one engine (blocking)."""

    def __init__(self, engine: ChatEngine, config: ReasonerConfig, parser: DecisionParser | None = None) -> None:
        self.engine = engine
        self.parser = parser or DecisionParser()
        self._prompts = PromptBook(config)
        self._mode = config.mode
        self._reuse_prefix = config.reuse_prefix
        self._use_grammar = config.use_grammar
        self._max_step_tokens = config.max_tokens_per_step
        self._max_decide_tokens = config.max_decide_tokens

    def think(self, context: Mapping[str, Any], mask: Sequence[bool]) -> Thought:
        started = time.perf_counter()
        fields = prompt_fields(context, mask)
        grammar = decision_grammar(mask) if self._use_grammar else None
        if self._mode == "single_shot":
            texts, completions = self._single_shot(fields, grammar)
        else:
            texts, completions = self._four_steps(fields, grammar)
        parsed = self.parser.parse(texts["decide"], mask)
        return self._thought(texts, completions, parsed, time.perf_counter() - started)

    def _single_shot(self, fields: Mapping[str, Any], grammar: str | None) -> tuple[dict[str, str], list[Completion]]:
        messages = self._prompts.opening(fields, "single_shot")
        completion = self._complete(messages, self._max_decide_tokens, grammar)
        return {"decide": completion.text.strip()}, [completion]

    def _four_steps(self, fields: Mapping[str, Any], grammar: str | None) -> tuple[dict[str, str], list[Completion]]:
        conversation: list[Message] = self._prompts.opening(fields, FOUR_STEPS[0])
        texts: dict[str, str] = {}
        completions: list[Completion] = []
        for index, step in enumerate(FOUR_STEPS):
            if index > 0:
                conversation.append(self._prompts.step(step, fields))
            is_decide = step == "decide"
            completion = self._complete(
                conversation,
                self._max_decide_tokens if is_decide else self._max_step_tokens,
                grammar if is_decide else None,
            )
            texts[step] = completion.text.strip()
            completions.append(completion)
            conversation.append({"role": "assistant", "content": texts[step]})
        return texts, completions

    def _complete(self, messages: list[Message], max_tokens: int, grammar: str | None) -> Completion:
        if not self._reuse_prefix:
            self.engine.forget_context()
        return self.engine.chat(messages, max_tokens=max_tokens, grammar=grammar)

    def _thought(
        self, texts: dict[str, str], completions: list[Completion], parsed: ParsedDecision, elapsed_secs: float
    ) -> Thought:
        return Thought(
            action=parsed.action,
            confidence=parsed.confidence,
            mode=self._mode,
            analysis=texts.get("analyse", ""),
            options=texts.get("options", ""),
            risks=texts.get("risks", ""),
            decision=texts["decide"],
            reason=parsed.reason,
            fallback=parsed.fallback,
            parse_how=parsed.how,
            latency_ms=elapsed_secs * 1000.0,
            prompt_tokens=sum(c.evaluated_prompt_tokens for c in completions),
            reused_prompt_tokens=sum(c.prompt_tokens - c.evaluated_prompt_tokens for c in completions),
            generated_tokens=sum(c.generated_tokens for c in completions),
            generation_secs=sum(c.generation_secs for c in completions),
            adapter_version=self.engine.adapter_version,
        )
