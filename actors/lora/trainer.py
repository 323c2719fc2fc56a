"""PEFT LoRA training of the reasoner's own GGUF model on experiences, with held-out evaluation.

The GGUF is loaded once per process with transformers (``gguf_file=``, dequantised to
float32: actors/lora/base_model.py), wrapped once with a PEFT LoRA, and trained further every round. A round:
train N steps on weighted samples (loss on the answer tokens only), evaluate on the held-out
experiences, and publish only when the match rate beats the current adapter's on the same
prompts beyond its interval and the answers have not collapsed (actors/lora/publishing.py).

Evaluation (``eval_method``) reads the decision the reasoner would take:
- grammar: the decide step runs under a grammar whose first part is the allowed action
  names, so greedy decoding picks, token by token, the most likely continuation among
  them; this walks that choice over the names' tokens (usually one forward pass);
- generate: free greedy generation, parsed with the reasoner's DecisionParser.
All blocking: the actor calls it from its worker thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from actors.common.actions import ACTION_NAMES, allowed_actions
from actors.common.llm.parser import DecisionParser
from actors.lora.base_model import unwrapped_base
from actors.lora.config import LoraConfig
from actors.lora.dollars import dollar_gain
from actors.lora.experience import Experience
from actors.lora.export import export_peft_adapter
from actors.lora.llama_arithmetic import mirror_llama_arithmetic
from actors.lora.publishing import publish_verdict
from actors.lora.risk_round import RiskReadTraining
from actors.lora.round_types import RoundResult, StepProgress, TrainStats

IGNORE_INDEX = -100
EVAL_ROWS = 8
"""Prompts evaluated in one batched forward pass."""


def encode_example(tokenizer, messages: list[dict], target: str, max_tokens: int) -> tuple[list[int], int]:
    """Token ids of prompt + answer + end-of-turn, and how many leading ones are prompt (no loss there).

    The prompt is the chat template with the assistant turn opened (what llama.cpp reads);
    a prompt too long keeps its end, where the decide question is.
    """
    prompt = prompt_ids(tokenizer, messages)
    answer = tokenizer.encode(target, add_special_tokens=False) + [tokenizer.eos_token_id]
    keep_prompt = max(max_tokens - len(answer), 1)
    prompt = prompt[-keep_prompt:]
    return prompt + answer, len(prompt)


def shared_prefix_length(rows: Sequence[Sequence[int]]) -> int:
    """Tokens every row starts with, leaving each row at least one token of its own.

    (The last prompt token must stay in a row: its logits predict the answer's first token.)
    """
    if not rows:
        return 0
    limit = min(len(row) for row in rows) - 1
    first = rows[0]
    length = 0
    while length < limit and all(row[length] == first[length] for row in rows):
        length += 1
    return length


def prompt_ids(tokenizer, messages: list[dict]) -> list[int]:
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return tokenizer.encode(text, add_special_tokens=False)


class LoraTrainer(RiskReadTraining):
    def __init__(self, config: LoraConfig, model_path: str | Path) -> None:
        import torch
        from peft import LoraConfig as PeftLoraConfig
        from peft import get_peft_model

        self.config = config
        self.model_path = str(model_path)
        torch.manual_seed(config.seed)
        if config.device == "cpu":
            torch.set_num_threads(config.torch_threads)
        base, self.tokenizer = unwrapped_base(self.model_path, config.device, config.base_cache_dir)
        peft_config = PeftLoraConfig(r=config.rank, lora_alpha=config.alpha, lora_dropout=config.dropout,
                                     target_modules=list(config.target_modules), bias="none", task_type="CAUSAL_LM")
        self.model = get_peft_model(base, peft_config)
        # what the reasoner's llama.cpp computes, not the float32 model
        self.mirrored_layers = mirror_llama_arithmetic(self.model, self.model_path) if config.mirror_llama_arithmetic else 0
        self._params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(self._params, lr=config.learning_rate)
        self._kept = self._snapshot()
        self._kept_memo: dict[str, tuple[tuple[str, ...], list[int]]] = {}
        """what -> (prompt ids, the kept weights' answers): a round's "before" without evaluating again ("actions"
        for a direction round, "levels" for a risk round); a publication replaces it whole."""
        self._rng = np.random.default_rng(config.seed)
        self._action_tokens = {a: self.tokenizer.encode(name, add_special_tokens=False)
                               for a, name in enumerate(ACTION_NAMES)}
        self._init_levels()
        self.parser = DecisionParser()

    # ------------------------------------------------------------------ training

    def train(self, sample: Callable[[int], list[Experience]], steps: int,
              progress: Callable[[StepProgress], None] | None = None) -> TrainStats:
        """``steps`` optimiser steps, each on ``batch_size`` experiences from ``sample(n)``."""
        import torch

        self.model.train()
        losses, tokens, started = [], 0, time.perf_counter()
        for step in range(1, steps + 1):
            batch = sample(self.config.batch_size)
            if not batch:
                break
            loss, n_tokens = self._loss(batch)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self._params, 1.0)
            self.optimizer.step()
            losses.append(float(loss.detach()))
            tokens += n_tokens
            if progress is not None:
                progress(StepProgress(step, steps, losses[-1], tokens / (time.perf_counter() - started)))
        secs = time.perf_counter() - started
        self.model.eval()
        return TrainStats(len(losses), float(np.mean(losses)) if losses else 0.0, losses[-1] if losses else 0.0,
                          tokens, tokens / secs if secs > 0 else 0.0, secs)

    def _loss(self, experiences: Sequence[Experience]):
        """Mean cross-entropy on the answer tokens of a batch, and its examples' token count (prompt + answer).

        With ``cache_shared_prefix`` the prompt start every example shares (the system prompt: most of a
        single-shot prompt) is read once per step without gradient and its KV cache reused by every row,
        so forward and backward run over the examples' own tokens only. The gradient then reaches the
        LoRA weights through the examples' tokens and not through the shared prefix's keys and values
        (computed with the current weights all the same, so the forward pass is exact).
        """
        import torch

        encoded = [encode_example(self.tokenizer, e.messages, e.target, self.config.max_seq_tokens) for e in experiences]
        shared, cache, input_ids, labels, attention = self._split_batch(encoded)
        text_weight = self.config.text_loss_weight
        out = self.model(input_ids=input_ids, attention_mask=attention, labels=labels if text_weight > 0 else None,
                         past_key_values=cache, use_cache=cache is not None)
        loss = text_weight * out.loss if text_weight > 0 else out.logits.sum() * 0.0
        first = [n_prompt - shared - 1 for _, n_prompt in encoded]  # the position whose logits choose the action
        if self.config.action_loss_weight > 0:
            loss = loss + self.config.action_loss_weight * self._action_loss(out.logits, first, experiences)
        if self.config.teach == "risk" and self.config.level_loss_weight > 0:
            loss = loss + self.config.level_loss_weight * self._level_loss(out.logits, first, experiences)
        return loss, sum(len(ids) for ids, _ in encoded)  # example tokens: the same unit with or without the cache

    def _action_loss(self, logits, first_positions: Sequence[int], experiences: Sequence[Experience]):
        """Mean cross-entropy of each target action among its prompt's allowed actions, over their first tokens:
        the choice the decide grammar makes greedily (names with a shared first token would need the later ones;
        the action names have none)."""
        import torch

        terms = []
        for row, (position, e) in enumerate(zip(first_positions, experiences)):
            allowed = list(allowed_actions(e.mask)) or [0]
            if e.action not in allowed:
                continue  # a target the mask forbids teaches no choice
            tokens = torch.tensor([self._action_tokens[a][0] for a in allowed], device=logits.device)
            choice = logits[row, position, tokens].float().unsqueeze(0)
            terms.append(torch.nn.functional.cross_entropy(choice, torch.tensor([allowed.index(e.action)], device=logits.device)))
        return torch.stack(terms).mean() if terms else logits.sum() * 0.0

    def prompt_tokens(self, messages: list[dict]) -> list[int]:
        return prompt_ids(self.tokenizer, messages)

    def _split_batch(self, encoded: Sequence[tuple[list[int], int]]):
        """(shared, cache, ids, labels, attention) of (ids, n_prompt) rows: with ``cache_shared_prefix`` the first
        ``shared`` prompt tokens of every row are read once into ``cache`` and the tensors hold the rest; the
        attention mask still covers the shared tokens (the model sees whole rows)."""
        import torch

        shared = shared_prefix_length([ids[:n_prompt] for ids, n_prompt in encoded]) if self.config.cache_shared_prefix else 0
        cache = self._prefix_cache(encoded[0][0][:shared], len(encoded)) if shared else None
        input_ids, labels, attention = self._padded([(ids[shared:], n_prompt - shared) for ids, n_prompt in encoded])
        if shared:
            attention = torch.cat([torch.ones((len(encoded), shared), dtype=attention.dtype, device=attention.device),
                                   attention], dim=1)
        return shared, cache, input_ids, labels, attention

    def _prefix_cache(self, prefix: list[int], rows: int):
        """The KV cache of ``prefix`` (no gradient, no dropout), repeated for ``rows`` rows."""
        import torch

        was_training = self.model.training
        self.model.eval()
        with torch.no_grad():
            cache = self.model(input_ids=torch.tensor([prefix], device=self.config.device), use_cache=True).past_key_values
        self.model.train(was_training)
        if rows > 1:
            cache.batch_repeat_interleave(rows)
        return cache

    def _padded(self, encoded: Sequence[tuple[list[int], int]]):
        """Right-padded ids, labels (the answer tokens; -100 elsewhere) and attention mask of (ids, n_prompt) rows."""
        import torch

        width = max(len(ids) for ids, _ in encoded)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        input_ids = torch.full((len(encoded), width), pad, dtype=torch.long)
        labels = torch.full((len(encoded), width), IGNORE_INDEX, dtype=torch.long)
        attention = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, (ids, n_prompt) in enumerate(encoded):  # right padding: positions stay those of inference
            input_ids[row, : len(ids)] = torch.tensor(ids)
            labels[row, n_prompt: len(ids)] = torch.tensor(ids[n_prompt:])
            attention[row, : len(ids)] = 1
        device = self.config.device
        return input_ids.to(device), labels.to(device), attention.to(device)

    # ------------------------------------------------------------------ evaluation

    def match_rate(self, experiences: Sequence[Experience]) -> float:
        """Share of experiences whose greedy decision is their target action (0 when there are none)."""
        if not experiences:
            return 0.0
        decided = self.decisions([(e.messages, e.mask) for e in experiences])
        return sum(action == e.action for action, e in zip(decided, experiences)) / len(experiences)

    def decision(self, messages: list[dict], mask: Sequence[bool]) -> int:
        return self.decisions([(messages, mask)])[0]

    def decisions(self, prompts: Sequence[tuple[list[dict], Sequence[bool]]]) -> list[int]:
        if self.config.eval_method == "generate":
            return [self._generated_action(messages, mask) for messages, mask in prompts]
        decided: list[int] = []
        for start in range(0, len(prompts), EVAL_ROWS):
            decided += self._grammar_actions(prompts[start:start + EVAL_ROWS])
        return decided

    def _grammar_actions(self, prompts: Sequence[tuple[list[dict], Sequence[bool]]]) -> list[int]:
        """Greedy choice among each prompt's allowed action names, token by token, as under the decide grammar.

        The first token of every prompt comes from one batched forward pass (the prompts' shared start read
        once); a prompt whose best first token still leaves several names goes on alone.
        """
        rows = [prompt_ids(self.tokenizer, messages)[-self.config.max_seq_tokens:] for messages, _ in prompts]
        first_logits = self._next_token_logits(rows)
        decided = []
        for ids, logits, (_, mask) in zip(rows, first_logits, prompts):
            candidates = {a: self._action_tokens[a] for a in allowed_actions(mask)} or {0: self._action_tokens[0]}
            decided.append(self._narrow(ids, candidates, logits))
        return decided

    def _narrow(self, ids: list[int], candidates: dict[int, list[int]], logits) -> int:
        """Walk the candidates' tokens greedily from ``logits`` (the next-token logits after ``ids``)."""
        import torch

        depth = 0
        while len(candidates) > 1:
            nexts = {a: tokens[depth] for a, tokens in candidates.items() if depth < len(tokens)}
            best = max(set(nexts.values()), key=lambda t: float(logits[t]))
            candidates = {a: t for a, t in candidates.items() if depth < len(t) and t[depth] == best}
            ids, depth = ids + [best], depth + 1
            if len(candidates) > 1:
                with torch.no_grad():
                    logits = self.model(input_ids=torch.tensor([ids], device=self.config.device)).logits[0, -1]
        return next(iter(candidates))

    def _next_token_logits(self, rows: Sequence[list[int]]):
        """Next-token logits after each row: one batched pass, the rows' shared start read once."""
        import torch

        shared, cache, input_ids, _, attention = self._split_batch([(ids, len(ids)) for ids in rows])
        base = self.model.get_base_model()  # its decoder runs with the LoRA layers; lm_head only where it is read
        with torch.no_grad():
            hidden = base.model(input_ids=input_ids, attention_mask=attention, past_key_values=cache,
                                use_cache=cache is not None).last_hidden_state
            last = torch.tensor([len(ids) - shared - 1 for ids in rows], device=hidden.device)
            return base.lm_head(hidden[torch.arange(len(rows), device=hidden.device), last])

    def _generated_action(self, messages: list[dict], mask: Sequence[bool]) -> int:
        import torch

        ids = prompt_ids(self.tokenizer, messages)[-self.config.max_seq_tokens:]
        with torch.no_grad():
            out = self.model.generate(input_ids=torch.tensor([ids], device=self.config.device), max_new_tokens=32,
                                      do_sample=False, pad_token_id=self.tokenizer.eos_token_id)
        text = self.tokenizer.decode(out[0, len(ids):], skip_special_tokens=True)
        return self.parser.parse(text, mask).action

    # ------------------------------------------------------------------ rounds, publishing

    def run_round(self, sample: Callable[[int], list[Experience]], held_out: Sequence[Experience],
                  progress: Callable[[StepProgress], None] | None = None) -> RoundResult:
        """Train a round and judge it against the current (last published) weights on the same held-out prompts
        (actors/lora/publishing.py). Published: these weights become the current ones. Collapsed: back to the
        current ones (one answer everywhere is a dead end). Not better yet: training goes on from here next
        round, so small gains add up until they clear the interval."""
        labels = [e.action for e in held_out]
        before = self._kept_answers("actions", held_out, self._actions_of)
        stats = self.train(sample, self.config.steps_per_round, progress)
        after = self._actions_of(held_out)
        verdict = publish_verdict(before, after, labels, z=self.config.publish_z, collapse_share=self.config.collapse_share,
                                  trained=stats.steps > 0)
        if verdict.publish:
            self._keep("actions", held_out, after)
        elif verdict.collapsed:
            self._restore(self._kept)
        dollars = dollar_gain(held_out, before, after, self.config.publish_z)
        return RoundResult(verdict.before, verdict.after, verdict.publish, stats, len(held_out), verdict, tuple(before),
                           tuple(after), dollars)

    def _actions_of(self, experiences: Sequence[Experience]) -> list[int]:
        return self.decisions([(e.messages, e.mask) for e in experiences])

    def _kept_answers(self, what: str, prompts: Sequence[Experience],
                      evaluate: Callable[[Sequence[Experience]], list[int]]) -> list[int]:
        """The current (kept) weights' answers to ``prompts`` (``evaluate``: their actions, or their risk levels):
        remembered from when they were published on the same prompts, else evaluated with them swapped in for the
        moment."""
        ids = _ids(prompts)
        memo = self._kept_memo.get(what)
        if memo is not None and memo[0] == ids:
            return list(memo[1])
        training = self._snapshot()
        self._restore(self._kept)
        try:
            answers = evaluate(prompts)
        finally:
            self._restore(training)
        self._kept_memo[what] = (ids, answers)
        return answers

    def _keep(self, what: str, prompts: Sequence[Experience], answers: list[int]) -> None:
        """Publish the training weights: they become the kept ones, and their ``answers`` to ``prompts`` the only
        ones remembered (the older weights' answers of any kind no longer hold)."""
        self._kept = self._snapshot()
        self._kept_memo = {what: (_ids(prompts), list(answers))}

    def store_sampler(self, store, up_to_seq: int | None = None) -> Callable[[int], list[Experience]]:
        return lambda n: store.sample(n, self._rng, up_to_seq)

    def export(self, path: str | Path, metadata: dict[str, str] | None = None) -> Path:
        return export_peft_adapter(self.model, self.model_path, path, alpha=self.config.alpha, metadata=metadata)

    def _snapshot(self) -> list:
        return [p.detach().clone() for p in self._params]

    def _restore(self, saved: list) -> None:
        import torch

        with torch.no_grad():
            for param, value in zip(self._params, saved):
                param.copy_(value)


def _ids(experiences: Sequence[Experience]) -> tuple[str, ...]:
    return tuple(e.id for e in experiences)
