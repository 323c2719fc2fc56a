"""Cross-cutting intents as actor settings, each one typed preset: the jobs combine them.

A job says what it wants (the LLM in every decision, a frozen backtest); a ``Preset`` says which
keys of which actors' sections that means. Each preset is checked when it is defined: every section
must be one of ``Config``'s, every key a field of that section's struct, every value of the field's
type and bounds. So a typo in a preset fails at import, naming the preset and the key, not at a
job's start (or never, for a key a job rarely reaches). Two copies of one intent drift apart
(issue 21 found the lockstep preset spelled differently in two jobs): each intent lives here once.

``preset.settings()`` gives the dotted keys ``configure`` takes; ``a + b`` is both, ``b`` winning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from config.schema import Config


def _section_types() -> dict[str, type]:
    return {field.name: field.type for field in msgspec.structs.fields(Config)}


SECTION_TYPES = _section_types()


@dataclass(frozen=True)
class Preset:
    """One intent: {section: {key: value}} for the actors it concerns."""

    name: str
    sections: Mapping[str, Mapping[str, Any]]

    def __post_init__(self) -> None:
        for section, values in self.sections.items():
            struct = SECTION_TYPES.get(section)
            if struct is None:
                raise ValueError(f"preset {self.name!r}: no config section [{section}] (sections: {', '.join(SECTION_TYPES)})")
            for key, value in values.items():
                if key not in struct.__struct_fields__:
                    raise ValueError(f"preset {self.name!r}: [{section}] has no key {key!r}")
                try:
                    msgspec.convert({key: value}, struct)
                except (msgspec.ValidationError, ValueError) as error:
                    raise ValueError(f"preset {self.name!r}: {section}.{key} = {value!r}: {error}") from None

    def settings(self) -> dict[str, Any]:
        """The dotted keys (``env.thought_lag_steps``) that ``configure`` and ``--set`` take."""
        return {f"{section}.{key}": value for section, values in self.sections.items() for key, value in values.items()}

    def __add__(self, other: Preset) -> Preset:
        merged: dict[str, dict[str, Any]] = {section: dict(values) for section, values in self.sections.items()}
        for section, values in other.sections.items():
            merged.setdefault(section, {}).update(values)
        return Preset(f"{self.name} + {other.name}", merged)


LOCKSTEP_PACING = Preset("lockstep pacing", {
    "env": {"thought_lag_steps": 1},
    "reasoner": {"query_policy": "always", "process_nice": 0},
})
"""Each step waits for a thought that saw the previous one: the env gates on it, the reasoner is asked about every
step (a skipped one would be late) and is not niced (the loop waits for it anyway). The thought form is the job's."""

SINGLE_SHOT = Preset("single-shot thoughts", {"reasoner": {"mode": "single_shot"}})
"""One decide answer per thought: about a second on 2 cores, where a four-step thought takes about four."""

LOCKSTEP = LOCKSTEP_PACING + SINGLE_SHOT
"""Lockstep with single-shot thoughts, the pace of a 2-core machine: main's hybrid phase and lockstep backtest,
bin/run paper --lockstep."""

FROZEN_LEARNERS = Preset("frozen learners", {"policy": {"learn": False}, "fusion": {"learn": False}, "lora": {"enabled": False}})
"""Nothing adapts: the policy and the fusion network must not learn on test data, and no adapter is trained."""

BACKTEST = Preset("one account through the test days", {"env": {"mode": "backtest", "split": "test", "n_envs": 1}}) + FROZEN_LEARNERS
"""One environment: one account walks through the whole test period, so the equity curve, the drawdown and the Apex
rules mean what they say (several envs would each take a chunk); every learner frozen."""

PAPER = Preset("paper trading", {"env": {"mode": "paper", "n_envs": 1}, "policy": {"learn": False}})
"""One account on a feed's bars, a frozen policy (a learning one would train on the live bars)."""
