"""Multi-bar statistics of regular-hours 1-minute bars: what a trader's rules live on.

Every figure is computed inside sessions (a US/Eastern date's 09:30-15:59 bars); a return
that crosses the overnight gap is left out of all of them except the gap figure itself.

- ``naive_variance_ratio(r, day, q)``: Lo and MacKinlay's textbook VR(q), the mean of the
  overlapping in-session q-bar sums squared over q Var(1-bar return): what a user's own tools
  compute, and so what the calibration table bands (``vr_q``). 1 for a random walk of constant
  volatility, above 1 when returns trend, below 1 when they revert; NQ's U-shaped intraday
  volatility pulls it below 1 on any walk (a bar near the open sits in fewer windows than a
  midday one: VR(60) ~0.86 on a walk with the generator's curve).
- ``variance_ratio(r, day, q)``: the debiased form, each window against its own bars' squares,
  which reads any random walk as 1 whatever its intraday profile (``vr_q_debiased``: printed
  beside the textbook figure as information, not banded). Both written here because they need
  the session boundaries (no library computes VR per session).
- ``consecutive_block_correlation(r, q)``: the correlation of consecutive non-overlapping
  q-bar returns of a session (blocks from the open; about 390/q - 1 pairs a day).
- ``half_hour_profile``: each half hour's return sigma and mean volume as a ratio to midday
  (11:30-13:30 ET), 13 half hours from 09:30.
- ``first_last_half_hour_correlation``: across days, the correlation of the first half
  hour's return (the prior session's close to 10:00, so the overnight gap is in it, as in
  Gao, Han, Li and Zhou 2018) and the last half hour's (15:30 to the close).
- ``gap_frequency``: the share of sessions whose open is more than ``GAP_THRESHOLD_PCT``
  from the prior session's close.
- ``jump_frequency``: the share of 1-minute returns beyond ``JUMP_SIGMAS`` robust sigmas of
  their own session's half hour (1.4826 x the median |r|, so a jump does not hide itself).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

VR_HORIZONS = (5, 15, 60, 240)
BLOCK_HORIZONS = (30, 60)
HALF_HOURS = 13
MIDDAY_HALF_HOURS = (4, 5, 6, 7)
"""Half hours 11:30-13:30 ET (index 0 = 09:30-10:00): the midday that the ratios divide by."""
GAP_THRESHOLD_PCT = 0.25
JUMP_SIGMAS = 5.0
_MAD_TO_SIGMA = 1.4826


def session_returns(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(returns, minute of day, day index) of the regular-hours bars: within-session log returns only."""
    close, minute, day = rth_arrays(frame)
    log_return = np.diff(np.log(close))
    same_day = day[1:] == day[:-1]
    return log_return[same_day], minute[1:][same_day], day[1:][same_day]


def rth_arrays(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(close, minute of day ET, session number) of the 09:30-15:59 ET bars."""
    et = pd.DatetimeIndex(frame.index).tz_convert("America/New_York")
    minute = np.asarray(et.hour * 60 + et.minute)
    rth = (minute >= 9 * 60 + 30) & (minute < 16 * 60)
    dates = np.asarray(et[rth].date)
    _, day = np.unique(dates, return_inverse=True)
    return frame["close"].to_numpy(dtype=np.float64)[rth], minute[rth], day.astype(np.int64)


def _session_windows(r: np.ndarray, day: np.ndarray, q: int) -> np.ndarray:
    """Every overlapping q-bar sum of ``r`` that stays inside one session."""
    cumulative = np.concatenate(([0.0], np.cumsum(r)))
    sums = cumulative[q:] - cumulative[:-q]
    inside = day[q - 1 :] == day[: len(day) - q + 1]
    return sums[inside]


def variance_ratio(r: np.ndarray, day: np.ndarray, q: int) -> float:
    """VR(q): the overlapping q-bar sums inside sessions against the sum of their bars' own squares (demeaned).

    The denominator is each window's own bars, not q times the average bar: a bar near the open
    or the close sits in fewer windows than a midday one, so with NQ's U-shaped volatility the
    textbook q Var(r) would read a random walk's VR(60) as ~0.86. Here any random walk, whatever
    its intraday profile, reads 1 (the table's ``vr_q_debiased``, information beside the banded
    textbook figure). nan when no window fits."""
    centred = r - r.mean()
    windows = _session_windows(centred, day, q)
    own = _session_windows(centred**2, day, q)
    if len(windows) < 2 or own.sum() <= 0:
        return float("nan")
    return float(np.sum(windows**2) / np.sum(own))


def naive_variance_ratio(r: np.ndarray, day: np.ndarray, q: int) -> float:
    """The textbook VR(q) = mean of overlapping in-session q-bar sums squared / (q Var(r)): the calibration table's
    banded ``vr_q``, as real NQ's bands were measured (biased below 1 by the intraday volatility curve, see
    variance_ratio). nan when no window fits."""
    centred = r - r.mean()
    windows = _session_windows(centred, day, q)
    return float(np.mean(windows**2) / (q * np.mean(centred**2))) if len(windows) >= 2 else float("nan")


def _block_returns(r: np.ndarray, minute: np.ndarray, day: np.ndarray, q: int) -> pd.DataFrame:
    """Non-overlapping q-bar returns per session: rows = sessions, columns = block number from the open.

    A return belongs to the bar it ends on: the one ending at 09:31 is the first, the block of
    bars 09:30 .. 09:30+q closes q returns later."""
    block = (minute - (9 * 60 + 31)) // q
    table = pd.DataFrame({"day": day, "block": block, "r": r}).groupby(["day", "block"])["r"].agg(["sum", "count"])
    table = table[table["count"] == q]["sum"]
    return table.unstack("block")


def consecutive_block_correlation(r: np.ndarray, minute: np.ndarray, day: np.ndarray, q: int) -> tuple[float, int]:
    """(correlation of consecutive q-bar returns of a session, pairs)."""
    blocks = _block_returns(r, minute, day, q).to_numpy()
    first, second = blocks[:, :-1].ravel(), blocks[:, 1:].ravel()
    keep = np.isfinite(first) & np.isfinite(second)
    if keep.sum() < 3:
        return float("nan"), int(keep.sum())
    return float(np.corrcoef(first[keep], second[keep])[0, 1]), int(keep.sum())


def half_hour_index(minute: np.ndarray) -> np.ndarray:
    """0 for a bar starting 09:30-09:59 ET, ..., 12 for 15:30-15:59."""
    return (np.asarray(minute) - (9 * 60 + 30)) // 30


def half_hour_profile(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Return sigma and mean volume of each half hour, divided by the midday half hours' mean."""
    r, minute, _ = session_returns(frame)
    slot = half_hour_index(minute)
    sigma = np.array([r[slot == k].std(ddof=1) if (slot == k).sum() > 1 else np.nan for k in range(HALF_HOURS)])
    et = pd.DatetimeIndex(frame.index).tz_convert("America/New_York")
    bar_minute = np.asarray(et.hour * 60 + et.minute)
    rth = (bar_minute >= 9 * 60 + 30) & (bar_minute < 16 * 60)
    volume, bar_slot = frame["volume"].to_numpy(dtype=np.float64)[rth], half_hour_index(bar_minute[rth])
    mean_volume = np.array([volume[bar_slot == k].mean() if (bar_slot == k).any() else np.nan for k in range(HALF_HOURS)])
    midday = list(MIDDAY_HALF_HOURS)
    return {"volatility": sigma / np.nanmean(sigma[midday]), "volume": mean_volume / np.nanmean(mean_volume[midday])}


def session_closes(frame: pd.DataFrame) -> pd.DataFrame:
    """Per session: open, close at 09:59 (the first half hour's last bar), close at 15:29, last close."""
    close, minute, day = rth_arrays(frame)
    open_ = frame["open"].to_numpy(dtype=np.float64)
    et = pd.DatetimeIndex(frame.index).tz_convert("America/New_York")
    bar_minute = np.asarray(et.hour * 60 + et.minute)
    open_ = open_[(bar_minute >= 9 * 60 + 30) & (bar_minute < 16 * 60)]
    table = pd.DataFrame({"day": day, "minute": minute, "close": close, "open": open_})
    grouped = table.groupby("day")
    return pd.DataFrame({
        "open": grouped["open"].first(),
        "first_minute": grouped["minute"].first(),
        "last_minute": grouped["minute"].last(),
        "close_1000": table[table["minute"] == 9 * 60 + 59].set_index("day")["close"],
        "close_1530": table[table["minute"] == 15 * 60 + 29].set_index("day")["close"],
        "close": grouped["close"].last(),
    })


def first_last_half_hour_returns(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per full session after the first: (prior close to 10:00, 15:30 to the close) log returns."""
    sessions = session_closes(frame)
    prior_close = sessions["close"].shift(1)
    full = (sessions["first_minute"] == 9 * 60 + 30) & (sessions["last_minute"] == 15 * 60 + 59)
    first = np.log(sessions["close_1000"] / prior_close)
    last = np.log(sessions["close"] / sessions["close_1530"])
    keep = (full & full.shift(1, fill_value=False) & first.notna() & last.notna()).to_numpy()
    return first.to_numpy()[keep], last.to_numpy()[keep]


def first_last_half_hour_correlation(frame: pd.DataFrame) -> tuple[float, int]:
    """(correlation across days of the first half hour's return with the last half hour's, days)."""
    first, last = first_last_half_hour_returns(frame)
    if len(first) < 3:
        return float("nan"), len(first)
    return float(np.corrcoef(first, last)[0, 1]), len(first)


def gap_returns(frame: pd.DataFrame) -> np.ndarray:
    """Log return from each session's last close to the next session's open."""
    sessions = session_closes(frame)
    return np.log(sessions["open"].to_numpy()[1:] / sessions["close"].to_numpy()[:-1])


def gap_frequency(frame: pd.DataFrame, threshold_pct: float = GAP_THRESHOLD_PCT) -> float:
    gaps = gap_returns(frame)
    return float(np.mean(np.abs(gaps) * 100.0 > threshold_pct)) if len(gaps) else float("nan")


def jump_frequency(r: np.ndarray, minute: np.ndarray, day: np.ndarray, sigmas: float = JUMP_SIGMAS) -> float:
    """Share of returns beyond ``sigmas`` robust sigmas of their session's half hour."""
    key = day * HALF_HOURS + half_hour_index(minute)
    scale = pd.Series(np.abs(r)).groupby(key).transform("median").to_numpy() * _MAD_TO_SIGMA
    usable = scale > 0
    return float(np.mean(np.abs(r[usable]) > sigmas * scale[usable])) if usable.any() else float("nan")


def multibar_statistics(frame: pd.DataFrame) -> dict[str, float]:
    """The multi-bar figures of the calibration table (keys as in REAL_NQ_RANGES)."""
    r, minute, day = session_returns(frame)
    # vr_q is the textbook figure: real NQ's bands were measured by a user with ordinary tools, and a
    # market's file must read in band with those tools; the debiased one says how much of it is the volatility curve.
    figures: dict[str, float] = {f"vr_{q}": naive_variance_ratio(r, day, q) for q in VR_HORIZONS}
    figures.update({f"vr_{q}_debiased": variance_ratio(r, day, q) for q in VR_HORIZONS})
    for q in BLOCK_HORIZONS:
        figures[f"corr_consecutive_{q}"], figures[f"pairs_consecutive_{q}"] = consecutive_block_correlation(r, minute, day, q)
    profile = half_hour_profile(frame)
    figures["vol_first30_to_midday"] = float(profile["volatility"][0])
    figures["vol_last30_to_midday"] = float(profile["volatility"][-1])
    figures["volume_first30_to_midday"] = float(profile["volume"][0])
    figures["volume_last30_to_midday"] = float(profile["volume"][-1])
    figures["corr_first30_last30"], figures["days_first30_last30"] = first_last_half_hour_correlation(frame)
    figures["gap_frequency"] = gap_frequency(frame)
    figures["jump_frequency"] = jump_frequency(r, minute, day)
    return figures
