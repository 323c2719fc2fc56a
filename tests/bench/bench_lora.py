"""LoRA trainer benchmark (``bin/bench lora``): one round on the planted task with the real SmolLM2.

Reports, for a round of M experiences (default 64) on this machine:
- training tokens/s (prompt + answer tokens through forward and backward); the baseline
  column is the forward-only (evaluation) token rate of the same model, the ceiling a
  backward pass can only lower;
- seconds from the M-th experience to a published adapter file (round: evaluate, train,
  evaluate, export), plus llama.cpp loading that adapter and answering one single-shot
  decide prompt (what the reasoner's first thought under it costs, short of the bus);
- the trainer's peak resident memory;
- held-out match rate before -> after.
Reference (issue 12): about 56,000 tokens/s on an H100 with batch 16, seq 512.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

from actors.lora.config import LoraConfig
from actors.lora.core import LoraCore
from actors.lora.trainer import prompt_ids
from tests.actors.lora.planted import PLANTED_REASONER, planted_experiences
from tests.bench.common import print_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiences", type=int, default=64, help="M: experiences in the round")
    parser.add_argument("--steps", type=int, default=8, help="optimiser steps in the round")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    args = parser.parse_args()

    config = LoraConfig(rank=args.rank, alpha=2.0 * args.rank, dropout=0.0, steps_per_round=args.steps,
                        batch_size=args.batch, learning_rate=4e-3, held_out_fraction=0.25, max_eval_examples=16,
                        publish_tolerance=0.0, torch_threads=args.threads, device=args.device,
                        experiences_per_round=args.experiences)
    with tempfile.TemporaryDirectory() as run_dir:
        core = LoraCore(config, PLANTED_REASONER, run_dir)
        started = time.perf_counter()
        core.add_experiences(planted_experiences(args.experiences))
        load_started = time.perf_counter()
        core.load_trainer()  # the model load happens once per process, before the first round
        load_secs = time.perf_counter() - load_started
        held_out = core.store.held_out(config.max_eval_examples)
        eval_started = time.perf_counter()
        core.trainer.match_rate(held_out)
        eval_secs = time.perf_counter() - eval_started
        eval_tokens = sum(len(prompt_ids(core.trainer.tokenizer, e.messages)) for e in held_out)
        round_started = time.perf_counter()
        report = core.run_round()
        round_secs = time.perf_counter() - round_started
        first_thought_secs = _first_thought_secs(str(report.version.path), core.model_path, held_out[0].messages)
        core.close()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = report.result
    print_table(
        f"LoRA trainer: round of {args.experiences} experiences, {args.steps} steps x batch {args.batch}, rank {args.rank}, "
        f"{args.device}",
        [
            ("training tokens/s", f"{result.stats.tokens_per_sec:,.0f}", f"{eval_tokens / eval_secs:,.0f} (forward only)",
             f"{result.stats.tokens_per_sec / (eval_tokens / eval_secs):.2f}", "H100 ref ~56,000"),
            ("model load s (once per process)", f"{load_secs:.1f}", "", "", ""),
            ("M-th experience -> adapter file s", f"{round_secs:.1f}", "", "", "<= 60 incl. first thought"),
            ("+ llama.cpp load + first decide s", f"{round_secs + first_thought_secs:.1f}", "", "", "<= 60"),
            ("trainer peak memory MiB", f"{peak_mib:,.0f}", "", "", ""),
            ("held-out match rate", f"{result.before:.2f} -> {result.after:.2f}", "", "",
             f"published: {report.version.published}"),
            ("setup s", f"{load_started - started:.1f}", "", "", ""),
        ],
    )


def _first_thought_secs(adapter: str, model_path: str, messages: list[dict]) -> float:
    """llama.cpp loading the base with the new adapter and answering one decide prompt (a stand-in for the hot swap)."""
    from actors.reasoner.engine import LlamaEngine

    started = time.perf_counter()
    engine = LlamaEngine(model_path=model_path, n_ctx=1024, temperature=0.0, lora_path=adapter, lora_version=1)
    try:
        engine.chat(messages, max_tokens=24)
    finally:
        engine.close()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
