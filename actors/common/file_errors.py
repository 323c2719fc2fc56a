"""One error for a user's file that cannot be used, naming the file, the row (or line) and the field at fault.

The bar loader (actors/common/bar_formats.py, ``DataError``) and the event loader (actors/common/event_files.py,
``EventFileError``) refuse bad input the same way, so the place is written once here: ``path, row 3, column 'close':
problem``. Each loader keeps its own class (callers catch them apart) and its own word for the field.
"""

from __future__ import annotations

from pathlib import Path


class FileError(ValueError):
    """A file that cannot be used; ``path``, ``row`` and ``field`` say where (None: not at one row or field)."""

    FIELD_WORD = "field"
    """How the message names the field: a bar file's is a column, an event file's a field."""

    def __init__(self, path: str | Path, problem: str, *, row: int | None = None, field: str | None = None,
                 unit: str = "row") -> None:
        self.path, self.row, self.field = str(path), row, field
        where = [self.path]
        if row is not None:
            where.append(f"{unit} {row}")
        if field is not None:
            where.append(f"{self.FIELD_WORD} {field!r}")
        super().__init__(", ".join(where) + ": " + problem)
