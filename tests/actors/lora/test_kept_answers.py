"""The kept weights' answers, one helper for both round kinds (actors/lora/trainer.py `_kept_answers` / `_keep`):
evaluated with the kept weights swapped in, remembered per kind, and all forgotten when other weights are kept."""

from __future__ import annotations

from actors.lora.trainer import LoraTrainer
from tests.actors.lora.planted import planted_experiences


def _bare_trainer():
    """A trainer's weight bookkeeping without a model: one parameter, the kept value 1.0, training at 5.0."""
    import torch

    trainer = object.__new__(LoraTrainer)
    trainer._params = [torch.tensor([5.0])]
    trainer._kept = [torch.tensor([1.0])]
    trainer._kept_memo = {}
    return trainer


def test_the_kept_answers_are_evaluated_with_the_kept_weights_and_remembered_per_kind_until_a_publication():
    trainer = _bare_trainer()
    prompts = planted_experiences(2, seed=1)
    seen: list[float] = []

    def weight_seen(experiences):  # answers: the weight the evaluation ran with
        seen.append(float(trainer._params[0][0]))
        return [int(seen[-1])] * len(experiences)

    assert trainer._kept_answers("actions", prompts, weight_seen) == [1, 1]
    assert float(trainer._params[0][0]) == 5.0, "the training weights come back after the evaluation"
    assert trainer._kept_answers("actions", prompts, weight_seen) == [1, 1] and len(seen) == 1, "remembered"
    assert trainer._kept_answers("levels", prompts, weight_seen) == [1, 1] and len(seen) == 2, "another kind: evaluated"
    trainer._kept_answers("actions", prompts[:1], weight_seen)
    assert len(seen) == 3, "other prompts: evaluated"
    trainer._kept_answers("actions", prompts, weight_seen)
    assert len(seen) == 4

    trainer._keep("levels", prompts, [2, 0])  # the training weights (5.0) published with their levels
    assert float(trainer._kept[0][0]) == 5.0
    assert trainer._kept_answers("levels", prompts, weight_seen) == [2, 0] and len(seen) == 4
    trainer._params[0].fill_(7.0)
    assert trainer._kept_answers("actions", prompts, weight_seen) == [5, 5], "the older weights' actions are forgotten"
    assert float(trainer._params[0][0]) == 7.0
