"""News benchmark (``bin/bench news``): what reading the news is worth on the synthetic news market (issue 44).

Sections (``--sections``, default all):

- floors: over ``--seeds`` markets of ``--days`` days, news against news_null (same events, same words): the
  keyword rule's accuracy on the words' and the surprises' signs and the share it takes a side on; hindsight $ per
  event of the keyword rule, flat and the oracle of the surprise's sign (actors/common/news_floors.py); the mean
  and its 95 % interval over all events.
- model: the base model (SmolLM2-135M through llama.cpp, the reasoner's Thinker and prompts) on ``--prompts``
  event-bar prompts of a news market's LoRA history (actors/lora/history.py: the bar's tape and its news line),
  against their hindsight label: match rate and hindsight $ a prompt beside the keyword rule on the same prompts,
  the trend word alone, always-HOLD and the label (the oracle of the barrier).
- lockstep: the real processes in lockstep (env.thought_lag_steps = 1) on the news market, reasoner.think_on =
  every_bar against news: loop steps/s, the share of decisions with a thought at most 1 step old (the latest
  thought), staleness, the reasoner's thoughts made and carried.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from tests.bench.common import Section, print_table, run_sections, sections_parser


def _mean_and_half(values: np.ndarray) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if len(values) < 2:
        return float(values.mean()) if len(values) else 0.0, 0.0
    return float(values.mean()), float(1.96 * values.std(ddof=1) / math.sqrt(len(values)))


def section_floors(args: argparse.Namespace) -> None:
    from actors.common.news_floors import dollars, event_outcomes, flat_actions, keyword_actions, keyword_sign, oracle_actions
    from actors.common.news_market import generate_news_market

    rows = []
    for name in ("news", "news_null"):
        per_rule: dict[str, list[np.ndarray]] = {"keyword": [], "flat": [], "oracle": []}
        signs, words, surprises = [], [], []
        for seed in range(args.seeds):
            market = generate_news_market(args.days, seed=seed, news=name)
            long, short = event_outcomes(market.bars, market.event_bar)
            for rule, actions in (("keyword", keyword_actions(market.events)), ("flat", flat_actions(len(market.events))),
                                  ("oracle", oracle_actions(market.surprise))):
                per_rule[rule].append(dollars(actions, long, short))
            signs += [keyword_sign(e.text) for e in market.events]
            words += market.text_sign.tolist()
            surprises += np.sign(market.surprise).tolist()
        signs_a, words_a, surprises_a = np.array(signs), np.array(words), np.array(surprises)
        sided = signs_a != 0
        rows.append((f"{name}: events", f"{len(signs_a)}", "", "", ""))
        rows.append((f"{name}: keyword takes a side on", f"{sided.mean():.1%}", "", "", ""))
        rows.append((f"{name}: keyword right on the words' sign", f"{np.mean(signs_a[sided] == words_a[sided]):.1%}", "", "", ""))
        rows.append((f"{name}: keyword right on the surprise's sign", f"{np.mean(signs_a[sided] == surprises_a[sided]):.1%}",
                     "0.8 x words", "", "reliability 0.8"))
        for rule, values in per_rule.items():
            mean, half = _mean_and_half(np.concatenate(values))
            rows.append((f"{name}: {rule} $ per event", f"{mean:+.1f} +- {half:.1f}", "", "", ""))
    print_table(f"news floors: {args.seeds} seeds x {args.days} days, hindsight $ per event (1 NQ, the LoRA labels' barrier)", rows)


def section_model(args: argparse.Namespace) -> None:
    from actors.common.actions import ACTION_NAMES, BUY, HOLD, SELL
    from actors.common.hindsight import action_pnl_usd
    from actors.common.news_floors import keyword_sign
    from actors.jobs.cli import build_parser
    from actors.jobs.common import configure
    from actors.jobs.lora import history_bars
    from actors.reasoner.engines import build_engine
    from actors.reasoner.thinker import Thinker

    config = configure(build_parser().parse_args(["lora"]), {"data.scenario": "news", "data.synthetic_days": args.days,
                                                            "reasoner.mode": "single_shot", "run.seed": args.seed})
    rows = history_bars(config, 4 * args.prompts, held_out=args.prompts)
    fresh = [row for row in rows if "news" in row.context and _fresh_text(row.context["news"])][: args.prompts]
    engine = build_engine(config.reasoner)
    thinker = Thinker(engine, config.reasoner)
    answers, started = [], time.perf_counter()
    for row in fresh:
        answers.append(thinker.think(row.context, row.mask).action)
    secs = time.perf_counter() - started
    engine.close()

    def priced(actions: list[int]) -> tuple[float, float, float]:
        values = np.array([action_pnl_usd(a, r.label.long.pnl_usd, r.label.short.pnl_usd) for a, r in zip(actions, fresh)])
        match = float(np.mean([a == r.label.action for a, r in zip(actions, fresh)]))
        return match, *_mean_and_half(values)

    keyword = [{1: BUY, -1: SELL}.get(keyword_sign(_fresh_text(r.context["news"])), HOLD) for r in fresh]
    trend = [{"up": BUY, "down": SELL}.get(str(r.context.get("trend")), HOLD) for r in fresh]
    table = []
    for name, actions in (("base model", answers), ("keyword rule", keyword), ("trend word", trend), ("always HOLD", [HOLD] * len(fresh)),
                          ("label (oracle)", [r.label.action for r in fresh])):
        match, mean, half = priced(actions)
        table.append((f"{name}: match / $ a prompt", f"{match:.1%}", f"{mean:+.1f} +- {half:.1f}", "", ""))
    spread = {ACTION_NAMES[a]: answers.count(a) for a in sorted(set(answers))}
    table.append(("base model answers", str(spread), f"{secs / max(len(fresh), 1):.2f} s a thought", "", ""))
    table.append(("labels", str({ACTION_NAMES[a]: [r.label.action for r in fresh].count(a) for a in (BUY, SELL, HOLD)}), "", "", ""))
    print_table(f"base model on {len(fresh)} event-bar prompts (news market, seed {args.seed}, {args.days} days, single shot)", table)


def _fresh_text(news: str) -> str:
    """The text of the event the bar made public ('' when the line holds none): "0 min ago" inside the session, "60 min
    ago" for an 08:30 release at the 09:30 open."""
    if not news.startswith("\nNews: "):
        return ""
    first = news[len("\nNews: "):].split("\n", 1)[0].split("; ")[0]
    ago, _, text = first.partition(" min ago: ")
    return text if ago in ("0", "60") else ""


def section_lockstep(args: argparse.Namespace) -> None:
    from tests.bench.bench_lockstep import loop_settings, run_loop

    table = []
    for think_on in ("every_bar", "news"):
        settings = {**loop_settings(1, "single_shot", 1, args.loop_steps, args.threads), "data.scenario": "news",
                    "reasoner.think_on": think_on}
        figures = run_loop(settings)
        table += [
            (f"think_on {think_on}: loop steps/s", f"{figures['steps_per_sec']:.2f}", "", "", ">= 10"),
            (f"think_on {think_on}: decisions with the latest thought (<= 1 step old)", f"{figures.get('lag_query_rate', 0.0):.1%}",
             "", "", ">= 99%"),
            (f"think_on {think_on}: staleness mean (steps)", f"{figures['staleness_mean']:.2f}", "", "", ""),
            (f"think_on {think_on}: reasoner thoughts/s of generation", f"{figures['reasoner_thoughts_per_sec']:.2f}", "", "", ""),
        ]
    print_table(f"lockstep on the news market: 1 env, single shot, {args.loop_steps} steps, think_on every_bar vs news", table)


SECTIONS: dict[str, Section] = {"floors": section_floors, "model": section_model, "lockstep": section_lockstep}


def main() -> None:
    parser = sections_parser(__doc__, SECTIONS)
    parser.add_argument("--seeds", type=int, default=5, help="floors: markets (seeds 0..n-1)")
    parser.add_argument("--days", type=int, default=120, help="floors and model: days of each market")
    parser.add_argument("--seed", type=int, default=0, help="model: the market's seed")
    parser.add_argument("--prompts", type=int, default=50, help="model: event-bar prompts")
    parser.add_argument("--loop-steps", type=int, default=200, help="lockstep: loop steps per run")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    run_sections(parser, SECTIONS)


if __name__ == "__main__":
    main()
