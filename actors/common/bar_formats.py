"""The file formats traders export, read into one raw table for ``bar_files.load_bars``.

``read_table(path)`` returns a ``RawTable``: the cells as text (Parquet keeps its types),
the name of the format, and what the format fixes (column roles of a file with no header,
timestamps that are bar ends, fixed-point prices). Column detection, parsing and repair
stay in ``bar_files``; so does the meaning of each format, listed in its docstring.

``back_adjust(frame, ...)`` turns the rows of several futures contracts into one
continuous series (volume roll, additive back-adjustment), see its docstring.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from actors.common.file_errors import FileError


class DataError(FileError):
    """Bars that cannot be used, with the file, row and column at fault."""

    FIELD_WORD = "column"

    def __init__(self, path: str | Path, problem: str, *, row: int | None = None, column: str | None = None) -> None:
        super().__init__(path, problem, row=row, field=column)
        self.column = column


@dataclass
class RawTable:
    frame: pd.DataFrame
    format: str
    roles: dict[str, str] = field(default_factory=dict)
    """Role -> column when the format fixes them (files with no header); empty: detect by name."""
    stamp_shift: pd.Timedelta = field(default_factory=lambda: pd.Timedelta(0))
    """Added to every parsed timestamp (-1 minute where the file stamps bar ends)."""


def normalise_name(name: object) -> str:
    return re.sub(r"[\s\-.]+", "_", str(name).strip().lower()).strip("_")


# --------------------------------------------------------------------------- reading


def read_table(path: Path) -> RawTable:
    if not path.exists():
        raise DataError(path, "file not found")
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes[-1:] in ([".parquet"], [".pq"]):
        return RawTable(_read_parquet(path), "parquet")
    if ".dbn" in suffixes or _starts_with(path, b"DBN"):
        return RawTable(_read_dbn(path), "databento-dbn")
    return _read_csv(path, compressed=suffixes[-1:] == [".zst"])


def _starts_with(path: Path, magic: bytes) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(magic)) == magic


def _read_parquet(path: Path) -> pd.DataFrame:
    frame = pd.read_parquet(path)
    if isinstance(frame.index, pd.DatetimeIndex) or frame.index.name:
        frame = frame.reset_index()
    return frame


def _sniff_delimiter(sample: str) -> str:
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _read_csv(path: Path, compressed: bool) -> RawTable:
    # Everything as text first: the parse in bar_files reports the exact row and column that is bad.
    if not compressed:
        return _read_csv_text(path, path.read_text(encoding="utf-8-sig"))
    try:
        import zstandard
    except ImportError:
        raise DataError(path, "a zstd-compressed CSV needs the zstandard package, or decompress it first (zstd -d)") from None
    return _read_csv_text(path, zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes()).decode("utf-8-sig"))


def _read_csv_text(path: Path, text: str, format_name: str = "") -> RawTable:
    delimiter = _sniff_delimiter(text[:16_384])
    first = next(csv.reader(io.StringIO(text[:16_384]), delimiter=delimiter), [])
    options = dict(sep=delimiter, dtype=str, keep_default_na=False, skipinitialspace=True)
    if sum(_is_number(cell) for cell in first) >= 4:  # a header never has four numbers for names
        table = _headerless(path, [cell.strip() for cell in first])
        table.frame = pd.read_csv(io.StringIO(text), header=None, names=list(table.frame.columns), **options)
        if table.format == "ninjatrader":
            table.frame[table.roles["timestamp"]] = _ninjatrader_stamps(path, table.frame[table.roles["timestamp"]])
        return table
    frame = pd.read_csv(io.StringIO(text), **options)
    return RawTable(frame, format_name or _name_headed_format(frame))


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _name_headed_format(frame: pd.DataFrame) -> str:
    names = [normalise_name(column) for column in frame.columns]
    if "ts_event" in names and ("rtype" in names or "instrument_id" in names):
        return "databento-csv"
    if names[:5] == ["time", "open", "high", "low", "close"]:
        return "tradingview"
    return "csv"


# --------------------------------------------------------------------------- files with no header

_NINJA_STAMP = re.compile(r"^(\d{4})(\d{2})(\d{2}) (\d{2})(\d{2})(\d{2})$")
_CLOCK = re.compile(r"^\d{1,2}:\d{2}(:\d{2})?$")
_DATE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T].*)?$")


def _headerless(path: Path, first: list[str]) -> RawTable:
    """Column roles from the shape of the first row: NinjaTrader, date + time (Kibot), one date-time (FirstRate)."""
    if _NINJA_STAMP.match(first[0]):
        stamps, format_name, shift = ["timestamp"], "ninjatrader", -pd.Timedelta(minutes=1)
    elif len(first) > 1 and _DATE.match(first[0]) and _CLOCK.match(first[1]):
        stamps, format_name, shift = ["date", "time"], "date-time-no-header", pd.Timedelta(0)
    elif _DATE.match(first[0]):
        stamps, format_name, shift = ["timestamp"], "datetime-no-header", pd.Timedelta(0)
    else:
        raise DataError(path, f"no header, and {first[0]!r} does not read as a date", row=1, column="field 1")
    roles = stamps + ["open", "high", "low", "close", "volume"][: len(first) - len(stamps)]
    if len(roles) < len(stamps) + 4:
        raise DataError(path, f"no header, and {len(first)} fields are too few for a date, open, high, low and close", row=1)
    names = [f"{role} (field {number})" for number, role in enumerate(roles, start=1)]
    names += [f"field {number}" for number in range(len(names) + 1, len(first) + 1)]
    return RawTable(pd.DataFrame(columns=names), format_name, dict(zip(roles, names)), shift)


def _ninjatrader_stamps(path: Path, stamps: pd.Series) -> pd.Series:
    """``yyyyMMdd HHmmss`` -> ISO text; a stamp of another shape is refused with its row."""
    text = stamps.astype(str).str.strip()
    matched = text.str.match(_NINJA_STAMP.pattern)
    if not matched.all():
        row = int(np.flatnonzero(~matched.to_numpy())[0])
        raise DataError(path, f"{text.iloc[row]!r} is not a NinjaTrader time (yyyyMMdd HHmmss)", row=row + 1, column=str(stamps.name))
    return text.str.replace(_NINJA_STAMP.pattern, r"\1-\2-\3 \4:\5:\6", regex=True)


# --------------------------------------------------------------------------- Databento

_UNDEF_PRICE = float(2**63 - 1)


def _read_dbn(path: Path) -> pd.DataFrame:
    """A DBN file (zstd-compressed or not) transcoded by databento-dbn into its own CSV: decimal prices, ISO times, symbols."""
    try:
        import databento_dbn as dbn
    except ImportError:
        raise DataError(path, "reading DBN files needs the databento-dbn package (pip install databento-dbn)") from None
    data = path.read_bytes()
    try:
        if data[:4] == b"\x28\xb5\x2f\xfd":  # zstd: the transcoder reads plain DBN only
            decoder = dbn.DBNDecoder(compression=dbn.Compression.ZSTD)
            decoder.write(data)
            data = b"".join(bytes(item) for item in decoder.decode())
        schema = str(dbn.Metadata.decode(data).schema or "")
        if not schema.startswith("ohlcv"):
            raise DataError(path, f"DBN schema {schema or 'mixed'!r} holds no bars; export an ohlcv schema (ohlcv-1m)")
        out = io.BytesIO()
        transcoder = dbn.Transcoder(out, dbn.Encoding.CSV, dbn.Compression.NONE, pretty_px=True, pretty_ts=True, map_symbols=True)
        transcoder.write(data)
        transcoder.flush()
    except dbn.DBNError as exc:
        raise DataError(path, f"not a readable DBN file: {exc}") from None
    return _read_csv_text(path, out.getvalue().decode(), "databento-dbn").frame


def scale_fixed_point(cells: list[pd.Series], values: dict[str, np.ndarray]) -> bool:
    """Databento's raw prices (integers in units of 1e-9) to decimals, in place, when they clearly are.

    Clearly: every price cell is an integer and every non-zero one is above 1e7 in size
    (no futures price is), so a plain integer price file is never rescaled.
    """
    text = pd.concat([column.astype(str).str.strip() for column in cells])
    text = text[text != ""]
    if not len(text) or not text.str.fullmatch(r"-?\d+").all():
        return False
    numbers = pd.to_numeric(text, errors="coerce").abs()
    if not (numbers[numbers != 0] > 1e7).all():
        return False
    for role, column in values.items():
        values[role] = np.where(column >= _UNDEF_PRICE, np.nan, column / 1e9)
    return True


# --------------------------------------------------------------------------- several contracts

_CONTRACT_NAMES = ("contract", "symbol", "raw_symbol", "ticker", "instrument_id")
_FUTURES_CODE = re.compile(r"^[A-Z][A-Z0-9]{0,5}[FGHJKMNQUVXZ]\d{1,2}$|^\S+ \d{2}-\d{2}$")  # NQH4, MNQZ24, NQ 03-24
_DAY_BOUNDARY = pd.Timedelta(hours=6)  # CME's trading day starts 18:00 New York time


def contract_column(frame: pd.DataFrame, path: Path) -> str | None:
    """The column naming each row's contract when it holds several, else None.

    A ``symbol``/``ticker`` column with several values that are not futures codes (AAPL, MSFT)
    is refused: one instrument per file.
    """
    by_name = {normalise_name(column): column for column in frame.columns}
    for name in _CONTRACT_NAMES:
        column = by_name.get(name)
        if column is None:
            continue
        names = pd.unique(frame[column].astype(str).str.strip())
        if len(names) < 2:
            continue
        if name in ("symbol", "raw_symbol", "ticker"):
            outright = [value for value in names if not is_spread(value)]
            if not all(_FUTURES_CODE.match(value) for value in outright):
                raise DataError(path, f"several symbols {sorted(outright)[:5]}: one instrument per file, or futures contracts to roll", column=str(column))
        return str(column)
    return None


def is_spread(symbol: str) -> bool:
    """A calendar spread (Databento ``NQH4-NQM4``) or a user-defined instrument (``UD:...``)."""
    legs = symbol.split("-")
    return symbol.startswith("UD:") or (len(legs) == 2 and all(_FUTURES_CODE.match(leg) for leg in legs))


def back_adjust(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[dict]]:
    """One continuous series from the bars of several contracts (column ``_contract``).

    Contracts are ordered by when they trade (``_by_expiry``). The series starts in the most
    traded contract of the first trading day (18:00 to 18:00 New York time) and rolls to a
    later contract on the first day that contract's volume exceeds the current one's. The
    roll bar is the first bar of that day both contracts have (else the last common bar
    before it); from it on, bars come from the new contract, and every earlier price is
    shifted by new close - old close at that bar (additive back-adjustment), so no roll
    leaves a jump. Contracts that never share a bar (an already spliced series, Databento's
    ``NQ.c.0``) are kept as they are, each change listed with ``adjusted: False``.
    """
    frame = frame.sort_index(kind="stable")
    contracts = frame["_contract"].to_numpy()
    if not pd.DataFrame({"time": frame.index.asi8, "contract": contracts}).drop_duplicates()["time"].duplicated().any():
        return frame, _splices(frame)
    days = trading_days(frame.index)
    daily = frame["volume"].fillna(0.0).groupby([days, contracts]).sum().unstack(fill_value=0.0)
    rolls = [_measure_roll(frame, days, day, old, new) for day, old, new in _volume_rolls(daily, _by_expiry(frame))]
    return _stitch(frame, rolls, first=daily.iloc[0].idxmax()), rolls


def _stitch(frame: pd.DataFrame, rolls: list[dict], first: object) -> pd.DataFrame:
    """Each contract's bars from its roll bar to the next roll, prices shifted by the adjustments of all later rolls."""
    contracts = frame["_contract"].to_numpy()
    sequence = [first] + [roll["to"] for roll in rolls]
    bounds = [frame.index[0]] + [pd.Timestamp(roll["timestamp"]) for roll in rolls] + [frame.index[-1] + pd.Timedelta(1)]
    shifts = np.cumsum([roll["adjustment_points"] for roll in rolls][::-1])[::-1].tolist() + [0.0]
    keep, offset = np.zeros(len(frame), dtype=bool), np.zeros(len(frame))
    for position, contract in enumerate(sequence):
        rows = (contracts == contract) & (frame.index >= bounds[position]) & (frame.index < bounds[position + 1])
        keep |= rows
        offset[rows] = shifts[position]
    return frame.assign(**{price: frame[price] + offset for price in ("open", "high", "low", "close")}).loc[keep]


def trading_days(index: pd.DatetimeIndex) -> pd.DatetimeIndex:
    """CME trading days: a bar from 18:00 New York time on belongs to the next day."""
    return (index.tz_convert("America/New_York").tz_localize(None) + _DAY_BOUNDARY).normalize()


def _by_expiry(frame: pd.DataFrame) -> list:
    """Contracts by the volume-weighted mean time of their bars: the front month trades before the next one.

    Neither names (NQZ3 sorts after NQH4) nor last bars (a sparse back month may miss the
    file's last minute) give the expiry order reliably.
    """
    weights = frame["volume"].fillna(0.0).to_numpy() + 1.0
    times = frame.index.asi8.astype(np.float64) - float(frame.index.asi8[0])
    grouped = pd.DataFrame({"weighted": times * weights, "weight": weights}).groupby(frame["_contract"].to_numpy()).sum()
    return list((grouped["weighted"] / grouped["weight"]).sort_values(kind="stable").index)


def _volume_rolls(daily: pd.DataFrame, order: list) -> list[tuple[pd.Timestamp, object, object]]:
    current = daily.iloc[0].idxmax()
    rolls = []
    for day, volumes in daily.iterrows():
        later = order[order.index(current) + 1:]
        if not later:
            break
        best = volumes[later].idxmax()
        if volumes[best] > volumes[current]:
            rolls.append((day, current, best))
            current = best
    return rolls


def _measure_roll(frame: pd.DataFrame, days: pd.DatetimeIndex, day: pd.Timestamp, old: object, new: object) -> dict:
    priced = frame["close"].notna().to_numpy()
    closes = {name: frame.loc[(frame["_contract"] == name).to_numpy() & priced, "close"] for name in (old, new)}
    closes = {name: series[~series.index.duplicated(keep="last")] for name, series in closes.items()}
    common = closes[old].index.intersection(closes[new].index)
    new_on_day = frame.index[((frame["_contract"] == new).to_numpy()) & (days == day)]
    switch = new_on_day[0]
    on_day = common[common >= switch]
    if len(on_day) and on_day[0] in new_on_day:
        switch = measured = on_day[0]
    else:
        before = common[common < switch]
        measured = before[-1] if len(before) else None
    adjustment = 0.0 if measured is None else round(float(closes[new][measured] - closes[old][measured]), 9)
    return {"date": day.date().isoformat(), "timestamp": switch.isoformat(), "from": str(old), "to": str(new),
            "adjustment_points": adjustment, "adjusted": measured is not None}


def _splices(frame: pd.DataFrame) -> list[dict]:
    contracts = frame["_contract"].to_numpy()
    changes = np.flatnonzero(contracts[1:] != contracts[:-1]) + 1
    days = trading_days(frame.index)
    return [{"date": days[at].date().isoformat(), "timestamp": frame.index[at].isoformat(),
             "from": str(contracts[at - 1]), "to": str(contracts[at]), "adjustment_points": 0.0, "adjusted": False} for at in changes]
