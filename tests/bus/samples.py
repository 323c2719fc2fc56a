"""A sample instance of every message type, built from the type annotations (so new fields are covered)."""

from __future__ import annotations

import msgspec
import numpy as np


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
        return np.arange(12, dtype=np.float32).reshape(2, 6)
    raise NotImplementedError(f"no sample for {t}")


def sample_struct(cls):
    info = msgspec.inspect.type_info(cls)
    return cls(**{f.name: sample_value(f.type) for f in info.fields})
