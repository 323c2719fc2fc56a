"""The generated reference pages: the bus messages, the configuration and the command lines, read from the code.

docs/hooks.py runs ``python docs/reference.py`` on every ``mkdocs build`` and ``mkdocs serve``; nothing here is
written by hand, so the pages cannot drift from bus/messages.py, the typed config, config/default.toml or the
argparse parsers. tests/docs/ imports the same functions to check that every config key and every command-line
flag is documented.

Written by hand (not mkdocstrings) because what we document are a struct's *fields*, with the attribute docstring
under each and the comment above each key in config/default.toml, and argparse parsers: neither is a Python API
page that mkdocstrings renders.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import inspect
import json
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_TOML = ROOT / "config" / "default.toml"


def config_class() -> type[msgspec.Struct]:
    """The root configuration struct. Where it lives is this one import (actors/jobs/config.py today)."""
    from actors.jobs.config import Config

    return Config


# --------------------------------------------------------------------------- types, values, docstrings


def render_type(kind: mi.Type) -> str:
    """A field type as a reader wants it: ``float, >= 0, <= 1`` for ``Fraction``, ``list[str]``, ``MarketContext``."""
    if isinstance(kind, (mi.IntType, mi.FloatType)):
        name = "int" if isinstance(kind, mi.IntType) else "float"
        bounds = [f"{symbol} {getattr(kind, attr)}" for attr, symbol in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))
                  if getattr(kind, attr) is not None]
        return ", ".join([name, *bounds])
    simple = {mi.StrType: "str", mi.BoolType: "bool", mi.BytesType: "bytes", mi.NoneType: "None", mi.AnyType: "any"}
    for cls, name in simple.items():
        if isinstance(kind, cls):
            return name
    if isinstance(kind, mi.ListType):
        return f"list[{render_type(kind.item_type)}]"
    if isinstance(kind, mi.VarTupleType):
        return f"tuple[{render_type(kind.item_type)}, ...]"
    if isinstance(kind, mi.TupleType):
        return f"tuple[{', '.join(render_type(item) for item in kind.item_types)}]"
    if isinstance(kind, mi.DictType):
        return f"dict[{render_type(kind.key_type)}, {render_type(kind.value_type)}]"
    if isinstance(kind, mi.UnionType):
        return " | ".join(render_type(item) for item in kind.types)
    if isinstance(kind, mi.LiteralType):
        return " | ".join(json.dumps(value) for value in kind.values)
    if isinstance(kind, mi.StructType):
        return kind.cls.__name__
    if isinstance(kind, mi.CustomType):
        return "ndarray" if kind.cls.__name__ == "ndarray" else kind.cls.__name__
    return type(kind).__name__.removesuffix("Type").lower()


def render_default(field: mi.Field) -> str:
    """The default as TOML-ish JSON (``"ipc"``, ``[1, 2]``), or ``required``."""
    if field.required:
        return "required"
    value = field.default if field.default is not mi.NODEFAULT else field.default_factory()
    if isinstance(value, msgspec.Struct):
        return f"a {type(value).__name__}"
    try:
        return json.dumps(msgspec.to_builtins(value), ensure_ascii=False)
    except (TypeError, ValueError):  # an array or an object msgspec does not convert: say what it is
        return type(value).__name__


@functools.cache
def attribute_docstrings(cls: type) -> dict[str, str]:
    """Each field's docstring (the string literal under ``name: type = default``), looked up the class's MRO."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass in (object, msgspec.Struct):
            continue
        found.update(_own_docstrings(klass))
    return found


def _own_docstrings(klass: type) -> dict[str, str]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
    except (OSError, TypeError, SyntaxError):  # a class without source (built in, or made at run time)
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs = {}
    for statement, following in zip(body, body[1:]):
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[statement.target.id] = inspect.cleandoc(following.value.value)
    return docs


def cell(text: str) -> str:
    """Text fit for one Markdown table cell: one line, pipes escaped, and ``<`` escaped outside code spans (a
    ``<runs_dir>`` in a docstring would otherwise be read as an HTML tag and vanish)."""
    parts = " ".join(text.split()).split("`")
    parts = [part if index % 2 else part.replace("<", "&lt;") for index, part in enumerate(parts)]
    return "`".join(parts).replace("|", "\\|")


def code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


# --------------------------------------------------------------------------- bus messages


def message_classes() -> tuple[type, ...]:
    from bus.messages import ALL_MESSAGES

    return ALL_MESSAGES


def messages_page() -> str:
    from bus import messages

    lines = ["# Message vocabulary", "",
             "*Generated from `bus/messages.py` on every docs build; edit the docstrings there, not this page.*", "",
             inspect.cleandoc(messages.__doc__ or ""), "",
             "| topic | message | what it is |", "| --- | --- | --- |"]
    classes = message_classes()
    for cls in classes:
        lines.append(f"| [{code(cls.TOPIC)}](#{_anchor(cls)}) | `{cls.__name__}` | {cell(_class_summary(cls))} |")
    nested: dict[str, type] = {}
    for cls in classes:
        lines += ["", f"## {cls.TOPIC}: {cls.__name__} {{#{_anchor(cls)}}}", "",
                  f"Schema version {cls.SCHEMA_VERSION}. {_class_summary(cls)}", ""]
        lines += _struct_table(cls, nested)
    for name, cls in sorted(nested.items()):
        lines += ["", f"## {name} (inside a message) {{#{name.lower()}}}", "", _class_summary(cls), ""]
        lines += _struct_table(cls, {})
    return "\n".join(lines) + "\n"


def _anchor(cls: type) -> str:
    return cls.TOPIC.replace(".", "-") or cls.__name__.lower()


def _class_summary(cls: type) -> str:
    doc = cls.__doc__ or ""
    if doc.startswith(f"{cls.__name__}(") or not doc.strip():  # msgspec's generated signature: no docstring
        return ""
    return " ".join(inspect.cleandoc(doc).split())


def _struct_table(cls: type, nested: dict[str, type]) -> list[str]:
    docs = attribute_docstrings(cls)
    rows = ["| field | type | default | doc |", "| --- | --- | --- | --- |"]
    for field in mi.type_info(cls).fields:
        for inner in _structs_in(field.type):
            nested.setdefault(inner.__name__, inner)
        rows.append(f"| `{field.name}` | {cell(code(render_type(field.type)))} | {cell(code(render_default(field)))} "
                    f"| {cell(docs.get(field.name, ''))} |")
    return rows


def _structs_in(kind: mi.Type) -> Iterator[type]:
    if isinstance(kind, mi.StructType):
        yield kind.cls
    for attr in ("item_type", "value_type"):
        if hasattr(kind, attr):
            yield from _structs_in(getattr(kind, attr))
    for item in getattr(kind, "types", ()) or getattr(kind, "item_types", ()):
        yield from _structs_in(item)


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class ConfigKey:
    key: str
    """section.key (or section.sub.key for a nested struct)."""
    type: str
    default: str
    doc: str
    """The field's docstring in its struct ("" when it has none)."""
    comment: str
    """The comment above (or beside) the key in config/default.toml ("" when it has none)."""
    struct: str
    """The struct that defines it, e.g. FusionConfig."""


def toml_comments(text: str) -> dict[str, str]:
    """section.key -> its comment in a default.toml text: the ``#`` lines right above the key and any after its value.

    Read by hand because tomllib drops comments; lines inside a multi-line string are skipped."""
    comments: dict[str, str] = {}
    section, pending, in_string = "", [], False
    for raw in text.splitlines():
        line = raw.strip()
        if in_string:
            in_string = line.count('"""') % 2 == 0 and line.count("'''") % 2 == 0
            continue
        if line.startswith("#"):
            pending.append(line.lstrip("#").strip())
        elif header := re.fullmatch(r"\[([A-Za-z0-9_.]+)\]", line):
            section, pending = header.group(1), []
        elif key := re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)", line):
            name, value = key.groups()
            inline = value.split(" # ", 1)[1].strip() if " # " in value else ""
            comments[f"{section}.{name}"] = " ".join(part for part in [*pending, inline] if part)
            pending = []
            in_string = value.count('"""') % 2 == 1 or value.count("'''") % 2 == 1
        elif not line:
            pending = []
    return comments


def config_keys(root: type | None = None, toml_text: str | None = None) -> list[ConfigKey]:
    """Every leaf key of the typed config, with its type, default, docstring and default.toml comment."""
    root = root or config_class()
    comments = toml_comments(DEFAULT_TOML.read_text() if toml_text is None else toml_text)
    return list(_keys_of(root, "", comments))


def _keys_of(struct: type, prefix: str, comments: dict[str, str]) -> Iterator[ConfigKey]:
    docs = attribute_docstrings(struct)
    choices = struct.choices() if callable(getattr(struct, "choices", None)) else {}
    for field in mi.type_info(struct).fields:
        key = f"{prefix}{field.name}"
        if isinstance(field.type, mi.StructType):
            yield from _keys_of(field.type.cls, f"{key}.", comments)
            continue
        doc = " ".join(part for part in (docs.get(field.name, ""), _choices_text(choices.get(field.name))) if part)
        yield ConfigKey(key=key, type=render_type(field.type), default=render_default(field), doc=doc,
                        comment=comments.get(key, ""), struct=struct.__name__)


def _choices_text(choices: dict[str, str] | None) -> str:
    """A registry's values of a key (a section's ``choices()``, e.g. data.scenario's markets), each with what it is."""
    if not choices:
        return ""
    return "One of: " + "; ".join(f"`{value}`: {what}" for value, what in choices.items()) + "."


def undocumented_config_keys(root: type | None = None, toml_text: str | None = None) -> list[str]:
    """The keys with neither a docstring nor a default.toml comment."""
    return [item.key for item in config_keys(root, toml_text) if not (item.doc or item.comment)]


def config_page() -> str:
    root = config_class()
    lines = ["# Configuration reference", "",
             f"*Generated on every docs build from the typed config (`{root.__module__}.{root.__name__}` and each section's "
             "struct: type, bounds, default, the field's docstring) and from the comment above each key in "
             "`config/default.toml`. Edit those, not this page.*", "",
             "A run merges `config/default.toml`, then `--config FILE`, then each `--set section.key=value` (TOML value "
             "syntax). An unknown section or key, a wrong type or a value out of bounds stops start-up with a message "
             "naming the key and the file it came from (see [Troubleshooting](../troubleshooting.md)).", ""]
    keys = config_keys(root)
    sections = list(dict.fromkeys(item.key.split(".")[0] for item in keys))
    lines.append("Sections: " + ", ".join(f"[`[{name}]`](#{name})" for name in sections) + ".")
    for section in sections:
        struct = next(item.struct for item in keys if item.key.split(".")[0] == section)
        lines += ["", f"## [{section}] {{#{section}}}", "", f"Struct `{struct}`.", "",
                  "| key | type | default | what it means |", "| --- | --- | --- | --- |"]
        for item in keys:
            if item.key.split(".")[0] == section:
                lines.append(f"| `{item.key}` | {cell(code(item.type))} | {cell(code(item.default))} | {cell(_meaning(item))} |")
    return "\n".join(lines) + "\n"


def _meaning(item: ConfigKey) -> str:
    """The docstring, and the default.toml comment too where it says something the docstring does not."""
    if item.doc and item.comment and not _says_the_same(item.comment, item.doc):
        return f"{item.doc} *default.toml:* {item.comment}"
    return item.doc or item.comment


def _says_the_same(comment: str, doc: str) -> bool:
    """Most of the comment's words are in the docstring (the two are usually written as one sentence twice)."""
    words = set(re.findall(r"[a-z0-9_]+", comment.lower()))
    return len(words & set(re.findall(r"[a-z0-9_]+", doc.lower()))) >= 0.6 * len(words)


# --------------------------------------------------------------------------- command lines


class _Captured(Exception):
    """Raised by the stand-in for parse_args to hand the parser a benchmark's main() built back to us."""


def capture_parser(main: Callable[..., Any]) -> argparse.ArgumentParser | None:
    """The parser ``main`` builds before parsing: the benchmarks build theirs inside ``main()`` and have no
    build_parser; parse_args is replaced for the call, so nothing past the parser runs."""

    def grab(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Captured(self)

    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = grab  # type: ignore[method-assign]
    try:
        main()
    except _Captured as captured:
        return captured.args[0]
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    return None


def command_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """(command, parser) for bin/run, bin/feed, bin/tail and every bin/bench NAME, subcommands walked."""
    from actors.feed.cli import build_parser as feed_parser
    from actors.jobs.cli import build_parser as run_parser
    from runtime.tail import build_parser as tail_parser

    found = [("bin/run", run_parser()), ("bin/feed", feed_parser()), ("bin/tail", tail_parser())]
    for name, module in bench_modules():
        parser = capture_parser(importlib.import_module(module).main)
        if parser is not None:
            found.append((f"bin/bench {name}", parser))
    return [(command, sub) for top, parser in found for command, sub in walk_subcommands(top, parser)]


def bench_modules() -> list[tuple[str, str]]:
    return [(path.stem.removeprefix("bench_"), f"tests.bench.{path.stem}")
            for path in sorted((ROOT / "tests" / "bench").glob("bench_*.py"))]


def walk_subcommands(command: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The parser itself, then each subcommand's (``bin/run main``), depth first: flat or subparsers alike."""
    yield command, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:  # an alias names the same parser again
                    seen.add(id(sub))
                    yield from walk_subcommands(f"{command} {name}", sub)


def documented_actions(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    """The parser's own options and positionals (not its subcommand list, not --help)."""
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        yield action


def undocumented_flags(parsers: list[tuple[str, argparse.ArgumentParser]] | None = None) -> list[str]:
    """``command flag`` for every option or positional without help text."""
    return [f"{command} {_names(action)}" for command, parser in (parsers or command_parsers())
            for action in documented_actions(parser) if not (action.help or "").strip()]


def _names(action: argparse.Action) -> str:
    return ", ".join(action.option_strings) or action.dest


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    try:
        return parser._get_formatter()._expand_help(action)
    except (KeyError, TypeError, ValueError):  # a help string with a stray %: show it as written
        return action.help or ""


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return " | ".join(str(choice) for choice in action.choices)
    metavar = action.metavar if isinstance(action.metavar, str) else (action.dest.upper() if action.option_strings else action.dest)
    return metavar


def cli_page() -> str:
    lines = ["# Command-line reference", "",
             "*Generated on every docs build from the argparse parsers (`actors/jobs/cli.py`, `actors/feed/cli.py`, "
             "`runtime/tail.py` and each `tests/bench/bench_*.py`); edit the help texts there, not this page.*", "",
             "`bin/test [pytest args]` runs the test suite and `bin/docs [build]` serves or builds this site; "
             "`bin/setup` and `bin/lock` take no options."]
    for command, parser in command_parsers():
        lines += ["", f"## {command}", ""]
        if parser.description:
            lines += [" ".join(parser.description.split()), ""]
        lines += ["```text", parser.format_usage().strip().replace(f"usage: {parser.prog}", f"usage: {command}", 1), "```", "",
                  "| option | value | default | what it does |", "| --- | --- | --- | --- |"]
        for action in documented_actions(parser):
            default = "" if action.default in (None, argparse.SUPPRESS, False, []) or action.required else repr(action.default)
            lines.append(f"| `{_names(action)}` | {cell(_value(action))} | {cell(default)} | {cell(_help(parser, action))} |")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                lines += ["", "Subcommands: " + ", ".join(f"`{name}`" for name in action.choices) + "."]
        if parser.epilog:
            lines += ["", "```text", parser.epilog.strip(), "```"]
    return "\n".join(lines) + "\n"


def observation_page() -> str:
    """The 261 observation columns: groups with their column ranges, then each per-bar extended column."""
    from actors.common import observation as obs

    lines = ["# Observation reference", "",
             "*Generated on every docs build from `actors/common/observation.py` (names, groups, notes); the values "
             "are computed in `actors/env/features.py` and `actors/env/session_features.py`.*", "",
             f"Layout `{obs.OBSERVATION_LAYOUT}`, {len(obs.FEATURE_NAMES)} columns. A policy checkpoint records the "
             "layout it was trained on and is refused under another. Every market value at bar t reads bars <= t only.",
             "", "| group | columns | what |", "| --- | --- | --- |"]
    for group in obs.FEATURE_GROUPS:
        columns = obs.observation_columns([group])
        lines.append(f"| `{group}` | {columns[0]}-{columns[-1]} | {cell(obs.GROUP_NOTES[group])} |")
    lines += ["", "## Per-bar extended columns", "", "| column | name | group | what |", "| --- | --- | --- | --- |"]
    group_of = {name: group for group, names in obs.FEATURE_GROUPS.items() for name in names}
    for name in obs.STATIC_FEATURES:
        lines.append(f"| {obs.FEATURE_NAMES.index(name)} | `{name}` | {group_of[name]} | {cell(obs.FEATURE_NOTES[name])} |")
    lines += ["", "## Columns layout 2 replaced", "",
              "Layout `261/1` had these in the places of the session columns; each repeated what the observation has "
              "elsewhere.", "", "| name | why it went |", "| --- | --- |"]
    lines += [f"| `{name}` | {cell(why)} |" for name, why in obs.REPLACED_IN_LAYOUT_2.items()]
    return "\n".join(lines) + "\n"


PAGES: dict[str, Callable[[], str]] = {
    "reference/messages.md": messages_page,
    "reference/config.md": config_page,
    "reference/cli.md": cli_page,
    "reference/observation.md": observation_page,
}
"""Generated page (path under docs/) -> the function that writes it."""


def main(out: str) -> None:
    """Write {page path: Markdown} as JSON to ``out`` (docs/hooks.py runs this in a fresh process on every build, so
    a rebuild under ``mkdocs serve`` reads the code as it is now; a file, as imports may print to stdout)."""
    Path(out).write_text(json.dumps({path: page() for path, page in PAGES.items()}))


if __name__ == "__main__":
    main(sys.argv[1])
