"""Load, merge and validate a configuration tree against a settings type, without knowing the sections.

Order: config/default.toml, then the user's file, then ``--set section.key=value`` overrides. The merged tree
is validated against a settings struct (the root ``Config`` in actors/jobs/config.py; an actor's own settings in
runtime/); an unknown key, a missing section or a wrong type raises ``ConfigError`` naming the key and the
file. Imports no section: runtime/ reads run directories and test settings through this module.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Mapping, TypeVar

import msgspec


DEFAULT_CONFIG_PATH = Path(__file__).with_name("default.toml")
S = TypeVar("S", bound=msgspec.Struct)


class ConfigError(ValueError):
    """A configuration problem, with the key and the file it came from."""

    def __init__(self, message: str, *, key: str = "", source: str = "") -> None:
        self.key = key
        self.source = source
        where = f" (key '{key}'" + (f" in {source}" if source else "") + ")" if key else (f" ({source})" if source else "")
        super().__init__(message + where)


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}", source=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file is not valid TOML: {exc}", source=str(path)) from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """``section.key=value`` -> (["section", "key"], value); the value is read as TOML, else as a string."""
    dotted, sep, raw = text.partition("=")
    if not sep or not dotted.strip():
        raise ConfigError(f"override must look like section.key=value, got {text!r}", source="--set")
    keys = [part.strip() for part in dotted.split(".")]
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return keys, value


def merge_into(tree: dict[str, Any], update: Mapping[str, Any], source: str, sources: dict[str, str], prefix: str = "") -> None:
    """Deep-merge ``update`` into ``tree``, remembering which file set each key."""
    for key, value in update.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and isinstance(tree.get(key), dict):
            merge_into(tree[key], value, source, sources, dotted + ".")
        else:
            tree[key] = dict(value) if isinstance(value, Mapping) else value
            sources[dotted] = source


def set_dotted(tree: dict[str, Any], keys: list[str], value: Any) -> None:
    node = tree
    for key in keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError("cannot set a key below a value", key=".".join(keys), source="--set")
    node[keys[-1]] = value


_PATH_RE = re.compile(r"at `\$((?:\.[A-Za-z0-9_]+|\[\d+\])*)`")
_FIELD_RE = re.compile(r"field `([^`]+)`")
_NAMED_KEY_RE = re.compile(r"^([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)\b")


def key_from_validation_error(exc: msgspec.ValidationError) -> str:
    """Turn msgspec's ``... - at `$.env.n_envs``` into ``env.n_envs``."""
    text = str(exc)
    path = ""
    match = _PATH_RE.search(text)
    if match:
        path = match.group(1).lstrip(".")
    field = _FIELD_RE.search(text)
    if field and ("unknown field" in text or "missing required field" in text):
        path = f"{path}.{field.group(1)}" if path else field.group(1)
    return path


def validate(tree: Mapping[str, Any], sources: Mapping[str, str], settings_type: type[S]) -> S:
    try:
        return msgspec.convert(tree, settings_type, strict=True)
    except msgspec.ValidationError as exc:
        key = key_from_validation_error(exc)
        message = str(exc).split(" - at `")[0]
        named = _NAMED_KEY_RE.match(message)  # a __post_init__ check names its own key
        if named and named.group(1).startswith(key):
            key = named.group(1)
        return _raise(message, key, sources)


def _raise(message: str, key: str, sources: Mapping[str, str]):
    source = sources.get(key, "")
    if not source:  # a nested key inherits the file of its closest set ancestor/descendant
        for candidate, src in sources.items():
            if candidate.startswith(key + ".") or key.startswith(candidate + "."):
                source = src
                break
    raise ConfigError(message, key=key, source=source or str(DEFAULT_CONFIG_PATH))


def load_tree(path: str | Path | None = None,
              overrides: Mapping[str, Any] | list[str] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """Default config, then ``path``, then overrides (``{"env.n_envs": 2}`` or ``["env.n_envs=2"]``): the merged
    tree, unvalidated, and the file each key came from."""
    sources: dict[str, str] = {}
    tree: dict[str, Any] = {}
    merge_into(tree, read_toml(DEFAULT_CONFIG_PATH), str(DEFAULT_CONFIG_PATH), sources)
    if path is not None:
        merge_into(tree, read_toml(Path(path)), str(path), sources)
    for keys, value in _iter_overrides(overrides):
        set_dotted(tree, keys, value)
        sources[".".join(keys)] = "--set"
    return tree, sources


def load_settings(settings_type: type[S], path: str | Path | None = None,
                  overrides: Mapping[str, Any] | list[str] | None = None) -> S:
    """``load_tree``, validated as ``settings_type``."""
    tree, sources = load_tree(path, overrides)
    return validate(tree, sources, settings_type)


def _iter_overrides(overrides: Mapping[str, Any] | list[str] | None):
    if not overrides:
        return
    if isinstance(overrides, Mapping):
        for dotted, value in overrides.items():
            yield dotted.split("."), value
    else:
        for text in overrides:
            yield parse_override(text)


def config_to_dict(config: msgspec.Struct | Mapping[str, Any]) -> dict[str, Any]:
    return msgspec.to_builtins(config)


def dump_toml(config: msgspec.Struct | Mapping[str, Any]) -> str:
    """The resolved config (a settings struct or a tree of sections) as TOML (written to the run directory)."""
    lines: list[str] = []
    for section, values in config_to_dict(config).items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            if value is None:
                continue  # TOML has no null: leaving the key out restores the same default
            lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def load_resolved(path: str | Path, settings_type: type[S]) -> S:
    """Read a run directory's resolved config (already merged) and validate it as ``settings_type``."""
    tree = read_toml(Path(path))
    return validate(tree, {k: str(path) for k in tree}, settings_type)
