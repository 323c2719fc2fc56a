"""The generated reference pages: every config key and every command-line flag is documented, and the pages
carry what the code says (docs/reference.py)."""

from __future__ import annotations

import argparse

import msgspec
import pytest

from tests.docs.docs_reference_module import load

reference = load()


# ---------------------------------------------------------------------- configuration


def test_every_config_key_has_a_docstring_or_a_default_toml_comment():
    assert reference.undocumented_config_keys() == []


class _Section(msgspec.Struct, frozen=True, kw_only=True):
    with_docstring: int = 1
    """Documented where it is defined."""
    with_comment: int = 2
    bare: int = 3


class _Root(msgspec.Struct, frozen=True, kw_only=True):
    demo: _Section = msgspec.field(default_factory=_Section)


def test_a_key_with_neither_docstring_nor_comment_is_named():
    toml = "[demo]\nwith_docstring = 1\n# Documented in the toml.\nwith_comment = 2\nbare = 3\n"
    assert reference.undocumented_config_keys(_Root, toml) == ["demo.bare"]
    toml_commented = toml.replace("bare = 3", "bare = 3   # now commented beside its value")
    assert reference.undocumented_config_keys(_Root, toml_commented) == []


def test_default_toml_comments_skip_multi_line_strings_and_reset_at_a_blank_line():
    toml = '[s]\n# about a\na = """\n# not a comment\nb = 1\n"""\n# orphan\n\nc = 2\n'
    comments = reference.toml_comments(toml)
    assert comments == {"s.a": "about a", "s.c": ""}


def test_the_config_page_lists_every_key_with_its_type_default_and_comment():
    page = reference.config_page()
    keys = reference.config_keys()
    assert len(keys) > 100
    for item in keys:
        assert f"| `{item.key}` |" in page
    assert "| `fusion.llm_weight` | `float, >= 0, <= 1` | `0.3` |" in page
    assert "| `run.runs_dir` | `str` | `\"runs\"` |" in page


# ---------------------------------------------------------------------- command lines


@pytest.fixture(scope="module")
def parsers():
    """Every command's parser; importing the benchmarks (torch among them) takes several seconds."""
    return reference.command_parsers()


@pytest.mark.slow
def test_every_command_line_flag_has_help_text(parsers):
    assert reference.undocumented_flags(parsers) == []


@pytest.mark.slow
def test_the_commands_include_bin_run_feed_tail_and_every_benchmark(parsers):
    commands = [command for command, _ in parsers]
    assert {"bin/run", "bin/feed", "bin/tail"} <= set(commands)
    for name, _ in reference.bench_modules():
        assert f"bin/bench {name}" in commands


def _subcommand_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bin/run")
    parser.add_argument("--config", help="a TOML file")
    modes = parser.add_subparsers(dest="mode")
    main = modes.add_parser("main", help="the main job", aliases=["default"])
    main.add_argument("--long", action="store_true", help="longer")
    train = modes.add_parser("train", help="train")
    train.add_argument("--timesteps", type=int)
    return parser


def test_subcommands_are_walked_and_a_flag_without_help_is_named():
    parsers = list(reference.walk_subcommands("bin/run", _subcommand_parser()))
    assert [command for command, _ in parsers] == ["bin/run", "bin/run main", "bin/run train"]
    assert reference.undocumented_flags(parsers) == ["bin/run train --timesteps"]


def test_a_benchmark_parser_is_captured_without_running_the_benchmark():
    ran = []

    def main(argv=None):
        parser = argparse.ArgumentParser(prog="bin/bench demo")
        parser.add_argument("--steps", type=int, help="steps")
        parser.parse_args(argv)
        ran.append(True)

    parser = reference.capture_parser(main)
    assert parser is not None and parser.prog == "bin/bench demo" and ran == []
    assert argparse.ArgumentParser.parse_args.__name__ == "parse_args"  # put back


@pytest.mark.slow
def test_the_cli_page_shows_each_option_with_its_help(parsers):
    page = reference.cli_page()
    assert "## bin/run\n" in page and "## bin/feed\n" in page and "## bin/bench lora\n" in page
    assert "| `--set` | SECTION.KEY=VALUE |" in page
    assert "override one config key" in page


# ---------------------------------------------------------------------- messages


def test_the_messages_page_has_every_topic_and_field_docstring():
    page = reference.messages_page()
    for cls in reference.message_classes():
        assert f"## {cls.TOPIC}: {cls.__name__}" in page
        for field in cls.__struct_fields__:
            assert f"| `{field}` |" in page
    # a docstring inherited from a base struct in another module (ThoughtHeader) reaches the page
    assert reference.attribute_docstrings(reference.message_classes()[0]) is not None
    assert "MarketContext (inside a message)" in page


@pytest.mark.parametrize("path", ["reference/messages.md", "reference/config.md"])  # cli.md: the slow tests above
def test_each_generated_page_is_markdown_with_a_title(path):
    assert reference.PAGES[path]().startswith("# ")
