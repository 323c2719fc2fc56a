import numpy as np
import pytest

from actors.lora.config import LoraConfig
from actors.lora.core import train_offline
from actors.lora.trainer import IGNORE_INDEX, encode_example
from tests.actors.lora.planted import PLANTED_REASONER, planted_experiences

TINY = LoraConfig(rank=4, alpha=8.0, dropout=0.0, target_modules=("q_proj", "v_proj"), steps_per_round=5, batch_size=4,
                  learning_rate=4e-3, held_out_fraction=0.25, max_eval_examples=12, publish_tolerance=0.0)


@pytest.mark.slow
def test_training_rounds_on_a_planted_task_raise_the_held_out_match_rate(tmp_path):
    experiences = planted_experiences(64)

    reports = train_offline(TINY, PLANTED_REASONER, tmp_path, experiences, rounds=2)

    first, last = reports[0].result, reports[-1].result
    assert last.after >= first.before + 0.5, (first.before, last.after)
    assert reports[-1].version.published and reports[-1].version.path.is_file()
    assert [r.version.version for r in reports] == [1, 2]
    assert (tmp_path / "lora" / "versions" / "v0002" / "metrics.json").is_file()


@pytest.mark.slow
def test_only_answer_tokens_carry_loss():
    from actors.lora.trainer import load_base
    from actors.reasoner.engine import default_model_path

    _, tokenizer = load_base(str(default_model_path()))
    [experience] = planted_experiences(1)

    ids, n_prompt = encode_example(tokenizer, experience.messages, experience.target, max_tokens=1024)

    answer = tokenizer.decode(ids[n_prompt:])
    assert answer == experience.target + tokenizer.eos_token
    assert tokenizer.decode(ids[:n_prompt]).endswith("<|im_start|>assistant\n")
    assert IGNORE_INDEX < 0 and np.all(np.array(ids) >= 0)
