"""One thought: four growing-conversation steps (or one shot) over a chat engine, then parse.

The four steps are turns of ONE conversation: each step's prompt is the previous prompt
plus the previous answer plus the new question, so the engine re-reads only the new
turn (prefix reuse). With ``reuse_prefix = false`` the engine forgets its cache before
every step, which is the baseline the benchmark compares against.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

from actors.common.llm.grammar import decision_grammar
from actors.common.llm.parser import DecisionParser, ParsedDecision
from actors.common.llm.prompts import FOUR_STEPS, Message, PromptBook, prompt_fields
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import ChatEngine, Completion, GenerationAborted
from actors.reasoner.memo import ThoughtMemo
from actors.reasoner.thought import Thought


class Thinker:
    """Turns a market context + action mask into a Thought with one engine (blocking)."""

    def __init__(self, engine: ChatEngine, config: ReasonerConfig, parser: DecisionParser | None = None) -> None:
        self.engine = engine
        # Exact reuse only where the model's answer is a function of its prompt: greedy decoding.
        self.memo = ThoughtMemo(config.memo_size) if config.memo_enabled and config.temperature == 0.0 else None
        self.parser = parser or DecisionParser(expect_risk=config.risk_read)
        self._risk_read = config.risk_read
        self._prompts = PromptBook(config)
        self._mode = config.mode
        self._reuse_prefix = config.reuse_prefix
        self._use_grammar = config.use_grammar
        self._max_step_tokens = config.max_tokens_per_step
        self._max_decide_tokens = config.max_decide_tokens

    def think(self, context: Mapping[str, Any], mask: Sequence[bool]) -> Thought:
        return self.think_many([(context, mask)])[0]

    def think_many(self, states: Sequence[tuple[Mapping[str, Any], Sequence[bool]]]) -> list[Thought]:
        """One thought per (context, mask), in order; none at all when the engine was aborted (shutdown):
        a thought cut short is no thought, and the ones finished before it are dropped with it."""
        try:
            if self.memo is None:
                return self._think_many(states)
            return self._think_many_with_memo(states)
        except GenerationAborted:
            return []

    def _think_many_with_memo(self, states: Sequence[tuple[Mapping[str, Any], Sequence[bool]]]) -> list[Thought]:
        """Repeated prompts from the memo, the others from the model (together, as one batch)."""
        assert self.memo is not None
        first_step = "single_shot" if self._mode == "single_shot" else FOUR_STEPS[0]
        version = self.engine.adapter_version
        keys = [self.memo.key(version, self._prompts.opening(prompt_fields(context, mask), first_step),
                              decision_grammar(mask, self._risk_read) if self._use_grammar else None) for context, mask in states]
        thoughts: list[Thought | None] = [self.memo.get(key) for key in keys]
        missing = [i for i, thought in enumerate(thoughts) if thought is None]
        if missing:
            for i, thought in zip(missing, self._think_many([states[i] for i in missing])):
                self.memo.put(keys[i], thought)
                thoughts[i] = thought
        return [thought for thought in thoughts if thought is not None]

    def _think_many(self, states: Sequence[tuple[Mapping[str, Any], Sequence[bool]]]) -> list[Thought]:
        """An engine that serves several conversations at once (batched llama.cpp, concurrent
        HTTP) gets each step of all of them in one call; a one-at-a-time engine gets one
        whole thought after the other, which keeps its single KV cache on one conversation.
        """
        if len(states) > 1 and not getattr(self.engine, "serves_many_at_once", False):
            return [thought for state in states for thought in self._think_many([state])]
        most = getattr(self.engine, "max_sequences", len(states))
        if len(states) > most:
            return [t for start in range(0, len(states), most) for t in self._think_many(states[start : start + most])]
        started, cpu_started = time.perf_counter(), time.process_time()
        # Swaps fall between thoughts (the same worker thread runs both): this is the version used throughout.
        adapter_version = self.engine.adapter_version
        fields = [prompt_fields(context, mask) for context, mask in states]
        grammars = [decision_grammar(mask, self._risk_read) if self._use_grammar else None for _, mask in states]
        if self._mode == "single_shot":
            texts, completions = self._single_shot(fields, grammars)
        else:
            texts, completions = self._four_steps(fields, grammars)
        elapsed_secs, cpu_secs = time.perf_counter() - started, time.process_time() - cpu_started
        return [
            dataclasses.replace(self._thought(text, done, self.parser.parse(text["decide"], mask), elapsed_secs, adapter_version),
                                cpu_secs=cpu_secs)
            for text, done, (_, mask) in zip(texts, completions, states)
        ]

    def _single_shot(self, fields: list[Mapping[str, Any]], grammars: list[str | None]):
        conversations = [self._prompts.opening(f, "single_shot") for f in fields]
        answers = self._complete(conversations, self._max_decide_tokens, grammars)
        return [{"decide": a.text.strip()} for a in answers], [[a] for a in answers]

    def _four_steps(self, fields: list[Mapping[str, Any]], grammars: list[str | None]):
        conversations: list[list[Message]] = [self._prompts.opening(f, FOUR_STEPS[0]) for f in fields]
        texts: list[dict[str, str]] = [{} for _ in fields]
        completions: list[list[Completion]] = [[] for _ in fields]
        for index, step in enumerate(FOUR_STEPS):
            if index > 0:
                for conversation, f in zip(conversations, fields):
                    conversation.append(self._prompts.step(step, f))
            is_decide = step == "decide"
            answers = self._complete(
                conversations,
                self._max_decide_tokens if is_decide else self._max_step_tokens,
                grammars if is_decide else [None] * len(fields),
            )
            for i, answer in enumerate(answers):
                texts[i][step] = answer.text.strip()
                completions[i].append(answer)
                conversations[i].append({"role": "assistant", "content": texts[i][step]})
        return texts, completions

    def _complete(self, conversations: list[list[Message]], max_tokens: int, grammars: list[str | None]) -> list[Completion]:
        if not self._reuse_prefix:
            self.engine.forget_context()
        if len(conversations) == 1:  # any ChatEngine, including ones without chat_many
            return [self.engine.chat(conversations[0], max_tokens=max_tokens, grammar=grammars[0])]
        return self.engine.chat_many(conversations, max_tokens=max_tokens, grammars=grammars)

    def _thought(
        self,
        texts: dict[str, str],
        completions: list[Completion],
        parsed: ParsedDecision,
        elapsed_secs: float,
        adapter_version: int,
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
            adapter_version=adapter_version,
            risk_level=parsed.risk_level,
            risk_minutes=parsed.risk_minutes,
        )
