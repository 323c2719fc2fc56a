"""A cell of an evidence grid and the configuration hash that names it.

A cell is one independent piece of work: a walk-forward fold trained and tested for one seed, the reference
policies on one fold's test window, one ablation variant for one seed, one sweep trial on one validation fold.
Its result is a pure function of the job's payload (config, data, folds) and the cell, so a cell is cached
under ``Cell.key``: the hash of its fields, among them ``config_hash``, which covers the settings, the data and
the code that compute the result.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import msgspec
import numpy as np

ROOT = Path(__file__).resolve().parents[3]
CODE_DIRS = ("actors", "bus", "config", "runtime")
"""The code a cell's result depends on: a change to any of its Python files changes every configuration hash, so
a cached result is never read back after the code that computed it changed."""
VOLATILE_KEYS = {"run": ("name", "runs_dir", "trials_path", "duration_secs"), "logging": None, "dashboard": None}
"""Settings that change where a run writes or what it prints, never a result: left out of the hash (None: the
whole section)."""


@dataclass(frozen=True, order=True)
class Cell:
    kind: str
    """What the cell computes: reference | policy | ensemble (evaluate), ablation-train | ablation-variant, trial."""
    config_hash: str
    seed: int = -1
    fold: int = -1
    budget: int = 0
    """A policy cell: the last budget (it stops at each smaller one of the learning curve on the way)."""
    variant: str = ""
    """An ablation variant's name, or a sweep trial's label."""

    @property
    def key(self) -> str:
        """The cache key: every field, the configuration hash among them."""
        text = json.dumps([self.kind, self.config_hash, self.seed, self.fold, self.budget, self.variant])
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    @property
    def name(self) -> str:
        """How reports and errors name the cell."""
        parts = [self.kind]
        if self.variant:
            parts.append(repr(self.variant))
        if self.fold >= 0:
            parts.append(f"fold {self.fold}")
        if self.seed >= 0:
            parts.append(f"seed {self.seed}")
        if self.budget:
            parts.append(f"{self.budget:,} steps")
        return " ".join(parts)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 over the project's Python sources (path and bytes), computed once a process (~50 ms)."""
    digest = hashlib.sha256()
    for folder in CODE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def settings_of(config) -> dict:
    """The config as plain data, less the settings that never change a result (VOLATILE_KEYS)."""
    plain = msgspec.to_builtins(config)
    for section, keys in VOLATILE_KEYS.items():
        if section not in plain:
            continue
        if keys is None:
            plain.pop(section)
        else:
            for key in keys:
                plain[section].pop(key, None)
    return plain


def array_fingerprint(*arrays: np.ndarray) -> str:
    """sha256 of numpy arrays' bytes (the bars a file market loaded: its settings alone do not say what is in the file)."""
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def config_hash(config, **extra) -> str:
    """The hash of what a cell's result depends on: the settings, ``extra`` (data fingerprint, folds, plan) and the code."""
    text = json.dumps({"settings": settings_of(config), "extra": extra, "code": code_fingerprint()},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]
