"""Load, merge and validate the whole configuration as the root ``Config`` (config/schema.py).

Order: config/default.toml, then the user's file, then ``--set section.key=value`` overrides; the merging and
the errors are config/tree.py's. This module and config/schema.py are the composition root: the jobs import
them, runtime/ does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from config import tree as _tree
from config.schema import Config
from config.tree import (  # noqa: F401  (the loader's names, as before)
    DEFAULT_CONFIG_PATH,
    ConfigError,
    config_to_dict,
    dump_toml,
    key_from_validation_error,
    merge_into,
    parse_override,
    read_toml,
    set_dotted,
)


def validate(tree: Mapping[str, Any], sources: Mapping[str, str]) -> Config:
    return _tree.validate(tree, sources, Config)


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | list[str] | None = None) -> Config:
    """Default config, then ``path``, then overrides (``{"env.n_envs": 2}`` or ``["env.n_envs=2"]``)."""
    return _tree.load_settings(Config, path, overrides)


def load_resolved(path: str | Path) -> Config:
    """Read a run directory's resolved config (already merged) and validate it."""
    return _tree.load_resolved(path, Config)
