"""How old the LLM's thought behind each lockstep decision really was (a carried answer is as old as the thought it repeats).

A thought's age at a decision is counted from the step whose market state its prompt read (``LlmThought.step_built``),
not from the bar it was published for: with reasoner.think_on = news a quiet bar is answered by the env's latest
thought again (a carried answer), published for that bar but built on an earlier one. Fusion ages it the same way
(actors/fusion/thoughts.py) and drops it past fusion.max_staleness_steps, so the figures here are:

- the share of decisions that had a usable thought, and the real age of the thoughts they used (mean, p50, p90, max);
- the carried answers and their real age at the bar they answered (mean, p50, p90, max), and the share of them older
  than fusion.max_staleness_steps: those decisions had no thought (fusion counts them: stale_thought_decisions).

Plain Python over bus messages: no process, no socket.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bus.messages import FusionDecision, LlmThought, Message


def age_figures(ages: list[int], prefix: str) -> dict[str, float]:
    """``{prefix}_mean, _p50, _p90, _max`` of ``ages`` (bars); {} for none."""
    if not ages:
        return {}
    values = np.asarray(ages, dtype=np.float64)
    return {f"{prefix}_mean": float(values.mean()), f"{prefix}_p50": float(np.percentile(values, 50)),
            f"{prefix}_p90": float(np.percentile(values, 90)), f"{prefix}_max": float(values.max())}


class ThoughtAges:
    """The real age of the thought behind each decision, and of every carried answer, from llm.thought and
    fusion.decision (a decision sent twice, to a peer that restarted, counts once)."""

    WATCH: tuple[type[Message], ...] = (LlmThought, FusionDecision)

    def __init__(self) -> None:
        self._decisions: dict[tuple[int, int], int] = {}
        """(env, step) -> the age of the thought the decision used (fusion.decision's llm_staleness), -1 for none."""
        self._carried: dict[str, int] = {}
        """Query id of a carried answer -> its age at the bar it answered (step_seen - step_built)."""

    def add(self, msg: Message) -> None:
        match msg:
            case LlmThought() if msg.carried:
                self._carried[msg.query_id] = msg.age_at(msg.step_seen)
            case FusionDecision():
                for env_id, age in zip(msg.env_ids, np.asarray(msg.llm_staleness).tolist()):
                    self._decisions[(env_id, msg.step)] = int(age)

    def figures(self, max_staleness_steps: int) -> dict[str, float]:
        """decisions, with_thought_share, thought_age_{mean,p50,p90,max} over the decisions with a thought,
        carried_answers, carried_age_{mean,p50,p90,max}, and carried_too_stale_share (older than
        ``max_staleness_steps``: fusion used none of them)."""
        used = [age for age in self._decisions.values() if age >= 0]
        carried = list(self._carried.values())
        figures = {"decisions": float(len(self._decisions)), "max_staleness_steps": float(max_staleness_steps),
                   "with_thought_share": len(used) / len(self._decisions) if self._decisions else float("nan"),
                   **age_figures(used, "thought_age"), "carried_answers": float(len(carried)), **age_figures(carried, "carried_age")}
        if carried:
            figures["carried_too_stale_share"] = sum(age > max_staleness_steps for age in carried) / len(carried)
        return figures


def fusion_figures(run_dir: Path) -> dict[str, float]:
    """The fusion actor's last stats line (actor_stopped) of a run: its counters and gauges ({} without a log)."""
    log = run_dir / "logs" / "fusion.jsonl"
    figures: dict[str, float] = {}
    if not log.is_file():
        return figures
    for line in log.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") == "actor_stopped":
            figures = {k: float(v) for k, v in entry.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return figures


def ages_text(figures: dict) -> str:
    """One sentence of a run's thought ages, as the report and the terminal write them."""
    if not figures.get("decisions"):
        return "no decision"
    share = figures.get("with_thought_share")
    text = f"{share:.1%} of {int(figures['decisions'])} decisions had a thought" if share is not None and share == share else "n/a"
    if "thought_age_mean" in figures:
        text += (f", its age (bars since the market state its prompt read) mean {figures['thought_age_mean']:.1f}, "
                 f"p50 {figures['thought_age_p50']:.0f}, p90 {figures['thought_age_p90']:.0f}, max {figures['thought_age_max']:.0f}")
    if figures.get("carried_answers"):
        text += (f"; {int(figures['carried_answers'])} answers carried to a quiet bar, real age mean {figures['carried_age_mean']:.1f}, "
                 f"p50 {figures['carried_age_p50']:.0f}, p90 {figures['carried_age_p90']:.0f}, max {figures['carried_age_max']:.0f}, "
                 f"{figures['carried_too_stale_share']:.1%} older than fusion.max_staleness_steps = {int(figures['max_staleness_steps'])}")
    if "stale_thought_decisions" in figures:
        text += f" (fusion: {int(figures['stale_thought_decisions'])} decisions whose thought was too old)"
    return text
