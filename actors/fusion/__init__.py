"""The fusion actor: combines the policy's proposal with the LLM's freshest thought (rules or a network).

What a job needs from this package (no torch import): where a run saved its trained fusion network.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["MODEL_FILE_NAME", "SAVE_DIR_NAME", "saved_model_path", "trained_model_path"]

SAVE_DIR_NAME = "fusion"
"""The fusion actor saves its network under <run dir>/fusion/ ..."""
MODEL_FILE_NAME = "fusion_network.pt"
"""... as this file (what fusion.model_path points at to start from it)."""


def saved_model_path(run_dir: Path | str) -> Path:
    """Where the fusion actor of the run in ``run_dir`` saves (and after a restart reloads) its network."""
    return Path(run_dir) / SAVE_DIR_NAME / MODEL_FILE_NAME


def trained_model_path(run_dir: Path | str) -> Path | None:
    """The network a finished run saved, or None (rule fusion, or a network that never trained)."""
    path = saved_model_path(run_dir)
    return path if path.is_file() else None
