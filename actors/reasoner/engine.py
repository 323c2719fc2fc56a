"""Chat engines' contract (``ChatEngine``, ``Completion``, their errors) and llama-cpp-python in this process.

Every engine takes chat messages and returns a Completion; each is blocking and is called from the actor's
worker thread, never from its event loop. The OpenAI-compatible HTTP engine is http_engine.py's, the batched
llama.cpp engine batch_engine.py's.

LlamaEngine renders the model's own chat template (from the GGUF metadata) itself and
hands the tokens to llama.cpp, so it knows how many prompt tokens were served from the
KV cache: llama-cpp-python keeps the tokens it evaluated last and, for a prompt that
extends them, re-reads only the new suffix.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from actors.common.llm.grammar import at_reason_start


Messages = list[dict[str, str]]


class EngineError(RuntimeError):
    """A completion could not be produced (server down, bad answer, prompt too long, bad adapter)."""


class GenerationAborted(EngineError):
    """The engine was told to stop (the actor is shutting down): the call's answer is dropped."""


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    prompt_tokens: int
    """Tokens in the whole prompt."""
    evaluated_prompt_tokens: int
    """Prompt tokens actually read; the rest came from the KV cache (HTTP: as reported, else all)."""
    generated_tokens: int
    prompt_secs: float
    """Time reading the prompt (llama.cpp's own counter; HTTP: 0)."""
    generation_secs: float
    """Time generating (llama.cpp's own counter; HTTP: the whole request)."""
    elapsed_secs: float
    """Wall time of the call, everything included."""


class ChatEngine(Protocol):
    adapter_version: int
    serves_many_at_once: bool
    """True when chat_many serves its conversations together (a batch, concurrent requests), so a
    thinker should hand it one step of all of them; false = one whole conversation after the other."""

    def chat(self, messages: Messages, *, max_tokens: int, grammar: str | None = None) -> Completion: ...

    def chat_many(
        self, conversations: Sequence[Messages], *, max_tokens: int, grammars: Sequence[str | None] | None = None
    ) -> list[Completion]:
        """One completion per conversation (batched, concurrent or in turn, as the engine can)."""

    def forget_context(self) -> None:
        """Drop any cached prompt state, so the next call reads its whole prompt."""

    def load_adapter(self, path: str, version: int) -> None: ...

    def abort(self) -> None:
        """Stop generating after the current token; this and every later call raise GenerationAborted.
        Thread-safe: called from the event loop while the worker thread generates."""

    def close(self) -> None: ...


def require_model_files(model_path: str, lora_path: str = "") -> None:
    """The model file (and the adapter, when given) exist: an EngineError naming the file otherwise."""
    if not Path(model_path).is_file():
        raise EngineError(f"model file not found: {model_path}")
    if lora_path and not Path(lora_path).is_file():
        raise EngineError(f"adapter file not found: {lora_path}")


class LlamaEngineBase:
    """The set-up both llama.cpp engines share: sampling settings, abort flag, model, adapter at start.

    A subclass loads its native handles in ``_open``, which also sets ``_formatter`` (the model's
    chat template) and ``_whitespace_tokens``; it then holds the adapter asked for, or is closed
    again when that adapter does not load."""

    def __init__(
        self,
        *,
        model_path: str,
        n_ctx: int = 2048,
        n_threads: int = 1,
        n_batch: int = 256,
        seed: int = 0,
        temperature: float = 0.2,
        top_p: float = 0.9,
        lora_path: str = "",
        lora_version: int = 0,
    ) -> None:
        require_model_files(model_path, lora_path)
        self.model_path = model_path
        self._seed = seed
        self._temperature = temperature
        self._top_p = top_p
        self._aborted = threading.Event()
        self.decode_steps = 0
        """Tokens sampled (a batch engine: llama_decode calls while generating), over the engine's life."""
        self._adapter = None  # llama_adapter_lora pointer on the live context, None = base model
        self.adapter_version = 0
        self.adapter_path = ""
        self._open(n_ctx=n_ctx, n_threads=n_threads, n_batch=n_batch)
        if lora_path:
            try:
                self.load_adapter(lora_path, lora_version)
            except EngineError:
                self.close()
                raise

    def _open(self, *, n_ctx: int, n_threads: int, n_batch: int) -> None:
        raise NotImplementedError

    def render(self, messages: Messages) -> str:
        """The prompt text under the model's own chat template, ending with the assistant's turn."""
        return self._formatter(messages=messages).prompt

    def abort(self) -> None:
        """Stop after the current token or decode step (thread-safe); this and later calls raise GenerationAborted."""
        self._aborted.set()

    def load_adapter(self, path: str, version: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class LlamaEngine(LlamaEngineBase):
    """One llama.cpp model and context, with the model's chat template and an optional LoRA adapter."""

    serves_many_at_once = False

    def _open(self, *, n_ctx: int, n_threads: int, n_batch: int) -> None:
        from llama_cpp import StoppingCriteriaList

        from actors.common.llm.model import open_llama

        self._grammars: dict[str, object] = {}
        # Checked by llama-cpp-python after every sampled token.
        self._stop_when_aborted = StoppingCriteriaList([self._count_token_and_check_abort])
        self._llm = open_llama(model_path=self.model_path, seed=self._seed, verbose=False, n_ctx=n_ctx, n_threads=n_threads,
                          n_threads_batch=n_threads, n_batch=n_batch)
        llm = self._llm
        self._formatter = chat_formatter(llm.metadata, llm.token_eos(), llm.token_bos(), llm.detokenize)
        self._whitespace_tokens = whitespace_only_tokens(llm.detokenize, llm.n_vocab())

    def _count_token_and_check_abort(self, _ids, _logits) -> bool:
        self.decode_steps += 1
        return self._aborted.is_set()

    # ---- public

    def chat(self, messages: Messages, *, max_tokens: int, grammar: str | None = None) -> Completion:
        import llama_cpp

        llm = self._open_llm()
        started = time.perf_counter()
        tokens = llm.tokenize(self.render(messages).encode("utf-8"), add_bos=False, special=True)
        if len(tokens) + max_tokens > llm.n_ctx():
            raise EngineError(f"prompt of {len(tokens)} tokens + {max_tokens} to generate exceeds n_ctx {llm.n_ctx()}")
        cached = cached_prefix_tokens(llm, tokens)
        llama_cpp.llama_perf_context_reset(llm.ctx)
        result = llm.create_completion(
            tokens,
            max_tokens=max_tokens,
            temperature=self._temperature,
            top_p=self._top_p,
            seed=self._seed,
            grammar=self._grammar(grammar) if grammar else None,
            logits_processor=self._reason_start_guard(len(tokens)) if grammar else None,
            stopping_criteria=self._stop_when_aborted,
        )
        if self._aborted.is_set():  # cut short: not an answer
            raise GenerationAborted("generation aborted")
        perf = llama_cpp.llama_perf_context(llm.ctx)
        return Completion(
            text=result["choices"][0]["text"],
            prompt_tokens=len(tokens),
            evaluated_prompt_tokens=len(tokens) - cached,
            generated_tokens=int(result["usage"]["completion_tokens"]),
            prompt_secs=perf.t_p_eval_ms / 1000.0,
            generation_secs=perf.t_eval_ms / 1000.0,
            elapsed_secs=time.perf_counter() - started,
        )

    def chat_many(
        self, conversations: Sequence[Messages], *, max_tokens: int, grammars: Sequence[str | None] | None = None
    ) -> list[Completion]:
        """One conversation after the other (the one-at-a-time baseline of the batched engine)."""
        grammars = list(grammars) if grammars is not None else [None] * len(conversations)
        return [self.chat(m, max_tokens=max_tokens, grammar=g) for m, g in zip(conversations, grammars)]

    def forget_context(self) -> None:
        if self._llm is not None:
            self._llm.reset()

    def load_adapter(self, path: str, version: int) -> None:
        """Swap the LoRA adapter on the live context (no model reload); on failure the current one stays.

        llama-cpp-python's Llama takes an adapter only at construction, so this goes through the
        low-level API on its context, as BatchLlamaEngine does. The KV cache was computed under the
        old adapter: it is dropped, so the next prompt is read in full."""
        llm = self._open_llm()
        adapter = set_lora_adapter(llm.model, llm.ctx, path)
        old, self._adapter = self._adapter, adapter
        free_lora_adapter(old)
        self.adapter_version = version
        self.adapter_path = path
        llm.reset()

    def close(self) -> None:
        if self._llm is None:
            return
        if self._adapter is not None:  # before the model: llama.cpp frees an adapter left on it itself
            clear_lora_adapters(self._llm.ctx)
            free_lora_adapter(self._adapter)
            self._adapter = None
        self._llm.close()
        self._llm = None

    # ---- internals

    def _open_llm(self):
        if self._aborted.is_set():
            raise GenerationAborted("the engine was aborted")
        if self._llm is None:
            raise EngineError("the engine is closed")
        return self._llm

    def _reason_start_guard(self, n_prompt_tokens: int):
        """Forbid whitespace-only tokens as the reason's first token (see grammar.at_reason_start)."""
        import numpy as np
        from llama_cpp import LogitsProcessorList

        llm, banned = self._llm, np.array(self._whitespace_tokens, dtype=np.int64)

        def guard(input_ids, logits):
            generated = llm.detokenize(list(input_ids[n_prompt_tokens:])).decode("utf-8", "ignore")
            if at_reason_start(generated):
                logits[banned] = -np.inf
            return logits

        return LogitsProcessorList([guard])

    def _grammar(self, text: str):
        from llama_cpp import LlamaGrammar

        if text not in self._grammars:
            self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]


def set_lora_adapter(model, ctx, path: str):
    """Load a GGUF LoRA adapter for ``model`` and make it the only one on ``ctx``; its pointer.

    Raises EngineError naming the file when it is missing, not a LoRA for this model, or
    cannot be set; the context then keeps the adapter it had."""
    import llama_cpp

    if not Path(path).is_file():
        raise EngineError(f"adapter file not found: {path}")
    adapter = llama_cpp.llama_adapter_lora_init(model, path.encode("utf-8"))
    if not adapter:  # llama.cpp logs why (not a GGUF, not a LoRA, shapes of another model) and returns NULL
        raise EngineError(f"adapter {path} did not load: not a GGUF LoRA adapter for this model")
    adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(adapter)
    scales = (ctypes.c_float * 1)(1.0)
    if llama_cpp.llama_set_adapters_lora(ctx, adapters, 1, scales):
        llama_cpp.llama_adapter_lora_free(adapter)
        raise EngineError(f"adapter {path} could not be set on the context")
    return adapter


def clear_lora_adapters(ctx) -> None:
    import llama_cpp

    llama_cpp.llama_set_adapters_lora(ctx, None, 0, None)


def free_lora_adapter(adapter) -> None:
    import llama_cpp

    if adapter is not None:
        llama_cpp.llama_adapter_lora_free(adapter)


def chat_formatter(metadata: dict, eos_id: int, bos_id: int, detokenize):
    """The model's own chat template (GGUF metadata; templates.py's for an architecture whose file has none) as a
    llama-cpp-python formatter."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from actors.common.llm.templates import chat_template

    template = chat_template(metadata)  # the GGUF's own, else its architecture's (Gemma's GGUF has none)
    if not template:
        raise EngineError("the GGUF has no tokenizer.chat_template; use a chat (instruct) model")
    return Jinja2ChatFormatter(
        template=template,
        eos_token=detokenize([eos_id], special=True).decode("utf-8", "replace") if eos_id >= 0 else "",
        bos_token=detokenize([bos_id], special=True).decode("utf-8", "replace") if bos_id >= 0 else "",
        stop_token_ids=[eos_id],
    )


def whitespace_only_tokens(detokenize, n_vocab: int) -> list[int]:
    """Ids of the tokens that decode to whitespace only (" ", "  ", "\n", ...)."""
    banned = []
    for token in range(n_vocab):
        piece = detokenize([token])
        if piece and not piece.strip():
            banned.append(token)
    return banned


def cached_prefix_tokens(llm, tokens: list[int]) -> int:
    """How many leading prompt tokens llama.cpp already holds in its KV cache for this prompt."""
    if llm.n_tokens == 0:
        return 0
    held = llm.input_ids[: llm.n_tokens].tolist()
    matched = llm.longest_token_prefix(held, tokens)
    # When the whole prompt is cached llama-cpp-python re-reads its last token to refresh logits.
    return matched - 1 if matched == len(tokens) else matched
