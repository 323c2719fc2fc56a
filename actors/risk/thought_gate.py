"""The thought's risk gate: stand aside (or flatten) for the minutes the reasoner's risk read names.

With reasoner.risk_read on, each thought carries a read of how dangerous the next minutes are (``risk_level``: 0
CALM, 1 ELEVATED, 2 EXTREME; ``risk_minutes``). With risk.thought_risk_gate set, a read at or above
risk.thought_risk_min_level holds for its minutes from the step the thought saw (one step = one bar = one minute
on the 1-minute bars every market here has). A read is timed from the step its prompt read (``built_on``): with
reasoner.think_on = news / events a quiet bar is answered by the env's latest thought again (a carried answer,
``step_seen`` that bar), and timing it from ``step_seen`` would renew an EXTREME read on every quiet bar, so the env
would stand aside until the next thought:

  thought_risk        ``stand_aside``: entries are vetoed (exits, HOLD and stop moves pass), as the news blackout;
  thought_risk_flat   ``flatten``: a position is also closed (the closing action, where the mask allows it).

An env's newest read replaces its older one (a CALM read ends an EXTREME one early); a thought without a read
(level -1: the reasoner's risk_read off, or an answer without one, counted there as risk_read_missing) changes
nothing. Plain state, no bus: the risk actor feeds it thoughts and asks what is in force at each observation.
"""

from __future__ import annotations

from typing import NamedTuple

THOUGHT_RISK = "thought_risk"
THOUGHT_FLAT = "thought_risk_flat"
THOUGHT_RULES = (THOUGHT_RISK, THOUGHT_FLAT)
GATE_MODES = ("off", "stand_aside", "flatten")
LEVEL_NAMES = ("CALM", "ELEVATED", "EXTREME")


class Read(NamedTuple):
    step_built: int
    """The step the read's prompt read (its minutes count from there)."""
    level: int
    until_step: int
    """The first step the read no longer covers."""


class ThoughtRiskGate:
    def __init__(self, mode: str, min_level: str) -> None:
        if mode not in GATE_MODES:
            raise ValueError(f"risk.thought_risk_gate must be one of {', '.join(GATE_MODES)}; got {mode!r}")
        if min_level not in LEVEL_NAMES[1:]:
            raise ValueError(f"risk.thought_risk_min_level must be ELEVATED or EXTREME; got {min_level!r}")
        self.mode = mode
        self.min_level = LEVEL_NAMES.index(min_level)
        self._reads: dict[int, Read] = {}

    def add(self, thought) -> bool:
        """Take an llm.thought (env_id, step_seen, step_built, risk_level, risk_minutes); True when it starts a gate."""
        if thought.risk_level < 0:
            return False
        built = thought.built_on
        held = self._reads.get(thought.env_id)
        if held is not None and built <= held.step_built:
            return False  # the same read carried to a later bar, or an older thought arriving late: nothing newer
        until = built + 1 + thought.risk_minutes if thought.risk_level >= self.min_level else built
        self._reads[thought.env_id] = Read(built, thought.risk_level, until)
        return thought.risk_level >= self.min_level and (held is None or held.until_step <= built)

    def rule(self, env_id: int, step: int, position: int) -> str:
        """The rule in force for an env at ``step`` ('' for none)."""
        read = self._reads.get(env_id)
        if read is None or self.mode == "off" or not read.step_built <= step < read.until_step:
            return ""
        return THOUGHT_FLAT if self.mode == "flatten" and position != 0 else THOUGHT_RISK

    def overlay(self, halts: list[str], env_ids: list[int], positions: list[int], step: int) -> list[str]:
        """The halts with the gate laid over them: a halt in force keeps its name for a flat env; the flatten rule
        replaces anything for an env in a position."""
        out = []
        for halt, env_id, position in zip(halts, env_ids, positions, strict=True):
            rule = self.rule(env_id, step, position)
            out.append(rule if rule == THOUGHT_FLAT else (halt or rule))
        return out
