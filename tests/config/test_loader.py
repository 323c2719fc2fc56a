import pytest

from actors.fusion.config import FusionConfig
from actors.jobs.config import Config, SECTIONS, load_config, load_resolved
from config.checks import ConfigSection
from config.tree import ConfigError, DEFAULT_CONFIG_PATH, dump_toml


def test_default_config_loads_and_every_section_is_a_real_struct():
    config = load_config()
    for name in SECTIONS:
        section = getattr(config, name)
        assert section.__struct_fields__, f"section [{name}] has no keys"
    assert config.runtime.heartbeat_liveness >= 1


def test_every_section_struct_is_a_config_section_named_for_its_section():
    """ConfigSection names a bounds error in a struct built in code by the class name: FusionConfig is [fusion]."""
    defaults = Config()
    for name in SECTIONS:
        section_type = type(getattr(defaults, name))
        assert issubclass(section_type, ConfigSection) and section_type.section_name() == name, section_type
    with pytest.raises(ValueError, match=r"^fusion\.llm_weight: must be >= 0"):
        FusionConfig(llm_weight=-0.1)


def test_default_toml_lists_the_sections_of_the_typed_config_in_its_order():
    import tomllib

    tree = tomllib.loads(DEFAULT_CONFIG_PATH.read_text())

    assert tuple(tree) == SECTIONS == Config.__struct_fields__


def test_unknown_key_in_a_file_names_the_key_and_the_file(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text("[bus]\ntransprot = 'ipc'\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.key == "bus.transprot" and str(path) in str(info.value)


def test_wrong_type_names_the_key():
    with pytest.raises(ConfigError) as info:
        load_config(overrides=["runtime.max_restarts='many'"])
    assert info.value.key == "runtime.max_restarts" and "--set" in str(info.value)


def test_unknown_section_is_an_error():
    with pytest.raises(ConfigError) as info:
        load_config(overrides={"nosuch.key": 1})
    assert info.value.key == "nosuch"


def test_invalid_value_is_reported_with_its_key():
    with pytest.raises(ConfigError) as info:
        load_config(overrides=["bus.transport=udp"])
    assert info.value.key == "bus.transport"


def test_broken_toml_file_is_a_config_error(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[bus\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)


def test_override_values_use_toml_syntax():
    config = load_config(overrides=["runtime.actors=['env']", "run.duration_secs=2", "run.name=hello"])
    assert config.runtime.actors == ["env"] and config.run.duration_secs == 2.0 and config.run.name == "hello"


def test_resolved_config_round_trips_through_the_run_directory(tmp_path):
    config = load_config(overrides={"run.seed": 42})
    path = tmp_path / "config.toml"
    path.write_text(dump_toml(config))
    assert load_resolved(path) == config


def test_every_key_of_the_typed_config_is_in_default_toml_with_a_comment():
    import tomllib

    text = DEFAULT_CONFIG_PATH.read_text()
    tree = tomllib.loads(text)
    import msgspec

    for section, values in msgspec.to_builtins(load_config()).items():
        for key in values:
            assert key in tree.get(section, {}), f"{section}.{key} missing from config/default.toml"
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "[")) and "=" in stripped and not stripped.startswith(("'", '"', "]")):
            has_comment = "#" in line or (i > 0 and lines[i - 1].strip().startswith("#"))
            assert has_comment, f"default.toml line {i + 1} has no comment: {line}"


def test_a_bus_reachable_from_other_hosts_is_refused_without_keys():
    with pytest.raises(ConfigError) as info:
        load_config(overrides={"bus.transport": "tcp", "bus.host": "0.0.0.0"})
    assert info.value.key == "bus.host"
    assert load_config(overrides={"bus.transport": "tcp", "bus.host": "127.0.0.2"}).bus.host == "127.0.0.2"


@pytest.mark.parametrize(
    "override, key",
    [
        ("bus.xsub_port=70000", "bus.xsub_port"),
        ("runtime.heartbeat_liveness=0", "runtime.heartbeat_liveness"),
        ("run.duration_secs=-1", "run.duration_secs"),
        ("env.n_envs=0", "env.n_envs"),
        ("policy.gamma=1.5", "policy.gamma"),
        ("fusion.llm_weight=-0.1", "fusion.llm_weight"),
        ("risk.min_win_rate=1.2", "risk.min_win_rate"),
        ("reasoner.max_tokens_per_step=0", "reasoner.max_tokens_per_step"),
        ("data.train_fraction=2.0", "data.train_fraction"),
        ("lora.held_out_fraction=1.5", "lora.held_out_fraction"),
        ("lora.text_loss_weight=-1", "lora.text_loss_weight"),
    ],
)
def test_an_out_of_bounds_value_is_an_error_naming_the_key(override, key):
    with pytest.raises(ConfigError) as info:
        load_config(overrides=[override])

    assert info.value.key == key and "--set" in str(info.value)


def test_a_lora_round_with_neither_loss_is_an_error_naming_the_key():
    with pytest.raises(ConfigError) as info:
        load_config(overrides=["lora.text_loss_weight=0", "lora.action_loss_weight=0"])

    assert info.value.key == "lora.text_loss_weight" and "nothing to learn" in str(info.value)
