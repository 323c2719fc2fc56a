"""Cross-cutting intents as actor settings, each written once: the jobs combine them.

A job says what it wants (the LLM in every decision); a preset says which keys of which actors
that means. Two copies of one intent drift apart (issue 21 found the lockstep preset spelled
differently in two jobs).
"""

from __future__ import annotations

from typing import Any

LOCKSTEP_PACING: dict[str, Any] = {"env.thought_lag_steps": 1, "reasoner.query_policy": "always", "reasoner.process_nice": 0}
"""Each step waits for a thought that saw the previous one: the env gates on it, the reasoner is asked about every
step (a skipped one would be late) and is not niced (the loop waits for it anyway). The thought form is the job's."""

LOCKSTEP: dict[str, Any] = {**LOCKSTEP_PACING, "reasoner.mode": "single_shot"}
"""Lockstep with single-shot thoughts, the pace of a 2-core machine: main's hybrid phase and lockstep backtest,
bin/run paper --lockstep."""
