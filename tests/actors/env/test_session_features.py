"""The session inputs (issue 52, actors/env/session_features.py): hand-computed values, the release calendar, causality
and the stream's bit-for-bit copy with a calendar. The pandas oracle of test_features.py checks them on every frame too."""

from __future__ import annotations

import numpy as np
import pandas as pd

from actors.common.observation import SESSION_FEATURES, STATIC_FEATURES
from actors.env.feature_stream import FeatureStream
from actors.env.features import compute_features

from .conftest import bars_frame

COLUMN = {name: STATIC_FEATURES.index(name) for name in SESSION_FEATURES}


def two_sessions() -> pd.DataFrame:
    """A whole session rising 0.25 a bar from 20,000, then the next session opening 100 points higher and swinging."""
    first = bars_frame([(20_000 + 0.25 * i, 20_001 + 0.25 * i, 19_999 + 0.25 * i, 20_000.25 + 0.25 * i) for i in range(390)],
                       start_et="2024-03-04 09:30")
    second = bars_frame([(20_200.0, 20_201.0, 20_199.0, 20_200.0 + (0.5 if i % 2 else 0.0)) for i in range(390)], start_et="2024-03-05 09:30")
    return pd.concat([first, second])


def releases_at(*times_et: str) -> np.ndarray:
    return np.array([pd.Timestamp(t, tz="America/New_York").value for t in times_et], dtype=np.int64)


def test_the_session_columns_hold_the_hand_computed_values():
    frame = two_sessions()
    features = compute_features(frame)
    static = features.static
    close = frame["close"].to_numpy()
    prior, second_open = close[389], close[390]
    at = lambda bar, name: float(static[bar, COLUMN[name]])  # noqa: E731
    # return since open and the gap, in percent of log returns
    assert np.isclose(at(100, "return_since_open"), np.log(close[100] / close[0]) * 100, atol=1e-5)
    assert at(100, "gap_return") == 0.0  # the data's first session has no prior close
    assert np.isclose(at(395, "gap_return"), np.log(second_open / prior) * 100, atol=1e-5)
    # the first half hour's return is 0 until the 09:59 bar closes, then that return all day
    assert at(390 + 28, "first_30m_return") == 0.0
    expected = np.log(close[390 + 29] / prior) * 100
    assert np.isclose(at(390 + 29, "first_30m_return"), expected, atol=1e-5) and np.isclose(at(779, "first_30m_return"), expected, atol=1e-5)
    # minutes to 16:00 and 17:00 from each bar's end, in sessions
    assert at(389, "minutes_to_close") == 0.0 and np.isclose(at(0, "minutes_to_close"), 389 / 390)
    assert np.isclose(at(389, "minutes_to_break"), 60 / 390)
    # a steady rise: every one-bar return about the same, so the last 15 bars are as volatile as the day (ratio ~0)
    assert abs(at(300, "realized_vol_15")) < 0.01
    # the rising session's last bar makes its high (0.75 above the close); its low is the first bar's
    atr = features.atr[389]
    assert np.isclose(at(389, "session_high_distance"), 0.75 / atr / 10, atol=1e-6)
    assert np.isclose(at(389, "session_low_distance"), (close[389] - frame["low"].iloc[0]) / atr / 10, atol=1e-5)
    # no calendar: a release is "a session or more away"
    assert (static[:, COLUMN["minutes_to_release"]] == 1.0).all()


def test_minutes_to_release_counts_down_to_each_scheduled_release_then_moves_to_the_next():
    frame = two_sessions()
    releases = releases_at("2024-03-04 10:30", "2024-03-05 08:30")
    column = compute_features(frame, releases=releases).static[:, COLUMN["minutes_to_release"]]
    assert np.isclose(column[30], 29 / 390)  # the bar starting 10:00 ends 10:01: 29 minutes to 10:30
    assert column[59] == 0.0  # the 10:29 bar ends at the release
    assert column[60] == 1.0  # the next one (08:30 the next day) is more than a session away
    assert column[389] == 1.0 and column[390] == 1.0  # the 08:30 release is before the second session: none ahead


def test_session_columns_at_a_bar_do_not_change_when_later_bars_or_later_releases_change():
    frame = two_sessions()
    cut = 390 + 20  # before the second session's 10:00 bar: its first half hour is not known yet
    changed = frame.copy()
    changed.iloc[cut + 1 :, :4] = changed.iloc[cut + 1 :, :4].to_numpy() * 1.03
    releases = releases_at("2024-03-05 14:00")
    original = compute_features(frame, releases=releases).static
    altered = compute_features(changed, releases=releases_at("2024-03-05 14:00", "2024-03-06 10:00")).static
    columns = list(COLUMN.values())
    assert np.array_equal(original[: cut + 1][:, columns], altered[: cut + 1][:, columns])
    assert not np.array_equal(original[cut + 1 :][:, columns], altered[cut + 1 :][:, columns])


def test_the_stream_gives_the_batch_session_columns_bit_for_bit_with_a_calendar():
    frame = two_sessions()
    releases = releases_at("2024-03-04 10:30", "2024-03-04 15:00", "2024-03-05 10:00")
    batch = compute_features(frame, releases=releases).static
    stream = FeatureStream(releases=releases)
    columns = [frame[name].to_numpy(dtype=np.float64).tolist() for name in ("high", "low", "close", "volume")]
    rows = [stream.push(start, *bar).static for start, *bar in zip(frame.index.as_unit("ns").asi8.tolist(), *columns)]
    assert np.array_equal(np.stack(rows), batch)
    assert len(np.unique(batch[:, COLUMN["minutes_to_release"]])) > 10  # the calendar is really read
