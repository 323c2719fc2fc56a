"""Reasoner benchmark (``bin/bench reasoner``): the LLM never blocks stepping, measured in one run.

1. Decision-loop steps/s with the reasoner on (always-on) vs off, same config, real
   processes (env, policy, fusion, risk, reasoner): within one run the reasoner process
   is frozen (SIGSTOP) in every other window, so "off" and "on" share the machine's
   drifting load. Target on/off >= 0.9. A second run does the same with
   reasoner.max_busy_fraction below 1 (the LLM idles after each thought). Beside it the
   fusion hop (policy.proposal sent -> fusion.decision sent, from the bus envelopes'
   monotonic send times): fusion never awaits a thought, so anything the LLM made the
   loop wait would show up here; target p99 < 1 ms.
2. Generation tokens/s through the reasoner's engine vs raw llama-cpp-python on the same
   model, prompt, threads and greedy sampling. Target >= 0.9x.
3. Four-step thought latency p50/p99 with prefix reuse (one growing conversation) vs
   without (KV cache dropped before every step), and the resulting query rate (share of
   decisions with a thought at most fusion.max_staleness_steps old) at 1 decision per
   second (live-like, the reasoner process fed at 1 Hz) and at full backtest speed (from
   the fusion decisions of the always-on windows in 1).
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from collections.abc import Iterator

import numpy as np

from actors.common.llm.model import default_model_path
from actors.common.llm.prompts import SAMPLE_CONTEXT, PromptBook, prompt_fields
from actors.jobs.config import load_config
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import LlamaEngine
from actors.reasoner.thinker import Thinker
from bus.messages import EnvObs, FusionDecision, Heartbeat, LlmThought, MarketContext, PolicyProposal
from runtime.testing import running_actors
from tests.bench.common import print_table

LOOP_ACTORS = ["env", "policy", "fusion", "risk"]
LOOP_CONFIG = {"env.n_envs": 4, "data.synthetic_days": 10, "policy.learn": False}
FLAT_MASK = [True, True, True, False, False, False]


# ---------------------------------------------------------------- 1. the loop, reasoner on / off


def run_loop(warmup_secs: float, windows: int, window_secs: float, busy_fraction: float) -> dict:
    """One run of the full loop + reasoner; the reasoner is frozen (SIGSTOP) in every other window.

    Frozen, the reasoner uses no CPU and the broker drops what its full queue cannot take,
    so the loop runs as without it; the on and off windows interleave within one run, so
    drift in a shared machine's load hits both alike.
    """
    overrides = {**LOOP_CONFIG, "reasoner.max_busy_fraction": busy_fraction,
                 "runtime.heartbeat_liveness": 10_000}  # a frozen actor is not dead
    per_arm = {arm: {"decisions": 0, "secs": 0.0, "hops_ns": [], "env_decisions": 0, "with_thought": 0,
                     "staleness": [], "window_rates": [], "arrival_age": [], "last_step": 0} for arm in ("on", "off")}
    with running_actors([*LOOP_ACTORS, "reasoner"], overrides=overrides) as rt:
        rt.client.subscribe(PolicyProposal, FusionDecision, LlmThought)
        rt.client.recv(LlmThought, timeout_secs=120)  # the model is loaded and thinking
        drain_until_list(rt.client, time.monotonic() + warmup_secs)
        pid = rt.pid("reasoner")
        try:
            for window in range(windows):
                arm = "off" if window % 2 == 0 else "on"
                os.kill(pid, signal.SIGSTOP if arm == "off" else signal.SIGCONT)
                drain_until_list(rt.client, time.monotonic() + 0.3)  # let the switch settle
                measure_window(rt.client, window_secs, per_arm[arm])
        finally:
            os.kill(pid, signal.SIGCONT)
    for figures in per_arm.values():
        figures["steps_per_sec"] = figures["decisions"] / figures["secs"]
    per_arm["ratio"] = paired_ratio(per_arm["on"]["window_rates"], per_arm["off"]["window_rates"])
    return per_arm


def paired_ratio(on_rates: list[float], off_rates: list[float]) -> float:
    """Median over "on" windows of on / mean(the off windows just before and after it).

    Robust to the load spikes of a shared machine, which hit a window or two, not the run.
    """
    ratios = [on / ((off_rates[i] + off_rates[min(i + 1, len(off_rates) - 1)]) / 2) for i, on in enumerate(on_rates)]
    return float(np.median(ratios))


def measure_window(client, window_secs: float, figures: dict) -> None:
    proposal_sent: dict[int, int] = {}
    decisions_before = figures["decisions"]
    started = time.monotonic()
    for decoded in drain_until(client, started + window_secs):
        msg = decoded.msg
        if isinstance(msg, PolicyProposal):
            proposal_sent[msg.step] = decoded.sent_ns
        elif isinstance(msg, LlmThought):
            figures["arrival_age"].append(figures["last_step"] - msg.step_seen)
        elif isinstance(msg, FusionDecision):
            figures["decisions"] += 1
            figures["last_step"] = max(figures["last_step"], msg.step)
            if msg.step in proposal_sent:
                figures["hops_ns"].append(decoded.sent_ns - proposal_sent.pop(msg.step))
            usable = msg.llm_actions >= 0
            figures["env_decisions"] += len(msg.env_ids)
            figures["with_thought"] += int(usable.sum())
            figures["staleness"].extend(msg.llm_staleness[usable].tolist())
    elapsed = time.monotonic() - started
    figures["secs"] += elapsed
    figures["window_rates"].append((figures["decisions"] - decisions_before) / elapsed)


def drain_until_list(client, deadline: float) -> list:
    return list(drain_until(client, deadline))


def drain_until(client, deadline: float) -> Iterator:
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            yield client.recv_decoded(timeout_secs=remaining)
        except TimeoutError:
            return


# ---------------------------------------------------------------- 2. tokens/s, engine vs raw


def tokens_per_sec(reps: int, max_tokens: int) -> tuple[float, float]:
    """Greedy generation from the same cached prompt: the reasoner's engine vs raw Llama."""
    from actors.common.llm.model import open_llama

    model_path = str(default_model_path())
    engine = LlamaEngine(model_path=model_path, n_ctx=2048, n_threads=1, temperature=0.0, top_p=1.0)
    raw = open_llama(model_path=model_path, n_ctx=2048, n_threads=1, n_threads_batch=1, n_batch=256, seed=0, verbose=False)
    book = PromptBook(ReasonerConfig())
    messages = book.opening(prompt_fields(SAMPLE_CONTEXT, FLAT_MASK), "analyse")
    prompt_tokens = raw.tokenize(engine.render(messages).encode(), add_bos=False, special=True)
    def ours() -> float:
        started = time.perf_counter()
        completion = engine.chat(messages, max_tokens=max_tokens)
        return completion.generated_tokens / (time.perf_counter() - started)

    def theirs() -> float:
        started = time.perf_counter()
        result = raw.create_completion(prompt_tokens, max_tokens=max_tokens, temperature=0.0, top_p=1.0, seed=0)
        return result["usage"]["completion_tokens"] / (time.perf_counter() - started)

    ours_rates, raw_rates = [], []
    try:
        ours(), theirs()  # fill both KV caches with the prompt
        for rep in range(reps):
            # Alternate who goes first, so drift in the machine's load hits both alike.
            if rep % 2:
                raw_rates.append(theirs())
                ours_rates.append(ours())
            else:
                ours_rates.append(ours())
                raw_rates.append(theirs())
    finally:
        engine.close()
        raw.close()
    return float(np.median(ours_rates)), float(np.median(raw_rates))


# ---------------------------------------------------------------- 3. thought latency and query rate


def contexts(n: int) -> list[dict]:
    rng = np.random.default_rng(0)
    return [
        dict(SAMPLE_CONTEXT, price=18000.0 + 25 * i, rsi=float(rng.uniform(20, 80)),
             trend=("up", "down", "sideways")[i % 3], momentum=float(rng.normal()))
        for i in range(n)
    ]


def thought_latencies(n: int, reuse_prefix: bool) -> list[float]:
    config = ReasonerConfig(reuse_prefix=reuse_prefix)
    engine = LlamaEngine(model_path=str(default_model_path()), n_ctx=config.n_ctx, n_threads=config.n_threads,
                         temperature=config.temperature, top_p=config.top_p)
    thinker = Thinker(engine, config)
    try:
        return [thinker.think(context, FLAT_MASK).latency_ms for context in contexts(n)]
    finally:
        engine.close()


def live_query_rate(steps: int, interval_secs: float, max_staleness: int) -> tuple[float, float, int]:
    """Feed the reasoner process one env at 1 decision per interval; at each decision, how old is the freshest thought?"""
    context_list = contexts(steps)
    with running_actors(["reasoner"], overrides={"reasoner.cache_enabled": False}) as rt:
        rt.client.subscribe(LlmThought, Heartbeat)
        rt.client.recv(Heartbeat, timeout_secs=60, where=lambda h: h.actor == "reasoner")
        time.sleep(0.3)  # its subscription reaches our publisher
        rt.client.publish(obs_message(0, context_list[0]))
        rt.client.recv(LlmThought, timeout_secs=120)  # the model is loaded
        freshest = 0
        staleness: list[int] = []
        thoughts = 0
        next_at = time.monotonic()
        for step in range(1, steps):
            for decoded in drain_until(rt.client, next_at):
                if isinstance(decoded.msg, LlmThought):
                    freshest = max(freshest, decoded.msg.step_seen)
                    thoughts += 1
            rt.client.publish(obs_message(step, context_list[step]))
            # Fusion decides on step N right after env.obs(N), with what has arrived by then.
            staleness.append(step - freshest)
            next_at += interval_secs
    usable = [s for s in staleness if s <= max_staleness]
    return len(usable) / len(staleness), float(np.mean(staleness)), thoughts


def obs_message(step: int, context: dict) -> EnvObs:
    return EnvObs(env_ids=[0], episode_ids=[0], step=step, obs=np.zeros((1, 261), np.float32),
                  masks=np.array([FLAT_MASK]), contexts=[MarketContext(**context)])


# ---------------------------------------------------------------- report


def p50_p99(values) -> tuple[float, float]:
    arr = np.asarray(values, dtype=np.float64)
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 99))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench reasoner", description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=9, help="alternating off/on windows per loop run, odd (default 9)")
    parser.add_argument("--window-secs", type=float, default=2.5, help="length of one window (default 2.5)")
    parser.add_argument("--warmup-secs", type=float, default=2.0, help="loop warm-up after the first thought (default 2)")
    parser.add_argument("--busy-fraction", type=float, default=0.3,
                        help="reasoner.max_busy_fraction of the second loop run (default 0.3)")
    parser.add_argument("--thoughts", type=int, default=2, help="four-step thoughts per latency measurement (default 2)")
    parser.add_argument("--token-reps", type=int, default=10, help="repetitions of the tokens/s comparison (default 10)")
    parser.add_argument("--live-steps", type=int, default=20, help="decisions at 1 per second for the live query rate (default 20)")
    args = parser.parse_args(argv)
    max_staleness = load_config(None, {}).fusion.max_staleness_steps

    loop = run_loop(args.warmup_secs, args.windows, args.window_secs, busy_fraction=1.0)
    throttled = run_loop(args.warmup_secs, args.windows, args.window_secs, busy_fraction=args.busy_fraction)
    ours_tps, raw_tps = tokens_per_sec(args.token_reps, max_tokens=64)
    with_reuse = thought_latencies(args.thoughts, reuse_prefix=True)
    without_reuse = thought_latencies(args.thoughts, reuse_prefix=False)
    live_rate, live_staleness, live_thoughts = live_query_rate(args.live_steps, 1.0, max_staleness)

    on, off = loop["on"], loop["off"]
    hop_on, hop_off = p50_p99(on["hops_ns"]), p50_p99(off["hops_ns"])
    full_rate = on["with_thought"] / max(on["env_decisions"], 1)
    arrival_age = float(np.median(on["arrival_age"])) if on["arrival_age"] else float("nan")
    reuse_p50, reuse_p99 = p50_p99(with_reuse)
    plain_p50, plain_p99 = p50_p99(without_reuse)

    print_table(
        f"reasoner benchmark: loop {' + '.join(LOOP_ACTORS)} + reasoner, {LOOP_CONFIG['env.n_envs']} envs, "
        f"{args.windows} alternating {args.window_secs} s windows (reasoner frozen in every other); "
        f"SmolLM2-135M Q4_1, 1 thread; K = {max_staleness} steps",
        [
            ("loop steps/s, reasoner on vs off (always-on)", f"{on['steps_per_sec']:.1f}",
             f"{off['steps_per_sec']:.1f} (frozen)", f"{loop['ratio']:.2f} (paired median)", ">= 0.9"),
            (f"loop steps/s, max_busy_fraction = {args.busy_fraction}", f"{throttled['on']['steps_per_sec']:.1f}",
             f"{throttled['off']['steps_per_sec']:.1f} (frozen)", f"{throttled['ratio']:.2f} (paired median)", ">= 0.9"),
            ("fusion hop p50 / p99 ms (proposal -> decision)", f"{hop_on[0] / 1e6:.3f} / {hop_on[1] / 1e6:.3f}",
             f"{hop_off[0] / 1e6:.3f} / {hop_off[1] / 1e6:.3f} (frozen)", f"{hop_on[1] / hop_off[1]:.2f}", "p99 < 1 ms"),
            ("generation tokens/s (greedy, 64 tokens)", f"{ours_tps:.1f}", f"{raw_tps:.1f} (raw llama-cpp-python)",
             f"{ours_tps / raw_tps:.2f}", ">= 0.9"),
            ("four-step thought p50 / p99 ms", f"{reuse_p50:.0f} / {reuse_p99:.0f} (prefix reuse)",
             f"{plain_p50:.0f} / {plain_p99:.0f} (no reuse)", f"{plain_p50 / reuse_p50:.2f}x faster", "-"),
            ("query rate at 1 decision/s (1 env, live-like)", f"{live_rate:.0%}",
             f"mean staleness {live_staleness:.1f} steps", f"thoughts: {live_thoughts}", "every decision"),
            ("query rate at full speed (always-on windows)", f"{full_rate:.2%}",
             f"a thought is {arrival_age:.0f} steps old on arrival", f"{on['steps_per_sec']:.0f} steps/s", "-"),
        ],
    )


if __name__ == "__main__":
    main()
