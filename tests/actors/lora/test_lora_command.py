"""``bin/run lora``: offline fine-tuning from an experience file, and a rollback to an earlier version."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from actors.jobs.cli import main
from actors.jobs.config import load_config
from actors.jobs.lora import lora_actor_settings
from actors.lora.store import write_experiences_file
from actors.lora.versions import VersionBook
from tests.actors.lora.planted import planted_experiences

TINY_ROUND = ["--set", "lora.steps_per_round=2", "--set", "lora.batch_size=2", "--set", "lora.max_eval_examples=4",
              "--set", "lora.max_seq_tokens=256"]


@pytest.mark.slow
def test_offline_fine_tuning_trains_a_round_and_prints_the_match_rates_and_the_adapter(tmp_path, capsys):
    # Hindsight experiences know what a long and a short made: the round also says what its answers were worth.
    planted = [replace(e, meta={**e.meta, "long_pnl_usd": 40.0, "short_pnl_usd": -60.0}) for e in planted_experiences(16)]
    experiences = write_experiences_file(tmp_path / "experiences.jsonl", planted)
    run_dir = tmp_path / "run"

    code = main(["lora", "--experiences", str(experiences), "--run-dir", str(run_dir), "--quiet", *TINY_ROUND])

    out = capsys.readouterr().out
    [version] = VersionBook(run_dir / "lora" / "versions").versions()
    assert code == 0
    assert "round 1: match rate before -> after" in out and str(version.path) in out
    assert version.path.stat().st_size > 0 and version.metrics["train_steps"] == 2.0
    assert "round 1: hindsight $ of the answers (held out)" in out
    assert version.metrics["usd_oracle"] == 40.0  # the better side, a long, on every prompt
    assert -60.0 <= version.metrics["usd_after"] <= 40.0


def test_a_rollback_republishes_an_earlier_version_as_a_new_one(tmp_path, capsys):
    book = VersionBook(tmp_path / "lora" / "versions")
    for version in (1, 2):
        adapter = tmp_path / f"a{version}.gguf"
        adapter.write_bytes(b"adapter %d" % version)
        book.record(version, adapter, {"match_rate_after": 0.5 + version / 10}, published=True)

    code = main(["lora", "--rollback", "1", "--run-dir", str(tmp_path)])

    out = capsys.readouterr().out
    newest = book.versions()[-1]
    assert code == 0 and newest.version == 3 and newest.published
    assert newest.path.read_bytes() == b"adapter 1" and newest.metrics["rollback_of"] == 1.0
    assert "no (no bus.json" in out
    assert json.loads((newest.path.parent / "metrics.json").read_text())["published"] is True


def test_a_rollback_to_an_unknown_version_is_a_job_error(tmp_path, capsys):
    code = main(["lora", "--rollback", "7", "--run-dir", str(tmp_path)])

    assert code == 1 and "no adapter version 7" in capsys.readouterr().err


def test_lora_enabled_adds_the_trainer_to_the_runtime_actors_once():
    enabled = load_config(None, {"lora.enabled": True})

    settings = lora_actor_settings(enabled)

    assert settings["runtime.actors"] == [*enabled.runtime.actors, "lora"]
    assert lora_actor_settings(load_config(None, {})) == {}
    assert lora_actor_settings(load_config(None, {"lora.enabled": True, **settings})) == {}
