"""Chat templates for GGUFs that carry none (``tokenizer.chat_template`` absent), by architecture.

Gemma 3 270M's packaged GGUF (the pretrained base, actors/common/llm/model.py) has no template. Gemma's turn format
has no system role: the system prompt opens the first user turn, so the shared prefix (``<bos><start_of_turn>user``
and the system prompt) is the same for every thought and stays in llama.cpp's KV cache. The model's turn ends with
``<end_of_turn>``, which llama.cpp counts as an end-of-generation token for Gemma vocabularies.
"""

from __future__ import annotations

from collections.abc import Mapping

GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set first_prefix = messages[0]['content'] | trim + '\n\n' %}{% set turns = messages[1:] %}"
    "{% else %}{% set first_prefix = '' %}{% set turns = messages %}{% endif %}"
    "{% for message in turns %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\n' + (first_prefix if loop.first else '') + message['content'] | trim + '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}"
)
"""Gemma's own template (google/gemma-3-*-it's tokenizer_config.json) for text turns."""

FALLBACK_TEMPLATES = {"gemma": GEMMA_CHAT_TEMPLATE, "gemma2": GEMMA_CHAT_TEMPLATE, "gemma3": GEMMA_CHAT_TEMPLATE,
                      "gemma3_text": GEMMA_CHAT_TEMPLATE}
"""GGUF general.architecture (or transformers' model_type) -> the template used when the file has none."""


def chat_template(metadata: Mapping[str, str]) -> str:
    """The GGUF's own template, else its architecture's fallback; "" when neither exists."""
    return metadata.get("tokenizer.chat_template") or fallback_template(metadata.get("general.architecture", ""))


def fallback_template(architecture: str) -> str:
    """The template for ``architecture`` when its file carries none ("" unknown)."""
    return FALLBACK_TEMPLATES.get(architecture, "")
