"""The floor a user would pick instead of reinforcement learning: a gradient-boosted classifier on the same inputs.

Freqtrade's FreqAI, the tool a user reaches for first, trains LightGBM by default to predict the next bars' move
and trades its prediction past a threshold. This floor does the same inside each walk-forward fold:

- inputs: the observation's market columns of the bar (the 11 window features of bar t and the 28 extended ones,
  actors/env/features.py), what the policy reads minus its own position and account columns;
- target: the side of the next ``HORIZON_BARS`` bars (close[t + 30] above or below close[t], same session only;
  bars whose move is 0 are left out);
- fitted on the fold's training days less the last ``VALIDATION_SHARE`` of them, on at most ``MAX_TRAIN_BARS`` bars
  drawn with the fold's seed (fast enough for ``evaluate --quick``, and deterministic);
- traded long when P(up) >= the threshold, short when P(up) <= 1 - threshold, flat between: the threshold
  (``THRESHOLDS``) is the one with the best net P&L on those last training days (validation days, never the test
  window), played through the same env and costs as every floor, decisions alone as ``fit_floors`` chooses;
- tested frozen on the fold's test window through the same env, costs and risk rules as the other floors.

The model is scikit-learn's ``HistGradientBoostingClassifier``: the same histogram gradient boosting as LightGBM
(binned features, leaf-wise trees), and already installed and pinned (hmmlearn depends on scikit-learn;
constraints.txt); LightGBM is not in the environment, and adding a package for a floor was not worth a new pin.
It runs on one thread (threadpoolctl, installed with scikit-learn): evaluate's cells already fill the cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from actors.env.dataset import DataSplit
from actors.env.references import ReferencePolicy, toward

SUPERVISED = "supervised"
HORIZON_BARS = 30
"""The label's horizon: the side of close[t + 30] - close[t] (half an hour, the horizon of the intraday edges)."""
THRESHOLDS = (0.52, 0.55, 0.6, 0.65)
"""P(up) thresholds tried on the validation days (and 1 - threshold for short)."""
VALIDATION_SHARE = 0.25
"""The share of a fold's training days (its last ones) the threshold is chosen on; the model never sees them."""
MAX_TRAIN_BARS = 20_000
TREES, MAX_LEAF_NODES, LEARNING_RATE = 60, 15, 0.1
MIN_FIT_DAYS = 2


def inputs(split: DataSplit, bars: np.ndarray) -> np.ndarray:
    """The classifier's inputs at ``bars``: the bar's 11 window features and the 28 extended ones (float32)."""
    features = split.dataset.features
    return np.hstack([features.bar[bars], features.static[bars]])


def labels(split: DataSplit, bars: np.ndarray) -> np.ndarray:
    """+1 / -1 / 0: the side of the next HORIZON_BARS bars' close change; 0 where it is 0 or crosses the session end."""
    dataset = split.dataset
    ahead = bars + HORIZON_BARS
    inside = ahead < len(dataset)
    ahead = np.minimum(ahead, len(dataset) - 1)
    session = dataset.features.session_id
    same = inside & (session[ahead] == session[bars])
    return np.where(same, np.sign(dataset.close[ahead] - dataset.close[bars]), 0.0).astype(np.int8)


@dataclass(frozen=True)
class SupervisedChoice:
    """One fold's fitted classifier, the threshold chosen on its validation days, and what each threshold netted."""

    model: object = field(compare=False)
    """The fitted HistGradientBoostingClassifier (left out of ==: two fits are equal when they chose alike)."""
    threshold: float = THRESHOLDS[0]
    fit_days: tuple[int, int] = (0, 0)
    validation_days: tuple[int, int] = (0, 0)
    train_bars: int = 0
    nets: dict[float, float] = field(default_factory=dict)

    def params(self) -> dict[str, float | int]:
        return {"supervised_threshold": self.threshold, "supervised_horizon_bars": HORIZON_BARS,
                "supervised_train_bars": self.train_bars}

    def text(self) -> str:
        return (f"supervised P(up) >= {self.threshold:g} (fitted on {self.train_bars:,} bars of days {self.fit_days[0]}-"
                f"{self.fit_days[1] - 1}, threshold chosen on days {self.validation_days[0]}-{self.validation_days[1] - 1})")

    def policy(self) -> ReferencePolicy:
        """The classifier trading at the chosen threshold."""
        return _threshold_policy(self.model, self.threshold)


def _threshold_policy(model, threshold: float) -> ReferencePolicy:
    """Long at P(up) >= threshold, short at <= 1 - threshold, else flat; probabilities predicted a session's bars at a
    time (one call per 390 bars, not one per bar)."""
    cache: dict[int, float] = {}

    def decide(env) -> int:
        bar = env.bar
        if bar not in cache:
            split = env.split
            block = np.arange(bar, max(min(bar + 390, split.stop), bar + 1))
            with threadpool_limits(1):
                probabilities = model.predict_proba(inputs(split, block))[:, 1]
            cache.clear()
            cache.update(zip(block.tolist(), probabilities.tolist()))
        p_up = cache[bar]
        side = 1 if p_up >= threshold else (-1 if p_up <= 1.0 - threshold else 0)
        return toward(env, side)

    return decide


def _day_split(dataset, name: str, first_day: int, stop_day: int) -> DataSplit:
    """Trading days [first_day, stop_day) as a split (walkforward.day_split's, which imports this module's caller)."""
    starts = dataset.session_starts
    stop = int(starts[stop_day]) if stop_day < len(starts) else len(dataset)
    return DataSplit(dataset, name, max(int(starts[first_day]), dataset.warmup_bars), stop)


def fit_classifier(split: DataSplit, start: int, stop: int, seed: int):
    """A HistGradientBoostingClassifier on bars [start, stop) of ``split``'s data (up/down of the next bars), on at most
    MAX_TRAIN_BARS of them drawn with ``seed``; (model, bars used), or (None, 0) with fewer than two classes."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    bars = np.arange(start, stop - HORIZON_BARS)
    side = labels(split, bars)
    bars, side = bars[side != 0], side[side != 0]
    if len(bars) > MAX_TRAIN_BARS:
        keep = np.sort(np.random.default_rng(seed).choice(len(bars), MAX_TRAIN_BARS, replace=False))
        bars, side = bars[keep], side[keep]
    if len(np.unique(side)) < 2:
        return None, 0
    model = HistGradientBoostingClassifier(max_iter=TREES, max_leaf_nodes=MAX_LEAF_NODES, learning_rate=LEARNING_RATE,
                                           early_stopping=False, random_state=seed)
    with threadpool_limits(1):  # OpenMP on busy shared cores spins: 106 s for a fit that takes 1.8 s on one thread
        model.fit(inputs(split, bars), (side > 0).astype(np.int8))
    return model, len(bars)


def fit_supervised(config, train: DataSplit, train_days: tuple[int, int], seed: int) -> SupervisedChoice | None:
    """Fit on ``train``'s days less its last VALIDATION_SHARE, choose the threshold on those last days (decisions alone,
    costs paid, ties to the first); None when the training days are too few for both parts."""
    from actors.jobs.evaluation.chain import play_window

    dataset = train.dataset
    first_day, stop_day = train_days
    n_days = stop_day - first_day
    n_validation = max(1, int(round(n_days * VALIDATION_SHARE)))
    if n_days - n_validation < MIN_FIT_DAYS:
        return None
    split_day = stop_day - n_validation
    fit_split = _day_split(dataset, "supervised_fit", first_day, split_day)
    validation = _day_split(dataset, "supervised_validation", split_day, stop_day)
    model, used = fit_classifier(fit_split, fit_split.start, fit_split.stop, seed)
    if model is None:
        return None
    nets = {t: play_window(config, validation, _threshold_policy(model, t), risk=False).net_pnl for t in THRESHOLDS}
    return SupervisedChoice(model, max(nets, key=nets.__getitem__), (first_day, split_day), (split_day, stop_day), used, nets)

