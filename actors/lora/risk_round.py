"""The trainer's side of lora.teach = "risk" (actors/lora/risk_teach.py): the choice loss at the risk level's first
token (weighted by lora.level_loss_weight in LoraTrainer._loss), the level a prompt's answer would write under the decide grammar, and a round judged on it.

A mixin of LoraTrainer (actors/lora/trainer.py): it uses the trainer's tokenizer, model, batching and weights."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import numpy as np

from actors.common.actions import ACTION_NAMES
from actors.common.news_risk import RISK_LEVELS
from actors.lora.experience import Experience
from actors.lora.risk_teach import floor_levels, risk_prefix, risk_verdict
from actors.lora.round_types import RoundResult, StepProgress

EVAL_ROWS = 8
"""Prompts evaluated in one batched forward pass (as the trainer's own evaluation)."""


class RiskReadTraining:
    def _init_levels(self) -> None:
        # the grammar writes the level after " |" with its leading space (RISK_RULE)
        self._level_tokens = {level: self.tokenizer.encode(f" {name}", add_special_tokens=False)
                              for level, name in enumerate(RISK_LEVELS)}

    def _level_loss(self, logits, first_positions: Sequence[int], experiences: Sequence[Experience]):
        """Mean cross-entropy of each target's risk level among the three levels' first tokens, at the position that
        writes it (after ``ACTION | conf |``); experiences without a level (or a target in another form) are skipped."""
        import torch

        choices = torch.tensor([tokens[0] for tokens in self._level_tokens.values()], device=logits.device)
        terms = []
        for row, (position, e) in enumerate(zip(first_positions, experiences)):
            level = int(e.meta.get("risk_level", -1))
            if level < 0:
                continue
            offset = len(self.tokenizer.encode(risk_prefix(e.target), add_special_tokens=False))
            answer = self.tokenizer.encode(e.target, add_special_tokens=False)
            if offset >= len(answer) or answer[offset] != self._level_tokens[level][0]:
                continue  # not the risk form (a direction target): nothing to choose there
            choice = logits[row, position + offset, choices].float().unsqueeze(0)
            terms.append(torch.nn.functional.cross_entropy(choice, torch.tensor([level], device=logits.device)))
        return torch.stack(terms).mean() if terms else logits.sum() * 0.0

    def risk_levels(self, experiences: Sequence[Experience]) -> list[int]:
        """The level each prompt's answer would write under the decide grammar (reasoner.risk_read): after the weights'
        own greedy action and the target confidence (the confidence digits are not walked: a risk-taught adapter
        writes its target's), the greedy choice among the levels' first tokens (distinct for SmolLM2's tokenizer;
        deeper tokens are walked where they are not)."""
        actions = self.decisions([(e.messages, e.mask) for e in experiences])
        rows = []
        for e, action in zip(experiences, actions):
            prefix = f"{ACTION_NAMES[action]} | {self.config.target_confidence:.2f} |"
            answer = self.tokenizer.encode(prefix, add_special_tokens=False)
            rows.append((self.prompt_tokens(e.messages) + answer)[-self.config.max_seq_tokens:])
        levels: list[int] = []
        for start in range(0, len(rows), EVAL_ROWS):
            chunk = rows[start:start + EVAL_ROWS]
            for ids, logits in zip(chunk, self._next_token_logits(chunk)):
                levels.append(self._narrow(ids, dict(self._level_tokens), logits))
        return levels

    def run_risk_round(self, sample: Callable[[int], list[Experience]], held_out: Sequence[Experience],
                       apart: Sequence[Experience] = (), progress: Callable[[StepProgress], None] | None = None) -> RoundResult:
        """lora.teach = "risk": train a round and judge the level it writes on ``held_out`` (held-out event bars of
        training templates) against the current weights', paired, beside the calendar and keyword rules
        (actors/lora/risk_teach.py states the rule); ``apart`` (held-out templates) is scored, never judged on."""
        prompts = [*held_out, *apart]
        labels = [int(e.meta["risk_level"]) for e in held_out]
        before = self._kept_answers("levels", prompts, self.risk_levels)
        stats = self.train(sample, self.config.steps_per_round, progress)
        after = self.risk_levels(prompts)
        n = len(held_out)
        verdict, extra = risk_verdict(before[:n], after[:n], labels, floor_levels(held_out), z=self.config.publish_z,
                                      collapse_share=self.config.collapse_share, trained=stats.steps > 0)
        if apart:
            apart_labels = [int(e.meta["risk_level"]) for e in apart]
            _, apart_extra = risk_verdict(before[n:], after[n:], apart_labels, floor_levels(apart), z=self.config.publish_z,
                                          collapse_share=self.config.collapse_share)
            extra.update({f"apart_{key}": value for key, value in apart_extra.items()})
            extra["apart_match_before"] = float(np.mean([a == y for a, y in zip(before[n:], apart_labels)]))
            extra["apart_match_after"] = float(np.mean([a == y for a, y in zip(after[n:], apart_labels)]))
        if verdict.publish:
            self._keep("levels", prompts, after)
        elif verdict.collapsed:
            self._restore(self._kept)
        return RoundResult(verdict.before, verdict.after, verdict.publish, stats, n, verdict, tuple(before[:n]),
                           tuple(after[:n]), None, extra)
