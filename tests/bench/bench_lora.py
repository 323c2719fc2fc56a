"""LoRA trainer benchmark (``bin/bench lora``): one round on the planted task with the real SmolLM2.

Reports, for a round of M experiences (default 64: 16 steps x batch 4, each example seen once)
with the reasoner's own single-shot prompt (``--prompt planted`` for the tests' short one):
- training tokens/s (prompt + answer tokens of the examples per second of forward and backward);
  the baseline is plain PEFT training of the same model on the same batches, every example's whole
  prompt through forward and backward (``lora.cache_shared_prefix = false``), measured in this run;
- seconds from the M-th experience to a published adapter file (round: evaluate, train, evaluate,
  export), and to the first decide answer of a running llama.cpp engine after the adapter's hot swap
  (what the reasoner does on lora.adapter, short of the bus);
- the trainer's peak resident memory;
- held-out match rate before -> after.
Reference (issue 12): about 56,000 tokens/s on an H100 with batch 16, seq 512.

``--market regimes|null --history N --rounds R``: does the LLM learn to read the market? N market-history
prompts of the training days (single shot, with the tape), at least 300 of later held-out days; R rounds;
then one line per path, ``<path> <market> match <base> -> <adapter>`` with the paired interval of the gain,
for peft (the trainer's weights) and llama.cpp (the exported GGUF adapter hot-swapped into a running engine,
under the decide grammar and the parser), beside the learnability ceiling, the answers' mix and the collapse flag.
``--four-step K``: the first K held-out prompts also asked as four-step thoughts, base and adapter, against single shot.
``--market news|news_null``: the same on the bars that make an event public only, and one ``news <market> <reader>:``
line per reader (base model, adapter, keyword rule, one side everywhere, the surprise's sign, the label): match with
the label and with the surprise's sign, hindsight $ a prompt, each with its 95 % interval; then how often the label is
the surprise's side (what bounds any reader of the words). docs/experiments/44-news.md has a run.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time

import msgspec

from actors.common.actions import ACTION_NAMES
from actors.common.llm.grammar import decision_grammar
from actors.lora.config import LoraConfig
from actors.lora.core import LoraCore
from actors.reasoner.config import ReasonerConfig
from tests.actors.lora.planted import PLANTED_REASONER, planted_experiences
from tests.bench.common import print_table

PROMPTS = {"single_shot": ReasonerConfig(mode="single_shot"), "planted": PLANTED_REASONER}
BASELINE_STEPS = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiences", type=int, default=64, help="M: experiences in the round")
    parser.add_argument("--steps", type=int, default=16, help="optimiser steps in the round")
    parser.add_argument("--batch", type=int, default=4, help="examples per optimiser step (default 4)")
    parser.add_argument("--rank", type=int, default=8, help="LoRA rank; alpha is twice it (default 8)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="where the rounds train (default cpu)")
    parser.add_argument("--prompt", default="single_shot", choices=tuple(PROMPTS),
                        help="the reasoner's default single-shot prompt, or the tests' short planted one")
    parser.add_argument("--market", default="planted", choices=("planted", "regimes", "null", "news", "news_null"),
                        help="planted: time one round; regimes / null: match rates on held-out days of that market; news / "
                             "news_null: the same on the bars that make an event public only (training and held out), beside "
                             "the keyword rule, one side everywhere and the oracles on the same prompts (actors/lora/news_prompts.py)")
    parser.add_argument("--history", type=int, default=1200, help="--market: training-day prompts")
    parser.add_argument("--market-days", type=int, default=None, metavar="D",
                        help="--market: synthetic days the prompts are drawn from (default: lora.market_history_days; 60 = the "
                             "run's default market)")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="--market: run.seed, which draws the market (another seed: another market of the same kind, "
                             "to ask whether an --adapter trained on seed 0 reads it too)")
    parser.add_argument("--held-out", type=int, default=300, help="--market: held-out-day prompts (fewer only to try it out)")
    parser.add_argument("--rounds", type=int, default=4, help="--market: training rounds (of --steps each)")
    parser.add_argument("--lr", type=float, default=None, help="--market: learning rate (default: the config's)")
    parser.add_argument("--action-loss", type=float, default=None, metavar="W",
                        help="--market: lora.action_loss_weight (default: the config's)")
    parser.add_argument("--text-loss", type=float, default=None, metavar="W",
                        help="--market: lora.text_loss_weight (default: the config's; 0 with --action-loss 1 teaches the choice alone)")
    parser.add_argument("--four-step", type=int, default=0, metavar="K",
                        help="--market: also ask the first K held-out prompts as four-step thoughts (the reasoner's Thinker, "
                             "llama.cpp, base model and adapter) beside single shot on the same K prompts (~4x slower each)")
    parser.add_argument("--reasons", type=int, default=0, metavar="K",
                        help="--market: also generate the whole answer to the first K held-out prompts through llama.cpp (base "
                             "model and adapter) and count the reasons that contradict their action (BUY with 'downtrend', ...)")
    parser.add_argument("--llama-threads", type=int, default=1, help="--market: llama.cpp threads of the answering engine")
    parser.add_argument("--last-round", action="store_true",
                        help="--market: when no round is published, answer (and --save-adapter) with the last round's adapter "
                             "anyway, to see what the gates refused")
    parser.add_argument("--save-adapter", default="", metavar="PATH", help="--market: copy the last round's GGUF adapter here")
    parser.add_argument("--adapter", default="", metavar="PATH",
                        help="--market: train nothing; answer through llama.cpp with this GGUF adapter (from --save-adapter "
                             "of a run on the same market, history and held-out counts, which draw the same prompts)")
    args = parser.parse_args()
    if args.market != "planted":
        market_bench(args)
        return

    reasoner = PROMPTS[args.prompt]
    config = LoraConfig(rank=args.rank, alpha=2.0 * args.rank, dropout=0.0, steps_per_round=args.steps,
                        batch_size=args.batch, learning_rate=4e-3, held_out_fraction=0.25, max_eval_examples=16,
                        publish_z=1.0, torch_threads=args.threads, device=args.device,
                        experiences_per_round=args.experiences)
    with tempfile.TemporaryDirectory() as run_dir:
        core = LoraCore(config, reasoner, run_dir)
        core.add_experiences(planted_experiences(args.experiences, reasoner=reasoner))
        load_started = time.perf_counter()
        trainer = core.load_trainer()  # the model load happens once per process, before the first round
        load_secs = time.perf_counter() - load_started
        baseline_tokens_per_sec = _plain_peft_tokens_per_sec(trainer, core)
        engine = _running_engine(core.model_path)
        round_started = time.perf_counter()
        report = core.run_round()
        round_secs = time.perf_counter() - round_started
        held_out = core.store.held_out(1)
        swap_secs = _swap_and_first_decide_secs(engine, str(report.version.path), held_out[0])
        core.close()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = report.result
    tokens_per_sec = result.stats.tokens_per_sec
    print_table(
        f"LoRA trainer: round of {args.experiences} experiences ({args.prompt} prompt), {args.steps} steps x batch "
        f"{args.batch}, rank {args.rank}, {args.device}, {args.threads} torch threads",
        [
            ("training tokens/s", f"{tokens_per_sec:,.0f}", f"{baseline_tokens_per_sec:,.0f} (plain PEFT)",
             f"{tokens_per_sec / baseline_tokens_per_sec:.2f}", "H100 ref ~56,000"),
            ("model load s (once per process)", f"{load_secs:.1f}", "", "", ""),
            ("train s (of the round)", f"{result.stats.secs:.1f}", "", "", ""),
            ("M-th experience -> adapter file s", f"{round_secs:.1f}", "", "", ""),
            ("M-th experience -> first thought on it s", f"{round_secs + swap_secs:.1f}", "", "", "<= 60"),
            ("trainer peak memory MiB", f"{peak_mib:,.0f}", "", "", ""),
            ("held-out match rate", f"{result.before:.2f} -> {result.after:.2f}", "", "",
             f"{result.held_out} held out; published: {report.version.published}"),
        ],
    )


def market_bench(args: argparse.Namespace) -> None:
    from actors.jobs.cli import build_parser
    from actors.jobs.common import configure
    from actors.jobs.lora import history_market, market_history_bars
    from actors.lora.llama_match import llama_answers

    overrides = {"data.scenario": args.market, "reasoner.mode": "single_shot"}
    if args.market_days is not None:
        overrides["lora.market_history_days"] = args.market_days
    if args.seed is not None:
        overrides["run.seed"] = args.seed
    config = configure(build_parser().parse_args(["lora"]), overrides)
    started = time.perf_counter()

    def say(text: str) -> None:  # progress on stderr: a 300-prompt run takes the better part of an hour on 2 cores
        print(f"bench lora [{time.perf_counter() - started:5.0f} s] {text}", file=sys.stderr, flush=True)

    bars, experiences, ceiling = market_history_bars(history_market(config), args.history, args.held_out)
    contexts = {f"hindsight:history:{bar.key}": bar.context for bar in bars}
    truth = _event_truth(history_market(config)) if args.market.startswith("news") else {}
    if truth:  # the news market: teach and judge on the bars that make an event public, where the words can be read
        from actors.lora.news_prompts import event_experiences

        experiences = event_experiences(experiences, truth)
    held = sum(1 for e in experiences if e.meta.get("held_out"))
    say(f"{len(experiences) - held} training prompts, {held} held out; ceiling {ceiling.classifier}")
    lora = msgspec.structs.replace(config.lora, max_eval_examples=held, steps_per_round=args.steps, batch_size=args.batch,
                                   rank=args.rank, alpha=2.0 * args.rank, learning_rate=args.lr or config.lora.learning_rate,
                                   torch_threads=args.threads,
                                   device=args.device)
    if args.action_loss is not None:
        lora = msgspec.structs.replace(lora, action_loss_weight=args.action_loss)
    if args.text_loss is not None:
        lora = msgspec.structs.replace(lora, text_loss_weight=args.text_loss)
    with tempfile.TemporaryDirectory() as run_dir:
        core = LoraCore(lora, config.reasoner, run_dir)
        core.add_experiences(experiences)
        held_out = core.store.held_out(held)
        labels = [e.action for e in held_out]
        trends = [str(contexts.get(e.id, {}).get("trend", "")) for e in held_out]
        if args.adapter:
            reports, published, adapter_path = [], [], args.adapter
        else:
            reports = _train_rounds(core, args, held, say)
            assert [e.id for e in core.store.held_out(held)] == [e.id for e in held_out]  # the rounds judged these prompts
            peft_base = list(reports[0].result.before_answers)  # the base model: nothing was published before round 1
            published = [r for r in reports if r.version.published]
            # What a reasoner would load: the last published adapter, else the base model (the gain is then nought).
            peft_adapter = list(published[-1].result.after_answers) if published else peft_base
            adapter_path = str(published[-1].version.path) if published else ""
            if args.last_round and not published:  # refused by the gates, answered all the same (say so in the lines)
                say(f"no round published ({reports[-1].result.verdict.why}); --last-round: answering with the last round's adapter")
                peft_adapter, adapter_path = list(reports[-1].result.after_answers), str(reports[-1].version.path)
            if args.save_adapter and adapter_path:  # for a later --adapter run (a GPU trains, 2 cores answer via llama.cpp)
                shutil.copyfile(adapter_path, args.save_adapter)
            # printed before the slower llama.cpp half, which a time limit may cut
            print(_match_line("peft", args.market, labels, peft_base, peft_adapter, lora.collapse_share), flush=True)
            print(_by_trend_line("peft", args.market, held_out, contexts, peft_adapter), flush=True)
            print(_usd_line("peft", args.market, held_out, peft_base, peft_adapter, trends), flush=True)
            if truth:
                _print_news_lines(args.market, held_out, truth, {"adapter (peft)": peft_adapter})
        engine = _running_engine(core.model_path, args.llama_threads)
        asked = held_out[: args.four_step]
        try:
            say(f"llama.cpp: base model answers on {held} held-out prompts, then the adapter's ({args.llama_threads} threads)")
            llama_base = llama_answers(engine, held_out)
            four_base = _four_step_answers(engine, config.reasoner, asked, contexts)
            reasons_base = _contradicting_reasons(engine, held_out[: args.reasons], config.reasoner.max_decide_tokens)
            llama_adapter, four_adapter, reasons_adapter = llama_base, four_base, reasons_base  # nothing published: base model
            if adapter_path:
                engine.load_adapter(adapter_path, published[-1].version.version if published else (reports[-1].version.version if reports else 1))
                llama_adapter = llama_answers(engine, held_out)
                four_adapter = _four_step_answers(engine, config.reasoner, asked, contexts)
                reasons_adapter = _contradicting_reasons(engine, held_out[: args.reasons], config.reasoner.max_decide_tokens)
        finally:
            engine.close()
        core.close()
    print(_match_line("llama.cpp", args.market, labels, llama_base, llama_adapter, lora.collapse_share))
    print(_by_trend_line("llama.cpp", args.market, held_out, contexts, llama_adapter))
    print(_usd_line("llama.cpp", args.market, held_out, llama_base, llama_adapter, trends))
    if truth:
        _print_news_lines(args.market, held_out, truth, {"base model (llama.cpp)": llama_base,
                                                         "adapter (llama.cpp)": llama_adapter})
    if args.reasons:
        print(f"llama.cpp {args.market} reasons contradicting the action (whole answers, first {args.reasons} held-out prompts): "
              f"base {reasons_base}, adapter {reasons_adapter}")
    if asked:
        _print_four_step(args.market, labels[: len(asked)], llama_base[: len(asked)], four_base, "base")
        _print_four_step(args.market, labels[: len(asked)], llama_adapter[: len(asked)], four_adapter, "adapter")
    label_mix = " ".join(f"{name}={share:.2f}" for name, share in ceiling.label_mix.items())
    print(f"ceiling {args.market} {ceiling.classifier} chance {ceiling.chance.value:.3f} labels {label_mix}")
    train_secs = sum(r.result.stats.secs for r in reports)
    if args.adapter:
        trained = f"adapter {args.adapter}, trained elsewhere"
    else:
        trained = (", ".join(f"v{r.version.version}:{r.result.verdict.why}" for r in reports)
                   + f"; {args.rounds} x {args.steps} steps x batch {args.batch}, {args.device}, train {train_secs:.0f} s")
    print(f"rounds {args.market} {trained}; {len(experiences) - held} training prompts, all {time.perf_counter() - started:.0f} s")


def _event_truth(config) -> dict:
    """Bar -> the truth of the event it makes public, from the same market history_bars draws (same config, seed)."""
    from actors.env.factory import make_env
    from actors.lora.news_prompts import event_truth_by_bar

    dataset = make_env(config, "train", seed=config.run.seed).split.dataset
    return event_truth_by_bar(tuple(dataset.events), dataset.event_truth)


def _print_news_lines(market: str, held_out, truth, answers: dict[str, list[int]]) -> None:
    """One line a reader on the held-out event-bar prompts: match with the hindsight label and with the surprise's
    sign, hindsight $ a prompt, each with its 95 % interval; the models' answers beside the floors'. Then how often the
    label is the surprise's side at all: a reader of the words can match the labels no better than that (plus luck)."""
    from actors.jobs.evaluation.decision_sources import MeanDifference
    from actors.lora.news_prompts import floor_answers, label_agreement, score

    def rate(hits: list[bool]) -> str:
        estimate = MeanDifference.of([float(h) for h in hits])
        low, high = estimate.interval
        return f"{estimate.value:.3f} [{low:.3f}, {high:.3f}]"

    for name, actions in {**answers, **floor_answers(held_out, truth)}.items():
        scored = score(actions, held_out, truth)
        mix = " ".join(f"{n}={actions.count(a) / len(actions):.2f}" for a, n in ((1, "BUY"), (2, "SELL"), (0, "HOLD")))
        print(f"news {market} {name}: match label {rate(scored.match_label)}, match surprise sign "
              f"{rate(scored.match_surprise)}, $ a prompt {MeanDifference.of(scored.usd).bracketed()}; {mix}; n={len(actions)}",
              flush=True)
    agree, hold = label_agreement(held_out, truth)
    print(f"news {market} labels: the surprise's side on {agree:.3f} of the event-bar prompts, HOLD on {hold:.3f} "
          f"(n={len(held_out)}): the bound on a reader's label match", flush=True)


def _train_rounds(core: LoraCore, args: argparse.Namespace, held: int, say) -> list:
    reports = []
    for round_number in range(1, args.rounds + 1):
        say(f"round {round_number}/{args.rounds}: {args.steps} steps, then peft answers on {held} held-out prompts")
        reports.append(core.run_round(progress=_every_tenth_step(say)))
        verdict = reports[-1].result.verdict
        say(f"round {round_number}/{args.rounds}: {verdict.why if verdict else 'done'} "
            f"(match {reports[-1].result.before:.3f} -> {reports[-1].result.after:.3f})")
    return reports


def _every_tenth_step(say):
    """A training step's progress line on every tenth step and the last: a round of 80 steps is 20 minutes on 2 cores."""
    def progress(step) -> None:
        if step.step % 10 == 0 or step.step == step.steps:
            say(f"  step {step.step}/{step.steps}: loss {step.loss:.3f}, {step.tokens_per_sec:,.0f} tokens/s")
    return progress


def _match_line(path: str, market: str, labels, base, adapter, collapse_share: float) -> str:
    """``<path> <market> match <base> -> <adapter> gain [interval]``, the adapter's answer mix and its collapse flag."""
    from actors.lora.ceiling import Z_95
    from actors.lora.publishing import is_collapsed, paired_gain

    hits_base, hits_adapter = [a == y for a, y in zip(base, labels)], [a == y for a, y in zip(adapter, labels)]
    gain, low, high = paired_gain(hits_base, hits_adapter, Z_95)
    collapsed, _, _ = is_collapsed(adapter, labels, collapse_share)
    mix = " ".join(f"{name}={adapter.count(a) / len(adapter):.2f}" for a, name in ((1, "BUY"), (2, "SELL"), (0, "HOLD")))
    # The floor that matters: one answer everywhere, the held-out labels' commonest (chosen in hindsight, so a
    # generous floor), on the same prompts: an adapter that only took a side scores +0 here whatever its gain.
    majority = max(set(labels), key=labels.count)
    over, over_low, over_high = paired_gain([y == majority for y in labels], hits_adapter, Z_95)
    return (f"{path} {market} match {sum(hits_base) / len(labels):.3f} -> {sum(hits_adapter) / len(labels):.3f} "
            f"gain {gain:+.3f} [{low:+.3f}, {high:+.3f}] n={len(labels)} answers {mix} collapse={collapsed} "
            f"vs one answer ({ACTION_NAMES[majority]}) {over:+.3f} [{over_low:+.3f}, {over_high:+.3f}]")


def _by_trend_line(path: str, market: str, held_out, contexts, answers) -> str:
    """The adapter's BUY share and the labels' BUY share per trend word of the prompt (up / sideways / down): an adapter
    that reads the word answers BUY more often where it says up; one that only took a side answers alike everywhere.
    And the answers' hindsight $ a prompt there (as ``_usd_line``): where the reading is worth trading and where not."""
    from actors.lora.dollars import answer_usd

    groups: dict[str, list[tuple[int, int, float]]] = {}
    for experience, answer in zip(held_out, answers):
        word = str(contexts.get(experience.id, {}).get("trend", "?"))
        groups.setdefault(word, []).append((answer, experience.action, answer_usd(answer, experience)))
    parts = []
    for word in sorted(groups, key=lambda w: ("up", "sideways", "down").index(w) if w in ("up", "sideways", "down") else 3):
        rows = groups[word]
        answered = sum(1 for answer, _, _ in rows if answer == 1) / len(rows)
        labelled = sum(1 for _, label, _ in rows if label == 1) / len(rows)
        hits = sum(1 for answer, label, _ in rows if answer == label) / len(rows)
        usd = sum(value for _, _, value in rows) / len(rows)
        parts.append(f"{word} n={len(rows)} answers BUY={answered:.2f} labels BUY={labelled:.2f} match={hits:.2f} ${usd:+.1f}")
    return f"{path} {market} by trend word: " + " | ".join(parts)


def _usd_line(path: str, market: str, held_out, base, adapter, trends) -> str:
    """Is the reading worth trading? Each answer valued as the trade it names from that bar (a long for BUY, a short for
    SELL, one contract, the label's stop, target and horizon, costs paid; nothing for HOLD), a held-out prompt's mean
    with its 95 % interval: base model, adapter, one side everywhere (the better one, chosen in hindsight), the trend
    word alone (BUY where the prompt says up, SELL where down, HOLD where sideways: does the adapter read more than
    that one word, which the policy sees too?) and the labels themselves (the oracle: the better side or nothing)."""
    from actors.common.actions import BUY, HOLD, SELL
    from actors.jobs.evaluation.decision_sources import MeanDifference
    from actors.lora.dollars import answer_usd

    def usd(answers) -> list[float]:
        return [answer_usd(answer, experience) for answer, experience in zip(answers, held_out)]

    def mean(values) -> str:
        return MeanDifference.of(values).bracketed()  # each against nothing (HOLD)

    n = len(held_out)
    side = max((BUY, SELL), key=lambda a: sum(usd([a] * n)))
    trend_rule = [{"up": BUY, "down": SELL}.get(word, HOLD) for word in trends]
    oracle = [max(answer_usd(BUY, e), answer_usd(SELL, e), 0.0) for e in held_out]
    return (f"{path} {market} hindsight $ a held-out prompt (one contract, costs paid): base {mean(usd(base))} -> adapter "
            f"{mean(usd(adapter))}; {ACTION_NAMES[side]} everywhere {mean(usd([side] * n))}; trend word "
            f"{mean(usd(trend_rule))}; labels (oracle) {mean(oracle)}; n={n}")


def _four_step_answers(engine, reasoner, experiences, contexts) -> list[int]:
    """The action of a four-step thought (the reasoner's Thinker: analyse, options, risks, decide under the grammar,
    the parser) at each experience's bar."""
    from actors.reasoner.thinker import Thinker

    thinker = Thinker(engine, msgspec.structs.replace(reasoner, mode="four_step"))
    return [thinker.think(contexts[e.id], e.mask).action for e in experiences]


def _print_four_step(market: str, labels, single, four, weights: str) -> None:
    """``four-step <market> <weights> match <single shot> vs <four step>`` on the same prompts, with the paired interval."""
    from actors.lora.ceiling import Z_95
    from actors.lora.publishing import paired_gain

    hits_single, hits_four = [a == y for a, y in zip(single, labels)], [a == y for a, y in zip(four, labels)]
    gain, low, high = paired_gain(hits_single, hits_four, Z_95)
    print(f"four-step {market} {weights} match single-shot {sum(hits_single) / len(labels):.3f} vs four-step "
          f"{sum(hits_four) / len(labels):.3f} difference {gain:+.3f} [{low:+.3f}, {high:+.3f}] n={len(labels)} (llama.cpp)")


def _plain_peft_tokens_per_sec(trainer, core: LoraCore) -> float:
    """A few training steps without the shared-prefix cache, the weights put back afterwards."""
    saved, config = trainer._snapshot(), trainer.config
    trainer.config = msgspec.structs.replace(config, cache_shared_prefix=False)
    try:
        trainer.train(trainer.store_sampler(core.store), 1)  # warm-up, not counted (the round runs warm too)
        stats = trainer.train(trainer.store_sampler(core.store), BASELINE_STEPS)
    finally:
        trainer.config = config
        trainer._restore(saved)
    return stats.tokens_per_sec


def _contradicting_reasons(engine, experiences, max_tokens: int) -> str:
    """``n/K`` answers whose reason names the trend against their action (the parser's reason_contradicts_action)."""
    from actors.common.llm.parser import DecisionParser
    from actors.lora.llama_match import llama_answers

    if not experiences:
        return "0/0"
    parser = DecisionParser()
    llama_answers(engine, experiences, max_tokens=max_tokens, parser=parser)  # the reasoner's whole decide answer
    return f"{parser.counts['reason_contradicts_action']}/{len(experiences)}"


def _running_engine(model_path: str, n_threads: int = 1):
    from actors.reasoner.engine import LlamaEngine

    return LlamaEngine(model_path=model_path, n_ctx=1024, temperature=0.0, n_threads=n_threads)


def _swap_and_first_decide_secs(engine, adapter: str, experience) -> float:
    """The reasoner's part: hot-swap the adapter into the live context, answer one decide prompt."""
    started = time.perf_counter()
    try:
        engine.load_adapter(adapter, 1)
        engine.chat(experience.messages, max_tokens=24, grammar=decision_grammar(experience.mask))
    finally:
        engine.close()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
