"""The settings a job lays over the config, from what the actor packages export (no processes)."""

import pytest

from actors.fusion import saved_model_path
from actors.jobs.backtest import backtest_settings, trained_fusion_settings
from actors.jobs.cli import build_parser
from actors.jobs.common import JobError, configure
from actors.jobs.presets import BACKTEST
from actors.jobs.train import policy_checkpoint


def test_a_missing_checkpoint_location_is_a_job_error_naming_it(tmp_path):
    with pytest.raises(JobError, match="no such checkpoint or run directory"):
        policy_checkpoint(tmp_path / "nowhere")


def test_a_run_directory_without_checkpoints_is_a_job_error(tmp_path):
    with pytest.raises(JobError, match="no policy checkpoint"):
        policy_checkpoint(tmp_path)


def test_the_fusion_network_a_training_run_saved_is_used_by_the_backtest(tmp_path):
    model = saved_model_path(tmp_path)
    model.parent.mkdir()
    model.write_bytes(b"weights")

    settings = trained_fusion_settings(tmp_path)

    assert settings == {"fusion.model_path": str(model)}


def test_a_run_without_a_fusion_network_adds_no_setting(tmp_path):
    assert trained_fusion_settings(tmp_path) == {}


def test_backtest_settings_freeze_the_policy_and_use_one_env(tmp_path):
    checkpoint = tmp_path / "policy_000000000512.zip"

    settings = backtest_settings(checkpoint, None, "bt")
    config = configure(build_parser().parse_args(["backtest"]), settings, [BACKTEST])

    assert config.policy.learn is False and config.env.n_envs == 1
    assert config.policy.model_path == str(checkpoint) and config.run.name == "bt"


def test_a_missing_data_file_is_a_job_error(tmp_path):
    with pytest.raises(JobError, match="no such data file"):
        backtest_settings(tmp_path / "ckpt.zip", tmp_path / "bars.csv")


def test_the_exported_fusion_model_path_is_where_the_fusion_actor_saves():
    from actors import fusion
    from actors.fusion import actor, network

    assert (fusion.SAVE_DIR_NAME, fusion.MODEL_FILE_NAME) == (actor.SAVE_DIR_NAME, network.MODEL_FILE_NAME)
