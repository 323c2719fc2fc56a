"""Issue 51: evaluate's lockstep policy reads the regime belief of the fold it was trained on, not a refit.

The lockstep env loads its own data split (the test window's first day is the split's cut), so without the fold's HMM
it would fit one on every bar before its window: a market_regime the policy never saw."""

from __future__ import annotations

import numpy as np
import pytest

from actors.env.factory import build_dataset
from actors.env.features import STATIC_FEATURES
from actors.env.regime_model import MODEL_FILE_NAME, read_regime_model
from actors.jobs.config import load_config
from actors.jobs.evaluation.lockstep_evidence import save_lockstep_policy, window_settings
from actors.policy.checkpoint import Checkpoint, read_checkpoint

REGIME = STATIC_FEATURES.index("market_regime")
DAYS = {"data.synthetic_days": 10}


def dataset(settings: dict):
    config = load_config(None, {**DAYS, **settings})
    return build_dataset(config.data, config.account, seed=config.run.seed)


def test_the_lockstep_policy_is_played_on_its_folds_regime_belief(tmp_path):
    whole = dataset({})
    fold = whole.with_regime_fitted_on(int(whole.session_starts[6]))  # the fold's training days: days 0-5
    checkpoint = Checkpoint(model_bytes=b"model", normalizer_bytes=b"norm", meta={"regime_model": fold.regime_model.to_dict()})

    path, settings = save_lockstep_policy(tmp_path / "lockstep-policy", 4096, checkpoint)

    assert read_checkpoint(path).model_bytes == b"model" and settings["policy.model_path"] == str(path)
    assert settings["data.regime_model_path"] == str(tmp_path / "lockstep-policy" / MODEL_FILE_NAME)
    assert read_regime_model(settings["data.regime_model_path"]) == fold.regime_model
    window = window_settings(whole, 8)  # the lockstep window starts later than the fold's training days end
    played = dataset({**window, "data.regime_model_path": settings["data.regime_model_path"]})
    refitted = dataset(window)
    test = slice(int(whole.session_starts[8]), len(whole))
    assert np.array_equal(played.features.static[test, REGIME], fold.features.static[test, REGIME])
    assert np.array_equal(played.features.trend_code[test], fold.features.trend_code[test])
    assert not np.array_equal(refitted.features.static[test, REGIME], fold.features.static[test, REGIME])  # what it read before


def test_a_checkpoint_without_a_regime_model_plays_as_before(tmp_path):
    _, settings = save_lockstep_policy(tmp_path, 10, Checkpoint(model_bytes=b"m", normalizer_bytes=b"n", meta={}))
    assert "data.regime_model_path" not in settings


def test_a_missing_or_broken_regime_model_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="no such regime model file"):
        dataset({"data.regime_model_path": str(tmp_path / "absent.json")})
    broken = tmp_path / MODEL_FILE_NAME
    broken.write_text("{}")
    with pytest.raises(ValueError, match="not a regime model"):
        read_regime_model(broken)
