"""The reasoner actor: llama.cpp (or an OpenAI-compatible server) chain of thought under a grammar.

What a job needs from this package: ``check_model_files`` (the GGUF model and any LoRA adapter are
read once before any process starts, so a wrong path or a corrupt file is one clear error naming it
instead of a reasoner that fails at start until the restart limit).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from actors.reasoner.config import ReasonerConfig

GGUF_MAGIC = b"GGUF"


class ModelFileError(ValueError):
    """A model or adapter file that is missing or not a GGUF file; the message names the key and the file."""


def _check_gguf(path: Path, key: str) -> None:
    if not path.is_file():
        raise ModelFileError(f"{key}: no such file: {path}")
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise ModelFileError(f"{key}: {path} is not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r})")


def check_model_files(config: ReasonerConfig) -> None:
    """The llama backend's model (reasoner.model_path, or the packaged reasoner.model) and reasoner.lora_path."""
    if config.backend != "llama":
        return
    from actors.common.llm.model import ModelNotFound, model_file

    try:
        model = model_file(config.model_path, config.model)
    except ModelNotFound as exc:
        raise ModelFileError(f"reasoner.model_path: {exc}") from None
    _check_gguf(model, "reasoner.model_path")
    if config.lora_path:
        _check_gguf(Path(config.lora_path), "reasoner.lora_path")
