"""A dataset: bars, their features and session schedule, computed once, and its time splits."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from actors.env.account import FlatSchedule, flat_schedule
from actors.common.bar_files import RepairReport, session_starts, split_by_time
from actors.env.features import FeatureSet, compute_features, regime_model_of
from actors.env.regime_model import RegimeModel
from actors.common.observation import STATIC_FEATURES

WARMUP_BARS = 210
"""Bars before the first usable decision: the 20-bar window and the slowest indicator (SMA200 slope)."""


@dataclass(frozen=True)
class DataSplit:
    """Bars [start, stop) of a dataset that episodes use; features may look back before start."""

    dataset: Dataset
    name: str
    start: int
    stop: int

    @property
    def n_bars(self) -> int:
        return self.stop - self.start

    def session_open_bars(self) -> np.ndarray:
        starts = self.dataset.session_starts
        return starts[(starts >= self.start) & (starts < self.stop)]


@dataclass(eq=False)
class Dataset:
    index: pd.DatetimeIndex
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray
    start_ns: np.ndarray
    features: FeatureSet
    schedule: FlatSchedule
    session_starts: np.ndarray
    bounds: dict[str, tuple[int, int]]
    source: str = ""
    repair: RepairReport | None = None
    warnings: tuple[str, ...] = ()
    """Why this data may not fit the env's rules (actors/env/datafit.py); shown in the report."""
    warmup_bars: int = WARMUP_BARS
    """Bars at the start of the data no episode starts in (indicators are still warming up)."""
    hidden_regime: np.ndarray | None = None
    """int8 per bar: the synthetic market's hidden regime (actors/common/synthetic.py), None for files. For the
    oracle of actors/env/references.py only: features and observations are computed from the bars alone."""
    events: tuple = ()
    """The synthetic news market's MarketEvents (actors/common/news_market.py), sorted by time; () otherwise. The env
    replays them beside the bars (actors/env/event_replay.py)."""
    event_truth: dict[str, np.ndarray] | None = None
    """The news market's hidden answers per event, in ``events``' order: ``event_bar`` (the bar that makes it public),
    ``surprise`` (signed z) and ``text_sign``; None otherwise. For the evaluation's news floors only
    (actors/jobs/evaluation/news_rows.py): never observed, like ``hidden_regime``."""
    regime_model: RegimeModel | None = None
    """The HMM behind ``market_regime`` (actors/env/regime_model.py), fitted on the training split's bars only."""
    lists: dict[str, list] = field(default_factory=dict)
    """Python-list copies of the per-bar arrays the env reads one scalar at a time (much faster than numpy scalars)."""

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, flat_minute_of_day: int, train_fraction: float = 0.7, validation_fraction: float = 0.15,
        source: str = "", repair: RepairReport | None = None, warmup_bars: int = WARMUP_BARS,
        regime_model: RegimeModel | None = None, releases: np.ndarray | None = None,
    ) -> Dataset:
        """Features and schedule for ``frame``; ``warmup_bars`` < the default only for tiny hand-made files.

        ``regime_model``: the HMM to read ``market_regime`` with (a live window takes the policy's); None fits one
        on the training split's bars, never on a later one. ``releases``: the scheduled releases' sorted UTC ns
        (``session_features.release_times_ns``), read by ``minutes_to_release``; None: no calendar."""
        if len(frame) < warmup_bars + 3:
            raise ValueError(f"{source or 'data'}: {len(frame)} bars is too few (need at least {warmup_bars + 3})")
        index = pd.DatetimeIndex(frame.index).as_unit("ns")
        arrays = {name: frame[name].to_numpy(dtype=np.float64) for name in ("open", "high", "low", "close", "volume")}
        bounds = split_by_time(index, train_fraction, validation_fraction)
        if regime_model is None:
            regime_model = regime_model_of(frame.iloc[: bounds["train"][1]])
        features = compute_features(frame, regime_model, releases)
        schedule = flat_schedule(index, flat_minute_of_day)
        dataset = cls(
            index=index,
            start_ns=index.asi8.astype(np.int64),
            features=features,
            schedule=schedule,
            session_starts=session_starts(index),
            bounds=bounds,
            source=source,
            repair=repair,
            warmup_bars=warmup_bars,
            regime_model=regime_model,
            **arrays,
        )
        dataset.lists = {
            "open": arrays["open"].tolist(),
            "high": arrays["high"].tolist(),
            "low": arrays["low"].tolist(),
            "close": arrays["close"].tolist(),
            "start_ns": dataset.start_ns.tolist(),
            "atr": features.atr.tolist(),
            "flat_at_close": schedule.flat_at_close.tolist(),
            "entry_allowed": schedule.entry_allowed.tolist(),
            "session_id": features.session_id.tolist(),
        }
        return dataset

    def with_regime_fitted_on(self, stop_bar: int) -> Dataset:
        """This dataset with the regime HMM refitted on bars [0, stop_bar) (a walk-forward fold's training days)
        and ``market_regime`` and the trend word recomputed from it; everything else is shared, not copied."""
        frame = pd.DataFrame({name: getattr(self, name) for name in ("open", "high", "low", "close", "volume")}, index=self.index)
        model = regime_model_of(frame.iloc[:stop_bar])
        fresh = compute_features(frame, model)
        static = self.features.static.copy()
        column = STATIC_FEATURES.index("market_regime")
        static[:, column] = fresh.static[:, column]
        return replace(self, features=replace(self.features, static=static, trend_code=fresh.trend_code), regime_model=model, lists=self.lists)

    def __len__(self) -> int:
        return len(self.close)

    def split(self, name: str) -> DataSplit:
        if name not in self.bounds:
            raise ValueError(f"unknown split {name!r}; choose from {sorted(self.bounds)}")
        start, stop = self.bounds[name]
        return DataSplit(self, name, max(start, self.warmup_bars), stop)

    @property
    def train(self) -> DataSplit:
        return self.split("train")

    @property
    def validation(self) -> DataSplit:
        return self.split("validation")

    @property
    def test(self) -> DataSplit:
        return self.split("test")
