"""lora.teach = "risk" in the trainer (actors/lora/risk_round.py): the choice loss also at the risk level's first token,
and the level a prompt's answer would write under the decide grammar."""

from __future__ import annotations

import dataclasses

import msgspec
import numpy as np
import pytest

from actors.common.actions import ACTION_NAMES
from actors.common.llm.model import default_model_path
from actors.common.news_risk import CALM, ELEVATED, EXTREME
from actors.lora.risk_teach import RiskInfo, risk_prefix, with_risk
from actors.lora.trainer import LoraTrainer, prompt_ids
from tests.actors.lora.planted import planted_experiences
from tests.actors.lora.test_trainer import TINY


@pytest.mark.slow
def test_the_level_loss_is_the_cross_entropy_of_the_level_among_the_levels_first_tokens_where_the_grammar_writes_it():
    import torch

    levels = (ELEVATED, CALM, EXTREME)
    experiences = [with_risk(e, RiskInfo(level)) for e, level in zip(planted_experiences(3, seed=5), levels)]
    experiences.append(dataclasses.replace(planted_experiences(1, seed=6)[0]))  # a direction target: no level to learn
    trainer = LoraTrainer(msgspec.structs.replace(TINY, action_loss_weight=1.0, text_loss_weight=1.0, mirror_llama_arithmetic=False,
                                                  teach="risk"), default_model_path())

    def loss(teach: str) -> float:
        trainer.config = msgspec.structs.replace(trainer.config, teach=teach)
        with torch.no_grad():
            return float(trainer._loss(experiences)[0])

    firsts = [tokens[0] for tokens in trainer._level_tokens.values()]
    expected = []
    for e, level in zip(experiences, levels):
        prefix = trainer.tokenizer.encode(risk_prefix(e.target), add_special_tokens=False)
        with torch.no_grad():
            logits = trainer.model(input_ids=torch.tensor([prompt_ids(trainer.tokenizer, e.messages) + prefix])).logits[0, -1]
        expected.append(-float(torch.log_softmax(logits[firsts], dim=0)[level]))
    assert loss("risk") - loss("direction") == pytest.approx(np.mean(expected), rel=1e-3)

    read = trainer.risk_levels(experiences[:3])  # after the weights' own action and the target confidence
    actions = trainer.decisions([(e.messages, e.mask) for e in experiences[:3]])
    for e, action, level in zip(experiences, actions, read):
        prefix = trainer.tokenizer.encode(f"{ACTION_NAMES[action]} | 0.80 |", add_special_tokens=False)
        with torch.no_grad():
            logits = trainer.model(input_ids=torch.tensor([prompt_ids(trainer.tokenizer, e.messages) + prefix])).logits[0, -1]
        assert level == int(torch.argmax(logits[firsts]))
