"""Lockstep benchmark (``bin/bench lockstep``): can the LLM keep up with one thought per env per step?

Sections (each a function ``section_<name>(args) -> None`` listed in SECTIONS; run all, or some
with ``--sections``):

- reasoner: thoughts/s of the reasoner's Thinker for 1, 2, 4, 8 envs at once, single-shot and
  four-step, batched (one llama.cpp batch, a sequence per env) and one-at-a-time (LlamaEngine,
  one env after the other), beside the baseline: raw llama-cpp-python
  ``Llama.create_chat_completion``, one env after the other, same model, prompts, grammar,
  threads and token limits. The machine may be shared: within one run the variants
  alternate, repeat by repeat, and the best repeat of each counts.

- prompt_form: single-shot thoughts/s of the one-at-a-time engine (the default) with the compact
  single-shot prompt (reasoner.single_shot_context_template + single_shot_system_prompt: the fixed text
  in the cached system prompt) against the full context template the four-step form reads, in the
  same run, alternating; beside it the prompt tokens each thought reads and reuses from the KV cache.

- loop: env, policy, reasoner, fusion and risk in real processes with env.thought_lag_steps = 1, for
  1, 4 and 8 envs (single-shot by default; ``--loop-modes single_shot,four_step`` for both): loop
  steps/s and env-steps/s, the query rate (decisions with a thought at most 1 step old, from step 1:
  step 0 cannot have one), staleness min/mean/max, late steps at the default deadline and the
  share of wall time the loop waited for the LLM; beside it the free-running loop (K = 0) of the same
  settings. The bound: lockstep env-steps/s against the reasoner's own thoughts/s in that run
  (thoughts per second of generation, from its log): the loop cannot beat it; target >= 0.9.

- memo: the lockstep loop (1 env, single shot) at temperature 0 with the exact-thought memo on and off
  (reasoner.memo_enabled): loop steps/s and the share of thoughts served from the memo.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from actors.common.llm.grammar import decision_grammar
from actors.common.llm.model import default_model_path
from actors.common.llm.prompts import FOUR_STEPS, SAMPLE_CONTEXT, PromptBook, prompt_fields
from actors.reasoner.config import ReasonerConfig
from tests.bench.common import Section, print_table, run_sections, sections_parser

FLAT_MASK = [True, True, True, False, False, False]


# ---------------------------------------------------------------- reasoner: thoughts/s


def env_states(n: int, seed: int) -> list[tuple[dict, list[bool]]]:
    """n envs in different market states (same system prompt, different contexts)."""
    rng = random.Random(seed)
    return [
        (dict(SAMPLE_CONTEXT, rsi=rng.uniform(20, 80), trend=rng.choice(["up", "down", "flat"]),
              price=18000 + rng.uniform(-300, 300), momentum=rng.uniform(-2, 2)), FLAT_MASK)
        for _ in range(n)
    ]


class RawBaseline:
    """Plain llama-cpp-python: Llama.create_chat_completion, one env after the other."""

    def __init__(self, config: ReasonerConfig) -> None:
        from llama_cpp import LlamaGrammar

        from actors.common.llm.model import open_llama

        self._grammar_of = LlamaGrammar.from_string
        self._llm = open_llama(model_path=str(default_model_path()), n_ctx=config.n_ctx, n_threads=config.n_threads,
                          n_threads_batch=config.n_threads, n_batch=config.n_batch, seed=config.seed, verbose=False)
        self._config = config
        self._book = PromptBook(config)

    def think_many(self, states) -> None:
        for context, mask in states:
            self._think(prompt_fields(context, mask), mask)

    def _think(self, fields: dict, mask: list[bool]) -> None:
        config = self._config
        grammar = self._grammar_of(decision_grammar(mask), verbose=False)
        steps = ("single_shot",) if config.mode == "single_shot" else FOUR_STEPS
        conversation = self._book.opening(fields, steps[0])
        for index, step in enumerate(steps):
            if index > 0:
                conversation.append(self._book.step(step, fields))
            last = index == len(steps) - 1
            answer = self._llm.create_chat_completion(
                conversation, max_tokens=config.max_decide_tokens if last else config.max_tokens_per_step,
                temperature=config.temperature, top_p=config.top_p, seed=config.seed,
                grammar=grammar if last else None)
            conversation.append({"role": "assistant", "content": answer["choices"][0]["message"]["content"].strip()})

    def close(self) -> None:
        self._llm.close()


def _thinker(config: ReasonerConfig):
    from actors.reasoner.engines import build_engine
    from actors.reasoner.thinker import Thinker

    engine = build_engine(config)
    return Thinker(engine, config), engine


def measure_thoughts_per_sec(variants: dict[str, Callable], sizes: list[int], repeats: int, seed: int = 0) -> dict:
    """Best thoughts/s per (variant, size); variants alternate within each repeat.

    Every call gets fresh market states, as in lockstep where each step's context is new:
    only the system prompt and fixed text can come from the KV cache.
    """
    best: dict[tuple[str, int], float] = {}
    for repeat in range(repeats):
        for size in sizes:
            states = env_states(size, seed=seed + repeat * 100 + size)
            for name, think_many in variants.items():
                started = time.perf_counter()
                think_many(states)
                rate = size / (time.perf_counter() - started)
                best[(name, size)] = max(best.get((name, size), 0.0), rate)
    return best


def section_reasoner(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    for mode in args.modes.split(","):
        base = dict(mode=mode, cache_enabled=False, n_threads=args.threads, max_batch_sequences=max(sizes),
                    max_tokens_per_step=args.step_tokens, max_decide_tokens=args.decide_tokens)
        batched, batched_engine = _thinker(ReasonerConfig(batched=True, **base))
        in_turn, in_turn_engine = _thinker(ReasonerConfig(batched=False, **base))
        raw = RawBaseline(ReasonerConfig(**base))
        variants = {"batched": batched.think_many, "one_at_a_time": in_turn.think_many, "raw": raw.think_many}
        measure_thoughts_per_sec(variants, [max(sizes)], 1, seed=10_000)  # warm-up: first-call costs out
        best = measure_thoughts_per_sec(variants, sizes, args.repeats)
        for engine in (batched_engine, in_turn_engine, raw):
            engine.close()
        rows = []
        for size in sizes:
            raw_rate = best[("raw", size)]
            for name in ("batched", "one_at_a_time"):
                rate = best[(name, size)]
                rows.append((f"{name} thoughts/s, {size} env(s)", f"{rate:.2f}", f"{raw_rate:.2f}",
                             f"{rate / raw_rate:.2f}x", ">= 1.0x" if name == "one_at_a_time" else "> 1x at 2+ envs"))
        print_table(f"reasoner {mode}: thoughts/s vs raw Llama.create_chat_completion one env at a time "
                    f"(n_threads={args.threads}, best of {args.repeats})", rows)


# ---------------------------------------------------------------- prompt_form: compact vs full single-shot prompt

# The single-shot prompt as it was before the compact form: the four-step system prompt and full
# context, then seed 002's question with its response format (read anew for every thought).
FULL_SINGLE_SHOT = {
    "single_shot_system_prompt": ReasonerConfig().system_prompt,
    "single_shot_context_template": ReasonerConfig().context_template,
    "single_shot_prompt": "What is your recommended action? Choose ACTION from: {allowed_actions}.\n"
                          "Respond format: ACTION | confidence (0-1) | brief reason (max 10 words)",
}


def prompt_tokens_per_thought(thinker) -> tuple[int, int]:
    """(read, reused from the KV cache) prompt tokens of a thought that follows another one (lockstep's case)."""
    first, second = env_states(2, seed=20_000)
    thinker.think_many([first])
    thought = thinker.think_many([second])[0]
    return thought.prompt_tokens, thought.reused_prompt_tokens


def section_prompt_form(args: argparse.Namespace) -> None:
    base = dict(mode="single_shot", batched=False, cache_enabled=False, n_threads=args.threads,
                max_decide_tokens=args.decide_tokens)
    compact, compact_engine = _thinker(ReasonerConfig(**base))
    full, full_engine = _thinker(ReasonerConfig(**base, **FULL_SINGLE_SHOT))
    variants = {"compact": compact.think_many, "full": full.think_many}
    tokens = {"compact": prompt_tokens_per_thought(compact), "full": prompt_tokens_per_thought(full)}
    measure_thoughts_per_sec(variants, [1], 1, seed=10_000)  # warm-up
    best = measure_thoughts_per_sec(variants, [1, 4], args.repeats)
    compact_engine.close()
    full_engine.close()
    rows = []
    for size in (1, 4):
        rate, full_rate = best[("compact", size)], best[("full", size)]
        rows.append((f"single-shot thoughts/s, {size} env(s) one after the other", f"{rate:.2f}", f"{full_rate:.2f}",
                     f"{rate / full_rate:.2f}x", "> 1x"))
    rows.append(("prompt tokens read per thought (reused from KV cache)", f"{tokens['compact'][0]} ({tokens['compact'][1]})",
                 f"{tokens['full'][0]} ({tokens['full'][1]})", f"{tokens['compact'][0] / tokens['full'][0]:.2f}x", "60-90"))
    print_table(f"single-shot prompt form: compact (project) vs full context template (baseline), one-at-a-time engine "
                f"(n_threads={args.threads}, best of {args.repeats})", rows)


# ---------------------------------------------------------------- loop: steps/s in lockstep (env.thought_lag_steps = 1)

LOOP_ACTORS = ["env", "policy", "reasoner", "fusion", "risk"]


def loop_settings(n_envs: int, mode: str, lag_steps: int, steps: int, threads: int) -> dict:
    """A frozen policy in train mode; the reasoner as a lockstep phase should run it (not niced: the loop waits for it)."""
    return {"policy.learn": False, "env.mode": "train", "env.n_envs": n_envs, "env.max_steps": steps,
            "env.thought_lag_steps": lag_steps, "reasoner.mode": mode, "reasoner.cache_enabled": False,
            "reasoner.process_nice": 0, "reasoner.n_threads": threads, "runtime.stats_interval_secs": 60.0}


def run_loop(settings: dict) -> dict[str, float]:
    """One run in real processes; figures from the env's done summary, the decisions seen on the bus
    (staleness per env, so free-running gets the same query rate) and the reasoner's thought log."""
    from actors.env.pacing import LagStats
    from bus.messages import Done, FusionDecision
    from runtime.testing import running_actors

    lag = LagStats(settings["env.thought_lag_steps"])
    with running_actors(LOOP_ACTORS, settings, keep_run_dir=True) as rt:
        rt.client.subscribe(FusionDecision, Done, settle_secs=0)
        first_at = None
        while True:
            msg = rt.client.recv(timeout_secs=600)
            if isinstance(msg, FusionDecision):
                first_at = first_at or time.perf_counter()
                if msg.step > 0:  # step 0 cannot have a thought: nothing was seen before it
                    lag.add(msg.llm_staleness)
            elif isinstance(msg, Done) and msg.actor == "env":
                elapsed = time.perf_counter() - (first_at or time.perf_counter())
                break
        rt.stop()
        reasoner_log = rt.run_dir / "logs" / "reasoner.jsonl"
        reasoner_rate = _reasoner_thoughts_per_sec(reasoner_log)
    summary = msg.summary
    loop_steps = summary["loop_steps"] - 1  # timed from the first decision: one step fewer
    return {"steps_per_sec": loop_steps / max(elapsed, 1e-9), "env_steps_per_sec": loop_steps * settings["env.n_envs"] / max(elapsed, 1e-9),
            "late_steps": summary.get("late_steps", 0.0), "wait_share": summary.get("thought_wait_share", 0.0),
            "reasoner_thoughts_per_sec": reasoner_rate, "staleness_mean": summary.get("llm_staleness_steps", -1.0),
            "query_rate": summary.get("query_rate", 0.0), **lag.figures(),
            "reasoner_log": reasoner_log}


def _reasoner_thoughts_per_sec(log_file) -> float:
    """Thoughts per second of generation: a batch's thoughts share one latency (consecutive equal latencies = one batch)."""
    import json

    thoughts, busy_ms, last = 0, 0.0, None
    for line in log_file.read_text().splitlines():
        record = json.loads(line)
        if record.get("event") != "thought" or record.get("cached"):
            continue
        thoughts += 1
        if record["latency_ms"] != last:
            busy_ms += record["latency_ms"]
            last = record["latency_ms"]
    return thoughts / (busy_ms / 1000.0) if busy_ms else 0.0


def section_loop(args: argparse.Namespace) -> None:
    for mode in args.loop_modes.split(","):
        rows = []
        for n_envs in (int(size) for size in args.loop_sizes.split(",")):
            lockstep = run_loop(loop_settings(n_envs, mode, 1, args.loop_steps, args.threads))
            free = run_loop(loop_settings(n_envs, mode, 0, args.free_steps, args.threads))
            bound = lockstep["env_steps_per_sec"] / lockstep["reasoner_thoughts_per_sec"] if lockstep["reasoner_thoughts_per_sec"] else 0.0
            staleness = (f"{lockstep.get('llm_staleness_min_steps', -1):.0f}/{lockstep['staleness_mean']:.2f}/"
                         f"{lockstep.get('llm_staleness_max_steps', -1):.0f}")
            rows += [
                (f"{n_envs} env(s): loop steps/s", f"{lockstep['steps_per_sec']:.3f}", f"{free['steps_per_sec']:,.1f} free-running", "", "LLM's pace"),
                (f"{n_envs} env(s): env-steps/s", f"{lockstep['env_steps_per_sec']:.3f}", f"{free['env_steps_per_sec']:,.1f} free-running", "", ""),
                (f"{n_envs} env(s): env-steps/s vs reasoner thoughts/s", f"{lockstep['env_steps_per_sec']:.3f}",
                 f"{lockstep['reasoner_thoughts_per_sec']:.3f} thoughts/s", f"{bound:.2f}", ">= 0.9"),
                (f"{n_envs} env(s): query rate (thought <= 1 step old, steps >= 1)", f"{lockstep.get('lag_query_rate', 0.0):.1%}",
                 f"{free.get('lag_query_rate', 0.0):.1%} free-running", "", "100%"),
                (f"{n_envs} env(s): staleness min/mean/max (steps)", staleness, "", "", "1/1/1"),
                (f"{n_envs} env(s): late steps", f"{lockstep['late_steps']:.0f}", "", "", "0 at the default deadline"),
                (f"{n_envs} env(s): share of wall time waiting for the LLM", f"{lockstep['wait_share']:.1%}", "", "", "stated"),
            ]
        print_table(f"lockstep loop {mode}: env.thought_lag_steps = 1 ({args.loop_steps} steps) vs free-running "
                    f"({args.free_steps} steps), same settings", rows)


def _memo_hits(log_file) -> tuple[int, int]:
    """(thoughts served from the memo, thoughts) from the reasoner's thought log."""
    import json

    events = [json.loads(line) for line in log_file.read_text().splitlines()]
    thoughts = [e for e in events if e.get("event") == "thought"]
    return sum(1 for e in thoughts if e.get("memo")), len(thoughts)


def section_memo(args: argparse.Namespace) -> None:
    """Lockstep at temperature 0 on the default market, the memo on and off, alternating: hit rate and loop steps/s."""
    rows = []
    for memo in (True, False):
        settings = {**loop_settings(1, "single_shot", 1, args.loop_steps, args.threads), "reasoner.temperature": 0.0,
                    "reasoner.memo_enabled": memo}
        figures = run_loop(settings)
        hits, thoughts = _memo_hits(figures.pop("reasoner_log"))
        rows.append((f"memo {'on' if memo else 'off'}: loop steps/s", f"{figures['steps_per_sec']:.3f}",
                     f"{hits} of {thoughts} thoughts from the memo ({hits / max(thoughts, 1):.1%})", "", ""))
    print_table(f"exact thought reuse: lockstep, 1 env, single shot, temperature 0, {args.loop_steps} steps of the default market "
                "(its prompts carry the price, so a state rarely repeats within a run)", rows)


SECTIONS: dict[str, Section] = {
    "reasoner": section_reasoner, "prompt_form": section_prompt_form, "loop": section_loop, "memo": section_memo}


def main() -> None:
    parser = sections_parser(__doc__, SECTIONS)
    parser.add_argument("--sizes", default="1,2,4,8", help="envs thought about at once (reasoner)")
    parser.add_argument("--modes", default="single_shot,four_step", help="reasoner modes to measure")
    parser.add_argument("--repeats", type=int, default=2, help="repeats per variant; the best counts")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default config: 1)")
    parser.add_argument("--step-tokens", type=int, default=ReasonerConfig().max_tokens_per_step,
                        help="token limit of each four-step thought's analyse, options and risks steps (default: reasoner.max_tokens_per_step)")
    parser.add_argument("--decide-tokens", type=int, default=ReasonerConfig().max_decide_tokens,
                        help="token limit of the decide step and of a single-shot answer (default: reasoner.max_decide_tokens)")
    parser.add_argument("--loop-sizes", default="1,4,8", help="env counts of the loop section")
    parser.add_argument("--loop-modes", default="single_shot", help="reasoner modes of the loop section (add four_step: minutes per size)")
    parser.add_argument("--loop-steps", type=int, default=5, help="loop steps per lockstep run")
    parser.add_argument("--free-steps", type=int, default=300, help="loop steps per free-running run")
    run_sections(parser, SECTIONS)


if __name__ == "__main__":
    main()
