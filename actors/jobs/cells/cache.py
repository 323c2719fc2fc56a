"""Finished cells on disk, one pickle per cell key, so a rerun (or a resumed, interrupted run) skips them.

Pickle, not JSON: a cell's result holds numpy arrays, trades and policy checkpoints, and it is read back only
by this project's own code from its own runs directory.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from actors.jobs.cells.cell import Cell


class CellCache:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, cell: Cell) -> Path:
        return self.directory / f"{cell.kind}-{cell.key}.pkl"

    def get(self, cell: Cell):
        """The cached record of ``cell``, or None (absent, or unreadable: then the cell runs again)."""
        path = self.path(cell)
        try:
            with open(path, "rb") as handle:
                return pickle.load(handle)
        except FileNotFoundError:
            return None
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            return None  # a torn or stale file costs a rerun of the cell, never a wrong result

    def put(self, cell: Cell, record) -> None:
        """Write atomically: a crash mid-write leaves no half file to read back."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.path(cell)
        temp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        with open(temp, "wb") as handle:
            pickle.dump(record, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, final)
