"""The live session's rolling window: the newest closed bars and their features as a ``DataSplit`` the env can play.

Apart from live.py: this is the feature side (what actors/env/feature_stream.py and features.py compute, laid out
as the batch code's arrays), the session the trading side. ``live_split`` is the batch code's answer, recomputed
whole: the oracle ``LiveWindow`` is tested against.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from actors.env.account import flat_schedule
from actors.env.dataset import DataSplit, Dataset
from actors.env.feature_stream import FeatureRow, FeatureStream, et_minute_and_session
from actors.env.regime_model import RegimeModel
from actors.env.features import BAR_FEATURES as BAR_FEATURE_NAMES, STATIC_FEATURES as STATIC_FEATURE_NAMES, _SESSION_ROLL_HOURS, FeatureSet

PHANTOM_BARS = 2
"""Bars assumed after the newest one for the session calendar: the fill bar of a decision and the one after it."""
DEFAULT_INTERVAL_NS = 60 * 10**9


def bar_interval_ns(start_ns: list[int]) -> int:
    """The feed's bar interval: the median spacing of the newest bars (1 minute until two bars are known)."""
    if len(start_ns) < 2:
        return DEFAULT_INTERVAL_NS
    recent = np.diff(np.asarray(start_ns[-50:], dtype=np.int64))
    return int(np.median(recent)) or DEFAULT_INTERVAL_NS


def live_split(frame: pd.DataFrame, flat_minute_of_day: int | None, regime_model: RegimeModel | None = None) -> DataSplit:
    """Features and calendar for ``frame`` (closed bars, UTC index) by the batch code, recomputed whole;
    phantom bars only shape the calendar. The oracle ``LiveWindow`` is tested against."""
    interval = bar_interval_ns(frame.index.asi8.tolist())
    last = frame.iloc[-1]
    phantom_index = pd.DatetimeIndex([frame.index[-1] + pd.Timedelta(interval * (k + 1), "ns") for k in range(PHANTOM_BARS)])
    phantoms = pd.DataFrame({"open": last.close, "high": last.close, "low": last.close, "close": last.close, "volume": last.volume}, index=phantom_index)
    dataset = Dataset.from_frame(pd.concat([frame, phantoms]), flat_minute_of_day, source="live", warmup_bars=0,
                                 regime_model=regime_model or RegimeModel.uninformative())
    return DataSplit(dataset, "live", 0, len(frame))


_BAR_COLUMNS = ("open", "high", "low", "close", "volume")
_RAW_FEATURES = ("atr", "rsi", "adx", "momentum", "vwap_distance_pct", "support", "resistance", "volatility_regime")
_CODE_FEATURES = {"trend_code": np.int8, "volume_trend_code": np.int8, "pattern_code": np.int8, "session_id": np.int64, "minute_et": np.int16}


class LiveWindow:
    """The newest ``window_bars`` bars and their feature rows, in arrays that grow by one row a bar.

    A bar's features come from a ``FeatureStream`` fed every bar since the first, so they do not depend on
    where the window starts. ``split`` hands the env zero-copy views of the window plus ``PHANTOM_BARS``
    phantom rows (the calendar's next bars; their feature rows repeat the newest and are never read).
    Rows live in buffers of twice the window: when one fills up, the window moves to a fresh buffer,
    so views handed out earlier stay as they were.
    """

    def __init__(self, window_bars: int, regime_model: RegimeModel | None = None) -> None:
        self.window_bars = window_bars
        self.stream = FeatureStream(regime_model)
        self._capacity = 2 * window_bars + PHANTOM_BARS
        self._lo = self._hi = 0
        self._arrays = self._allocate()

    def _allocate(self) -> dict[str, np.ndarray]:
        rows = self._capacity
        arrays = {"start_ns": np.zeros(rows, dtype=np.int64), **{name: np.zeros(rows) for name in _BAR_COLUMNS}}
        arrays["bar"] = np.zeros((rows, len(BAR_FEATURE_NAMES)), dtype=np.float32)
        arrays["static"] = np.zeros((rows, len(STATIC_FEATURE_NAMES)), dtype=np.float32)
        arrays.update({name: np.zeros(rows) for name in _RAW_FEATURES})
        arrays.update({name: np.zeros(rows, dtype=dtype) for name, dtype in _CODE_FEATURES.items()})
        return arrays

    def __len__(self) -> int:
        return self._hi - self._lo

    @property
    def last_start_ns(self) -> int:
        return int(self._arrays["start_ns"][self._hi - 1]) if len(self) else -1

    def append(self, start_ns: int, open_: float, high: float, low: float, close: float, volume: float) -> None:
        """The next closed bar (newer than the last): its features, then the window's oldest bar dropped if full."""
        row = self.stream.push(start_ns, high, low, close, volume)
        if self._hi + PHANTOM_BARS >= self._capacity:
            self._move_to_fresh_buffer()
        self._write(self._hi, start_ns, (open_, high, low, close, volume), row)
        self._hi += 1
        self._lo = max(self._lo, self._hi - self.window_bars)

    def _move_to_fresh_buffer(self) -> None:
        old, keep = self._arrays, slice(self._hi - self.window_bars + 1, self._hi)  # the append drops the oldest
        self._arrays = self._allocate()
        for name, array in old.items():
            self._arrays[name][: keep.stop - keep.start] = array[keep]
        self._lo, self._hi = 0, keep.stop - keep.start

    def _write(self, i: int, start_ns: int, prices: tuple[float, ...], row: FeatureRow) -> None:
        arrays = self._arrays
        arrays["start_ns"][i] = start_ns
        for name, value in zip(_BAR_COLUMNS, prices):
            arrays[name][i] = value
        arrays["bar"][i], arrays["static"][i] = row.bar, row.static
        for name in _RAW_FEATURES:
            arrays[name][i] = getattr(row, name)
        for name in _CODE_FEATURES:
            arrays[name][i] = getattr(row, name)

    def split(self, flat_minute_of_day: int | None) -> DataSplit:
        """The window as the env's data: features as carried, calendar from the bar times and the phantoms."""
        arrays, lo, hi = self._arrays, self._lo, self._hi
        interval = bar_interval_ns(arrays["start_ns"][max(lo, hi - 50) : hi].tolist())
        for k in range(PHANTOM_BARS):  # the phantoms: the newest close, flat, one interval apart
            for name, array in arrays.items():
                array[hi + k] = array[hi - 1]
            arrays["start_ns"][hi + k] = arrays["start_ns"][hi - 1] + interval * (k + 1)
            arrays["open"][hi + k] = arrays["high"][hi + k] = arrays["low"][hi + k] = arrays["close"][hi - 1]
            arrays["minute_et"][hi + k], arrays["session_id"][hi + k] = et_minute_and_session(int(arrays["start_ns"][hi + k]))
        view = {name: array[lo : hi + PHANTOM_BARS] for name, array in arrays.items()}
        index = pd.DatetimeIndex(view["start_ns"], tz="UTC")
        features = FeatureSet(**{name: view[name] for name in FeatureSet.__dataclass_fields__})
        schedule = flat_schedule(index, flat_minute_of_day)
        et_date = view["session_id"] - (view["minute_et"] >= 24 * 60 - _SESSION_ROLL_HOURS * 60)  # the session id is the date 6 h later
        starts = np.flatnonzero(np.concatenate(([True], et_date[1:] != et_date[:-1])))  # bar_files.session_starts(index), without pandas
        dataset = Dataset(
            index=index, start_ns=view["start_ns"], features=features, schedule=schedule, session_starts=starts,
            bounds={"all": (0, len(index))}, source="live", warmup_bars=0, **{name: view[name] for name in _BAR_COLUMNS},
        )
        dataset.lists = {
            **{name: view[name].tolist() for name in ("open", "high", "low", "close", "start_ns", "atr")},
            "flat_at_close": schedule.flat_at_close.tolist(), "entry_allowed": schedule.entry_allowed.tolist(),
            "session_id": view["session_id"].tolist(),
        }
        return DataSplit(dataset, "live", 0, hi - lo)
