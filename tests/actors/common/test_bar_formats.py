"""The formats futures traders export: Databento CSV and DBN, NinjaTrader, TradingView, FirstRate/Kibot, several contracts."""

from __future__ import annotations

import datetime as dt
import io
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from actors.common.bar_files import DataError, load_bars

UTC = "UTC"


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def utc(text: str) -> pd.Timestamp:
    return pd.Timestamp(text, tz=UTC)


def refused(path, **options) -> DataError:
    with pytest.raises(DataError) as error:
        load_bars(path, **options)
    assert path.name in str(error.value)
    return error.value


# --------------------------------------------------------------------------- Databento CSV

DATABENTO_HEADER = "ts_event,rtype,publisher_id,instrument_id,open,high,low,close,volume,symbol\n"


def test_a_databento_csv_with_iso_times_loads_bar_starts_in_utc(tmp_path):
    path = write(tmp_path, "glbx-mdp3.ohlcv-1m.csv", DATABENTO_HEADER
                 + "2024-03-04T14:30:00.000000000Z,33,1,101,18000.250000000,18001.000000000,17999.500000000,18000.750000000,12,NQH4\n"
                 + "2024-03-04T14:31:00.000000000Z,33,1,101,18000.750000000,18002.000000000,18000.500000000,18001.250000000,7,NQH4\n")
    frame, report = load_bars(path, timezone="Asia/Tokyo")
    assert list(frame.index) == [utc("2024-03-04 14:30"), utc("2024-03-04 14:31")]
    assert frame.iloc[0].tolist() == [18000.25, 18001.0, 17999.5, 18000.75, 12.0]
    assert report.format == "databento-csv" and not report.rolls and not report.repaired


def test_databento_nanosecond_times_and_fixed_point_prices_are_scaled_and_undefined_prices_dropped(tmp_path):
    undefined = 2**63 - 1
    path = write(tmp_path, "raw.csv", DATABENTO_HEADER
                 + "1709562600000000000,33,1,101,18000250000000,18001000000000,17999500000000,18000750000000,12,NQH4\n"
                 + "1709562660000000000,33,1,101,18000750000000,18002000000000,18000500000000,18001250000000,7,NQH4\n"
                 + f"1709562720000000000,33,1,101,{undefined},18002000000000,18000500000000,18001250000000,0,NQH4\n"
                 + "1709562780000000000,33,1,101,18001250000000,18003000000000,18001000000000,18002500000000,3,NQH4\n")
    frame, report = load_bars(path)
    assert frame.index[0] == utc("2024-03-04 14:30") and frame.index[-1] == utc("2024-03-04 14:33")
    assert frame["close"].tolist() == [18000.75, 18001.25, 18002.5]
    assert report.as_dict()["nan_rows"] == 1


def test_plain_integer_prices_in_a_databento_csv_are_not_taken_for_fixed_point(tmp_path):
    path = write(tmp_path, "ints.csv", DATABENTO_HEADER
                 + "1709562600000000000,33,1,101,18000,18001,17999,18000,12,NQH4\n"
                 + "1709562660000000000,33,1,101,18000,18002,17998,18001,7,NQH4\n")
    assert load_bars(path)[0]["close"].tolist() == [18000.0, 18001.0]


def test_a_broken_databento_csv_is_refused_with_file_row_and_column(tmp_path):
    path = write(tmp_path, "broken.csv", DATABENTO_HEADER
                 + "2024-03-04T14:30:00.000000000Z,33,1,101,18000.25,18001,17999.5,18000.75,12,NQH4\n"
                 + "2024-03-04T14:31:00.000000000Z,33,1,101,18000.75,18002,18000.5,n/a?,7,NQH4\n")
    error = refused(path)
    assert (error.row, error.column) == (2, "close")


# --------------------------------------------------------------------------- Databento DBN


def dbn_bytes(bars: list[tuple[str, str, float, float, float, float, int]], compressed: bool = False, schema: str = "OHLCV_1M") -> bytes:
    """A DBN file written by databento-dbn itself: (symbol, UTC time, open, high, low, close, volume) per bar."""
    dbn = pytest.importorskip("databento_dbn")
    ids = {symbol: 100 + number for number, symbol in enumerate(dict.fromkeys(bar[0] for bar in bars))}
    interval = {"start_date": dt.date(2024, 3, 1), "end_date": dt.date(2024, 4, 1)}
    mappings = [SimpleNamespace(raw_symbol=symbol, intervals=[SimpleNamespace(symbol=str(number), **interval)]) for symbol, number in ids.items()]
    start = utc("2024-03-01").value
    metadata = dbn.Metadata("GLBX.MDP3", start, dbn.SType.RAW_SYMBOL, dbn.SType.INSTRUMENT_ID, getattr(dbn.Schema, schema),
                            symbols=list(ids), mappings=mappings, end=utc("2024-04-01").value)
    fixed = lambda price: int(round(price * 1e9))  # noqa: E731 - Databento's 1e-9 fixed point
    records = [dbn.OHLCVMsg(dbn.RType.OHLCV_1M, 1, ids[symbol], utc(time).value, fixed(o), fixed(h), fixed(low), fixed(c), volume)
               for symbol, time, o, h, low, c, volume in bars]
    data = bytes(metadata) + b"".join(bytes(record) for record in records)
    if not compressed:
        return data
    out = io.BytesIO()
    transcoder = dbn.Transcoder(out, dbn.Encoding.DBN, dbn.Compression.ZSTD)
    transcoder.write(data)
    transcoder.flush()
    return out.getvalue()


ONE_CONTRACT = [("NQH4", "2024-03-04 14:30", 18000.25, 18001.0, 17999.5, 18000.75, 12),
                ("NQH4", "2024-03-04 14:31", 18000.75, 18002.0, 18000.5, 18001.25, 7)]


@pytest.mark.parametrize("name, compressed", [("bars.dbn", False), ("bars.dbn.zst", True)])
def test_a_databento_dbn_file_plain_or_zstd_loads_bar_starts_in_utc(tmp_path, name, compressed):
    path = tmp_path / name
    path.write_bytes(dbn_bytes(ONE_CONTRACT, compressed=compressed))
    frame, report = load_bars(path)
    assert list(frame.index) == [utc("2024-03-04 14:30"), utc("2024-03-04 14:31")]
    assert frame.iloc[0].tolist() == [18000.25, 18001.0, 17999.5, 18000.75, 12.0]
    assert report.format == "databento-dbn"


def test_a_broken_dbn_file_is_refused_with_file_row_and_column(tmp_path):
    path = tmp_path / "negative.dbn"
    path.write_bytes(dbn_bytes([ONE_CONTRACT[0], ("NQH4", "2024-03-04 14:31", 18000.75, 18002.0, -1.0, 18001.25, 7)]))
    error = refused(path)
    assert (error.row, error.column) == (2, "low")


def test_a_dbn_file_of_trades_or_of_garbage_is_refused_naming_the_file(tmp_path):
    trades = tmp_path / "trades.dbn"
    trades.write_bytes(dbn_bytes(ONE_CONTRACT, schema="TRADES"))  # the metadata says trades
    assert "holds no bars" in str(refused(trades))
    garbage = write(tmp_path, "garbage.dbn", "not a dbn file at all")
    assert "not a readable DBN file" in str(refused(garbage))


def test_without_databento_dbn_a_dbn_file_gets_a_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "bars.dbn"
    path.write_bytes(b"DBN\x03 whatever")
    monkeypatch.setitem(sys.modules, "databento_dbn", None)
    assert "pip install databento-dbn" in str(refused(path))


def test_a_zstd_csv_without_zstandard_gets_a_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "bars.csv.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd")
    monkeypatch.setitem(sys.modules, "zstandard", None)
    assert "zstd -d" in str(refused(path))


# --------------------------------------------------------------------------- NinjaTrader


def test_a_ninjatrader_export_turns_local_bar_end_times_into_utc_bar_starts(tmp_path):
    path = write(tmp_path, "NQ 03-24.Last.txt",
                 "20240304 093100;18000.25;18001;17999.5;18000.75;120\n"
                 "20240304 093200;18000.75;18002;18000.5;18001.25;95\n")
    frame, report = load_bars(path, timezone="America/New_York")
    assert list(frame.index) == [utc("2024-03-04 14:30"), utc("2024-03-04 14:31")]  # 09:31 EST bar end = 09:30 start
    assert frame.iloc[1].tolist() == [18000.75, 18002.0, 18000.5, 18001.25, 95.0]
    assert report.format == "ninjatrader"


def test_a_broken_ninjatrader_export_is_refused_with_file_row_and_column(tmp_path):
    bad_time = write(tmp_path, "time.txt", "20240304 093100;18000.25;18001;17999.5;18000.75;120\n2024034 093200;1;2;0.5;1.5;9\n")
    error = refused(bad_time)
    assert (error.row, error.column) == (2, "timestamp (field 1)")
    bad_price = write(tmp_path, "price.txt", "20240304 093100;18000.25;18001;17999.5;18000.75;120\n20240304 093200;18000.75;x;18000.5;18001.25;95\n")
    error = refused(bad_price)
    assert (error.row, error.column) == (2, "high (field 3)")


# --------------------------------------------------------------------------- TradingView


def test_a_tradingview_export_with_unix_seconds_and_indicator_columns_loads(tmp_path):
    path = write(tmp_path, "CME_MINI_NQ1!, 1.csv",
                 "time,open,high,low,close,Volume,Volume MA,Plot\n"
                 "1709562600,18000.25,18001,17999.5,18000.75,120,NaN,1\n"
                 "1709562660,18000.75,18002,18000.5,18001.25,95,107.5,2\n")
    frame, report = load_bars(path, timezone="Asia/Tokyo")
    assert list(frame.index) == [utc("2024-03-04 14:30"), utc("2024-03-04 14:31")]
    assert frame.iloc[0].tolist() == [18000.25, 18001.0, 17999.5, 18000.75, 120.0]
    assert report.format == "tradingview"


def test_a_tradingview_export_with_iso_times_keeps_their_offset(tmp_path):
    path = write(tmp_path, "tv.csv", "time,open,high,low,close\n2024-03-04T09:30:00-05:00,1,2,0.5,1.5\n2024-03-04T09:31:00-05:00,1,2,0.5,1.5\n")
    assert load_bars(path, timezone="Asia/Tokyo")[0].index[0] == utc("2024-03-04 14:30")


def test_a_broken_tradingview_export_is_refused_with_file_row_and_column(tmp_path):
    path = write(tmp_path, "tv.csv", "time,open,high,low,close,Volume\n1709562600,1,2,0.5,1.5,3\n17095626OO,1,2,0.5,1.5,3\n")
    error = refused(path)
    assert (error.row, error.column) == (2, "time")


# --------------------------------------------------------------------------- FirstRate / Kibot


@pytest.mark.parametrize("header", ["", "date,time,open,high,low,close,volume\n"])
def test_kibot_date_and_time_columns_with_or_without_header_are_joined(tmp_path, header):
    path = write(tmp_path, "NQ.txt", header + "01/02/2024,09:30,16800.25,16801,16799.5,16800.75,120\n01/02/2024,09:31,16800.75,16802,16800.5,16801.25,95\n")
    frame, _ = load_bars(path, timezone="America/New_York")
    assert list(frame.index) == [utc("2024-01-02 14:30"), utc("2024-01-02 14:31")]
    assert frame.iloc[0].tolist() == [16800.25, 16801.0, 16799.5, 16800.75, 120.0]


def test_a_firstrate_file_without_header_and_one_datetime_column_loads(tmp_path):
    path = write(tmp_path, "NQ_1min.txt", "2024-01-02 09:30:00,16800.25,16801,16799.5,16800.75,120\n2024-01-02 09:31:00,16800.75,16802,16800.5,16801.25,95\n")
    frame, report = load_bars(path, timezone="America/New_York")
    assert list(frame.index) == [utc("2024-01-02 14:30"), utc("2024-01-02 14:31")]
    assert frame["close"].tolist() == [16800.75, 16801.25] and report.format == "datetime-no-header"


def test_a_broken_kibot_file_is_refused_with_file_row_and_column(tmp_path):
    path = write(tmp_path, "NQ.txt", "01/02/2024,09:30,16800.25,16801,16799.5,16800.75,120\n01/02/2024,09:31,16800.75,high?,16800.5,16801.25,95\n")
    error = refused(path)
    assert (error.row, error.column) == (2, "high (field 4)")
    bad_time = write(tmp_path, "time.txt", "01/02/2024,09:30,16800.25,16801,16799.5,16800.75,120\n01/02/2024,25:61,16800.75,16802,16800.5,16801.25,95\n")
    assert (refused(bad_time).row, refused(bad_time).column) == (2, "date (field 1)+time (field 2)")


# --------------------------------------------------------------------------- several contracts

# NQH4 is the front month on Monday 2024-03-11; on the trading day of Tuesday 2024-03-12,
# which opens at 18:00 New York time (22:00 UTC) on Monday, NQM4 trades more.
TWO_CONTRACTS = [
    ("NQM4", "2024-03-11 14:30", 18200.0, 18203.0, 18199.0, 18201.25, 10),
    ("NQH4", "2024-03-11 14:30", 18000.0, 18002.0, 17999.0, 18001.0, 100),
    ("NQH4", "2024-03-11 14:31", 18001.0, 18003.0, 18000.0, 18002.0, 100),
    ("NQM4", "2024-03-11 14:31", 18201.25, 18204.0, 18200.0, 18202.5, 10),
    ("NQH4", "2024-03-11 22:30", 18005.0, 18006.0, 18004.0, 18005.5, 5),
    ("NQM4", "2024-03-11 22:30", 18205.5, 18207.0, 18205.0, 18206.75, 20),
    ("NQH4", "2024-03-11 22:31", 18005.5, 18006.0, 18005.0, 18005.75, 5),
    ("NQM4", "2024-03-11 22:31", 18206.75, 18208.0, 18206.0, 18207.0, 20),
    ("NQH4", "2024-03-12 14:30", 18010.0, 18012.0, 18009.0, 18011.0, 50),
    ("NQM4", "2024-03-12 14:30", 18210.5, 18213.0, 18210.0, 18212.25, 200),
]
ROLL = {"date": "2024-03-12", "timestamp": "2024-03-11T22:30:00+00:00", "from": "NQH4", "to": "NQM4",
        "adjustment_points": 201.25, "adjusted": True}  # 18206.75 - 18005.5 at the roll bar


def databento_csv(bars) -> str:
    return DATABENTO_HEADER + "".join(f"{utc(time).isoformat()},33,1,{100 + (symbol == 'NQM4')},{o},{h},{low},{c},{v},{symbol}\n"
                                      for symbol, time, o, h, low, c, v in bars)


def assert_rolled_once(frame, report):
    assert report.rolls == [ROLL]
    assert list(frame.index) == [utc("2024-03-11 14:30"), utc("2024-03-11 14:31"), utc("2024-03-11 22:30"), utc("2024-03-11 22:31"), utc("2024-03-12 14:30")]
    assert frame["close"].tolist() == [18001.0 + 201.25, 18002.0 + 201.25, 18206.75, 18207.0, 18212.25]
    assert frame.iloc[0].tolist() == [18201.25, 18203.25, 18200.25, 18202.25, 100.0]  # volume unchanged
    assert report.as_dict()["rolls"] == 1 and all(isinstance(value, int) for value in report.as_dict().values())


def test_two_overlapping_contracts_become_one_series_rolled_on_volume_and_back_adjusted(tmp_path):
    path = write(tmp_path, "nq.csv", databento_csv(TWO_CONTRACTS))
    assert_rolled_once(*load_bars(path))


def test_two_contracts_in_a_dbn_file_roll_the_same_way(tmp_path):
    path = tmp_path / "nq.dbn.zst"
    path.write_bytes(dbn_bytes(TWO_CONTRACTS, compressed=True))
    assert_rolled_once(*load_bars(path))


def test_a_contract_column_rolls_and_spreads_are_dropped(tmp_path):
    rows = "".join(f"{utc(t).isoformat()},{o},{h},{low},{c},{v},{s}\n" for s, t, o, h, low, c, v in TWO_CONTRACTS)
    spread = "2024-03-11T14:30:00+00:00,-200.25,-199,-201,-200,3,NQH4-NQM4\n"
    path = write(tmp_path, "contracts.csv", "timestamp,open,high,low,close,volume,contract\n" + spread + rows)
    frame, report = load_bars(path)
    assert report.rolls == [ROLL] and report.repaired["spread_rows"] == 1
    assert frame["close"].iloc[-1] == 18212.25


def test_contracts_that_never_overlap_are_kept_as_spliced_and_listed_unadjusted(tmp_path):
    path = write(tmp_path, "nq-c-0.csv", databento_csv([TWO_CONTRACTS[1], TWO_CONTRACTS[2], TWO_CONTRACTS[5], TWO_CONTRACTS[7]]))
    frame, report = load_bars(path)
    assert frame["close"].tolist() == [18001.0, 18002.0, 18206.75, 18207.0]
    assert report.rolls == [{**ROLL, "adjustment_points": 0.0, "adjusted": False}]


def test_several_symbols_that_are_not_futures_contracts_are_refused(tmp_path):
    path = write(tmp_path, "stocks.csv", "timestamp,symbol,open,high,low,close\n2024-03-04 10:00,AAPL,1,2,0.5,1.5\n2024-03-04 10:00,MSFT,1,2,0.5,1.5\n")
    error = refused(path)
    assert error.column == "symbol" and "one instrument per file" in str(error)


def test_one_symbol_in_a_symbol_column_changes_nothing(tmp_path):
    frame, report = load_bars(write(tmp_path, "one.csv", databento_csv(TWO_CONTRACTS[1:3])))
    assert frame["close"].tolist() == [18001.0, 18002.0] and report.rolls == []
    assert np.isfinite(frame.to_numpy()).all()


def test_contracts_roll_in_the_order_they_trade_whatever_their_names_sort_as(tmp_path):
    renamed = [({"NQH4": "NQZ3", "NQM4": "NQH4"}[symbol], *rest) for symbol, *rest in TWO_CONTRACTS]
    frame, report = load_bars(write(tmp_path, "year-end.csv", databento_csv(renamed)))
    assert report.rolls == [{**ROLL, "from": "NQZ3", "to": "NQH4"}]
    assert frame["close"].iloc[0] == 18001.0 + 201.25
