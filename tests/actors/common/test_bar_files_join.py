"""Several bar files as one calendar (actors/common/bar_join.py): overlaps deduplicated, contracts rolled by the
documented rule, a broken row named with its file, row and field."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.bar_files import DataError
from actors.common.bar_join import load_bar_files


def bars_csv(path, start_et: str, minutes: int, price: float, volume: float = 100.0, step: float = 0.25):
    """A CSV of 1-minute bars from ``start_et`` (New York time), closes rising by ``step`` a bar from ``price``."""
    index = pd.date_range(pd.Timestamp(start_et), periods=minutes, freq="1min")
    close = price + step * np.arange(minutes)
    frame = pd.DataFrame({"timestamp": index.strftime("%Y-%m-%d %H:%M"), "open": close, "high": close + 1, "low": close - 1,
                          "close": close, "volume": volume})
    frame.to_csv(path, index=False)
    return path


def test_two_exports_of_one_series_that_overlap_are_one_calendar_without_duplicates(tmp_path):
    first = bars_csv(tmp_path / "jan.csv", "2024-03-04 09:30", 300, 18_000.0)
    second = bars_csv(tmp_path / "feb.csv", "2024-03-04 12:30", 300, 18_000.0 + 0.25 * 180)  # 120 minutes in common
    frame, report = load_bar_files([first, second])
    assert len(frame) == 480 and frame.index.is_unique and frame.index.is_monotonic_increasing
    assert np.allclose(np.diff(frame["close"].to_numpy()), 0.25)  # the same series, no jump, nothing shifted
    assert report.repaired["duplicate_bars_across_files"] == 120
    assert report.rows_read == 600 and report.rows_kept == 480 and "jan.csv" in report.path and "feb.csv" in report.path


def test_two_contracts_that_share_minutes_roll_to_the_later_one_on_its_busier_day_and_are_back_adjusted(tmp_path):
    # March trades alone on day 1, both trade on day 2 (June busier), June alone on day 3; June is 50 points higher.
    march = bars_csv(tmp_path / "NQH4.csv", "2024-03-04 09:30", 390 * 2, 18_000.0, volume=500.0, step=0.0)
    june_rows = []
    for day, volume in (("2024-03-05", 900.0), ("2024-03-06", 900.0)):
        june_rows.append(pd.read_csv(bars_csv(tmp_path / f"part{day}.csv", f"{day} 09:30", 390, 18_050.0, volume=volume, step=0.0)))
    pd.concat(june_rows).to_csv(tmp_path / "NQM4.csv", index=False)
    march_days = pd.read_csv(march)
    march_days["timestamp"] = pd.date_range("2024-03-04 09:30", periods=390, freq="1min").strftime("%Y-%m-%d %H:%M").tolist() + \
        pd.date_range("2024-03-05 09:30", periods=390, freq="1min").strftime("%Y-%m-%d %H:%M").tolist()
    march_days.to_csv(march, index=False)
    frame, report = load_bar_files([march, tmp_path / "NQM4.csv"])
    assert frame.index.is_unique and len(frame) == 390 * 3
    [roll] = [r for r in report.rolls if r["from"] == "NQH4.csv"]
    assert roll["to"] == "NQM4.csv" and roll["date"] == "2024-03-05" and roll["adjustment_points"] == 50.0
    assert (frame["close"] == 18_050.0).all()  # day 1 (March) back-adjusted by +50: no jump at the roll


def test_files_that_follow_each_other_are_kept_as_they_are_in_time_order_whatever_the_order_given(tmp_path):
    later = bars_csv(tmp_path / "b.csv", "2024-03-05 09:30", 60, 18_100.0)
    earlier = bars_csv(tmp_path / "a.csv", "2024-03-04 09:30", 60, 18_000.0)
    frame, report = load_bar_files([later, earlier])
    assert len(frame) == 120 and frame["close"].iloc[0] == 18_000.0 and frame["close"].iloc[-1] == 18_100.0 + 0.25 * 59
    assert [(r["from"], r["to"], r["adjusted"]) for r in report.rolls] == [("a.csv", "b.csv", False)]


def test_a_broken_row_in_the_second_file_names_that_file_its_row_and_its_field(tmp_path):
    good = bars_csv(tmp_path / "good.csv", "2024-03-04 09:30", 30, 18_000.0)
    broken = tmp_path / "broken.csv"
    broken.write_text("timestamp,open,high,low,close,volume\n2024-03-05 09:30,1,2,0.5,1.5,1\n2024-03-05 09:31,1,2,0.5,abc,1\n")
    with pytest.raises(DataError) as caught:
        load_bar_files([good, broken])
    assert caught.value.path == str(broken) and caught.value.row == 2 and caught.value.column == "close"
