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


def test_a_spare_env_builds_the_data_set_its_activated_on_start_reads_back(monkeypatch):
    from actors.env import factory

    monkeypatch.setattr(factory, "_CACHE", {})
    config = load_config(None, {"data.synthetic_days": 6})
    built = []
    monkeypatch.setattr(factory, "build_dataset", lambda *args: built.append(args) or object())

    ACTOR.warm_up(config)  # in the spare, before it waits for "go"
    first = factory.load_dataset(config)  # the activated spare's on_start

    assert len(built) == 1 and factory.load_dataset(config) is first


def test_a_spare_paper_env_builds_nothing_ahead(monkeypatch):
    from actors.env import factory

    monkeypatch.setattr(factory, "build_dataset", lambda *args: pytest.fail("the paper env reads a feed"))
    ACTOR.warm_up(load_config(None, {"env.mode": "paper"}))
