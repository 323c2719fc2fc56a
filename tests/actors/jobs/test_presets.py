"""Typed presets: each intent once, checked against the config's sections when it is defined."""

from __future__ import annotations

import pytest

from actors.jobs.presets import BACKTEST, FROZEN_LEARNERS, LOCKSTEP, LOCKSTEP_PACING, PAPER, SINGLE_SHOT, Preset
from config.loader import load_config


def test_every_preset_loads_as_a_config_and_sets_what_it_names():
    for preset in (LOCKSTEP, BACKTEST, PAPER, FROZEN_LEARNERS):
        config = load_config(None, preset.settings())
        for dotted, value in preset.settings().items():
            section, key = dotted.split(".")
            assert getattr(getattr(config, section), key) == value, (preset.name, dotted)


def test_combining_presets_keeps_both_and_the_right_one_wins():
    assert LOCKSTEP.settings() == {**LOCKSTEP_PACING.settings(), **SINGLE_SHOT.settings()}
    four_step = Preset("four-step", {"reasoner": {"mode": "four_step"}})
    assert (LOCKSTEP + four_step).settings()["reasoner.mode"] == "four_step"
    assert (PAPER + LOCKSTEP).settings()["env.mode"] == "paper" and (PAPER + LOCKSTEP).settings()["env.thought_lag_steps"] == 1
    assert BACKTEST.settings()["policy.learn"] is False and BACKTEST.settings()["lora.enabled"] is False


@pytest.mark.parametrize("sections, message", [
    ({"envv": {"n_envs": 1}}, "no config section [envv]"),
    ({"env": {"n_env": 1}}, "[env] has no key 'n_env'"),
    ({"env": {"n_envs": "four"}}, "env.n_envs = 'four'"),
    ({"env": {"n_envs": 0}}, "env.n_envs = 0"),
])
def test_a_preset_with_a_typo_or_a_wrong_value_fails_when_defined_naming_it(sections, message):
    with pytest.raises(ValueError, match="preset 'bad'") as error:
        Preset("bad", sections)
    assert message in str(error.value)
