"""FeatureStream and LiveWindow: features one bar at a time, bit for bit the batch version's (compute_features, the oracle)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.bar_files import session_starts
from actors.common.synthetic import BARS_PER_SESSION, generate_bars
from actors.common.market_settings import AccountConfig
from actors.env.feature_stream import FeatureStream
from actors.env.features import STATIC_FEATURES, FeatureSet, compute_features
from actors.env.live_window import LiveWindow, live_split

from .conftest import bars_frame
from .test_features import MODEL, edge_case_frame

FIELDS = tuple(FeatureSet.__dataclass_fields__)


def streamed(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Every FeatureSet field of ``frame``, one bar pushed at a time, stacked in the batch dtypes."""
    stream = FeatureStream(MODEL)
    columns = [frame[name].to_numpy(dtype=np.float64).tolist() for name in ("high", "low", "close", "volume")]
    rows = [stream.push(start_ns, *bar) for start_ns, *bar in zip(frame.index.as_unit("ns").asi8.tolist(), *columns)]
    batch = compute_features(frame, MODEL)
    return {name: np.array([getattr(row, name) for row in rows], dtype=getattr(batch, name).dtype).reshape(getattr(batch, name).shape) for name in FIELDS}


def assert_identical_to_the_batch(frame: pd.DataFrame) -> None:
    batch, stream = compute_features(frame, MODEL), streamed(frame)
    for name in FIELDS:
        expected, got = getattr(batch, name), stream[name]
        assert got.dtype == expected.dtype and got.shape == expected.shape, name
        same = np.array_equal(got, expected, equal_nan=True) if expected.dtype.kind == "f" else np.array_equal(got, expected)
        assert same, f"{name}: first difference at {np.argwhere(~((got == expected) | (got != got) & (expected != expected)))[:1].tolist()}"


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_stream_gives_the_batch_features_bit_for_bit_on_synthetic_bars(seed):
    assert_identical_to_the_batch(generate_bars(days=6, seed=seed))


def test_the_stream_gives_the_batch_features_bit_for_bit_from_a_start_mid_session():
    frame = generate_bars(days=4, seed=4)
    assert_identical_to_the_batch(frame.iloc[BARS_PER_SESSION + 157 :])


def test_the_stream_gives_the_batch_features_on_flat_bars_zero_volume_gaps_and_a_session_roll():
    frame = edge_case_frame()
    features = compute_features(frame)
    assert (features.atr[14:80] == 0).all() and (frame["volume"] == 0).any() and len(np.unique(features.session_id)) == 3
    assert_identical_to_the_batch(frame)


def test_the_stream_gives_the_batch_features_where_thresholds_tie():
    high, low = 20_007.75, 20_000.0
    assert_identical_to_the_batch(bars_frame([(low, high, low, low)] * 100 + [(high, high, low, high)] * 100))


@pytest.mark.parametrize("utc_start", ["2024-03-10 04:00", "2024-11-03 03:00"])  # across the spring and autumn clock changes
def test_the_stream_gives_the_batch_minutes_and_sessions_across_a_daylight_saving_change(utc_start):
    frame = generate_bars(days=2, seed=7).iloc[:600]
    frame.index = pd.date_range(utc_start, periods=600, freq="1min", tz="UTC")
    assert_identical_to_the_batch(frame)


def test_the_stream_gives_the_batch_features_on_unrounded_prices():
    # Prices off the tick grid make float sums depend on their order: the rolling means must add as the batch does.
    frame = generate_bars(days=2, seed=8)
    rng = np.random.default_rng(8)
    for name in ("open", "high", "low", "close"):
        frame[name] = frame[name] * (1 + rng.normal(0, 1e-7, len(frame)))
    frame["high"], frame["low"] = frame[["open", "high", "low", "close"]].max(axis=1), frame[["open", "high", "low", "close"]].min(axis=1)
    frame["volume"] = frame["volume"] * rng.uniform(0.5, 1.5, len(frame))
    assert_identical_to_the_batch(frame)


@pytest.mark.parametrize("n_bars", [1, 6, 40, 119])  # shorter than the lags and windows
def test_the_stream_gives_the_batch_features_on_the_first_bars(n_bars):
    assert_identical_to_the_batch(generate_bars(days=1, seed=0).iloc[:n_bars])


def test_a_live_window_keeps_the_full_history_features_after_it_drops_old_bars_and_moves_buffers():
    frame = generate_bars(days=2, seed=9).iloc[:400]
    batch = compute_features(frame, MODEL)
    window = LiveWindow(window_bars=60, regime_model=MODEL)  # its buffer holds 122 rows: it moves three times
    flat_minute = AccountConfig().flat_minute_of_day
    starts = frame.index.as_unit("ns").asi8.tolist()
    for t, (start_ns, row) in enumerate(zip(starts, frame[["open", "high", "low", "close", "volume"]].to_numpy().tolist())):
        window.append(start_ns, *row)
        if t < 30 or t % 7:
            continue
        split = window.split(flat_minute)
        data, first = split.dataset, t + 1 - split.stop
        assert split.stop == min(t + 1, 60) and data.start_ns[: split.stop].tolist() == starts[first : t + 1]
        for name in FIELDS:  # the window's rows are the batch's rows over every bar so far
            assert np.array_equal(getattr(data.features, name)[: split.stop], getattr(batch, name)[first : t + 1], equal_nan=True), (t, name)
        # the calendar (with the phantom bars) is the batch live split's over the same window
        oracle = live_split(frame.iloc[first : t + 1], flat_minute, MODEL).dataset
        assert np.array_equal(data.index.asi8, oracle.index.asi8)
        for name in ("flat_at_close", "entry_allowed", "minutes_to_flat"):
            assert np.array_equal(getattr(data.schedule, name), getattr(oracle.schedule, name)), (t, name)
        assert np.array_equal(data.session_starts, session_starts(data.index)) and np.array_equal(data.session_starts, oracle.session_starts)
        for name in ("open", "high", "low", "close", "volume"):
            assert np.array_equal(getattr(data, name), getattr(oracle, name)), (t, name)
        assert data.features.minute_et[-1] == oracle.features.minute_et[-1] and data.features.session_id[-1] == oracle.features.session_id[-1]
        assert {key: value for key, value in data.lists.items() if key != "atr"} == {key: value for key, value in oracle.lists.items() if key != "atr"}


def test_the_belief_column_the_stream_is_checked_on_moves():
    # Without a fitted model the belief is 0 everywhere and "stream = batch" would say nothing about it.
    belief = compute_features(generate_bars(days=3, seed=1), MODEL).static[:, STATIC_FEATURES.index("market_regime")]
    assert np.abs(belief).max() > 0.3 and len(np.unique(belief)) > 100
