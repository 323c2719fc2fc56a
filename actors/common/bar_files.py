"""Users' own bars from the files traders export: column detection, continuous futures, repair report, time split.

``load_bars(path)`` returns a frame indexed by UTC bar start time (``timestamp``) with
float columns open, high, low, close, volume, and a ``RepairReport`` counting what was
repaired. What cannot be repaired safely (a price that is not a number or not positive,
an unreadable timestamp, a missing column) raises ``DataError`` naming the file, the row
(1-based data row; the header is not counted; a DBN file's record number) and the column.

Repairs, each counted per kind:
- ``nan_rows``: rows with a missing open/high/low/close are dropped.
- ``nan_volume``: a missing volume becomes 0.
- ``unsorted``: rows out of time order are sorted (counted once per out-of-order row; a
  file of several contracts is sorted before the roll, uncounted).
- ``duplicate_timestamps``: of rows with the same time the last one is kept.
- ``high_low_swapped``: high < low is swapped.
- ``high_low_extended``: high below max(open, close) or low above min(open, close) is widened.
- ``gaps``: intraday gaps longer than the usual bar interval (reported, not filled).
- ``spread_rows``: calendar spreads (``NQH4-NQM4``) in a file of futures contracts are dropped.

Formats (read in ``bar_formats``; ``RepairReport.format`` names the one found):
- CSV with a header, any delimiter and column order, columns found by name (``Date``,
  ``Time`` apart are joined); Parquet. Naive times are in ``timezone``, times with an
  offset keep it, epoch numbers (s, ms, us, ns) are UTC.
- Databento OHLCV CSV (``ts_event,rtype,publisher_id,instrument_id,open,...,symbol``):
  ``ts_event`` is the bar start, ISO UTC or integer nanoseconds; integer prices are read
  as Databento's fixed point (units of 1e-9) only when every price is an integer above 1e7;
  its undefined price (2**63 - 1) is a missing price. A ``.csv.zst`` needs ``zstandard``.
- Databento DBN (``.dbn``, ``.dbn.zst``, an ohlcv schema), transcoded by ``databento-dbn``
  (imported only for a DBN file) into the CSV above, symbols mapped from its metadata.
- NinjaTrader 8 minute export, no header: ``yyyyMMdd HHmmss;open;high;low;close;volume``.
  NinjaTrader stamps a bar with its END time, in the exporting machine's zone (pass it as
  ``timezone``): the bar start is that time minus 1 minute.
- TradingView chart export: ``time,open,high,low,close`` then any columns (``Volume``,
  indicators); ``time`` is unix seconds or ISO with an offset.
- FirstRate / Kibot: ``date,time,open,high,low,close,volume`` with or without a header
  (``01/02/2024,09:30,...``), or one ``2024-01-02 09:30:00`` column; times in ``timezone``,
  bar start. A file with no header is recognised by numbers in its first row; its columns
  are then named by role and field number (``open (field 3)``).
- Several futures contracts in one file (a ``contract``, ``symbol`` or ``instrument_id``
  column with several values, Databento's ``NQH4``, ``NQM4``): one back-adjusted
  continuous series, rolled by volume (``bar_formats.back_adjust``); each roll is listed
  in ``RepairReport.rolls`` (date, timestamp, from, to, adjustment_points, adjusted).
  Several symbols that are not futures codes (``AAPL``, ``MSFT``) are refused.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from actors.common import bar_formats
from actors.common.bar_formats import DataError, RawTable
from actors.common.bar_formats import normalise_name as _normalise_name
from actors.common.bars import OHLCV_COLUMNS

OHLCV = OHLCV_COLUMNS

_ALIASES: dict[str, tuple[str, ...]] = {
    "timestamp": ("timestamp", "ts_event", "datetime", "date_time", "time", "date", "ts", "dt", "time_utc", "timestamp_utc", "bar_time", "start"),
    "open": ("open", "o", "open_price", "openprice", "first"),
    "high": ("high", "h", "high_price", "highprice", "max"),
    "low": ("low", "l", "low_price", "lowprice", "min"),
    "close": ("close", "c", "close_price", "closeprice", "last", "price", "adj_close"),
    "volume": ("volume", "vol", "v", "qty", "quantity", "total_volume", "tickvol", "tick_volume"),
}
_INDEX_NAMES = ("", "index", "unnamed: 0", "unnamed:_0", "id", "#", "row")


@dataclass
class RepairReport:
    path: str = ""
    rows_read: int = 0
    rows_kept: int = 0
    repaired: Counter = field(default_factory=Counter)
    format: str = ""
    rolls: list[dict] = field(default_factory=list)
    """One dict per contract roll: date, timestamp, from, to, adjustment_points, adjusted."""

    def as_dict(self) -> dict[str, int]:
        """Counts only (callers log them as integers); the rolls themselves are in ``rolls``."""
        return {"rows_read": self.rows_read, "rows_kept": self.rows_kept, **dict(self.repaired),
                **({"rolls": len(self.rolls)} if self.rolls else {})}


# --------------------------------------------------------------------------- reading


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
        found["date"], found["time"] = by_normalised["date"], by_normalised["time"]
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
        if len(text) and pd.notna(numeric.iloc[0]) and numeric.isna().any():  # epoch numbers with a bad cell among them
            bad = int(np.flatnonzero(numeric.isna().to_numpy())[0])
            raise DataError(path, f"unreadable timestamp {text.iloc[bad]!r} among epoch numbers", row=bad + 1, column=column)
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
    """Bars from a file in one of the formats above, repaired and reported (see the module docstring)."""
    path = Path(path)
    table = _read(path)
    raw = table.frame
    columns = dict(table.roles) or _detect_columns(raw, path)
    index = _timestamps(raw, columns, path, timezone, dayfirst) + table.stamp_shift
    values = _prices(raw, columns, path, fixed_point=table.format.startswith("databento"))
    frame = pd.DataFrame(values, index=pd.DatetimeIndex(index, name="timestamp"))
    frame["_row"] = np.arange(1, len(frame) + 1)

    report = RepairReport(path=str(path), rows_read=len(frame), format=table.format)
    contract = bar_formats.contract_column(raw, path)
    if contract is not None:
        frame = _continuous(frame, raw[contract], report)
    frame = _repair(frame, report, path, columns)
    if len(frame) < 2:
        raise DataError(path, f"only {len(frame)} usable row(s) after repair")
    report.rows_kept = len(frame)
    return frame[list(OHLCV)].astype(np.float64), report


def _read(path: Path) -> RawTable:
    try:
        table = bar_formats.read_table(path)
    except DataError:
        raise
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(path, f"cannot read the file: {exc}") from None
    if table.frame.empty:
        raise DataError(path, "no rows")
    return table


def _timestamps(raw: pd.DataFrame, columns: dict[str, str], path: Path, timezone: str, dayfirst: str) -> pd.DatetimeIndex:
    if "date" in columns and "time" in columns:
        stamps = raw[columns["date"]].astype(str).str.strip() + " " + raw[columns["time"]].astype(str).str.strip()
        label = f"{columns['date']}+{columns['time']}"
    else:
        stamps, label = raw[columns["timestamp"]], columns["timestamp"]
    return parse_timestamps(stamps.reset_index(drop=True), path, label, timezone, dayfirst)


def _prices(raw: pd.DataFrame, columns: dict[str, str], path: Path, fixed_point: bool) -> dict[str, np.ndarray]:
    """Open, high, low, close (Databento's fixed-point integers scaled when they clearly are one), and volume (0 if absent)."""
    prices = ("open", "high", "low", "close")
    values = {role: _parse_numbers(raw[columns[role]].reset_index(drop=True), path, columns[role]) for role in prices}
    if fixed_point:
        bar_formats.scale_fixed_point([raw[columns[role]] for role in prices], values)
    if "volume" in columns:
        values["volume"] = _parse_numbers(raw[columns["volume"]].reset_index(drop=True), path, columns["volume"])
    else:
        values["volume"] = np.zeros(len(raw))
        columns["volume"] = "volume"
    return values


def _continuous(frame: pd.DataFrame, contracts: pd.Series, report: RepairReport) -> pd.DataFrame:
    """Spreads dropped, then one back-adjusted series from the contracts (``bar_formats.back_adjust``)."""
    names = contracts.astype(str).str.strip()
    spread = names.map({name: bar_formats.is_spread(name) for name in names.unique()}).to_numpy(dtype=bool)
    names = names.to_numpy()
    if spread.any():
        report.repaired["spread_rows"] += int(spread.sum())
    frame, report.rolls = bar_formats.back_adjust(frame.assign(_contract=names).loc[~spread])
    return frame.drop(columns="_contract")


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
