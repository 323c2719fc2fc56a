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
- models: each of ``--models`` (reasoner.model) on the same ``--prompts`` event-bar prompts, risk read on: direction
  against the hindsight label, risk read against the hindsight volatility level (actors/common/news_risk.py), the share
  parsed, CPU seconds a thought and match per CPU second, beside always the training days' commonest level
  (docs/experiments/gemma.md).
- lockstep: the real processes (env, policy, reasoner, fusion, risk) in lockstep (env.thought_lag_steps = 1) on the news
  market from a session's open, reasoner.think_on = every_bar (``--every-bar-steps``: every bar waits for a thought, its
  pace is steady) against news (``--loop-steps``, 390 = the whole session with its events; one run per
  ``--think-every-bars`` value): loop steps/s, the share of decisions with a thought at most 1 step old (the latest
  thought) and with any usable thought, the thought's real age in bars (from the step its prompt read: a carried
  answer is as old as the thought it repeats, and fusion drops it past fusion.max_staleness_steps; the carried
  answers' mean and max real age beside), model thoughts per bar and
  seconds a thought, why the reasoner thought, and the loop's time split: waiting for the model against the rest (ms a
  step), with the seconds a thought may take for 10 steps/s at that share of bars thought about, and the pace projected
  to quiet cores: each thought at the reasoner's CPU time for it (one llama.cpp thread: its wall time on a core of its
  own), the rest as measured.
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


def section_models(args: argparse.Namespace) -> None:
    """Each of ``--models`` on the same event-bar prompts, its risk read asked for (reasoner.risk_read): direction against
    the triple-barrier label, risk read against the hindsight volatility level (actors/common/news_risk.py, thresholds
    fitted on the training days), the share parsed, and CPU seconds a thought (this process's CPU time while thinking:
    the box is shared, so wall time would measure the neighbours)."""
    from actors.jobs.cli import build_parser
    from actors.jobs.common import configure
    from actors.jobs.lora import history_bars

    settings = {"data.scenario": "news", "data.synthetic_days": args.days, "reasoner.mode": "single_shot",
                "reasoner.risk_read": True, "run.seed": args.seed}
    config = configure(build_parser().parse_args(["lora"]), settings)
    rows = history_bars(config, 4 * args.prompts, held_out=args.prompts)
    fresh = [row for row in rows if "news" in row.context and _fresh_text(row.context["news"])][: args.prompts]
    levels, commonest = risk_levels(config, rows, fresh)
    table = [("prompts / with a risk label", f"{len(fresh)} / {int((levels >= 0).sum())}", "", "", ""),
             ("always the training days' commonest level: risk match", _share(levels == commonest, levels >= 0), "", "", "")]
    for model in args.models.split(","):
        figures = model_figures(configure(build_parser().parse_args(["lora"]), {**settings, "reasoner.model": model}), fresh, levels,
                                args.record)
        table += model_rows(model, figures)
    print_table(f"models side by side on {len(fresh)} event-bar prompts (news market, seed {args.seed}, {args.days} days, single "
                f"shot, risk read on, n_threads 1)", table)


def risk_levels(config, rows, fresh) -> tuple[np.ndarray, int]:
    """(each fresh prompt's hindsight risk level, -1 where its 15 bars leave the session; the commonest level of the
    training days' event-bar prompts), thresholds fitted on every bar of the training days."""
    from actors.common.news_risk import bucket, fit_thresholds, forward_range_atr
    from actors.env.factory import make_env

    data = make_env(config, "train", seed=config.run.seed).split.dataset
    high, low, close = (np.asarray(x, dtype=np.float64) for x in (data.high, data.low, data.close))
    day = np.asarray(data.features.session_id)
    last_train_day = max(row.day for row in rows if not row.held_out)
    thresholds = fit_thresholds(forward_range_atr(high, low, close, np.flatnonzero(day <= last_train_day)))
    levels = bucket(forward_range_atr(high, low, close, [int(row.key) for row in fresh]), thresholds)
    trained = [int(level) for level, row in zip(levels, fresh) if not row.held_out and level >= 0]
    return levels, max(set(trained), key=trained.count) if trained else 0


def model_figures(config, fresh, levels: np.ndarray, record: str = "") -> dict:
    """One model's thoughts on the prompts: answers, risk reads, parse outcome and CPU seconds (each thought appended to
    ``record`` as a JSON line as it comes, when given: a long run cut short keeps what it measured)."""
    import json

    from actors.reasoner.engines import build_engine
    from actors.reasoner.thinker import Thinker

    engine = build_engine(config.reasoner)
    thinker = Thinker(engine, config.reasoner)
    thinker.think(fresh[0].context, fresh[0].mask)  # reads the shared system prompt once, as a running reasoner has
    thoughts, started = [], time.process_time()
    for row, level in zip(fresh, levels.tolist()):
        before = time.process_time()
        thoughts.append(thinker.think(row.context, row.mask))
        if record:
            with open(record, "a") as out:
                t = thoughts[-1]
                out.write(json.dumps({"model": config.reasoner.model, "bar": row.key, "action": t.action, "label": row.label.action,
                                      "risk": t.risk_level, "level": level, "fallback": t.fallback, "decision": t.decision,
                                      "cpu_secs": time.process_time() - before, "held_out": bool(row.held_out)}) + "\n")
    cpu = time.process_time() - started
    engine.close()
    labelled = levels >= 0
    reads = np.array([t.risk_level for t in thoughts])
    return {"direction": np.array([t.action == r.label.action for t, r in zip(thoughts, fresh)]),
            "risk": reads == levels, "labelled": labelled, "read": reads >= 0,
            "parsed": np.array([not t.fallback for t in thoughts]), "cpu_per_thought": cpu / len(fresh),
            "reads": {level: int((reads == level).sum()) for level in sorted(set(reads.tolist()))},
            "actions": {a: sum(t.action == a for t in thoughts) for a in sorted({t.action for t in thoughts})}}


def model_rows(model: str, f: dict) -> list[tuple[str, str, str, str, str]]:
    from actors.common.actions import ACTION_NAMES
    from actors.common.news_risk import RISK_LEVELS

    cpu = f["cpu_per_thought"]
    direction, risk = float(f["direction"].mean()), float(f["risk"][f["labelled"]].mean())
    names = {-1: "none", **dict(enumerate(RISK_LEVELS))}
    return [(f"{model}: direction match (label)", _share(f["direction"], np.ones_like(f["direction"])), "", "", ""),
            (f"{model}: risk read match (hindsight level)", _share(f["risk"], f["labelled"]), "", "", ""),
            (f"{model}: parsed / risk read present", f"{f['parsed'].mean():.1%} / {f['read'].mean():.1%}", "", "", ""),
            (f"{model}: CPU seconds a thought", f"{cpu:.2f}", "", "", ""),
            (f"{model}: match per CPU second (direction / risk)", f"{direction / cpu:.3f} / {risk / cpu:.3f}", "", "", ""),
            (f"{model}: answers / reads", str({ACTION_NAMES[a]: n for a, n in f["actions"].items()}),
             str({names[level]: n for level, n in f["reads"].items()}), "", "")]


def _share(hits: np.ndarray, among: np.ndarray) -> str:
    """'0.62 [0.50, 0.74] of 60': the share with its 95 % normal interval."""
    n = int(np.sum(among))
    share = float(np.mean(hits[among.astype(bool)])) if n else float("nan")
    half = 1.96 * math.sqrt(share * (1 - share) / max(n, 1)) if n else float("nan")
    return f"{share:.3f} [{share - half:.3f}, {share + half:.3f}] of {n}"


def _fresh_text(news: str) -> str:
    """The text of the event the bar made public ('' when the line holds none): "0 min ago" inside the session, "60 min
    ago" for an 08:30 release at the 09:30 open."""
    if not news.startswith("\nNews: "):
        return ""
    first = news[len("\nNews: "):].split("\n", 1)[0].split("; ")[0]
    ago, _, text = first.partition(" min ago: ")
    return text if ago in ("0", "60") else ""


def lockstep_settings(think_on: str, steps: int, args: argparse.Namespace, every_bars: int = 10) -> dict:
    """The lockstep loop (1 env, single shot, env.thought_lag_steps = 1) on the news market from a session's open (a
    full session is 390 bars, with its releases and headlines), think_on and think_every_bars as given."""
    from tests.bench.bench_lockstep import loop_settings

    return {**loop_settings(1, "single_shot", 1, steps, args.threads), "data.scenario": "news", "env.episode_start": "session_open",
            "env.episode_bars": 390, "reasoner.think_on": think_on, "reasoner.think_every_bars": every_bars,
            "reasoner.max_decide_tokens": args.decide_tokens}


def lockstep_figures(figures: dict, steps: int) -> dict[str, float]:
    """The loop's figures (tests/bench/bench_lockstep.py run_loop) with the reasoner's log read: thoughts the model made
    (per bar, seconds each), the carried answers' age, why it thought (think_on = news), and the loop's time split."""
    import json

    thought_secs, cpu_secs, stats = [], [], {}
    for line in figures["reasoner_log"].read_text().splitlines():
        record = json.loads(line)
        if record.get("event") == "thought" and not record.get("cached"):
            thought_secs.append(record["latency_ms"] / 1000.0)
            cpu_secs.append(record.get("cpu_ms", 0) / 1000.0)
        elif record.get("event") == "reasoner_stats":
            stats = record  # the last one: logged once more as the reasoner stops
    steps = max(steps - 1, 1)  # timed from the first decision (bench_lockstep.run_loop)
    elapsed = steps / max(figures["steps_per_sec"], 1e-9)
    waited = figures["wait_share"] * elapsed
    thoughts_per_bar = len(thought_secs) / steps
    rest_per_step = (elapsed - waited) / steps
    return {
        "steps_per_sec": figures["steps_per_sec"], "latest_share": figures.get("lag_query_rate", 0.0),
        "with_thought_share": figures.get("query_rate", 0.0),
        # bars between the market state the model read and the decision: fusion ages a carried answer from the step its
        # prompt read (LlmThought.step_built), so its staleness is the real age (issue 51)
        "age_mean": figures["staleness_mean"], "age_max": figures.get("llm_staleness_max_steps", -1.0),
        "carried_age_mean": stats.get("mean_carried_age_bars", 0.0), "carried_age_max": stats.get("max_carried_age_bars", 0.0),
        "thoughts_per_bar": thoughts_per_bar, "secs_per_thought": float(np.mean(thought_secs)) if thought_secs else 0.0,
        "cpu_secs_per_thought": float(np.mean(cpu_secs)) if cpu_secs else 0.0,
        "wait_share": figures["wait_share"], "rest_ms_per_step": 1000.0 * rest_per_step,
        # the seconds a thought may take for the loop to make 10 steps/s at this share of bars thought about
        "thought_secs_for_10": (0.1 - rest_per_step) / thoughts_per_bar if thoughts_per_bar else float("inf"),
        # a quiet machine's pace: the loop's rest as measured (no better on idle cores) and each thought at its CPU time
        "projected_steps_per_sec": 1.0 / (rest_per_step + thoughts_per_bar * float(np.mean(cpu_secs or [0.0]))),
        "triggers": {reason: int(stats.get(f"think_on_{reason}", 0)) for reason in ("first", "event", "position", "interval")},
    }


def lockstep_rows(name: str, figures: dict[str, float]) -> list[tuple[str, str, str, str, str]]:
    triggers = figures["triggers"]
    return [
        (f"{name}: loop steps/s", f"{figures['steps_per_sec']:.2f}", "", "", ">= 10"),
        (f"{name}: decisions with the latest thought (<= 1 step old) / with a usable thought",
         f"{figures['latest_share']:.1%} / {figures['with_thought_share']:.1%}", "", "", ">= 99%"),
        (f"{name}: thought age used, bars since the model read the market (mean; max)",
         f"{figures['age_mean']:.2f}; {figures['age_max']:.0f}", "", "", ""),
        (f"{name}: carried answers' real age (mean; max)", f"{figures['carried_age_mean']:.2f}; {figures['carried_age_max']:.0f}", "", "", ""),
        (f"{name}: model thoughts per bar", f"{figures['thoughts_per_bar']:.3f}", "", "", ""),
        (f"{name}: seconds a thought (wall / CPU of the reasoner)", f"{figures['secs_per_thought']:.2f} / {figures['cpu_secs_per_thought']:.2f}",
         "", "", ""),
        (f"{name}: time split, waiting for the model / the rest (ms a step)",
         f"{figures['wait_share']:.1%} / {figures['rest_ms_per_step']:.1f} ms", "", "", ""),
        (f"{name}: seconds a thought may take for 10 steps/s", f"{figures['thought_secs_for_10']:.2f}", "", "", ""),
        (f"{name}: loop steps/s projected to quiet cores (each thought at its CPU time)", f"{figures['projected_steps_per_sec']:.2f}",
         "", "", ">= 10"),
        *([(f"{name}: thoughts asked for: first / event / position / interval",
            " / ".join(str(triggers[k]) for k in ("first", "event", "position", "interval")), "", "", "")] if sum(triggers.values()) else []),
    ]


def section_lockstep(args: argparse.Namespace) -> None:
    from tests.bench.bench_lockstep import run_loop

    runs = [("every_bar", args.every_bar_steps, 10)] + [("news", args.loop_steps, int(n)) for n in args.think_every_bars.split(",")]
    table = []
    for think_on, steps, every_bars in runs:
        name = think_on if think_on == "every_bar" else f"news, think_every_bars {every_bars}"
        table += lockstep_rows(name, lockstep_figures(run_loop(lockstep_settings(think_on, steps, args, every_bars)), steps))
    print_table(f"lockstep on the news market from a session's open: 1 env, single shot, every_bar {args.every_bar_steps} steps, "
                f"news {args.loop_steps} steps, n_threads {args.threads}, max_decide_tokens {args.decide_tokens}", table)


SECTIONS: dict[str, Section] = {"floors": section_floors, "model": section_model, "models": section_models,
                                "lockstep": section_lockstep}


def main() -> None:
    parser = sections_parser(__doc__, SECTIONS)
    parser.add_argument("--seeds", type=int, default=5, help="floors: markets (seeds 0..n-1)")
    parser.add_argument("--days", type=int, default=120, help="floors and model: days of each market")
    parser.add_argument("--seed", type=int, default=0, help="model: the market's seed")
    parser.add_argument("--prompts", type=int, default=50, help="model: event-bar prompts")
    parser.add_argument("--record", default="", help="models: append each thought as a JSON line to this file")
    parser.add_argument("--models", default="smollm2-135m,gemma3-270m", help="models: comma list of reasoner.model values")
    parser.add_argument("--loop-steps", type=int, default=390, help="lockstep: loop steps of each think_on = news run (390: a session)")
    parser.add_argument("--every-bar-steps", type=int, default=40,
                        help="lockstep: loop steps of the think_on = every_bar run (every bar waits for a thought: its pace is steady)")
    parser.add_argument("--think-every-bars", default="10,30", help="lockstep: comma list of reasoner.think_every_bars, a news run each")
    parser.add_argument("--decide-tokens", type=int, default=32, help="lockstep: reasoner.max_decide_tokens")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (reasoner.n_threads)")
    run_sections(parser, SECTIONS)


if __name__ == "__main__":
    main()
