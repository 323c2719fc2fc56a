"""Walk-forward folds by trading day, with a purge and an embargo.

The data's trading days are cut into an initial training block and ``n_folds`` test windows
of equal length that follow it in time. Fold k tests on its window and trains on every day
before it except the last ``purge_days`` (López de Prado, AFML ch. 7):

    days:  [ train ................ ][ purge ][ test k ][ embargo ] ...
           0                     p_k        s_k      e_k

- The purge keeps out of training the days whose outcome reaches into the test window: a
  position is held at most until the session's flat time and a hindsight label looks
  ``hindsight_bars`` ahead, so ``purge_days`` = 1 + ceil(hindsight_bars / bars per day) (``purge_days_for``).
- The embargo is the ``embargo_days`` after a test window that no training set may use
  (serial correlation that outlives the purge). A walk-forward never trains on days after
  its test window, so here the embargo is a rule the folds are checked against
  (tests/actors/jobs/evaluation/test_folds.py), not a gap in the data.

A "day" is a trading session of the loaded data (``Dataset.session_starts``), whatever its length: a 24-hour
futures file has ~1,380 one-minute bars a session, the synthetic market 390, so the purge is sized by the data's own
bars per session (``bars_per_session``). ``too_few_days`` says in a sentence when the sessions cannot carry any
verdict, before anything is trained.

Folds never overlap in their test windows, and every test day lies after every training
day of its fold: ``tests/actors/jobs/evaluation/test_folds.py`` checks both on the indices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Fold:
    index: int
    train_start_day: int
    train_stop_day: int
    """Exclusive: the first purged day."""
    test_start_day: int
    test_stop_day: int
    """Exclusive."""
    embargo_stop_day: int
    """Exclusive end of the embargo after the test window."""

    def training_days(self) -> np.ndarray:
        """Every day before the purge: a walk-forward never trains after its window, so the embargo holds by construction."""
        return np.arange(self.train_start_day, self.train_stop_day)

    def test_days(self) -> np.ndarray:
        return np.arange(self.test_start_day, self.test_stop_day)


def walk_forward_folds(n_days: int, n_folds: int, *, purge_days: int = 1, embargo_days: int = 1,
                       min_train_days: int = 10) -> list[Fold]:
    """``n_folds`` consecutive test windows over the newest days, each trained on the days before it minus the purge."""
    if n_folds < 1:
        raise ValueError(f"n_folds must be >= 1, got {n_folds}")
    if purge_days < 0 or embargo_days < 0:
        raise ValueError("purge_days and embargo_days must be >= 0")
    test_days = (n_days - min_train_days - purge_days) // n_folds
    if test_days < 1:
        raise ValueError(
            f"{n_days} trading days cannot hold {min_train_days} training days, a purge of {purge_days} and {n_folds} "
            f"test windows of at least one day; use fewer folds or more days")
    first_test = n_days - n_folds * test_days
    folds = []
    for k in range(n_folds):
        start = first_test + k * test_days
        stop = start + test_days
        folds.append(Fold(k, 0, start - purge_days, start, stop, min(stop + embargo_days, n_days)))
    return folds


def purge_days_for(hindsight_bars: int, bars_per_day: int, max_holding_days: int = 1) -> int:
    """Days to purge before a test window: the longest holding time plus the hindsight horizon, in whole days."""
    return max_holding_days + int(np.ceil(max(hindsight_bars, 0) / max(bars_per_day, 1)))


MIN_TEST_DAYS_FOR_A_VERDICT = 20
"""Out-of-sample days below which no comparison is worth reading: the 95 % interval of a mean daily P&L is then about
as wide as the mean differences between the policy and its floors (tens of dollars a day against spreads of hundreds)."""
MIN_TRAIN_DAYS_FOR_A_VERDICT = 10
"""Training days below which neither the policy nor the regime HMM (actors/env/regime_model.py) has anything to learn from."""


def bars_per_session(session_starts: np.ndarray, n_bars: int) -> int:
    """The median number of bars in a session of the data (390 for regular-hours 1-minute bars, ~1,380 for Globex)."""
    lengths = np.diff(np.append(np.asarray(session_starts), n_bars))
    return int(np.median(lengths)) if len(lengths) else 0


def too_few_days(n_days: int, train_days: int, purge_days: int, n_folds: int) -> str | None:
    """A plain sentence when ``n_days`` sessions cannot give a verdict (too few test or training days), else None."""
    test_days = n_days - train_days - purge_days
    if test_days < MIN_TEST_DAYS_FOR_A_VERDICT or train_days < MIN_TRAIN_DAYS_FOR_A_VERDICT:
        return (f"too few days for any verdict: {n_days} trading sessions give {train_days} training day(s), a purge of "
                f"{purge_days} and {max(test_days, 0)} test day(s) in {n_folds} fold(s); a verdict needs at least "
                f"{MIN_TRAIN_DAYS_FOR_A_VERDICT} training and {MIN_TEST_DAYS_FOR_A_VERDICT} test days. Give a longer file "
                "(or several: --market a.csv b.csv)")
    return None
