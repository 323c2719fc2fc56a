"""The checks a batched loop message runs on itself (bus/messages.py), each naming the message and field at fault.

A batch carries one entry per env id in every per-env list and array; a ragged one must never reach an actor. The
messages compare shapes in one expression on the hot path and call these only when that fails, so the ValueError
(a ``field_type`` drop on decode) says which field of which message was off and how.
"""

from __future__ import annotations

from collections.abc import Sized

import numpy as np

FLOAT32, BOOL = np.dtype("float32"), np.dtype("bool")
"""The dtypes the hot path compares against (made once: a message is checked by its sender and each subscriber)."""


def require_array(message: str, field: str, array: np.ndarray, shape: tuple[int, ...], dtype: str | None = None) -> None:
    """``array`` has exactly ``shape`` (and ``dtype`` when given); ValueError naming the field otherwise."""
    if array.shape != shape:
        raise ValueError(f"{message}.{field}: shape {array.shape}, expected {shape}")
    if dtype is not None and array.dtype != np.dtype(dtype):
        raise ValueError(f"{message}.{field}: dtype {array.dtype}, expected {dtype}")


def require_rows(message: str, n: int, optional: tuple[str, ...] = (), **per_env: Sized) -> None:
    """Each per-env list has one entry per env id; the ``optional`` ones may also be empty (sender does not fill them)."""
    for field, values in per_env.items():
        rows = len(values)
        if rows != n and not (rows == 0 and field in optional):
            raise ValueError(f"{message}.{field}: {rows} entries for {n} env_ids")


def require_vectors(message: str, n: int, **per_env: np.ndarray) -> None:
    for field, array in per_env.items():
        require_array(message, field, array, (n,))
