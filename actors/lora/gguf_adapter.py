"""GGUF LoRA adapter files that llama.cpp loads with ``lora_path`` (docs/architecture.md, the LoRA trainer).

Layout (what llama.cpp's adapter loader checks):
- metadata ``general.architecture`` = the base model's, ``general.type`` = "adapter",
  ``adapter.type`` = "lora", ``adapter.lora.alpha`` (float32);
- for every adapted base weight ``W`` named e.g. ``blk.0.attn_q.weight``, two float32
  tensors ``blk.0.attn_q.weight.lora_a`` and ``.lora_b``.

Shapes are given here in numpy (row-major) order, the same as PEFT's: ``a`` is
(rank, in_features), ``b`` is (out_features, rank), and the update is
``W + (alpha / rank) * b @ a`` where W is (out_features, in_features). GGUF stores the
reversed order (ggml ``ne``): a base weight reads as [in, out] in gguf.GGUFReader.

Not handled here: mapping Hugging Face module names and the rope row permutation that
llama conversion applies to q/k weights; a trainer exporting PEFT weights must apply
both to ``b`` before calling ``write_lora_adapter``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

LORA_A_SUFFIX = ".lora_a"
LORA_B_SUFFIX = ".lora_b"


@dataclass(frozen=True, slots=True)
class LoraPair:
    a: np.ndarray
    """float32 (rank, in_features)."""
    b: np.ndarray
    """float32 (out_features, rank)."""


@dataclass(frozen=True, slots=True)
class LoraAdapterFile:
    architecture: str
    alpha: float
    pairs: dict[str, LoraPair]
    """Base weight name (``blk.0.attn_q.weight``) -> its pair."""
    metadata: dict[str, str]


@dataclass(frozen=True, slots=True)
class BaseModelInfo:
    architecture: str
    weight_shapes: dict[str, tuple[int, int]]
    """Every 2-D weight: name -> (out_features, in_features)."""
    weight_types: dict[str, str]
    """Every 2-D weight: name -> its ggml type's name (Q4_1, Q8_0, F16, ...): what llama.cpp rounds its inputs to."""


def base_model_info(model_path: str | Path) -> BaseModelInfo:
    """Architecture and weight shapes of a base GGUF (cached: gguf's reader takes ~2 s on the vocab)."""
    path = Path(model_path).resolve()
    return _base_model_info(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _base_model_info(path: str, mtime_ns: int) -> BaseModelInfo:
    from gguf import GGUFReader

    reader = GGUFReader(path)
    weights = [tensor for tensor in reader.tensors if len(tensor.shape) == 2]
    shapes = {tensor.name: (int(tensor.shape[1]), int(tensor.shape[0])) for tensor in weights}
    types = {tensor.name: tensor.tensor_type.name for tensor in weights}
    return BaseModelInfo(_string_field(reader, "general.architecture"), shapes, types)


def write_lora_adapter(
    path: str | Path,
    pairs: Mapping[str, LoraPair],
    *,
    alpha: float,
    architecture: str = "llama",
    base_shapes: Mapping[str, tuple[int, int]] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write a GGUF LoRA adapter; with ``base_shapes`` every pair is checked against its base weight."""
    from gguf import GGUFWriter

    if not pairs:
        raise ValueError("a LoRA adapter needs at least one tensor pair")
    for name, pair in pairs.items():
        _check_pair(name, pair, base_shapes)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    writer = GGUFWriter(str(tmp), arch=architecture)
    try:
        writer.add_string("general.type", "adapter")
        writer.add_string("adapter.type", "lora")
        writer.add_float32("adapter.lora.alpha", float(alpha))
        for key, value in (metadata or {}).items():
            writer.add_string(f"tt.{key}", str(value))
        for name, pair in pairs.items():
            writer.add_tensor(name + LORA_A_SUFFIX, np.ascontiguousarray(pair.a, dtype=np.float32))
            writer.add_tensor(name + LORA_B_SUFFIX, np.ascontiguousarray(pair.b, dtype=np.float32))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    tmp.replace(path)  # a reader never sees a half-written adapter
    return path


def read_lora_adapter(path: str | Path) -> LoraAdapterFile:
    """Read an adapter written by ``write_lora_adapter`` (or llama.cpp's converter) back."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    if _string_field(reader, "general.type") != "adapter" or _string_field(reader, "adapter.type") != "lora":
        raise ValueError(f"{path} is not a GGUF LoRA adapter")
    alpha_field = reader.fields["adapter.lora.alpha"]
    alpha = float(alpha_field.parts[alpha_field.data[0]][0])
    tensors = {t.name: np.array(t.data, dtype=np.float32).reshape([int(d) for d in reversed(t.shape)]) for t in reader.tensors}
    pairs = {
        name[: -len(LORA_A_SUFFIX)]: LoraPair(tensor, tensors[name[: -len(LORA_A_SUFFIX)] + LORA_B_SUFFIX])
        for name, tensor in tensors.items()
        if name.endswith(LORA_A_SUFFIX)
    }
    metadata = {
        key[len("tt."):]: _string_field(reader, key) for key in reader.fields if key.startswith("tt.")
    }
    return LoraAdapterFile(_string_field(reader, "general.architecture"), alpha, pairs, metadata)


def random_lora_adapter(
    base_model_path: str | Path,
    path: str | Path,
    *,
    rank: int = 4,
    alpha: float = 8.0,
    targets: Iterable[str] = ("attn_q", "attn_v"),
    std: float = 0.05,
    seed: int = 0,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """A small valid adapter with random weights on the ``targets`` of every block.

    For tests and benchmarks: it loads wherever a trained one would, and changes the
    model's outputs, so a test can tell which adapter produced a thought.
    """
    base = base_model_info(base_model_path)
    wanted = tuple(targets)
    rng = np.random.default_rng(seed)
    pairs = {
        name: LoraPair(
            rng.normal(0.0, std, size=(rank, in_features)).astype(np.float32),
            rng.normal(0.0, std, size=(out_features, rank)).astype(np.float32),
        )
        for name, (out_features, in_features) in base.weight_shapes.items()
        if name.startswith("blk.") and name.split(".")[2] in wanted
    }
    if not pairs:
        raise ValueError(f"no base weights match targets {wanted}")
    return write_lora_adapter(
        path, pairs, alpha=alpha, architecture=base.architecture, base_shapes=base.weight_shapes, metadata=metadata
    )


def _check_pair(name: str, pair: LoraPair, base_shapes: Mapping[str, tuple[int, int]] | None) -> None:
    if pair.a.ndim != 2 or pair.b.ndim != 2:
        raise ValueError(f"{name}: lora a and b must be 2-D, got {pair.a.shape} and {pair.b.shape}")
    if pair.a.shape[0] != pair.b.shape[1]:
        raise ValueError(f"{name}: rank differs between a {pair.a.shape} and b {pair.b.shape}")
    if base_shapes is None:
        return
    if name not in base_shapes:
        raise ValueError(f"{name}: no such 2-D weight in the base model")
    out_features, in_features = base_shapes[name]
    if pair.a.shape[1] != in_features or pair.b.shape[0] != out_features:
        raise ValueError(
            f"{name}: base weight is (out {out_features}, in {in_features}) but a is {pair.a.shape} and b is {pair.b.shape}"
        )


def _string_field(reader, key: str) -> str:
    field = reader.fields.get(key)
    if field is None:
        raise ValueError(f"GGUF field {key} is missing")
    return bytes(field.parts[field.data[0]]).decode("utf-8")
