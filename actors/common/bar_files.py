"""Users' own bars from CSV or Parquet: column detection, repair report, time split.

``load_bars(path)`` returns a frame indexed by UTC bar start time (``timestamp``) with
float columns open, high, low, close, volume, and a ``RepairReport`` counting what was
repaired. What cannot be repaired safely (a price that is not a number or not positive,
an unreadable timestamp, a missing column) raises ``DataError`` naming the file, the row
(1-based data row; the header is not counted) and the column.

Repairs, each counted per kind:
- ``nan_rows``: rows with a missing open/high/low/close are dropped.
- ``nan_volume``: a missing volume becomes 0.
- ``unsorted``: rows out of time order are sorted (counted once per out-of-order row).
- ``duplicate_timestamps``: of rows with the same time the last one is kept.
- ``high_low_swapped``: high < low is swapped.
- ``high_low_extended``: high below max(open, close) or low above min(open, close) is widened.
- ``gaps``: intraday gaps longer than the usual bar interval (reported, not filled).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from actors.common.bars import OHLCV_COLUMNS

OHLCV = OHLCV_COLUMNS

_ALIASES: dict[str, tuple[str, ...]] = {
    "timestamp": ("timestamp", "datetime", "date_time", "time", "date", "ts", "dt", "time_utc", "timestamp_utc", "bar_time", "start"),
    "open": ("open", "o", "open_price", "openprice", "first"),
    "high": ("high", "h", "high_price", "highprice", "max"),
    "low": ("low", "l", "low_price", "lowprice", "min"),
    "close": ("close", "c", "close_price", "closeprice", "last", "price", "adj_close"),
    "volume": ("volume", "vol", "v", "qty", "quantity", "total_volume", "tickvol", "tick_volume"),
}
_INDEX_NAMES = ("", "index", "unnamed: 0", "unnamed:_0", "id", "#", "row")


class DataError(ValueError):
    """Bars that cannot be used, with the file, row and column at fault."""

    def __init__(self, path: str | Path, problem: str, *, row: int | None = None, column: str | None = None) -> None:
        self.path = str(path)
        self.row = row
        self.column = column
        where = [self.path]
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(", ".join(where) + ": " + problem)


@dataclass
class RepairReport:
    path: str = ""
    rows_read: int = 0
    rows_kept: int = 0
    repaired: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, int]:
        return {"rows_read": self.rows_read, "rows_kept": self.rows_kept, **dict(self.repaired)}


# --------------------------------------------------------------------------- reading


def _sniff_delimiter(path: Path) -> str:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        sample = handle.read(16_384)
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","


def _read_raw(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise DataError(path, "file not found")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        frame = pd.read_parquet(path)
        if isinstance(frame.index, pd.DatetimeIndex) or frame.index.name:
            frame = frame.reset_index()
        return frame
    # Everything as text first: the parse below reports the exact row and column that is bad.
    return pd.read_csv(path, sep=_sniff_delimiter(path), dtype=str, keep_default_na=False, encoding="utf-8-sig", skipinitialspace=True)


def _normalise_name(name: object) -> str:
    return re.sub(r"[\s\-.]+", "_", str(name).strip().lower()).strip("_")


def _reads_as_dates(column: pd.Series) -> bool:
    sample = column.head(5).astype(str).str.strip()
    if pd.to_numeric(sample, errors="coerce").notna().all():
        return False  # plain numbers (a row index, prices) are not taken for epoch times here
    try:
        return bool(pd.to_datetime(sample, format="mixed").notna().all())
    except (ValueError, TypeError):
        return False


def _detect_columns(frame: pd.DataFrame, path: Path) -> dict[str, str]:
    """Role -> original column name, matched by lower-cased alias whatever the order."""
    by_normalised = {_normalise_name(column): column for column in frame.columns}
    found: dict[str, str] = {}
    for role, aliases in _ALIASES.items():
        for alias in aliases:
            if alias in by_normalised and by_normalised[alias] not in found.values():
                found[role] = by_normalised[alias]
                break
    if "timestamp" not in found:
        # An unnamed index column (pandas' to_csv of a DatetimeIndex) or any column that reads as dates.
        unused = [(name, column) for name, column in by_normalised.items() if column not in found.values()]
        index_like_first = sorted(unused, key=lambda item: not (item[0] in _INDEX_NAMES or item[0].startswith("unnamed")))
        for _, column in index_like_first:
            if _reads_as_dates(frame[column]):
                found["timestamp"] = column
                break
    # Separate date and time columns ("Date", "Time") are joined into one timestamp.
    if "date" in by_normalised and "time" in by_normalised and found.get("timestamp") in (by_normalised["date"], by_normalised["time"]):
        found["timestamp"] = "__date_time__"
    for role in ("timestamp", "open", "high", "low", "close"):
        if role not in found:
            raise DataError(path, f"no {role} column found among {list(map(str, frame.columns))}", column=role)
    return found


# --------------------------------------------------------------------------- timestamps


def _looks_dayfirst(text: pd.Series) -> bool | None:
    """True/False when the values prove the order of day and month; None when ambiguous."""
    parts = text.str.extract(r"^\s*(\d{1,2})[/.\-](\d{1,2})[/.\-](\d{2,4})")
    if parts.isna().all().all():
        return None
    first = pd.to_numeric(parts[0], errors="coerce")
    second = pd.to_numeric(parts[1], errors="coerce")
    if (first > 12).any():
        return True
    if (second > 12).any():
        return False
    return None


def _epoch_unit(values: np.ndarray) -> str:
    magnitude = np.nanmedian(np.abs(values))
    if magnitude > 1e17:
        return "ns"
    if magnitude > 1e14:
        return "us"
    if magnitude > 1e11:
        return "ms"
    return "s"


_OFFSET_AT_END = r"(?:Z|[+-]\d{2}:?\d{2})$"


def _parse_date_strings(text: pd.Series, dayfirst: bool) -> pd.DatetimeIndex | None:
    """Fast formats first (ISO 8601, then the format inferred from the first value), the slow per-value parser last."""
    with_offset = bool(text.str.contains(_OFFSET_AT_END, regex=True).any())
    attempts: list[dict] = [] if dayfirst else [{"format": "ISO8601"}]
    attempts += [{"dayfirst": dayfirst}, {"format": "mixed", "dayfirst": dayfirst}]
    for options in attempts:
        try:
            return pd.DatetimeIndex(pd.to_datetime(text, utc=with_offset, **options))
        except (ValueError, TypeError, OverflowError):
            continue
    return None


def parse_timestamps(raw: pd.Series, path: Path, column: str, timezone: str, dayfirst: str = "auto") -> pd.DatetimeIndex:
    """UTC timestamps from epoch numbers or date strings (ISO, US, day-first, with or without offset).

    Naive times are in ``timezone`` (a column named like ``*utc*`` is read as UTC); times
    with an offset keep it.
    """
    if "utc" in _normalise_name(column):
        timezone = "UTC"
    if pd.api.types.is_datetime64_any_dtype(raw):
        parsed = pd.DatetimeIndex(raw)
    else:
        text = raw.astype(str).str.strip()
        numeric = pd.to_numeric(text, errors="coerce")
        if numeric.notna().all() and len(text):
            parsed = pd.DatetimeIndex(pd.to_datetime(numeric.to_numpy(), unit=_epoch_unit(numeric.to_numpy(dtype=float)), utc=True))
        else:
            order = {"yes": True, "no": False}.get(dayfirst)
            if order is None:
                order = bool(_looks_dayfirst(text))
            parsed = _parse_date_strings(text, order)
            if parsed is None:
                each = pd.to_datetime(text, format="mixed", dayfirst=order, errors="coerce", utc=True)
                bad = int(np.flatnonzero(pd.isna(each))[0]) if pd.isna(each).any() else 0
                raise DataError(path, f"unreadable timestamp {text.iloc[bad]!r}", row=bad + 1, column=column)
    if pd.isna(parsed).any():
        bad = int(np.flatnonzero(pd.isna(parsed))[0])
        raise DataError(path, f"unreadable timestamp {raw.iloc[bad]!r}", row=bad + 1, column=column)
    if parsed.tz is None:
        try:
            parsed = parsed.tz_localize(timezone, ambiguous="infer", nonexistent="shift_forward")
        except Exception:  # noqa: BLE001 - pytz/zoneinfo raise several types for an ambiguous hour
            parsed = parsed.tz_localize(timezone, ambiguous="NaT", nonexistent="shift_forward")
            bad = int(np.flatnonzero(pd.isna(parsed))[0]) if pd.isna(parsed).any() else 0
            raise DataError(path, f"timestamp {raw.iloc[bad]!r} is ambiguous in {timezone} (daylight saving change)", row=bad + 1, column=column) from None
    return parsed.tz_convert("UTC").as_unit("ns")


# --------------------------------------------------------------------------- prices


def _parse_numbers(raw: pd.Series, path: Path, column: str) -> np.ndarray:
    """Floats from a column; empty cells and NaN spellings become NaN (repaired later), anything else non-numeric is an error."""
    if pd.api.types.is_numeric_dtype(raw):
        return raw.to_numpy(dtype=np.float64)
    text = raw.astype(str).str.strip()
    missing = text.str.lower().isin(("", "nan", "na", "n/a", "null", "none", "-"))
    values = pd.to_numeric(text.where(~missing), errors="coerce")
    bad = values.isna() & ~missing
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(path, f"{text.iloc[row]!r} is not a number", row=row + 1, column=column)
    return values.to_numpy(dtype=np.float64)


# --------------------------------------------------------------------------- repair


def _repair(frame: pd.DataFrame, report: RepairReport, path: Path, columns: dict[str, str]) -> pd.DataFrame:
    prices = frame[["open", "high", "low", "close"]]
    nan_rows = prices.isna().any(axis=1).to_numpy()
    if nan_rows.any():
        report.repaired["nan_rows"] += int(nan_rows.sum())
    nan_volume = frame["volume"].isna().to_numpy() & ~nan_rows
    if nan_volume.any():
        report.repaired["nan_volume"] += int(nan_volume.sum())
    frame["volume"] = frame["volume"].fillna(0.0)

    non_positive = (prices <= 0).to_numpy() & ~nan_rows[:, None]
    if non_positive.any():
        row, col = map(int, np.argwhere(non_positive)[0])
        role = ("open", "high", "low", "close")[col]
        raise DataError(path, f"price {prices.iloc[row, col]} is not positive", row=int(frame["_row"].iloc[row]), column=columns[role])
    if (frame["volume"] < 0).any():
        row = int(np.flatnonzero((frame["volume"] < 0).to_numpy())[0])
        raise DataError(path, f"volume {frame['volume'].iloc[row]} is negative", row=int(frame["_row"].iloc[row]), column=columns["volume"])
    frame = frame.loc[~nan_rows]

    out_of_order = int((np.diff(frame.index.asi8) < 0).sum())
    if out_of_order:
        report.repaired["unsorted"] += out_of_order
        frame = frame.sort_index(kind="stable")
    duplicated = frame.index.duplicated(keep="last")
    if duplicated.any():
        report.repaired["duplicate_timestamps"] += int(duplicated.sum())
        frame = frame.loc[~duplicated]

    high, low = frame["high"].to_numpy().copy(), frame["low"].to_numpy().copy()
    swapped = high < low
    if swapped.any():
        report.repaired["high_low_swapped"] += int(swapped.sum())
        high[swapped], low[swapped] = low[swapped], high[swapped]
    body_high = np.maximum(frame["open"].to_numpy(), frame["close"].to_numpy())
    body_low = np.minimum(frame["open"].to_numpy(), frame["close"].to_numpy())
    widened = (high < body_high) | (low > body_low)
    if widened.any():
        report.repaired["high_low_extended"] += int(widened.sum())
    frame = frame.assign(high=np.maximum(high, body_high), low=np.minimum(low, body_low))

    gaps = count_intraday_gaps(frame.index)
    if gaps:
        report.repaired["gaps"] += gaps
    return frame


def count_intraday_gaps(index: pd.DatetimeIndex) -> int:
    """Steps longer than the usual (most common) bar interval but shorter than 3 hours (longer ones are session breaks)."""
    if len(index) < 3:
        return 0
    steps = np.diff(index.asi8)
    values, counts = np.unique(steps[steps > 0], return_counts=True)
    if not len(values):
        return 0
    usual = values[np.argmax(counts)]  # the most common step is the bar interval
    return int(((steps > 1.5 * usual) & (steps < 3 * 3600 * 1e9)).sum())


def load_bars(path: str | Path, timezone: str = "America/New_York", dayfirst: str = "auto") -> tuple[pd.DataFrame, RepairReport]:
    """Bars from a CSV or Parquet file, repaired and reported (see the module docstring)."""
    path = Path(path)
    try:
        raw = _read_raw(path)
    except DataError:
        raise
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(path, f"cannot read the file: {exc}") from None
    if raw.empty:
        raise DataError(path, "no rows")
    columns = _detect_columns(raw, path)
    if columns["timestamp"] == "__date_time__":
        names = {_normalise_name(c): c for c in raw.columns}
        stamp_raw = raw[names["date"]].astype(str).str.strip() + " " + raw[names["time"]].astype(str).str.strip()
        stamp_column = f"{names['date']}+{names['time']}"
    else:
        stamp_raw, stamp_column = raw[columns["timestamp"]], columns["timestamp"]
    index = parse_timestamps(stamp_raw.reset_index(drop=True), path, stamp_column, timezone, dayfirst)

    values = {role: _parse_numbers(raw[columns[role]].reset_index(drop=True), path, columns[role]) for role in ("open", "high", "low", "close")}
    if "volume" in columns:
        values["volume"] = _parse_numbers(raw[columns["volume"]].reset_index(drop=True), path, columns["volume"])
    else:
        values["volume"] = np.zeros(len(raw))
        columns["volume"] = "volume"
    frame = pd.DataFrame(values, index=pd.DatetimeIndex(index, name="timestamp"))
    frame["_row"] = np.arange(1, len(frame) + 1)

    report = RepairReport(path=str(path), rows_read=len(frame))
    frame = _repair(frame, report, path, columns)
    if len(frame) < 2:
        raise DataError(path, f"only {len(frame)} usable row(s) after repair")
    report.rows_kept = len(frame)
    return frame[list(OHLCV)].astype(np.float64), report


# --------------------------------------------------------------------------- split


def session_starts(index: pd.DatetimeIndex) -> np.ndarray:
    """Positions of the first bar of each trading day (US/Eastern date changes)."""
    dates = index.tz_convert("America/New_York").normalize().asi8
    return np.flatnonzero(np.concatenate(([True], dates[1:] != dates[:-1])))


def split_by_time(index: pd.DatetimeIndex, train_fraction: float, validation_fraction: float) -> dict[str, tuple[int, int]]:
    """Train / validation / test as [start, stop) bar positions, oldest first, cut at session starts, no overlap."""
    n_bars = len(index)
    starts = session_starts(index)

    def cut(fraction: float) -> int:
        target = int(round(n_bars * fraction))
        if len(starts) < 4:
            return target
        return int(starts[np.argmin(np.abs(starts - target))])

    train_stop = cut(train_fraction)
    validation_stop = max(train_stop, cut(train_fraction + validation_fraction))
    if not 0 < train_stop < validation_stop <= n_bars - 1 and validation_fraction > 0:
        train_stop = int(n_bars * train_fraction)
        validation_stop = int(n_bars * (train_fraction + validation_fraction))
    return {"train": (0, train_stop), "validation": (train_stop, validation_stop), "test": (validation_stop, n_bars), "all": (0, n_bars)}
