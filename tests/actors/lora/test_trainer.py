import dataclasses

import msgspec
import numpy as np
import pytest

from actors.common.llm.model import default_model_path
from actors.lora.config import LoraConfig
from actors.lora.trainer import IGNORE_INDEX, LoraTrainer, encode_example, prompt_ids, shared_prefix_length
from tests.actors.lora.planted import planted_experiences

TINY = LoraConfig(rank=4, alpha=8.0, dropout=0.0, target_modules=("q_proj", "v_proj"), steps_per_round=5, batch_size=4,
                  learning_rate=4e-3, held_out_fraction=0.25, max_eval_examples=12, publish_z=1.0)


@pytest.mark.slow
@pytest.mark.timeout(900)  # the first of the two pays for trend_rounds' training (about 5 minutes at load 11)
def test_training_rounds_on_a_planted_task_raise_the_held_out_match_rate(trend_rounds):
    """Two rounds of ``bin/run lora --experiences`` (train_offline) on the trend task (tests/actors/lora/conftest.py,
    shared with test_llama_match.py: one training for both)."""
    reports, run_dir = trend_rounds.reports, trend_rounds.run_dir

    first, last = reports[0].result, reports[-1].result
    assert last.after >= 0.9 and last.after >= first.before + 0.3, (first.before, last.after)
    published = [r.version for r in reports if r.version.published]
    assert published and published[-1].path.is_file()  # a later round no better than the published one is not published
    assert [r.version.version for r in reports] == [1, 2]
    assert (run_dir / "lora" / "versions" / "v0002" / "metrics.json").is_file()

    # The reasoner's own path moves the same way: llama.cpp, the decide grammar, the parser, and the published
    # adapter hot-swapped into the live context, on held-out prompts the trainer never trained on.
    labels = [e.action for e in trend_rounds.held_out]
    before, after = match_rate(trend_rounds.llama_base, labels), match_rate(trend_rounds.llama_published, labels)
    assert trend_rounds.published_loaded == published[-1].version
    print(f"reasoner match rate on held-out trend prompts: {before:.2f} -> {after:.2f}")
    assert after >= before + 0.25 and after >= 0.8, (before, after)


def match_rate(answers, labels) -> float:
    return float(np.mean([a == y for a, y in zip(answers, labels)]))


@pytest.mark.slow
def test_the_shared_prefix_cache_changes_neither_the_loss_nor_the_decisions():
    import torch

    experiences = planted_experiences(6, seed=3)
    trainer = LoraTrainer(msgspec.structs.replace(TINY, cache_shared_prefix=False), default_model_path())
    rows = [prompt_ids(trainer.tokenizer, e.messages) for e in experiences]
    assert 0 < shared_prefix_length(rows) < min(len(r) for r in rows)

    def loss_and_decisions(cached: bool):
        trainer.config = msgspec.structs.replace(trainer.config, cache_shared_prefix=cached)
        with torch.no_grad():
            loss, tokens = trainer._loss(experiences)
        return float(loss), tokens, trainer.decisions([(e.messages, e.mask) for e in experiences])

    plain, cached = loss_and_decisions(False), loss_and_decisions(True)
    assert cached[0] == pytest.approx(plain[0], rel=1e-4)
    assert cached[1:] == plain[1:]
    with torch.no_grad():  # the batched next-token logits are those of a whole forward pass
        whole = trainer.model(input_ids=torch.tensor([rows[1]])).logits[0, -1]
    np.testing.assert_allclose(trainer._next_token_logits(rows)[1].numpy(), whole.numpy(), rtol=1e-3, atol=1e-3)


def test_the_shared_prefix_leaves_every_row_its_last_token():
    assert shared_prefix_length([[1, 2, 3, 4], [1, 2, 3, 5, 6]]) == 3
    assert shared_prefix_length([[1, 2, 3], [1, 2, 3, 4]]) == 2  # the shorter row keeps its last token
    assert shared_prefix_length([[1, 2], [9, 2]]) == 0
    assert shared_prefix_length([[5, 6, 7]]) == 2
    assert shared_prefix_length([]) == 0


@pytest.mark.slow
def test_only_answer_tokens_carry_loss():
    from actors.lora.base_model import load_base

    _, tokenizer = load_base(str(default_model_path()))
    [experience] = planted_experiences(1)

    ids, n_prompt = encode_example(tokenizer, experience.messages, experience.target, max_tokens=1024)

    answer = tokenizer.decode(ids[n_prompt:])
    assert answer == experience.target + tokenizer.eos_token
    assert tokenizer.decode(ids[:n_prompt]).endswith("<|im_start|>assistant\n")
    assert IGNORE_INDEX < 0 and np.all(np.array(ids) >= 0)


@pytest.mark.slow
def test_the_dequantised_base_is_kept_on_disk_and_reads_back_the_same_tokenizer(tmp_path):
    from transformers import AutoTokenizer

    from actors.lora.base_model import dequantised_folder, load_base

    gguf = default_model_path()
    _, tokenizer = load_base(str(gguf))  # the default cache: the suite's other trainers read it too
    folder = dequantised_folder(str(gguf))
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    [experience] = planted_experiences(1)
    from_gguf = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    assert prompt_ids(from_gguf, experience.messages) == prompt_ids(tokenizer, experience.messages)
    assert dequantised_folder(str(gguf), str(tmp_path)).parent == tmp_path  # lora.base_cache_dir moves it
    assert dequantised_folder(str(gguf)) == folder  # the key is stable


@pytest.mark.slow
def test_the_action_loss_adds_the_cross_entropy_of_the_target_among_the_allowed_actions_first_tokens():
    import torch

    experiences = planted_experiences(3, seed=5)
    experiences[2] = dataclasses.replace(experiences[2], mask=(True, False, True, False, False, False))  # BUY not allowed
    # The plain float32 model: the action loss is the same sum in llama.cpp's arithmetic (mirror_llama_arithmetic), which
    # only makes each forward pass several times slower.
    trainer = LoraTrainer(msgspec.structs.replace(TINY, action_loss_weight=0.0, text_loss_weight=1.0, mirror_llama_arithmetic=False),
                          default_model_path())

    def loss(weight: float, text_weight: float = 1.0) -> float:
        trainer.config = msgspec.structs.replace(trainer.config, action_loss_weight=weight, text_loss_weight=text_weight)
        with torch.no_grad():
            return float(trainer._loss(experiences)[0])

    expected = []
    for e in experiences[:2]:  # the third's target (BUY) is not among its allowed actions: it teaches no choice
        with torch.no_grad():
            logits = trainer.model(input_ids=torch.tensor([prompt_ids(trainer.tokenizer, e.messages)])).logits[0, -1]
        firsts = [trainer._action_tokens[a][0] for a in (0, 1, 2)]  # HOLD, BUY, SELL are allowed
        expected.append(-float(torch.log_softmax(logits[firsts], dim=0)[e.action]))
    assert loss(2.0) - loss(0.0) == pytest.approx(2.0 * np.mean(expected), rel=1e-3)
    assert loss(2.0, text_weight=0.0) == pytest.approx(2.0 * np.mean(expected), rel=1e-3)  # the choice alone
    assert loss(0.0, text_weight=0.5) == pytest.approx(0.5 * loss(0.0), rel=1e-5)
