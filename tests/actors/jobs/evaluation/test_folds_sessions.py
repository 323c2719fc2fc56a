"""Folds sized by the data's sessions, and a plain sentence when there are too few days for any verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd

from actors.jobs.evaluation.folds import MIN_TEST_DAYS_FOR_A_VERDICT, bars_per_session, too_few_days


def test_bars_per_session_is_the_data_s_own_count():
    regular = np.arange(0, 390 * 5, 390)
    assert bars_per_session(regular, 390 * 5) == 390
    globex = np.arange(0, 1380 * 4, 1380)
    assert bars_per_session(globex, 1380 * 4 - 100) == 1380  # a short last session does not move the median


def test_enough_days_say_nothing_and_too_few_say_why_in_numbers():
    assert too_few_days(400, 250, 2, 2) is None
    sentence = too_few_days(30, 17, 2, 2)
    assert sentence.startswith("too few days for any verdict") and "30 trading sessions" in sentence and "11 test day(s)" in sentence
    assert f"{MIN_TEST_DAYS_FOR_A_VERDICT} test days" in sentence
    assert too_few_days(40, 5, 1, 1) is not None  # enough test days, too few to train on


def test_evaluate_on_a_file_of_a_few_days_stops_before_training_and_says_so(tmp_path, capsys):
    from actors.jobs.cli import main

    days = pd.bdate_range("2024-03-04", periods=8)
    index = [day + pd.Timedelta(hours=9, minutes=30) + pd.Timedelta(minutes=m) for day in days for m in range(390)]
    close = 18_000.0 + np.cumsum(np.random.default_rng(0).normal(0, 2, len(index))).round() * 0.25
    frame = pd.DataFrame({"timestamp": pd.DatetimeIndex(index).strftime("%Y-%m-%d %H:%M"), "open": close, "high": close + 1,
                          "low": close - 1, "close": close, "volume": 100.0})
    half = len(frame) // 2
    frame.iloc[: half + 390].to_csv(tmp_path / "a.csv", index=False)  # the two files share a day
    frame.iloc[half:].to_csv(tmp_path / "b.csv", index=False)
    status = main(["evaluate", "--market", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--quick", "--run-dir", str(tmp_path / "run")])
    assert status != 0
    assert "too few days for any verdict: 8 trading sessions" in capsys.readouterr().err  # the two files, one shared day: 8
