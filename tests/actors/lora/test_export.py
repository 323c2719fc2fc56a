"""The exported GGUF adapter does in llama.cpp what the PEFT adapter does in transformers.

Greedy tokens cannot be compared one for one: llama.cpp runs the Q4_1 base with its own
kernels (activations quantised to 8 bits) while transformers runs the dequantised float32
weights, and even the two BASE models part ways after a few greedy tokens on this prompt.
So the test compares logits over every prompt position, against that base-vs-base gap:
- the adapter's effect (adapted - base logits) in llama.cpp correlates > 0.85 with its
  effect in transformers (a wrong export, e.g. without the q/k rope row permutation,
  measured 0.33; the right one 0.93);
- the adapted models differ from each other by at most the base-vs-base gap plus 40% of
  the adapter's own effect (mean |logit difference|).
"""

import numpy as np
import pytest

from actors.lora.export import peft_pairs, permute_rope_rows

PROMPT = [{"role": "user", "content": "Name a colour and a fruit."}]


def test_the_rope_permutation_interleaves_each_heads_halves():
    rows = np.arange(8, dtype=np.float32)[:, None]  # one head of 8 rows: 0..3 first half, 4..7 second

    permuted = permute_rope_rows(rows, n_head=1)

    assert permuted[:, 0].tolist() == [0, 4, 1, 5, 2, 6, 3, 7]


def test_peft_names_map_to_gguf_names_and_b_of_v_is_untouched():
    import torch

    a, b = torch.randn(2, 576), torch.randn(192, 2)
    state = {"base_model.model.model.layers.3.self_attn.v_proj.lora_A.default.weight": a,
             "base_model.model.model.layers.3.self_attn.v_proj.lora_B.default.weight": b}

    pairs = peft_pairs(state, n_layers=30, n_head=9, n_kv_head=3)

    assert list(pairs) == ["blk.3.attn_v.weight"]
    np.testing.assert_array_equal(pairs["blk.3.attn_v.weight"].b, b.numpy())


@pytest.fixture(scope="module")
def qwen2_gguf(tmp_path_factory):
    """SmolLM2 rewritten as a qwen2 GGUF (tests/actors/lora/qwen2_copy.py), and a folder for its dequantised copy
    (not the user's cache: every run writes a new file)."""
    from actors.common.llm.model import default_model_path
    from tests.actors.lora.qwen2_copy import write_qwen2_copy

    folder = tmp_path_factory.mktemp("qwen2")
    return write_qwen2_copy(default_model_path(), folder / "smollm2-qwen2.gguf"), str(folder / "base")


@pytest.mark.slow
def test_a_qwen2_file_is_read_as_qwen2_by_llama_cpp_and_transformers_and_computes_the_same(qwen2_gguf):
    import torch

    from actors.common.llm.model import default_model_path, open_llama
    from actors.lora.base_model import load_base
    from actors.lora.trainer import prompt_ids

    def llama_cpp(path):
        llm = open_llama(model_path=str(path), n_ctx=256, logits_all=True, verbose=False)
        try:
            llm.eval(llm.tokenize(b"The capital of France is", add_bos=False))
            return llm.metadata.get("general.architecture"), np.array(llm.scores[: llm.n_tokens])
        finally:
            llm.close()

    path, cache_dir = qwen2_gguf
    (arch, qwen2_logits), (_, llama_logits) = llama_cpp(path), llama_cpp(default_model_path())
    assert arch == "qwen2"
    np.testing.assert_allclose(qwen2_logits, llama_logits, atol=1e-3)
    qwen2, tokenizer = load_base(str(path), "cpu", cache_dir)
    llama, _ = load_base.__wrapped__(str(default_model_path()))  # not the cached one: a trainer may have wrapped and hooked it
    ids = torch.tensor([prompt_ids(tokenizer, PROMPT)])
    assert type(qwen2).__name__ == "Qwen2ForCausalLM"
    with torch.no_grad():
        np.testing.assert_allclose(qwen2(input_ids=ids).logits.numpy(), llama(input_ids=ids).logits.numpy(), atol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ["llama", "qwen2"])
def test_llama_cpp_with_the_exported_adapter_moves_logits_like_peft(tmp_path, architecture, request):
    import torch
    from actors.common.llm.model import open_llama

    from actors.lora.config import LoraConfig
    from actors.lora.trainer import LoraTrainer, prompt_ids
    from actors.common.llm.model import default_model_path

    model_path, cache_dir = (default_model_path(), "") if architecture == "llama" else request.getfixturevalue("qwen2_gguf")
    trainer = LoraTrainer(LoraConfig(rank=4, alpha=8.0, target_modules=("q_proj", "k_proj", "v_proj"),
                                     base_cache_dir=cache_dir), model_path)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # a trained-looking adapter: PEFT starts B at zero
        for name, param in trainer.model.named_parameters():
            if "lora_B" in name:
                param.copy_(torch.randn(param.shape, generator=generator) * 0.15)
    adapter = trainer.export(tmp_path / "adapter.gguf")
    ids = prompt_ids(trainer.tokenizer, PROMPT)

    def transformers_logits(adapted: bool) -> np.ndarray:
        with torch.no_grad():
            if adapted:
                return trainer.model(input_ids=torch.tensor([ids])).logits[0].numpy()
            with trainer.model.disable_adapter():
                return trainer.model(input_ids=torch.tensor([ids])).logits[0].numpy()

    def llama_logits(lora_path: str | None) -> np.ndarray:
        llm = open_llama(model_path=str(model_path), lora_path=lora_path, n_ctx=512, logits_all=True, verbose=False)
        try:
            llm.eval(ids)
            return np.array(llm.scores[: llm.n_tokens])
        finally:
            llm.close()

    hf_base, hf_adapted = transformers_logits(False), transformers_logits(True)
    ll_base, ll_adapted = llama_logits(None), llama_logits(str(adapter))

    base_gap = np.abs(hf_base - ll_base).mean()
    effect = np.abs(hf_adapted - hf_base).mean()
    adapted_gap = np.abs(hf_adapted - ll_adapted).mean()
    correlation = np.corrcoef((hf_adapted - hf_base).ravel(), (ll_adapted - ll_base).ravel())[0, 1]
    assert effect > 2 * base_gap, (effect, base_gap)  # the adapter matters more than the quantisation noise
    assert correlation > 0.85, correlation
    assert adapted_gap <= base_gap + 0.4 * effect, (adapted_gap, base_gap, effect)
    assert int(hf_adapted[-1].argmax()) == int(ll_adapted[-1].argmax())  # the first greedy token agrees


def test_a_qwen2_base_keeps_q_and_k_rows_unpermuted_and_an_unknown_architecture_is_refused():
    import torch

    a, b = torch.randn(2, 64), torch.randn(64, 2)
    state = {"base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight": a,
             "base_model.model.model.layers.0.self_attn.q_proj.lora_B.default.weight": b}

    llama = peft_pairs(state, n_layers=1, n_head=4, n_kv_head=2, architecture="llama")
    qwen2 = peft_pairs(state, n_layers=1, n_head=4, n_kv_head=2, architecture="qwen2")

    np.testing.assert_array_equal(qwen2["blk.0.attn_q.weight"].b, b.numpy())  # qwen2's conversion leaves q/k as they are
    np.testing.assert_array_equal(llama["blk.0.attn_q.weight"].b, permute_rope_rows(b.numpy(), 4))
    with pytest.raises(ValueError, match="no-such-arch"):
        peft_pairs(state, n_layers=1, n_head=4, n_kv_head=2, architecture="no-such-arch")
