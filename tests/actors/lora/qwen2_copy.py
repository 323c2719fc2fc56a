"""A qwen2 GGUF to test "any GGUF by path" with: SmolLM2's own weights rewritten as a qwen2 file.

No qwen2 model ships with the project and nothing is downloaded in tests, so this builds one with the
gguf package: the same tensors and vocabulary under ``general.architecture = qwen2`` (keys
``llama.*`` renamed ``qwen2.*``), the q and k rows put back in the order qwen2's conversion keeps
(llama's conversion permutes them for its rope order; llama.cpp runs qwen2's rope in the NeoX order
instead, so the model computes the same thing), and the zero q/k/v biases a qwen2 block has.
Quantised rows are whole blocks of bytes, so the row permutation works on them as they are.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_ROPE_ROWS = (".attn_q.weight", ".attn_k.weight")


def unpermute_rows(rows: int, n_head: int) -> np.ndarray:
    """Row order that undoes llama conversion's rope permutation (transformers' _reverse_permute_weights)."""
    index = np.arange(rows)
    return index.reshape(n_head, rows // n_head // 2, 2).swapaxes(1, 2).reshape(rows)


def write_qwen2_copy(llama_gguf: str | Path, path: str | Path) -> Path:
    import gguf

    reader = gguf.GGUFReader(str(llama_gguf))
    fields = {f.name: f for f in reader.fields.values()}
    n_head = int(fields["llama.attention.head_count"].contents())
    n_kv_head = int(fields["llama.attention.head_count_kv"].contents())
    writer = gguf.GGUFWriter(str(path), "qwen2")
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        name = "qwen2." + field.name[len("llama."):] if field.name.startswith("llama.") else field.name
        writer.add_key_value(name, field.contents(), kind, sub_type=sub)
    tensors = []
    for tensor in reader.tensors:
        data = np.asarray(tensor.data)
        if tensor.name.endswith(_ROPE_ROWS):
            heads = n_head if ".attn_q." in tensor.name else n_kv_head
            data = data[unpermute_rows(data.shape[0], heads)]
        tensors.append((tensor.name, data, tensor.tensor_type))
        if tensor.name.endswith((".attn_q.weight", ".attn_k.weight", ".attn_v.weight")):
            out_features = int(tensor.shape[1])
            tensors.append((tensor.name.replace(".weight", ".bias"), np.zeros(out_features, np.float32), gguf.GGMLQuantizationType.F32))
    for name, data, kind in tensors:
        raw_shape = data.shape if kind != gguf.GGMLQuantizationType.F32 else None
        writer.add_tensor(name, np.ascontiguousarray(data), raw_shape=raw_shape, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return Path(path)
