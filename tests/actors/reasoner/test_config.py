import tomllib

import msgspec
import pytest

from actors.reasoner.config import ReasonerConfig
from config.tree import DEFAULT_CONFIG_PATH


def test_default_toml_holds_every_reasoner_key_with_the_struct_defaults():
    section = tomllib.loads(DEFAULT_CONFIG_PATH.read_text())["reasoner"]

    assert set(section) == {f.name for f in msgspec.structs.fields(ReasonerConfig)}
    assert msgspec.convert(section, ReasonerConfig) == ReasonerConfig()


@pytest.mark.parametrize(
    ("key", "value"),
    [("backend", "gpt"), ("mode", "three_step"), ("query_policy", "sometimes"), ("n_threads", 0),
     ("top_p", 1.5), ("cache_confidence_decay", -0.1), ("max_decide_tokens", 2)],
)
def test_an_invalid_value_is_rejected_naming_the_key(key, value):
    with pytest.raises(ValueError, match=f"reasoner.{key}"):
        ReasonerConfig(**{key: value})


def test_an_unknown_key_is_rejected():
    with pytest.raises(msgspec.ValidationError, match="no_such_key"):
        msgspec.convert({"no_such_key": 1}, ReasonerConfig)
