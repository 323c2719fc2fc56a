"""The env actor's shells (actors/env/actor.py): the factory the runtime calls picks one per env.mode."""

import pytest

from actors.env.actor import ACTOR, SHELLS, BacktestEnvActor, TrainEnvActor
from actors.env.config import ENV_MODES
from actors.env.paper_actor import PaperEnvActor
from actors.jobs.config import load_config
from runtime.entry import resolve_actor_class


def test_every_env_mode_has_a_shell():
    assert set(SHELLS) == set(ENV_MODES)


@pytest.mark.parametrize(("mode", "shell"), [("train", TrainEnvActor), ("backtest", BacktestEnvActor), ("paper", PaperEnvActor)])
def test_the_runtime_builds_the_shell_of_the_configured_mode(tmp_path, mode, shell):
    config = load_config(None, {"env.mode": mode})

    actor = resolve_actor_class("env")(name="env", config=config, run_dir=tmp_path, bus=None, log=None)

    assert resolve_actor_class("env") is ACTOR and type(actor) is shell
    assert getattr(actor, "explains", False) == (mode == "backtest")  # only the backtest keeps a DecisionBook
