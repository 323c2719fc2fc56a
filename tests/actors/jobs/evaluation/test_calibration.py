"""What the market a run used is, what it can show, and its figures beside real NQ."""

from __future__ import annotations

import pytest

from actors.common.market_stats import REAL_NQ_RANGES, calibration_table
from actors.env.factory import load_dataset
from actors.jobs.evaluation.calibration import calibration_lines, dataset_frame, market_lines, what_the_market_shows
from actors.jobs.config import load_config


@pytest.mark.parametrize(("market", "says"), [("regimes", "planted trends"), ("null", "nothing to learn")])
def test_the_lines_name_the_market_they_ran_on_and_what_it_can_show(market, says):
    config = load_config(None, {"data.synthetic_days": 12, "data.scenario": market})
    lines = market_lines(config, load_dataset(config))
    assert lines[0].startswith(f"market: {market}: ") and says in lines[0]
    assert f"({market}, 12 sessions)" in lines[2]


def test_a_file_is_the_users_data_and_no_scenario_sentence():
    assert what_the_market_shows("/data/nq.csv").startswith("the user's data (/data/nq.csv)")
    assert "planted" not in what_the_market_shows("/data/nq.csv")


def test_each_row_sets_the_markets_figure_beside_real_nqs_range():
    config = load_config(None, {"data.synthetic_days": 12})
    frame = dataset_frame(load_dataset(config))
    table = calibration_table(frame)
    lines = calibration_lines(frame, "regimes")
    rows = [line for line in lines if line.startswith("| ") and not line.startswith(("| figure", "| ---"))]
    assert len(rows) == len(REAL_NQ_RANGES) == len(table.rows)
    for line, row in zip(rows, table.rows):
        assert line.startswith(f"| {row.label} | {row.real.low:.4g} .. {row.real.high:.4g}")
        aside = "" if row.debiased is None else f"{row.debiased:.4g}"
        assert line.endswith(f" | {row.value:.4g} | {'yes' if row.in_range else 'NO'} | {aside} |")
    assert sum(1 for row in table.rows if row.debiased is not None) == 4  # VR(5/15/60/240) show their debiased form
    assert f"{table.in_range} of {len(table.rows)} figures in range" in lines[-1]
