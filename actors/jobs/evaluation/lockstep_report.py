"""The report's lockstep section: where the fusion and LLM rows come from, the rows right after an event, and fused
against its floors (``evaluate --lockstep-decisions N``, metrics.json key ``lockstep``); and the cell formats the
whole report shares (a value, an interval, a share of n)."""

from __future__ import annotations

import math


def num(value: float, fmt: str = ",.2f") -> str:
    return "n/a" if value is None or not math.isfinite(value) else format(value, fmt)


def interval(pair, fmt: str = ",.2f") -> str:
    low, high = pair
    return "n/a" if not (math.isfinite(low) and math.isfinite(high)) else f"[{format(low, fmt)}, {format(high, fmt)}]"


def lockstep_lines(summary) -> list[str]:
    """--lockstep-decisions: where the fusion and LLM rows of the success table come from (``Summary.lockstep``, the
    lockstep run's own JSON); none without it."""
    lockstep = summary.lockstep
    if not lockstep:
        return []
    lines = ["", "## Fusion and the LLM in lockstep", "",
             f"The last fold's policy (fold {lockstep['fold'] + 1}, its first seed at the last budget; {lockstep['policy_checkpoint']}) "
             f"played the first {lockstep['decisions_requested']} decisions of its test window (day {lockstep['test_start_day']} on) "
             "through the actors, each decision with the previous step's thought; every flat decision with a thought and a "
             f"hindsight label is scored. The success table's fusion rows read the {lockstep['rows_read']} run.", "",
             "| run | decisions scored | RL = label | LLM = label | fused = label | fusion chose the right source | RL/LLM agreement | "
             "fused minus RL (paired) | fused minus RL, hindsight $ a decision | fusion LLM trust (mean) | LLM query rate |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name in ("base", "adapter"):
        run = lockstep.get(name)
        if run is None:
            continue
        scores, llm = run["scores"], run["llm"]
        shares = " | ".join(share_cell(scores[key]) for key in ("rl", "llm", "fused", "chose_right_source", "agreement"))
        paired = scores["fused_vs_rl"]
        dollars = scores.get("fused_vs_rl_usd", {})
        lines.append(f"| {name} ({run['dir']}) | {scores['decisions']} | {shares} | {share_cell(paired, '+.2f')} | "
                     f"{share_cell(dollars, '+,.1f') if dollars.get('n') else 'n/a'} | "
                     f"{num(llm.get('llm_trust'))} | {num(llm.get('query_rate'))} |")
    lines += age_lines(lockstep)
    lines += event_lines(lockstep)
    lines += risk_lines(lockstep)
    warmups = [(name, lockstep[name]["fusion_warmup"]) for name in ("base", "adapter")
               if name in lockstep and "fusion_warmup" in lockstep[name]]
    for name, warmup in warmups:
        figures = warmup["figures"]
        learned = (f"{int(figures.get('hindsight_experiences', 0))} hindsight lessons, {int(figures.get('experiences', 0))} "
                   f"from closed trades, {int(figures.get('network_updates', 0))} updates")
        scores = warmup.get("scores") or {}
        seen = (f" On its {scores['decisions']} scored flat decisions the LLM's advice matched the label "
                f"{share_cell(scores['llm'])}, and each source's action was worth, in hindsight $ a decision: fused "
                f"{num(scores['mean_usd']['fused'], '+,.1f')}, RL {num(scores['mean_usd']['rl'], '+,.1f')}, LLM "
                f"{num(scores['mean_usd']['llm'], '+,.1f')}, the trend word alone {num(scores['mean_usd'].get('trend'), '+,.1f')}."
                if scores.get("decisions") and "mean_usd" in scores else "")
        lines += ["", f"Fusion warm-up ({name}): {warmup['decisions']} lockstep decisions of the training days from day "
                      f"{warmup['start_day']} ({warmup['run_dir']}), the network learning: {learned}; the test run "
                      + (f"fused with it, frozen ({warmup['network']})." if warmup["network"] else "fused by the rules (no update).")
                      + seen]
    return lines


def age_lines(lockstep: dict) -> list[str]:
    """Each run's share of decisions with a thought and that thought's real age, counted from the step its prompt read
    (a carried answer's too: actors/jobs/evaluation/thought_ages.py)."""
    from actors.jobs.evaluation.thought_ages import ages_text

    runs = [(name, lockstep[name]["thought_ages"]) for name in ("base", "adapter") if name in lockstep and lockstep[name].get("thought_ages")]
    if not runs:
        return []
    return ["", "Thought ages, in bars from the market state the prompt read to the decision:", "",
            *(f"- {name}: {ages_text({k: finite(v) for k, v in ages.items()})}." for name, ages in runs)]


def event_lines(lockstep: dict) -> list[str]:
    """On a market with events: each run's decisions right after a thought read a new event, beside the floors there
    (actors/jobs/evaluation/event_sources.py), and fused against its floors (SPA)."""
    lines = []
    runs = [(name, lockstep[name]["events"]) for name in ("base", "adapter") if name in lockstep and "events" in lockstep[name]]
    if runs:
        lines += ["", "Right after a thought read a new event (flat decisions with a label): the hindsight label matched by",
                  "", "| run | decisions | LLM | keyword rule | always BUY | the words' sign (ceiling of reading) | LLM = surprise's side | "
                  "$ a decision: LLM | keyword rule | words' sign | RL | fused |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name, events in runs:
            shares = " | ".join(share_cell(events[key]) for key in ("llm_label", "keyword_label", "buy_label", "words_label", "llm_surprise"))
            usd = " | ".join(share_cell(events["usd"][source], "+,.1f") if events["usd"][source]["n"] else "n/a"
                             for source in ("llm", "keyword", "words", "rl", "fused"))
            lines.append(f"| {name} | {events['decisions']} | {shares} | {usd} |")
    spa = lockstep.get("fused_against_floors") or {}
    if spa:
        lines += ["", "Fused against its floors, Hansen's SPA p on the flat decisions' hindsight $ (the run the rows read): "
                  + ", ".join(f"{floor} {num(test['p_value_spa'], '.3f')}" for floor, test in spa.items())
                  + f" ({next(iter(spa.values()))['decisions']} decisions"
                  + (f", mean block {block} decisions, at least the labels' horizon" if (block := next(iter(spa.values())).get("block")) else "")
                  + ")."]
    return lines


def risk_lines(lockstep: dict) -> list[str]:
    """With reasoner.risk_read (--lockstep-window events): each run's risk read right after an event against the
    hindsight volatility level, beside the calendar and keyword rules on the same decisions, paired, with the real age
    of the thoughts behind them (actors/jobs/evaluation/risk_reads.py)."""
    from actors.jobs.evaluation.thought_ages import ages_text

    runs = [(name, lockstep[name]) for name in ("base", "adapter")
            if name in lockstep and lockstep[name].get("risk_reads", {}).get("decisions")]
    runs = [(name, run) for name, run in runs if run["risk_reads"]["missing"] < run["risk_reads"]["decisions"]]
    if not runs:
        return []
    lines = ["", f"The risk read right after a thought read a new event ({lockstep.get('window', 'all')} window): the "
             "hindsight volatility level (the next 15 bars' range over the ATR before, thresholds of the bars before the "
             "test window) matched by", "",
             "| run | decisions | LLM | calendar rule | keyword rule | LLM minus calendar (paired) | LLM minus keyword (paired) | "
             "held-out templates: LLM / keyword | reads CALM / ELEVATED / EXTREME / none | thought ages |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, run in runs:
        r = run["risk_reads"]
        mix = r["answers"]
        ages = ages_text({k: finite(v) for k, v in run.get("thought_ages", {}).items()})
        lines.append(f"| {name} | {r['decisions']} | {share_cell(r['llm'])} | {share_cell(r['calendar'])} | "
                     f"{share_cell(r['keyword'])} | {share_cell(r['llm_vs_calendar'], '+.3f')} | "
                     f"{share_cell(r['llm_vs_keyword'], '+.3f')} | {share_cell(r['llm_held_out'])} / "
                     f"{share_cell(r['keyword_held_out'])} | {mix['CALM']} / {mix['ELEVATED']} / {mix['EXTREME']} / "
                     f"{r['missing']} | {ages} |")
    return lines


def share_cell(share: dict, fmt: str = ".2f") -> str:
    if not share["n"]:
        return "n/a (0)"
    return f"{num(share['value'], fmt)} {interval((finite(share['low']), finite(share['high'])), fmt)} of {share['n']}"


def finite(value) -> float:
    return float("nan") if value is None else float(value)
