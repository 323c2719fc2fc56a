"""lora.teach = "risk" learning the level (docs/experiments/risklevel.md): the round's loss weights the risk level's
choice by lora.level_loss_weight, apart from the action's and the text's, and the level-balanced draws keep a rare
level at its own share (lora.level_rare_share). Fast: a word-level tokenizer and a bigram model stand in for SmolLM2
(the loss's positions and weights are what is checked; tests/actors/lora/test_risk_round.py checks the level loss on
the real model)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from types import SimpleNamespace

import msgspec
import numpy as np
import pytest

from actors.common.actions import ACTION_NAMES, BUY, SELL
from actors.common.news_risk import CALM, ELEVATED, EXTREME
from actors.lora.config import LoraConfig
from actors.lora.experience import Experience
from actors.lora.risk_teach import RiskInfo, risk_prefix, with_risk
from actors.lora.store import ExperienceStore
from actors.lora.trainer import LoraTrainer
from actors.jobs.config import load_config
from config.tree import ConfigError

VOCAB = 64


class WordTokenizer:
    """Words with their leading space are tokens (so " CALM", " ELEVATED", " EXTREME" differ in their first token, as
    in SmolLM2's tokenizer); ids are given out as words are first seen."""

    eos_token_id = 0
    pad_token_id = 0

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [self.ids.setdefault(word, len(self.ids) + 1) for word in re.findall(r" ?[^ ]+", text)]

    def apply_chat_template(self, messages, add_generation_prompt: bool, tokenize: bool) -> str:
        return " ".join(m["content"] for m in messages) + " <assistant>"


class Bigram:
    """logits[t] = table[token t]: each answer position's logits depend on its own input token only, and its
    gradient lands in that token's row, so where the loss puts weight can be read off the table's gradient."""

    def __init__(self) -> None:
        import torch

        self.table = torch.nn.Parameter(torch.randn(VOCAB, VOCAB, generator=torch.Generator().manual_seed(0)))

    def __call__(self, *, input_ids, attention_mask, labels, past_key_values, use_cache):
        import torch

        logits = self.table[input_ids]
        loss = None
        if labels is not None:  # the causal LM loss: position t predicts token t + 1 (as transformers shifts it)
            loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels[:, 1:].reshape(-1),
                                                     ignore_index=-100)
        return SimpleNamespace(logits=logits, loss=loss)


def trainer_with(**weights) -> LoraTrainer:
    trainer = LoraTrainer.__new__(LoraTrainer)  # no model load: the loss's wiring on a stand-in model
    trainer.config = LoraConfig(cache_shared_prefix=False, teach="risk", **weights)
    trainer.tokenizer, trainer.model = WordTokenizer(), Bigram()
    trainer._action_tokens = {a: trainer.tokenizer.encode(name) for a, name in enumerate(ACTION_NAMES)}
    trainer._init_levels()
    return trainer


def risk_experiences() -> list[Experience]:
    levels = (ELEVATED, CALM, EXTREME)
    return [with_risk(Experience(id=f"r{i}", messages=[{"role": "user", "content": f"CPI shock number {i}"}],
                                 mask=(True, True, True, False, False, False), target=f"BUY | 0.80 | reason {i}",
                                 action=BUY, pnl_usd=0.0, source="hindsight"), RiskInfo(level))
            for i, level in enumerate(levels)]


def loss_and_grad(trainer: LoraTrainer, experiences: list[Experience]):
    trainer.model.table.grad = None
    loss, _ = trainer._loss(experiences)
    loss.backward()
    return float(loss.detach()), trainer.model.table.grad


def level_cross_entropy(trainer: LoraTrainer, experiences: list[Experience]) -> float:
    """By hand: the level among the three levels' first tokens, read at the prefix's last token (" |")."""
    import torch

    firsts = [tokens[0] for tokens in trainer._level_tokens.values()]
    terms = []
    for e in experiences:
        last = trainer.tokenizer.encode(risk_prefix(e.target))[-1]
        terms.append(-float(torch.log_softmax(trainer.model.table[last, firsts].detach(), dim=0)[e.meta["risk_level"]]))
    return float(np.mean(terms))


def test_the_level_loss_weight_alone_puts_the_whole_loss_and_gradient_on_the_level_choice():
    experiences = risk_experiences()
    trainer = trainer_with(level_loss_weight=2.0, action_loss_weight=0.0, text_loss_weight=0.0)

    loss, grad = loss_and_grad(trainer, experiences)

    assert loss == pytest.approx(2.0 * level_cross_entropy(trainer, experiences), rel=1e-5)
    bar = trainer.tokenizer.encode(" |")[0]
    firsts = [tokens[0] for tokens in trainer._level_tokens.values()]
    touched = {(int(r), int(c)) for r, c in grad.nonzero().tolist()}
    assert touched == {(bar, c) for c in firsts}  # the level's choice only: no action, confidence nor reason token


def test_the_level_choice_has_no_weight_unless_asked_and_none_in_a_direction_round():
    experiences = risk_experiences()
    with_level = trainer_with(level_loss_weight=1.0, action_loss_weight=1.0, text_loss_weight=0.3)
    without = trainer_with(level_loss_weight=0.0, action_loss_weight=1.0, text_loss_weight=0.3)
    without.model = with_level.model  # the same weights

    gap = loss_and_grad(with_level, experiences)[0] - loss_and_grad(without, experiences)[0]
    assert gap == pytest.approx(level_cross_entropy(with_level, experiences), rel=1e-5)

    direction = trainer_with(level_loss_weight=1.0, action_loss_weight=1.0, text_loss_weight=0.3)
    direction.config = msgspec.structs.replace(direction.config, teach="direction")
    direction.model, direction.tokenizer = without.model, without.tokenizer
    assert loss_and_grad(direction, experiences)[0] == pytest.approx(loss_and_grad(without, experiences)[0], rel=1e-6)


def test_the_action_and_text_weights_no_longer_scale_the_level_choice():
    """Before lora.level_loss_weight the level's term was weighted by action_loss_weight: dropping the (noisy)
    direction choice dropped the level's too."""
    experiences = risk_experiences()
    trainer = trainer_with(level_loss_weight=1.0, action_loss_weight=0.0, text_loss_weight=0.0)

    loss, _ = loss_and_grad(trainer, experiences)

    assert loss == pytest.approx(level_cross_entropy(trainer, experiences), rel=1e-5) and loss > 0


def level_store(tmp_path, rare_share: float) -> ExperienceStore:
    """Training side: 50 % CALM, 44 % ELEVATED, 6 % EXTREME (event bars' mix, docs/experiments/riskfit.md)."""
    levels = [CALM] * 50 + [ELEVATED] * 44 + [EXTREME] * 6
    rows = [Experience(id=f"e{i}", messages=[{"role": "user", "content": f"q{i}"}], mask=(True,) * 6,
                       target=f"{ACTION_NAMES[BUY if i % 3 else SELL]} | 0.80 | x", action=BUY if i % 3 else SELL,
                       pnl_usd=10.0 * (i % 5), source="hindsight", meta={"risk_level": level, "held_out": False})
            for i, level in enumerate(levels)]
    store = ExperienceStore(tmp_path / f"s{rare_share}.sqlite", max_experiences=1000, held_out_fraction=0.2,
                            min_weight_usd=1.0, balance_actions=True, balance_levels=True, level_rare_share=rare_share)
    store.add(rows)
    return store


def test_a_level_under_the_rare_share_keeps_its_own_share_and_the_common_two_split_the_rest(tmp_path):
    store = level_store(tmp_path, 0.1)

    drawn = Counter(e.meta["risk_level"] for seed in range(100) for e in store.sample(10, np.random.default_rng(seed)))

    assert drawn[EXTREME] / 1000 == pytest.approx(0.06, abs=0.011)
    assert drawn[CALM] == pytest.approx(drawn[ELEVATED], abs=12)  # 50:44 stored, drawn alike


def test_a_rare_share_of_zero_keeps_the_equal_thirds(tmp_path):
    store = level_store(tmp_path, 0.0)

    drawn = Counter(e.meta["risk_level"] for seed in range(100) for e in store.sample(9, np.random.default_rng(seed)))

    assert drawn == {CALM: 300, ELEVATED: 300, EXTREME: 300}


def test_the_default_config_draws_extreme_at_its_share():
    assert load_config().lora.level_rare_share == pytest.approx(0.1)


@pytest.mark.parametrize("overrides, says", [
    (["lora.level_rare_share=0.5"], "at most 1/3"),
    (["lora.level_rare_share=-0.1"], "--set"),
    (["lora.level_loss_weight=-1"], "--set"),
])
def test_a_bad_level_setting_is_an_error_naming_its_key(overrides, says):
    with pytest.raises(ConfigError) as info:
        load_config(overrides=overrides)

    assert info.value.key == overrides[0].split("=")[0] and says in str(info.value)


def test_a_risk_round_with_no_loss_at_all_is_an_error_but_the_level_alone_is_enough():
    nothing = ["lora.teach='risk'", "lora.text_loss_weight=0", "lora.action_loss_weight=0", "lora.level_loss_weight=0"]
    with pytest.raises(ConfigError) as info:
        load_config(overrides=nothing)
    assert info.value.key == "lora.text_loss_weight" and "nothing to learn" in str(info.value)

    assert load_config(overrides=nothing[:3]).lora.level_loss_weight == 1.0  # the level's choice alone
    with pytest.raises(ConfigError):  # a direction round has no level to learn
        load_config(overrides=["lora.text_loss_weight=0", "lora.action_loss_weight=0", "lora.level_loss_weight=1"])
