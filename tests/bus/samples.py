"""A sample instance of every message type, built from the type annotations (so new fields are covered)."""

from __future__ import annotations

import msgspec
import numpy as np

from actors.common.actions import N_ACTIONS, OBS_DIM
from bus.codec import _enc_hook


def sample_value(t: msgspec.inspect.Type):
    I = msgspec.inspect
    if isinstance(t, I.IntType):
        return 7
    if isinstance(t, I.FloatType):
        return 0.25
    if isinstance(t, I.StrType):
        return "text é"
    if isinstance(t, I.BoolType):
        return True
    if isinstance(t, I.BytesType):
        return b"\x00\x01"
    if isinstance(t, I.ListType):
        return [sample_value(t.item_type), sample_value(t.item_type)]
    if isinstance(t, I.DictType):
        return {"a": sample_value(t.value_type)}
    if isinstance(t, I.StructType):
        return sample_struct(t.cls)
    if isinstance(t, I.CustomType) and t.cls is np.ndarray:
        return np.arange(2, dtype=np.float32)  # one value per env of the two-env batches lists make
    raise NotImplementedError(f"no sample for {t}")


# Arrays whose shape or dtype a loop message's __post_init__ fixes (bus/messages.py); two envs.
SHAPED_ARRAYS = {
    "obs": lambda: np.arange(2 * OBS_DIM, dtype=np.float32).reshape(2, OBS_DIM),
    "terminal_obs": lambda: np.zeros((2, OBS_DIM), dtype=np.float32),
    "masks": lambda: np.arange(2 * N_ACTIONS).reshape(2, N_ACTIONS) % 2 == 0,
    "probs": lambda: np.full((2, N_ACTIONS), 1 / N_ACTIONS, dtype=np.float32),
}

# Fields whose values a message's __post_init__ restricts to a vocabulary (actors/common/events.py).
VOCABULARY_VALUES = {"kind": lambda: "headline", "importance": lambda: "high"}


def ragged_frames(msg, **changes) -> list[bytes]:
    """The bus frames of ``msg`` with ``changes`` made to its body, bypassing __post_init__ as a buggy sender
    would: for tests that a ragged batch is dropped (counted as dropped_field_type) before any actor sees it."""
    body = msgspec.structs.asdict(msg) | changes
    payload = msgspec.msgpack.encode(body, enc_hook=_enc_hook)
    envelope = msgspec.msgpack.encode([type(msg).__name__, msg.SCHEMA_VERSION, "test", 1, 0, msgspec.Raw(payload)])
    return [msg.TOPIC.encode(), envelope]


def sample_struct(cls):
    info = msgspec.inspect.type_info(cls)
    fixed = SHAPED_ARRAYS | VOCABULARY_VALUES
    return cls(**{f.name: fixed[f.name]() if f.name in fixed else sample_value(f.type) for f in info.fields})
