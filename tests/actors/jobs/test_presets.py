"""Typed presets: each intent once, applied to the config's own structs; the job's settings and the user's --set win."""

from __future__ import annotations

import pytest

from actors.jobs.cli import build_parser
from actors.jobs.common import configure
from actors.jobs.config import load_config
from actors.jobs.presets import (BACKTEST, FROZEN_LEARNERS, LOCKSTEP, PAPER, REPRODUCIBLE, SINGLE_SHOT, TRAIN, Lockstep,
                                 Thoughts, apply_presets, preset_settings)

EVERY_PRESET = (LOCKSTEP, Lockstep(Thoughts("four_step")), SINGLE_SHOT, FROZEN_LEARNERS, BACKTEST, TRAIN, PAPER, REPRODUCIBLE)


@pytest.mark.parametrize("preset", EVERY_PRESET, ids=repr)
def test_every_preset_applies_to_the_default_config_and_its_dotted_keys_load_the_same_config(preset):
    base = load_config(None)

    applied = preset.apply(base)

    assert load_config(None, preset_settings([preset], base)) == applied
    assert preset.apply(applied) == applied  # applying twice is applying once


def test_presets_set_what_their_intent_names():
    base = load_config(None)
    lockstep = LOCKSTEP.apply(base)
    assert lockstep.env.thought_lag_steps == 1 and lockstep.reasoner.mode == "single_shot"
    assert lockstep.reasoner.query_policy == "always" and lockstep.reasoner.process_nice == 0
    backtest = BACKTEST.apply(base)
    assert (backtest.env.mode, backtest.env.split, backtest.env.n_envs) == ("backtest", "test", 1)
    assert not backtest.policy.learn and not backtest.fusion.learn and not backtest.lora.enabled
    paper = apply_presets(base, [PAPER, LOCKSTEP])
    assert paper.env.mode == "paper" and paper.env.thought_lag_steps == 1 and not paper.policy.learn
    assert not paper.run.reproducible  # paper and live keep their asynchrony
    evidence = REPRODUCIBLE.apply(base)
    assert evidence.run.reproducible and evidence.reasoner.cache_ttl_secs >= 1e9
    # each waiter inside the next one's wait: fusion for a thought < risk for fusion < the env for the verdict
    assert evidence.fusion.max_thought_wait_ms < evidence.risk.fusion_deadline_ms < evidence.env.verdict_deadline_ms
    assert evidence.env.thought_wait_deadline_ms >= 60_000


def test_a_later_preset_wins_and_the_jobs_settings_and_the_users_set_win_over_presets():
    base = load_config(None)
    assert apply_presets(base, [LOCKSTEP, Thoughts("four_step")]).reasoner.mode == "four_step"
    assert apply_presets(base, [BACKTEST, TRAIN]).policy.learn

    args = build_parser().parse_args(["backtest", "--set", "env.thought_lag_steps=2"])
    config = configure(args, {"env.n_envs": 3}, [BACKTEST, LOCKSTEP])

    assert config.env.n_envs == 3 and config.env.thought_lag_steps == 2 and config.env.mode == "backtest"


def test_a_preset_is_laid_over_the_users_file_not_the_default(tmp_path):
    # lockstep's query policy is the default's: it is set all the same over a file that changes it
    user = tmp_path / "user.toml"
    user.write_text('[reasoner]\nquery_policy = "selective"\n')

    args = build_parser().parse_args(["backtest", "--config", str(user)])

    assert configure(args, None, [LOCKSTEP]).reasoner.query_policy == "always"
    assert configure(args).reasoner.query_policy == "selective"


def test_a_thought_form_that_does_not_exist_fails_when_defined():
    with pytest.raises(ValueError, match="thought form must be one of"):
        Thoughts("three_step")
