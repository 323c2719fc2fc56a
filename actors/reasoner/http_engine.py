"""The OpenAI-compatible HTTP chat engine (llama.cpp server, vLLM, Ollama): engine.py's ``ChatEngine`` over
/v1/chat/completions, with up to ``concurrency`` requests in flight and an abort that returns at once."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import TypeVar

from actors.reasoner.engine import Completion, EngineError, GenerationAborted, Messages

T = TypeVar("T")

ABORT_POLL_SECS = 0.05
"""How often a call waiting on an HTTP request checks the abort flag."""


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
        concurrency: int = 4,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.concurrency = concurrency
        self.serves_many_at_once = concurrency > 1
        self._aborted = threading.Event()
        self._model = model
        self._timeout_secs = timeout_secs
        self._api_key = api_key
        self._sampling = {"temperature": temperature, "top_p": top_p, "seed": seed}
        self._send_grammar = send_grammar
        self.adapter_version = 0

    def __repr__(self) -> str:  # never show the key
        return f"HttpChatEngine(url={self.url!r}, model={self._model!r})"

    def chat(self, messages: Messages, *, max_tokens: int, grammar: str | None = None) -> Completion:
        return self._call_all([lambda: self._chat_now(messages, max_tokens, grammar)])[0]

    def _chat_now(self, messages: Messages, max_tokens: int, grammar: str | None) -> Completion:
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

    def chat_many(
        self, conversations: Sequence[Messages], *, max_tokens: int, grammars: Sequence[str | None] | None = None
    ) -> list[Completion]:
        """One request per conversation, up to ``concurrency`` in flight: a server with parallel
        slots (llama.cpp server, vLLM) batches them. A failed request raises its EngineError."""
        grammars = list(grammars) if grammars is not None else [None] * len(conversations)
        return self._call_all([
            (lambda m=m, g=g: self._chat_now(m, max_tokens, g)) for m, g in zip(conversations, grammars)
        ])

    def abort(self) -> None:
        self._aborted.set()

    def forget_context(self) -> None:
        """The server owns its cache; nothing to drop here."""

    def load_adapter(self, path: str, version: int) -> None:
        raise EngineError("the http backend cannot swap adapters; load them in the server")

    def close(self) -> None:
        """No connection is kept open between calls, and no thread outlives its request."""

    def _call_all(self, calls: list[Callable[[], T]]) -> list[T]:
        """Run the requests, at most ``concurrency`` at once, each in its own daemon thread; results in order.

        The caller waits in steps of ABORT_POLL_SECS, so an abort returns at once (GenerationAborted)
        instead of after the server's answer or the timeout; a request still in flight then ends on
        its own, and being a daemon thread it never holds up the process's exit. The first failed
        request (in order) raises its EngineError."""
        results: list = [None] * len(calls)
        errors: list[BaseException | None] = [None] * len(calls)
        finished = [threading.Event() for _ in calls]
        slots = threading.BoundedSemaphore(self.concurrency)

        def run(index: int) -> None:
            try:
                results[index] = calls[index]()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                errors[index] = exc
            finally:
                slots.release()
                finished[index].set()

        for index in range(len(calls)):
            while not slots.acquire(timeout=ABORT_POLL_SECS):
                self._raise_if_aborted()
            self._raise_if_aborted()
            threading.Thread(target=run, args=(index,), name="llm-http", daemon=True).start()
        for index, done in enumerate(finished):
            while not done.wait(ABORT_POLL_SECS):
                self._raise_if_aborted()
            if errors[index] is not None:
                raise errors[index]
        return results

    def _raise_if_aborted(self) -> None:
        if self._aborted.is_set():
            raise GenerationAborted("the engine was aborted")

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
