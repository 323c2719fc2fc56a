"""docs/architecture.md's settings table names each actor's settings class where the code defines it."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec.inspect as mi

from runtime.entry import resolve_actor_class

ROOT = Path(__file__).resolve().parents[2]


def table_rows() -> dict[str, tuple[str, str, str]]:
    """actor -> (settings class, its file, the sections the row lists as its own)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| (\w+)(?: \(every shell\))? \| (\w+) \(([\w/.]+)\): ([^|]+)\|", text, flags=re.M)
    return {actor: (cls, path, sections) for actor, cls, path, sections in rows}


def test_the_settings_table_names_each_actors_class_its_file_and_its_sections():
    rows = table_rows()
    assert set(rows) == {"env", "policy", "reasoner", "fusion", "risk", "lora", "feed"}
    for actor, (name, path, sections) in rows.items():
        settings = resolve_actor_class(actor).settings_type
        assert (settings.__name__, settings.__module__.replace(".", "/") + ".py") == (name, path), actor
        fields = {field.name for field in mi.type_info(settings).fields}
        assert set(re.findall(r"\[(\w+)\]", sections)) <= fields, actor
