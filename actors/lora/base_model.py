"""The reasoner's GGUF as a transformers model for the LoRA trainer: dequantised to float32 once, cached as safetensors.

Apart from trainer.py: this is about files, caches and transformers' loaders (it changes when transformers or the
model's format does), the trainer about rounds, losses and evaluation.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any


@functools.lru_cache(maxsize=2)
def load_base(model_path: str, device: str = "cpu", cache_dir: str = "") -> tuple[Any, Any]:
    """(model, tokenizer) of a GGUF, dequantised to float32; once per process and path.

    transformers reads a GGUF slowly (about 20 s for SmolLM2-135M on 2 cores, mostly parsing the
    vocabulary's metadata three times), so the dequantised model and tokenizer are kept as safetensors
    in ``cache_dir`` (see ``base_cache_dir``) on first use and read from there (about a second) after.
    """
    return _load_folder(warm_cache(model_path, cache_dir), device)


def warm_cache(model_path: str, cache_dir: str = "") -> Path:
    """The folder of ``model_path``'s dequantised copy, written first if it is not there yet."""
    folder = dequantised_folder(model_path, cache_dir)
    if not (folder / "config.json").is_file():
        _dequantise_into(Path(model_path), folder)
    return folder


def base_cache_dir(configured: str = "") -> Path:
    """``lora.base_cache_dir``, else $XDG_CACHE_HOME (or ~/.cache)/thinking-trader/lora-base."""
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "thinking-trader" / "lora-base"


def dequantised_folder(model_path: str, cache_dir: str = "") -> Path:
    """Where a GGUF's dequantised copy lives: keyed by the file's path, size and mtime, and transformers' version."""
    import transformers

    path = Path(model_path).resolve()
    stat = path.stat()
    key = hashlib.sha256(f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{transformers.__version__}".encode()).hexdigest()[:16]
    return base_cache_dir(cache_dir) / f"{path.stem}-{key}"


def _dequantise_into(gguf: Path, folder: Path) -> None:
    """Read the GGUF with transformers and save model + tokenizer into ``folder`` (atomically: a rename)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    with _no_dequantise_progress_bar():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # Dequantised, the weights are plain float32; the GGUF "quantizer" left on the model only stops save_pretrained.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        model.save_pretrained(partial, safe_serialization=True)
        tokenizer.save_pretrained(partial)
        partial.rename(folder)
    except OSError:  # another process saved it first, or the disk is read-only: the next load reads the GGUF again
        shutil.rmtree(partial, ignore_errors=True)


def _load_folder(folder: Path, device: str) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype="float32")
    if not tokenizer.chat_template:  # Gemma's packaged GGUF has none: the turn format llama.cpp is given (templates.py)
        from actors.common.llm.templates import fallback_template

        tokenizer.chat_template = fallback_template(model.config.model_type) or None
    model.eval()
    return model.to(device), tokenizer


@contextlib.contextmanager
def _no_dequantise_progress_bar():
    """transformers' GGUF loader draws a tqdm bar of its own (not behind disable_progress_bar): it would
    break the job's table output; without that module attribute this does nothing."""
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    original = getattr(gguf_utils, "tqdm", None)
    if original is None:
        yield
        return
    gguf_utils.tqdm = lambda iterable, *args, **kwargs: iterable
    try:
        yield
    finally:
        gguf_utils.tqdm = original


_TAKEN: set[tuple[str, str, str]] = set()


def unwrapped_base(model_path: str, device: str, cache_dir: str):
    """The cached base for the first trainer of a process; a fresh load for later ones (PEFT wraps a model in place)."""
    if (model_path, device, cache_dir) in _TAKEN:
        return load_base.__wrapped__(model_path, device, cache_dir)
    _TAKEN.add((model_path, device, cache_dir))
    return load_base(model_path, device, cache_dir)



def warm_default_cache() -> None:
    """bin/setup: dequantise the default model once, so no job's first LoRA round waits for it."""
    from actors.common.llm.model import default_model_path

    print(f"lora base cache: {warm_cache(str(default_model_path()))}")
