"""Cross-cutting intents as typed presets: the jobs apply them to produce each actor's settings.

A job says what it wants (the LLM in every decision, a frozen backtest); a preset is a frozen dataclass whose
``apply`` writes that into the sections of the actors it concerns, field by field on their own structs
(``replace(config.env, thought_lag_steps=1)``): a name that is not a field of the struct raises on the first apply
(tests/actors/jobs/test_presets.py applies each one), a value out of a field's bounds fails the struct's own checks.
Two copies of one intent drift apart (the lockstep preset was once spelled differently in two jobs): each intent
lives here once, and the jobs hold no dotted-key dict for it.

Layers (``configure`` in actors/jobs/common.py): config/default.toml and the user's file, then the job's presets in
order (a later one wins), then the job's own settings (a run's paths and step counts), then the user's ``--set``: the
user has the last word, as before. ``preset_settings`` gives the dotted keys a list of presets changes on a config, for
what takes dotted keys (runtime.testing.running_actors in the soak and chaos jobs, the ablation's record).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from msgspec.structs import replace

from actors.jobs.config import Config
from actors.reasoner.config import MODES
from config.tree import config_to_dict


@dataclass(frozen=True)
class Preset:
    """One intent: ``apply`` returns the config with the keys it concerns set, every other key as it was."""

    def apply(self, config: Config) -> Config:
        raise NotImplementedError


def apply_presets(config: Config, presets: Iterable[Preset]) -> Config:
    for preset in presets:
        config = preset.apply(config)
    return config


def preset_settings(presets: Iterable[Preset], base: Config) -> dict[str, Any]:
    """The dotted keys (``env.thought_lag_steps``) whose values ``presets`` change on ``base``: laid over ``base``'s
    own layers (the default and the user's file) they give the same config as ``apply_presets``."""
    before, after = config_to_dict(base), config_to_dict(apply_presets(base, presets))
    return {f"{section}.{key}": value for section, values in after.items() for key, value in values.items()
            if before[section].get(key) != value}


@dataclass(frozen=True)
class Thoughts(Preset):
    """The reasoner's thought form: ``single_shot`` (one decide answer, about a second on 2 cores) or ``four_step``
    (analyse, options, risks, decide: about four)."""

    form: str = "single_shot"

    def __post_init__(self) -> None:
        if self.form not in MODES:
            raise ValueError(f"thought form must be one of {MODES}, got {self.form!r}")

    def apply(self, config: Config) -> Config:
        return replace(config, reasoner=replace(config.reasoner, mode=self.form))


@dataclass(frozen=True)
class Lockstep(Preset):
    """Each step waits for a thought that saw the previous one: the env gates on it, the reasoner is asked about every
    step (a skipped one would be late) and is not niced (the loop waits for it anyway); the thoughts are ``thoughts``
    (single-shot: the pace of a 2-core machine)."""

    thoughts: Thoughts = Thoughts("single_shot")

    def apply(self, config: Config) -> Config:
        config = replace(config, env=replace(config.env, thought_lag_steps=1),
                         reasoner=replace(config.reasoner, query_policy="always", process_nice=0))
        return self.thoughts.apply(config)


@dataclass(frozen=True)
class FrozenLearners(Preset):
    """Nothing adapts: the policy and the fusion network must not learn on test data, and no adapter is trained."""

    def apply(self, config: Config) -> Config:
        return replace(config, policy=replace(config.policy, learn=False), fusion=replace(config.fusion, learn=False),
                       lora=replace(config.lora, enabled=False))


@dataclass(frozen=True)
class Backtest(Preset):
    """One environment: one account walks through the whole test period, so the equity curve, the drawdown and the
    Apex rules mean what they say (several envs would each take a chunk); every learner frozen."""

    def apply(self, config: Config) -> Config:
        config = FrozenLearners().apply(config)
        return replace(config, env=replace(config.env, mode="backtest", split="test", n_envs=1))


@dataclass(frozen=True)
class Train(Preset):
    """The policy learns, on random episodes of the training days."""

    def apply(self, config: Config) -> Config:
        return replace(config, policy=replace(config.policy, learn=True), env=replace(config.env, mode="train", split="train"))


@dataclass(frozen=True)
class Paper(Preset):
    """One account on a feed's bars, a frozen policy (a learning one would train on the live bars)."""

    def apply(self, config: Config) -> Config:
        return replace(config, env=replace(config.env, mode="paper", n_envs=1), policy=replace(config.policy, learn=False))


REPRODUCIBLE_WAIT_MS = 120_000.0
"""A reproducible run's deadlines (ms): long enough that a loaded machine is slow rather than different. The order
keeps each waiter inside the next one's wait: fusion for a thought, risk for fusion, the env for the verdict."""


@dataclass(frozen=True)
class Reproducible(Preset):
    """One seed, one result (run.reproducible, docs/reliability.md): the actors' synchronous mode on, and every deadline
    that would change the data when it passes (a HOLD for a late verdict, a degraded verdict for a late fusion decision, a
    decision without its thought, a step without its thoughts) made a wait. A deadline that still passes is counted and
    the run says it is not reproducible (actors/jobs/fingerprint.py). The reasoner's cache forgets by size, not by the
    wall clock. The evidence jobs apply it; paper and live trading do not."""

    def apply(self, config: Config) -> Config:
        wait = REPRODUCIBLE_WAIT_MS
        return replace(
            config,
            run=replace(config.run, reproducible=True),
            env=replace(config.env, verdict_deadline_ms=wait, thought_wait_deadline_ms=wait, max_fusion_decision_wait_ms=wait),
            risk=replace(config.risk, fusion_deadline_ms=wait * 0.75),
            fusion=replace(config.fusion, max_thought_wait_ms=wait * 0.5, max_verdict_wait_ms=wait * 0.5),
            reasoner=replace(config.reasoner, cache_ttl_secs=1e9, max_busy_fraction=1.0),
        )


SINGLE_SHOT = Thoughts("single_shot")
REPRODUCIBLE = Reproducible()
"""The evidence jobs' runs through the actors (train, backtest, main's phases, lockstep backtests, the ablation)."""
LOCKSTEP = Lockstep()
"""Lockstep with single-shot thoughts: main's hybrid phase and lockstep backtest, the ablation's LLM variants,
bin/run paper --lockstep."""
FROZEN_LEARNERS = FrozenLearners()
BACKTEST = Backtest()
TRAIN = Train()
PAPER = Paper()
