"""Exact thought reuse: at temperature 0 the same prompt under the same adapter gets the same answer.

The memo maps (adapter version, the opening conversation's exact text, the decide grammar) to the
thought the model gave. The opening fixes the whole thought: the later steps of a four-step
thought are the model's own answers to fixed questions. So a hit is the model's answer, not an
approximation of it (unlike the seed's thought cache, which reuses a thought for a rounded state
and decays its confidence). A hit costs microseconds where a thought costs a second, so lockstep
does not wait for the LLM on a repeated state.

It also makes the answer independent of what the KV cache held before: llama.cpp promises the same
logits only for the same sequence of batches; a prompt whose prefix was reused from the cache is
summed in another order than one read whole, which can flip a near tie. Served from the memo, a
repeated prompt gets the first answer whatever came between.

Only at temperature 0 (sampling is meant to vary) and never a fallback (a parse failure is not an
answer worth repeating). An adapter swap flushes it.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from collections.abc import Sequence

from actors.reasoner.cache import put_bounded, share_of_hits
from actors.reasoner.thought import Thought

MemoKey = tuple[int, str, str]


class ThoughtMemo:
    def __init__(self, max_entries: int) -> None:
        self._entries: OrderedDict[MemoKey, Thought] = OrderedDict()
        self._max_entries = max_entries
        self._adapter_version = 0
        self.hits = 0
        self.misses = 0
        self.flushes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def key(adapter_version: int, opening: Sequence[dict], grammar: str | None) -> MemoKey:
        return adapter_version, json.dumps(list(opening), sort_keys=True, ensure_ascii=False), grammar or ""

    def get(self, key: MemoKey) -> Thought | None:
        """The model's earlier thought for this exact prompt, marked as reused, or None (a miss)."""
        self._flush_if_swapped(key[0])
        thought = self._entries.get(key)
        if thought is None:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(key)
        return dataclasses.replace(thought, memo=True, latency_ms=0.0, cpu_secs=0.0, prompt_tokens=0, reused_prompt_tokens=0,
                                   generated_tokens=0, generation_secs=0.0)

    def put(self, key: MemoKey, thought: Thought) -> None:
        if thought.fallback or thought.cached or thought.memo:
            return
        self._flush_if_swapped(key[0])
        put_bounded(self._entries, key, thought, self._max_entries)

    def hit_rate(self) -> float:
        return share_of_hits(self.hits, self.misses)

    def _flush_if_swapped(self, adapter_version: int) -> None:
        # Answers under the old adapter are not the new one's: the memo starts over.
        if adapter_version != self._adapter_version:
            self._adapter_version = adapter_version
            if self._entries:
                self._entries.clear()
                self.flushes += 1
