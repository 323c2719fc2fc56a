"""``build_engine``: the engine the reasoner's config asks for (llama.cpp one at a time or batched, or an
OpenAI-compatible HTTP server). Apart from the engines so that engine.py and batch_engine.py (which builds on
engine.py's base class) do not import each other."""

from __future__ import annotations

import os

from actors.common.llm.model import model_file
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import ChatEngine, LlamaEngine
from actors.reasoner.http_engine import HttpChatEngine


def build_engine(config: ReasonerConfig) -> ChatEngine:
    """The engine the config asks for (the model loads here: call it off the event loop)."""
    if config.backend == "http":
        return HttpChatEngine(
            concurrency=config.http_concurrency,
            base_url=config.http_base_url,
            model=config.http_model,
            timeout_secs=config.http_timeout_secs,
            api_key=os.environ.get(config.http_api_key_env, "") if config.http_api_key_env else "",
            temperature=config.temperature,
            top_p=config.top_p,
            seed=config.seed,
            send_grammar=config.http_send_grammar,
        )
    llama = dict(
        model_path=str(model_file(config.model_path, config.model)),
        n_ctx=config.n_ctx,
        n_threads=config.n_threads,
        n_batch=config.n_batch,
        seed=config.seed,
        temperature=config.temperature,
        top_p=config.top_p,
        lora_path=config.lora_path,
        lora_version=config.lora_version if config.lora_path else 0,
    )
    if config.batched:
        from actors.reasoner.batch_engine import BatchLlamaEngine

        return BatchLlamaEngine(max_sequences=config.max_batch_sequences, **llama)
    return LlamaEngine(**llama)
