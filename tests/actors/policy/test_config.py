"""The [policy] section: validated, and every key documented in config/default.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

import msgspec
import pytest

from actors.policy.config import PolicyConfig

DEFAULT_TOML = Path(__file__).resolve().parents[3] / "config" / "default.toml"


def test_every_policy_key_is_in_default_toml_with_a_comment():
    section = tomllib.loads(DEFAULT_TOML.read_text())["policy"]
    assert set(section) == set(PolicyConfig.__struct_fields__)
    policy_lines = DEFAULT_TOML.read_text().split("[policy]")[1].split("\n[")[0]
    lines = policy_lines.strip().splitlines()
    for above, line in zip(["#"] + lines, lines):  # a key's comment is on its line or on the line above it
        assert "#" in line or above.lstrip().startswith("#"), f"undocumented line: {line}"
    assert msgspec.convert(section, PolicyConfig) == PolicyConfig()


@pytest.mark.parametrize(
    ("key", "value"),
    [("n_steps", 1), ("gamma", 1.5), ("batch_size", 0), ("torch_threads", 0), ("net_arch", ()), ("keep_checkpoints", 0)],
)
def test_an_out_of_range_value_is_refused_naming_its_key(key, value):
    with pytest.raises(ValueError, match=f"policy.{key}"):
        PolicyConfig(**{key: value})
