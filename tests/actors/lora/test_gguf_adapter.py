import numpy as np
import pytest

from actors.lora.gguf_adapter import (
    LoraPair,
    base_model_info,
    random_lora_adapter,
    read_lora_adapter,
    write_lora_adapter,
)
from actors.common.llm.model import default_model_path
from actors.reasoner.engine import LlamaEngine

Q_SHAPE = {"blk.0.attn_q.weight": (576, 576), "blk.0.attn_k.weight": (192, 576)}


def pair(out_features, in_features, rank=2, seed=0):
    rng = np.random.default_rng(seed)
    return LoraPair(rng.normal(size=(rank, in_features)).astype(np.float32),
                    rng.normal(size=(out_features, rank)).astype(np.float32))


def test_an_adapter_reads_back_with_its_alpha_tensors_and_metadata(tmp_path):
    pairs = {"blk.0.attn_q.weight": pair(576, 576), "blk.0.attn_k.weight": pair(192, 576, seed=1)}

    path = write_lora_adapter(tmp_path / "a.gguf", pairs, alpha=16.0, base_shapes=Q_SHAPE, metadata={"version": "7"})
    back = read_lora_adapter(path)

    assert (back.architecture, back.alpha, back.metadata) == ("llama", 16.0, {"version": "7"})
    assert set(back.pairs) == set(pairs)
    for name, original in pairs.items():
        np.testing.assert_array_equal(back.pairs[name].a, original.a)
        np.testing.assert_array_equal(back.pairs[name].b, original.b)


def test_a_pair_that_does_not_fit_its_base_weight_is_rejected_naming_it(tmp_path):
    with pytest.raises(ValueError, match="blk.0.attn_k.weight"):
        write_lora_adapter(tmp_path / "bad.gguf", {"blk.0.attn_k.weight": pair(576, 576)}, alpha=8.0, base_shapes=Q_SHAPE)
    assert not (tmp_path / "bad.gguf").exists()


def test_mismatched_ranks_are_rejected(tmp_path):
    bad = LoraPair(np.zeros((2, 576), np.float32), np.zeros((576, 3), np.float32))

    with pytest.raises(ValueError, match="rank"):
        write_lora_adapter(tmp_path / "bad.gguf", {"blk.0.attn_q.weight": bad}, alpha=8.0)


def test_the_base_model_info_gives_smollm2_shapes_as_out_by_in():
    info = base_model_info(default_model_path())

    assert info.architecture == "llama"
    assert info.weight_shapes["blk.0.attn_k.weight"] == (192, 576)
    assert info.weight_shapes["blk.29.ffn_down.weight"] == (576, 1536)


@pytest.mark.slow
def test_a_written_adapter_loads_in_llama_cpp_and_changes_its_answer(tmp_path):
    adapter = random_lora_adapter(default_model_path(), tmp_path / "random.gguf", rank=4, alpha=8.0, std=0.05)
    engine = LlamaEngine(model_path=str(default_model_path()), n_ctx=512, temperature=0.0)
    question = [{"role": "user", "content": "Name a colour and a fruit."}]
    try:
        base_answer = engine.chat(question, max_tokens=16).text
        engine.load_adapter(str(adapter), version=5)
        adapted_answer = engine.chat(question, max_tokens=16).text
    finally:
        engine.close()

    assert engine.adapter_version == 5
    assert adapted_answer != base_answer
