"""A wrong model or adapter path is one clear error naming the key and the file, before any process starts."""

import pytest

from actors.reasoner import ModelFileError, check_model_files
from actors.reasoner.config import ReasonerConfig


def test_the_packaged_model_passes_the_check():
    check_model_files(ReasonerConfig())


def test_a_missing_model_names_the_key_and_the_path(tmp_path):
    with pytest.raises(ModelFileError, match=r"reasoner.model_path: no such file: .*nothere.gguf"):
        check_model_files(ReasonerConfig(model_path=str(tmp_path / "nothere.gguf")))


def test_a_file_that_is_not_gguf_is_refused_for_the_adapter_too(tmp_path):
    junk = tmp_path / "adapter.gguf"
    junk.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(ModelFileError, match=r"reasoner.lora_path: .*adapter.gguf is not a GGUF file"):
        check_model_files(ReasonerConfig(lora_path=str(junk)))
