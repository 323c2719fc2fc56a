"""Each actor's settings (Actor.settings_type): what it reads of the resolved config, and nothing else.

The runtime decodes a run directory's config.toml into the settings type of the actor it starts; these
tests hold each settings type to the root Config (actors/jobs/config.py) that the jobs validate and write.
"""

from __future__ import annotations

import msgspec
import msgspec.inspect
import pytest

from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.jobs.config import Config, load_config
from config.tree import ConfigError, load_settings
from runtime.entry import resolve_actor_class
from runtime.settings import RuntimeSettings

ACTORS = ["env", "policy", "reasoner", "fusion", "risk", "lora", "feed", "actors.env.random_verdicts", "actors.policy.pass_through"]
RUNTIME_SECTIONS = set(RuntimeSettings.__struct_fields__)
SHARED_SECTIONS = {"instrument": InstrumentConfig, "account": AccountConfig}
"""The shared vocabulary's sections (actors/common/market_settings.py): any actor may list them."""
OWN_SECTIONS = {"env": {"env", "data"}, "policy": {"policy"}, "reasoner": {"reasoner"}, "fusion": {"fusion"},
                "risk": {"risk"}, "lora": {"lora"}, "feed": {"feed"}}


def settings_type(actor: str) -> type[RuntimeSettings]:
    return resolve_actor_class(actor).settings_type


def sections(settings: type[RuntimeSettings]) -> dict[str, type]:
    return {field.name: field.type.cls for field in msgspec.inspect.type_info(settings).fields}


def field_shapes(struct: type) -> dict[str, tuple[object, object]]:
    """name -> (type info, default) of a struct's fields."""
    return {field.name: (field.type, field.default) for field in msgspec.inspect.type_info(struct).fields}


@pytest.mark.parametrize("actor", ACTORS)
def test_an_actor_reads_the_values_the_root_config_holds(actor):
    overrides = {"env.n_envs": 3, "fusion.max_staleness_steps": 7, "lora.hindsight_horizon_bars": 11,
                 "instrument.symbol": "ES", "reasoner.mode": "single_shot", "run.seed": 5}
    root = msgspec.to_builtins(load_config(None, overrides))
    own = msgspec.to_builtins(load_settings(settings_type(actor), None, overrides))
    for section, values in own.items():
        assert {key: root[section][key] for key in values} == values, section


@pytest.mark.parametrize("actor", ACTORS)
def test_an_actor_lists_only_its_sections_the_shared_ones_and_views_that_mirror_their_owners(actor):
    root = sections(Config)
    own = OWN_SECTIONS.get(actor, set())
    for section, struct in sections(settings_type(actor)).items():
        assert section in root, f"{actor} reads [{section}], which the root Config does not have"
        if section in RUNTIME_SECTIONS | own or SHARED_SECTIONS.get(section) is struct:
            assert struct is root[section]
            continue
        # Another actor's section: only as a view, every field the owner's own, same type and default.
        owner = field_shapes(root[section])
        view = field_shapes(struct)
        assert view.keys() <= owner.keys(), f"{actor}'s view of [{section}] has keys [{section}] lacks"
        for key, (kind, default) in view.items():
            assert kind == owner[key][0], f"{section}.{key}: {actor}'s view types it {kind}, the owner {owner[key][0]}"
            assert default in (owner[key][1], msgspec.NODEFAULT), f"{section}.{key}: default differs from the owner's"


def test_the_dashboards_view_of_a_run_mirrors_the_sections_it_reads():
    """The dashboard reads a run's config.toml as RunView (actors/dashboard/config.py): the report folders of [env], the
    shared [account]."""
    from actors.dashboard.config import RunView

    root = sections(Config)
    for section, struct in sections(RunView).items():
        if SHARED_SECTIONS.get(section) is struct:
            continue
        owner, view = field_shapes(root[section]), field_shapes(struct)
        assert view.keys() <= owner.keys(), f"the dashboard's view of [{section}] has keys [{section}] lacks"
        assert all(view[key] == owner[key] for key in view), section


def test_the_env_factory_and_every_shell_read_the_same_settings():
    from actors.env.actor import ACTOR, SHELLS

    assert {shell.settings_type for shell in SHELLS.values()} == {ACTOR.settings_type}


def test_an_actor_ignores_sections_it_does_not_read_but_not_a_typo_in_its_own():
    fusion = settings_type("fusion")
    assert load_settings(fusion, None, {"policy.n_steps": 64}).fusion.max_staleness_steps == 10
    with pytest.raises(ConfigError, match="fusion.max_stalenes_steps"):
        load_settings(fusion, None, {"fusion.max_stalenes_steps": 3})
    with pytest.raises(ConfigError, match="env.n_envs"):
        load_settings(settings_type("policy"), None, {"env.n_envs": 0})  # a view checks its bounds as the owner does
