"""PEFT LoRA weights -> a GGUF LoRA adapter that llama.cpp applies to the original GGUF.

Three things make the exported update equal to the trained one:
- names: each Hugging Face module (``model.layers.3.self_attn.q_proj``) maps to its GGUF
  weight (``blk.3.attn_q.weight``) through gguf's own tensor name map;
- layout: PEFT's ``lora_A.weight`` is (rank, in) and ``lora_B.weight`` (out, rank), the
  numpy order gguf_adapter.write_lora_adapter takes; llama.cpp computes
  ``W x + (alpha / rank) * B (A x)`` like PEFT, so alpha is written as is and no scale is folded in;
- rope rows: llama's GGUF conversion permutes the output rows of q and k (interleaved ->
  halves) and transformers undoes it on loading, so the HF-side update must get the same
  row permutation before it meets the GGUF's weights: applied to B (the rows of B @ A).
  Only for a ``llama`` file: qwen2's conversion keeps q and k as they are (llama.cpp runs its
  rope in the NeoX order instead), and transformers un-permutes only ``llama`` files.

The architecture (name map, permutation) is read from the base GGUF, never assumed.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from actors.lora.gguf_adapter import LoraPair, base_model_info, write_lora_adapter

ROPE_PERMUTED_ARCHITECTURES = ("llama",)
"""GGUF architectures whose q/k rows the conversion permutes (transformers' GGUF loader un-permutes these only)."""

_MODULE = re.compile(r"(model\.layers\.(\d+)\.(?:self_attn|mlp)\.(\w+))\.lora_([AB])\.")


def permute_rope_rows(weight: np.ndarray, n_head: int) -> np.ndarray:
    """The row permutation llama.cpp's convert_hf_to_gguf applies to q (n_head) and k (n_kv_head) weights."""
    rows = weight.shape[0]
    return (weight.reshape(n_head, 2, rows // n_head // 2, *weight.shape[1:])
            .swapaxes(1, 2)
            .reshape(weight.shape))


def peft_pairs(state: dict, *, n_layers: int, n_head: int, n_kv_head: int, architecture: str = "llama") -> dict[str, LoraPair]:
    """GGUF weight name -> (A, B) from a PEFT LoRA state dict (``get_peft_model_state_dict`` or named parameters),
    for a base GGUF of ``architecture`` (its ``general.architecture``)."""
    name_map = gguf_name_map(architecture, n_layers)
    permute = architecture in ROPE_PERMUTED_ARCHITECTURES
    halves: dict[str, dict[str, np.ndarray]] = {}
    for key, tensor in state.items():
        match = _MODULE.search(key)
        if match is None:
            continue
        halves.setdefault(match.group(1), {})[match.group(4)] = tensor.detach().float().cpu().numpy()
    pairs = {}
    for module, ab in halves.items():
        gguf_name = name_map.get_name(module + ".weight", try_suffixes=(".weight",))
        if gguf_name is None:
            raise ValueError(f"gguf's tensor name map knows no {module}")
        b = ab["B"]
        if permute and module.endswith("q_proj"):
            b = permute_rope_rows(b, n_head)
        elif permute and module.endswith("k_proj"):
            b = permute_rope_rows(b, n_kv_head)
        pairs[gguf_name] = LoraPair(np.ascontiguousarray(ab["A"], np.float32), np.ascontiguousarray(b, np.float32))
    return pairs


def export_peft_adapter(peft_model, base_gguf: str | Path, path: str | Path, *, alpha: float,
                        metadata: dict[str, str] | None = None) -> Path:
    """Write the PEFT model's LoRA weights as a GGUF adapter for ``base_gguf`` (shapes checked against it)."""
    config = peft_model.base_model.model.config
    state = {name: param for name, param in peft_model.named_parameters() if ".lora_" in name}
    base = base_model_info(base_gguf)
    pairs = peft_pairs(state, n_layers=config.num_hidden_layers, n_head=config.num_attention_heads,
                       n_kv_head=config.num_key_value_heads, architecture=base.architecture)
    return write_lora_adapter(path, pairs, alpha=alpha, architecture=base.architecture,
                              base_shapes=base.weight_shapes, metadata=metadata)


def gguf_name_map(architecture: str, n_layers: int):
    """gguf's Hugging Face -> GGUF tensor name map of ``architecture``; a clear error for one gguf does not know."""
    import gguf

    known = {name: arch for arch, name in gguf.MODEL_ARCH_NAMES.items()}
    if architecture not in known:
        raise ValueError(f"the base GGUF's architecture {architecture!r} is unknown to the gguf package: no LoRA export for it")
    return gguf.get_tensor_name_map(known[architecture], n_layers)
