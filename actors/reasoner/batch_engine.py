"""Batched llama.cpp: one llama_decode call advances every environment's conversation.

llama-cpp-python's ``Llama`` serves one sequence at a time. With N environments waiting,
this engine uses its low-level API instead:

- one context with ``n_seq_max = max_sequences``, one KV stream per sequence; conversation i of
  a call lives in sequence id (slot) i;
- the prefix every prompt of a call shares (the system prompt, fixed text) is read once
  and its KV cells copied to the sequences that lack it; then all suffixes are read in
  one batch; what a slot already holds from its previous call (the growing four-step conversation,
  the system prompt of the last thought) is kept and only the new suffix is read;
- one sampler chain per sequence (grammar, then greedy at temperature 0, else
  top-k/top-p/min-p/temperature/seeded dist, as ``Llama.create_completion`` builds it),
  so the same prompt and seed give the same answer as the one-at-a-time engine;
- each generation step decodes one token per live sequence in a single llama_decode.

Native handles (model, context, batch, samplers, adapter) are freed in ``close()``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import _internals
from llama_cpp._logger import set_verbose

from actors.common.llm.model import model_params
from actors.reasoner.engine import (
    Completion,
    EngineError,
    GenerationAborted,
    LlamaEngineBase,
    Messages,
    chat_formatter,
    free_lora_adapter,
    set_lora_adapter,
    whitespace_only_tokens,
)
from actors.common.llm.grammar import at_reason_start

# llama-cpp-python's create_completion defaults, so both engines sample alike.
TOP_K = 40
MIN_P = 0.05


@dataclass(slots=True)
class _Entry:
    """One batch entry: a token at a position of one sequence."""

    token: int
    pos: int
    seq_id: int
    logits: bool = False


@dataclass(slots=True)
class _Live:
    """A sequence being generated in the current call."""

    slot: int
    sampler: int  # llama_sampler pointer (the chain)
    max_tokens: int
    constrained: bool
    batch_index: int = -1
    """Where its newest logits sit in the last decoded batch."""
    pending: int | None = None
    """Sampled, not yet decoded; None once the sequence has ended."""
    tokens: list[int] = field(default_factory=list)


class BatchLlamaEngine(LlamaEngineBase):
    """A llama.cpp model and one multi-sequence context; ``chat_many`` thinks for N conversations at once."""

    serves_many_at_once = True

    def __init__(self, *, max_sequences: int = 8, **settings: Any) -> None:
        """``settings``: LlamaEngineBase's keywords; ``n_ctx`` is per sequence."""
        self.max_sequences = max_sequences
        super().__init__(**settings)

    def _open(self, *, n_ctx: int, n_threads: int, n_batch: int) -> None:
        if self.max_sequences < 1 or self.max_sequences > n_batch:
            raise EngineError(f"max_sequences must be in [1, n_batch={n_batch}], got {self.max_sequences}")
        self.n_ctx_per_sequence = n_ctx
        self._n_batch = n_batch
        set_verbose(False)  # llama.cpp's own log lines, as Llama(verbose=False) does
        llama_cpp.llama_backend_init()
        self._model = _internals.LlamaModel(
            path_model=self.model_path, params=model_params(), verbose=False
        )
        self._ctx = self._new_context(n_ctx, n_threads)
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)  # one sequence id per token
        self._vocab = self._model.vocab
        self._n_vocab = self._model.n_vocab()
        self._whitespace_tokens = np.array(
            whitespace_only_tokens(self._model.detokenize, self._n_vocab), dtype=np.int64
        )
        self._formatter = chat_formatter(self._model.metadata(), self._model.token_eos(), self._model.token_bos(),
                                         self._model.detokenize)
        self.prompt_tokens_decoded = 0
        """Prompt tokens llama.cpp has read (a shared prefix counts once), over the engine's life."""
        # Tokens each slot holds in the KV cache, position by position.
        self._held: list[list[int]] = [[] for _ in range(self.max_sequences)]

    # ---- public

    def chat(self, messages: Messages, *, max_tokens: int, grammar: str | None = None) -> Completion:
        return self.chat_many([messages], max_tokens=max_tokens, grammars=[grammar])[0]

    def chat_many(
        self, conversations: Sequence[Messages], *, max_tokens: int, grammars: Sequence[str | None] | None = None
    ) -> list[Completion]:
        """One completion per conversation, all generated together (conversation i in slot i)."""
        self._raise_if_aborted()
        if self._ctx is None:
            raise EngineError("the engine is closed")
        if not conversations:
            return []
        if len(conversations) > self.max_sequences:
            raise EngineError(f"{len(conversations)} conversations exceed max_sequences {self.max_sequences}")
        grammars = list(grammars) if grammars is not None else [None] * len(conversations)
        started = time.perf_counter()
        prompts = [self._tokenize(self.render(messages), max_tokens) for messages in conversations]
        live: list[_Live] = []
        try:
            live += [self._live(slot, max_tokens, grammar) for slot, grammar in enumerate(grammars)]
            reused = self._read_prompts(prompts, live)
            prompt_secs = time.perf_counter() - started
            self._generate(live)
        finally:
            for sequence in live:
                llama_cpp.llama_sampler_free(sequence.sampler)
        elapsed = time.perf_counter() - started
        return self._completions(prompts, reused, live, prompt_secs, elapsed - prompt_secs, elapsed)

    def forget_context(self) -> None:
        if self._ctx is not None:
            llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self._ctx.ctx), True)
        self._held = [[] for _ in range(self.max_sequences)]

    def load_adapter(self, path: str, version: int) -> None:
        """Swap the LoRA adapter on the live context; on failure the current one stays in use."""
        if self._ctx is None:
            raise EngineError("the engine is closed")
        adapter = set_lora_adapter(self._model.model, self._ctx.ctx, path)
        free_lora_adapter(self._adapter)
        self._adapter = adapter
        self.adapter_version = version
        self.adapter_path = path
        self.forget_context()  # cached cells were computed with the old weights

    def close(self) -> None:
        if self._ctx is None:
            return
        llama_cpp.llama_batch_free(self._batch)
        self._ctx.close()
        self._ctx = None
        if self._adapter is not None:
            llama_cpp.llama_adapter_lora_free(self._adapter)
            self._adapter = None
        self._model.close()

    def _raise_if_aborted(self) -> None:
        if self._aborted.is_set():
            raise GenerationAborted("generation aborted")

    # ---- prompts

    def _new_context(self, n_ctx: int, n_threads: int):
        params = llama_cpp.llama_context_default_params()
        # Every sequence may hold a whole conversation; the shared prefix takes its cells once.
        params.n_ctx = n_ctx * self.max_sequences
        params.n_batch = self._n_batch
        params.n_ubatch = self._n_batch
        params.n_seq_max = self.max_sequences
        params.kv_unified = False  # one KV stream per sequence (see _share_prefix)
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        # As Llama(flash_attn=False): the same attention kernels give the same logits as LlamaEngine.
        params.flash_attn_type = llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        try:
            return _internals.LlamaContext(model=self._model, params=params, verbose=False)
        except ValueError as exc:
            raise EngineError(f"llama.cpp context could not be created: {exc}") from exc

    def _tokenize(self, text: str, max_tokens: int) -> list[int]:
        tokens = self._model.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) + max_tokens > self.n_ctx_per_sequence:
            raise EngineError(
                f"prompt of {len(tokens)} tokens + {max_tokens} to generate exceeds n_ctx {self.n_ctx_per_sequence}"
            )
        return tokens

    def _read_prompts(self, prompts: list[list[int]], live: list[_Live]) -> list[int]:
        """Bring each slot's KV cache to its prompt and sample its first token; returns the tokens reused.

        Each slot keeps the longest prefix it already holds (at most all but the last token,
        whose logits start generation). The prefix common to all prompts (system prompt,
        fixed text) is read once, by the slot that holds most of it, and copied to the slots
        that lack it. Then each slot reads its own suffix in n_batch chunks, as
        ``Llama.eval`` does: a prompt suffix is a large batch on its own, and reading it the
        same way keeps the logits bit-equal to the one-at-a-time engine's (a last prompt
        token decoded alone, or beside other sequences' prompts, shifts them slightly).
        """
        memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        kept = [min(_common_prefix(self._held[slot], tokens), len(tokens) - 1) for slot, tokens in enumerate(prompts)]
        for slot, keep in enumerate(kept):
            llama_cpp.llama_memory_seq_rm(memory, slot, keep, -1)
            self._held[slot] = list(prompts[slot][:keep])
        reused = list(kept)
        shared = min(_common_prefix_of_all(prompts), min(len(p) for p in prompts) - 1)
        if len(prompts) > 1 and shared > 0 and min(kept) < shared:
            kept = self._share_prefix(prompts[0][:shared], kept, memory)
        for sequence, tokens, start in zip(live, prompts, kept):
            self._raise_if_aborted()
            entries = [_Entry(t, pos, sequence.slot) for pos, t in enumerate(tokens) if pos >= start]
            entries[-1].logits = True
            self._decode_entries(entries)
            self._held[sequence.slot] = list(tokens)
            # Sampled now: the next slot's prompt overwrites these logits.
            sequence.batch_index = (len(entries) - 1) % self._n_batch
            sequence.pending = self._sample(sequence)
        return reused

    def _share_prefix(self, prefix: list[int], kept: list[int], memory) -> list[int]:
        """Read the shared prefix once (in the slot holding most of it) and copy its cells to the others.

        Each sequence has its own KV stream (kv_unified off: a sequence's cells then sit where
        they would alone, which keeps its logits identical to the one-at-a-time engine's), and
        llama.cpp copies between streams only whole: the copy is then cut back to the prefix.
        """
        donor = max(range(len(kept)), key=lambda slot: kept[slot])
        start = kept[donor]
        if start < len(prefix):
            self._decode_entries([_Entry(t, pos, donor) for pos, t in enumerate(prefix) if pos >= start])
        kept = list(kept)
        for slot in range(len(kept)):
            if slot != donor and kept[slot] < len(prefix):
                llama_cpp.llama_memory_seq_rm(memory, slot, -1, -1)
                llama_cpp.llama_memory_seq_cp(memory, donor, slot, -1, -1)
                llama_cpp.llama_memory_seq_rm(memory, slot, len(prefix), -1)
            kept[slot] = max(kept[slot], len(prefix))
        return kept

    def _decode_entries(self, entries: list[_Entry]) -> None:
        """Decode prompt entries in n_batch chunks."""
        self.prompt_tokens_decoded += len(entries)
        for start in range(0, len(entries), self._n_batch):
            self._decode_chunk(entries[start : start + self._n_batch])

    def _decode_chunk(self, chunk: list[_Entry]) -> dict[int, int]:
        batch = self._batch
        outputs = {}
        for index, entry in enumerate(chunk):
            batch.token[index] = entry.token
            batch.pos[index] = entry.pos
            batch.n_seq_id[index] = 1
            batch.seq_id[index][0] = entry.seq_id
            batch.logits[index] = entry.logits
            if entry.logits:
                outputs[entry.seq_id] = index
        batch.n_tokens = len(chunk)
        status = llama_cpp.llama_decode(self._ctx.ctx, batch)
        if status != 0:
            self.forget_context()  # a failed decode may leave partial cells behind
            raise EngineError(f"llama_decode failed with status {status} (1 = KV cache full: raise n_ctx)")
        return outputs

    # ---- generation

    def _live(self, slot: int, max_tokens: int, grammar: str | None) -> _Live:
        return _Live(slot=slot, sampler=self._sampler(grammar), max_tokens=max_tokens, constrained=grammar is not None)

    def _sampler(self, grammar: str | None) -> int:
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        if grammar is not None:
            grammar_sampler = llama_cpp.llama_sampler_init_grammar(self._vocab, grammar.encode("utf-8"), b"root")
            if grammar_sampler is None:
                llama_cpp.llama_sampler_free(chain)
                raise EngineError("the grammar did not parse")
            llama_cpp.llama_sampler_chain_add(chain, grammar_sampler)
        if self._temperature == 0.0:
            llama_cpp.llama_sampler_chain_add(chain, llama_cpp.llama_sampler_init_greedy())
        else:
            for sampler in (
                llama_cpp.llama_sampler_init_top_k(TOP_K),
                llama_cpp.llama_sampler_init_typical(1.0, 1),
                llama_cpp.llama_sampler_init_top_p(self._top_p, 1),
                llama_cpp.llama_sampler_init_min_p(MIN_P, 1),
                llama_cpp.llama_sampler_init_temp(self._temperature),
                llama_cpp.llama_sampler_init_dist(self._seed),
            ):
                llama_cpp.llama_sampler_chain_add(chain, sampler)
        return chain

    def _generate(self, live: list[_Live]) -> None:
        """Decode the pending token of every live sequence in one llama_decode, then sample the next."""
        while True:
            self._raise_if_aborted()
            entries = [_Entry(seq.pending, len(self._held[seq.slot]), seq.slot, logits=True)
                       for seq in live if seq.pending is not None]
            if not entries:
                return
            indices = self._decode_chunk(entries)
            self.decode_steps += 1
            for sequence in live:
                if sequence.pending is None:
                    continue
                self._held[sequence.slot].append(sequence.pending)
                sequence.batch_index = indices[sequence.slot]
                sequence.pending = self._sample(sequence)

    def _sample(self, sequence: _Live) -> int | None:
        """The next token of a sequence, or None when it has ended (end of generation, max_tokens)."""
        if self._starts_reason(sequence):
            # A whitespace-only token here would split the reason's first word (" " + "inance").
            logits = np.ctypeslib.as_array(
                llama_cpp.llama_get_logits_ith(self._ctx.ctx, sequence.batch_index), shape=(self._n_vocab,)
            )
            logits[self._whitespace_tokens] = -np.inf
        token = llama_cpp.llama_sampler_sample(sequence.sampler, self._ctx.ctx, sequence.batch_index)
        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
            return None
        sequence.tokens.append(token)
        if len(sequence.tokens) >= sequence.max_tokens:
            return None  # the last token is kept in the text but never decoded: nothing follows it
        return token

    def _starts_reason(self, sequence: _Live) -> bool:
        if not sequence.constrained or not sequence.tokens:
            return False
        return at_reason_start(self._model.detokenize(sequence.tokens).decode("utf-8", "ignore"))

    def _completions(
        self,
        prompts: list[list[int]],
        reused: list[int],
        live: list[_Live],
        prompt_secs: float,
        generation_secs: float,
        elapsed_secs: float,
    ) -> list[Completion]:
        """One Completion per sequence; the batch's shared times are split by each one's share of the work."""
        total_read = max(sum(len(p) - r for p, r in zip(prompts, reused)), 1)
        total_generated = max(sum(len(s.tokens) for s in live), 1)
        return [
            Completion(
                text=self._model.detokenize(sequence.tokens).decode("utf-8", "ignore"),
                prompt_tokens=len(tokens),
                evaluated_prompt_tokens=len(tokens) - kept,
                generated_tokens=len(sequence.tokens),
                prompt_secs=prompt_secs * (len(tokens) - kept) / total_read,
                generation_secs=generation_secs * len(sequence.tokens) / total_generated,
                elapsed_secs=elapsed_secs,
            )
            for tokens, kept, sequence in zip(prompts, reused, live)
        ]


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _common_prefix_of_all(prompts: list[list[int]]) -> int:
    return min(_common_prefix(prompts[0], other) for other in prompts)
