"""The trainer's forward pass in llama.cpp's arithmetic, so that what peft learns and measures is what the reasoner answers.

transformers runs the GGUF dequantised to float32. llama.cpp does not: before it multiplies a quantised weight
(Q4_1 in the shipped SmolLM2, Q8_0 for its tied output) it rounds the activations to 8-bit integers in blocks of 32
(one half-precision scale a block; blocks of 256 for k-quants), and it keeps keys and values in a half-precision
cache. Small as each rounding is, they add up over 30 layers, and on prompts that share most of their tokens they add
up the same way: with a trained adapter llama.cpp's BUY-SELL margin sat 0.22 below peft's on average (sd 0.11, 30
held-out prompts), enough to flip the close calls to SELL (held-out match 0.650 in peft, 0.570 through llama.cpp).
With this mirror the mean difference was 0.05.

``mirror_llama_arithmetic`` hooks a peft (or plain transformers) model so that every linear layer whose GGUF weight
is quantised first rounds its input the way llama.cpp would, and keys and values leave their projections rounded to
half precision. The rounding passes gradients straight through (its derivative is taken as 1), so training sees the
quantised forward pass and learns margins that survive it. The LoRA matrices are float32 in the exported adapter and
llama.cpp multiplies them in float32: their input is not rounded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from actors.lora.export import gguf_name_map
from actors.lora.gguf_adapter import base_model_info

BLOCK_32_TYPES = frozenset({"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "IQ4_NL", "MXFP4"})
"""Weight types whose dot product takes activations as Q8_0 / Q8_1 blocks: 32 values, a half-precision scale."""
BLOCK_256_TYPES = frozenset({"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS",
                             "IQ3_S", "IQ1_S", "IQ1_M", "IQ4_XS", "TQ1_0", "TQ2_0"})
"""k-quants and their kin: activations as Q8_K blocks of 256 values with a float32 scale."""
KV_CACHE_MODULES = ("k_proj", "v_proj")
"""Their outputs are what llama.cpp's cache holds, in half precision (llama-cpp-python's default type_k / type_v)."""


def round_to_int8_blocks(x, block: int, half_scale: bool):
    """``x`` as llama.cpp's quantize_row_q8 leaves it: per block of ``block`` values along the last axis,
    scale = max |x| / 127 (rounded to half precision when ``half_scale``), values round(x / scale) * scale."""
    import torch

    shape = x.shape
    blocks = x.reshape(*shape[:-1], shape[-1] // block, block)
    scale = blocks.abs().amax(dim=-1, keepdim=True) / 127.0
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    stored = scale.half().float() if half_scale else scale
    return (torch.round(blocks / safe) * stored).reshape(shape)


def activation_rounding(weight_type: str, in_features: int) -> Callable | None:
    """How llama.cpp rounds the input of a weight of ``weight_type`` (a ggml type name); None: it does not."""
    import torch

    if weight_type in BLOCK_32_TYPES and in_features % 32 == 0:
        return lambda x: round_to_int8_blocks(x, 32, True)
    if weight_type in BLOCK_256_TYPES and in_features % 256 == 0:
        return lambda x: round_to_int8_blocks(x, 256, False)
    if weight_type == "F16":
        return lambda x: x.to(torch.float16).to(x.dtype)
    if weight_type == "BF16":
        return lambda x: x.to(torch.bfloat16).to(x.dtype)
    return None


def straight_through(rounding: Callable):
    """``rounding`` in the forward pass, the identity in the backward pass."""
    return lambda x: x + (rounding(x) - x).detach()


def mirror_llama_arithmetic(model, base_gguf: str | Path) -> int:
    """Hook ``model`` (a transformers causal LM of ``base_gguf``, peft-wrapped or not) to round as llama.cpp does;
    returns how many layers were hooked. Linear layers the GGUF has no quantised weight for stay as they are."""
    import torch

    info = base_model_info(base_gguf)
    name_map = gguf_name_map(info.architecture, model.config.num_hidden_layers)
    hooked = 0
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear) or ".lora_" in name:
            continue
        weight = _gguf_weight(_hf_name(name), name_map, info.weight_types)
        rounding = activation_rounding(info.weight_types.get(weight, "F32"), module.in_features) if weight else None
        if rounding is not None:
            module.register_forward_pre_hook(_rounded_input(straight_through(rounding)))
            hooked += 1
    for name, module in model.named_modules():  # the peft wrapper where there is one: its output includes the LoRA update
        if name.endswith(KV_CACHE_MODULES) and not name.endswith(".base_layer"):
            module.register_forward_hook(_rounded_output(straight_through(activation_rounding("F16", 0))))
    return hooked


def _hf_name(module_name: str) -> str:
    """``base_model.model.model.layers.3.self_attn.q_proj.base_layer`` -> ``model.layers.3.self_attn.q_proj``."""
    name = module_name.removesuffix(".base_layer")
    while name.startswith("base_model.model."):
        name = name.removeprefix("base_model.model.")
    return name


def _gguf_weight(hf_name: str, name_map, weight_types: dict[str, str]) -> str | None:
    weight = name_map.get_name(hf_name + ".weight", try_suffixes=(".weight",))
    if weight == "output.weight" and weight not in weight_types:
        return "token_embd.weight"  # tied embeddings: llama.cpp multiplies by the token embedding
    return weight


def _rounded_input(rounding: Callable):
    return lambda _module, args: (rounding(args[0]), *args[1:])


def _rounded_output(rounding: Callable):
    return lambda _module, _args, output: rounding(output)
