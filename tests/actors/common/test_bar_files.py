"""The CSV/Parquet loader on messy files, the repair report, the time split, the synthetic data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.bar_files import DataError, load_bars, split_by_time
from actors.common.synthetic import BARS_PER_SESSION, generate_bars


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_mixed_case_columns_in_any_order_with_semicolons_and_day_first_dates(tmp_path):
    path = write(tmp_path, "messy.csv",
                 "VOLUME;Close;LOW;High;Open;Date\n"
                 "10;101;99;102;100;13/03/2024 10:00\n"
                 "11;102;100;103;101;13/03/2024 10:01\n"
                 "12;103;101;104;102;14/03/2024 10:00\n")
    frame, report = load_bars(path, timezone="America/New_York")
    assert list(frame.columns) == ["open", "high", "low", "close", "volume"]
    assert frame.index[0] == pd.Timestamp("2024-03-13 10:00", tz="America/New_York")
    assert str(frame.index.tz) == "UTC"
    assert frame.iloc[0].tolist() == [100.0, 102.0, 99.0, 101.0, 10.0]
    assert report.rows_kept == 3 and not report.repaired


def test_ambiguous_dates_are_read_month_first_unless_told_day_first(tmp_path):
    text = "time,open,high,low,close,volume\n03/04/2024 10:00,1,2,0.5,1.5,1\n03/04/2024 10:01,1,2,0.5,1.5,1\n"
    path = write(tmp_path, "ambiguous.csv", text)
    assert load_bars(path)[0].index[0].tz_convert("America/New_York").month == 3
    assert load_bars(path, dayfirst="yes")[0].index[0].tz_convert("America/New_York").month == 4


def test_timestamps_with_an_offset_keep_their_zone_and_become_utc(tmp_path):
    path = write(tmp_path, "zoned.csv",
                 "Datetime,Open,High,Low,Close,Volume\n"
                 "2024-03-04T09:30:00-05:00,1,2,0.5,1.5,7\n"
                 "2024-03-04T09:31:00-05:00,1,2,0.5,1.5,8\n")
    frame, _ = load_bars(path, timezone="Asia/Tokyo")  # the offset wins over the configured zone
    assert frame.index[0] == pd.Timestamp("2024-03-04 14:30", tz="UTC")


def test_duplicates_unsorted_rows_nan_and_swapped_high_low_are_repaired_and_counted(tmp_path):
    path = write(tmp_path, "dirty.csv",
                 ",timestamp,open,high,low,close,volume\n"
                 "0,2024-03-04 10:02,3,4,2,3,1\n"
                 "1,2024-03-04 10:00,1,2,0.5,1.5,1\n"
                 "2,2024-03-04 10:01,2,3,1,2,1\n"
                 "3,2024-03-04 10:01,2,3.5,1,2.5,2\n"
                 "4,2024-03-04 10:03,,5,3,4,1\n"
                 "5,2024-03-04 10:04,4,3,5,4.5,\n"
                 "6,2024-03-04 10:10,4,5,3,4,1\n")
    frame, report = load_bars(path)
    counts = report.as_dict()
    assert counts["nan_rows"] == 1 and counts["nan_volume"] == 1
    assert counts["duplicate_timestamps"] == 1 and counts["unsorted"] == 1
    assert counts["high_low_swapped"] == 1 and counts["gaps"] == 2
    assert frame.index.is_monotonic_increasing and frame.index.is_unique
    assert frame.loc[pd.Timestamp("2024-03-04 10:01", tz="America/New_York"), "close"] == 2.5  # the last duplicate kept
    swapped = frame.loc[pd.Timestamp("2024-03-04 10:04", tz="America/New_York")]
    assert (swapped.high, swapped.low, swapped.volume) == (5.0, 3.0, 0.0)
    assert (frame.high >= frame[["open", "close"]].max(axis=1)).all()


def test_a_price_that_is_not_a_number_is_refused_with_file_row_and_column(tmp_path):
    path = write(tmp_path, "bad.csv", "timestamp,open,high,low,close\n2024-03-04 10:00,1,2,0.5,1\n2024-03-04 10:01,1,abc,0.5,1\n")
    with pytest.raises(DataError) as error:
        load_bars(path)
    assert (error.value.row, error.value.column) == (2, "high")
    assert "bad.csv" in str(error.value) and "row 2" in str(error.value) and "'high'" in str(error.value)


def test_a_non_positive_price_is_refused_with_its_row_and_column(tmp_path):
    path = write(tmp_path, "zero.csv", "timestamp,open,high,low,close\n2024-03-04 10:00,1,2,0.5,1\n2024-03-04 10:01,1,2,0.5,1\n2024-03-04 10:02,1,2,0,1\n")
    with pytest.raises(DataError) as error:
        load_bars(path)
    assert (error.value.row, error.value.column) == (3, "low")


def test_an_unreadable_timestamp_and_a_missing_column_are_refused(tmp_path):
    bad_time = write(tmp_path, "time.csv", "timestamp,open,high,low,close\n2024-03-04 10:00,1,2,0.5,1\nyesterday-ish,1,2,0.5,1\n")
    with pytest.raises(DataError) as error:
        load_bars(bad_time)
    assert (error.value.row, error.value.column) == (2, "timestamp")
    no_close = write(tmp_path, "noclose.csv", "timestamp,open,high,low\n2024-03-04 10:00,1,2,0.5\n")
    with pytest.raises(DataError, match="no close column"):
        load_bars(no_close)
    with pytest.raises(DataError, match="file not found"):
        load_bars(tmp_path / "missing.csv")


def test_separate_date_and_time_columns_and_epoch_milliseconds_are_understood(tmp_path):
    split_columns = write(tmp_path, "dt.csv", "Date,Time,Open,High,Low,Close,Vol\n2024-03-04,10:00,1,2,0.5,1.5,3\n2024-03-04,10:01,1,2,0.5,1.5,3\n")
    assert load_bars(split_columns)[0].index[1] == pd.Timestamp("2024-03-04 15:01", tz="UTC")
    epoch = write(tmp_path, "epoch.csv", "ts,o,h,l,c,v\n1709564400000,1,2,0.5,1.5,3\n1709564460000,1,2,0.5,1.5,3\n")
    assert load_bars(epoch)[0].index[0] == pd.Timestamp("2024-03-04 15:00", tz="UTC")


def test_parquet_with_a_datetime_index_loads(tmp_path):
    frame = generate_bars(2, seed=0)
    renamed = frame.rename(columns=str.upper).tz_convert("Europe/Berlin")
    renamed.index.name = "Time"
    renamed.to_parquet(tmp_path / "bars.parquet")
    loaded, report = load_bars(tmp_path / "bars.parquet")
    assert loaded.index.equals(frame.index)
    assert np.array_equal(loaded.to_numpy(), frame.to_numpy())
    assert report.rows_kept == len(frame)


def test_the_time_split_is_ordered_without_overlap_and_cut_at_session_starts():
    frame = generate_bars(20, seed=1)
    bounds = split_by_time(frame.index, 0.7, 0.15)
    train, validation, test = bounds["train"], bounds["validation"], bounds["test"]
    assert train[0] == 0 and train[1] == validation[0] and validation[1] == test[0] and test[1] == len(frame)
    assert train[1] % BARS_PER_SESSION == 0 and validation[1] % BARS_PER_SESSION == 0
    assert frame.index[train[1] - 1] < frame.index[validation[0]] < frame.index[test[0]]


def test_synthetic_bars_are_seeded_rth_sessions_with_consistent_ohlc():
    first, again, other = generate_bars(3, seed=4), generate_bars(3, seed=4), generate_bars(3, seed=5)
    assert first.equals(again) and not first.equals(other)
    eastern = first.index.tz_convert("America/New_York")
    assert len(first) == 3 * BARS_PER_SESSION
    assert eastern.strftime("%H:%M").min() == "09:30" and eastern.strftime("%H:%M").max() == "15:59"
    assert set(eastern.day_of_week) <= {0, 1, 2, 3, 4}
    assert (first.high >= first[["open", "close"]].max(axis=1)).all() and (first.low <= first[["open", "close"]].min(axis=1)).all()
    assert (first.volume > 0).all()
    minutes = eastern.hour * 60 + eastern.minute
    opening, midday = first.volume[minutes < 600].mean(), first.volume[(minutes > 720) & (minutes < 840)].mean()
    assert opening > midday  # the U-shaped volume curve


def test_an_unnamed_datetime_index_column_is_taken_as_the_timestamp(tmp_path):
    frame = generate_bars(1, seed=0).head(5)
    frame.index.name = None
    frame.to_csv(tmp_path / "pandas.csv")
    loaded, _ = load_bars(tmp_path / "pandas.csv")
    assert loaded.index.equals(frame.index)


def test_a_column_named_utc_is_read_as_utc_whatever_the_configured_zone(tmp_path):
    path = write(tmp_path, "utc.csv", "Time_UTC,Open,High,Low,Close\n2024-03-04 14:30,1,2,0.5,1.5\n2024-03-04 14:31,1,2,0.5,1.5\n")
    assert load_bars(path, timezone="America/Chicago")[0].index[0] == pd.Timestamp("2024-03-04 14:30", tz="UTC")
