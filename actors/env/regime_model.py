"""The market-regime belief: a Gaussian hidden-Markov model fitted on the training days of the loaded market.

Each bar gives the model two causal numbers over its trailing 20 bars (``RegimeInputs``): the close's change and the
mean high-low range, both in units of ATR(14), then standardised by their mean and spread over the training days. ``fit_regime_model``
fits a Gaussian HMM (hmmlearn, EM) on the training days only, one sequence per session (a session's first 20 bars
and bars without a usable ATR carry no evidence: the overnight gap is not a trend). The states are sorted by
their mean change, so state 0 is the most bearish; ``describe`` prints what each looks like.

The feature is what the model expects of the next bar's change, given bars <= t: with the filtered state
probabilities p_t (the forward recursion, Hamilton 1989; never hmmlearn's ``predict_proba``, which smooths
with the backward pass and so reads later bars), q = p_t A, belief = sum_j q_j mu_j / max_j |mu_j|, in
[-1, 1]: +1 is "surely in the most bullish state". The batch features and the stream share the one
``RegimeBelief`` class, so they agree bit for bit.

Nothing here knows the synthetic generator: the constants the old filter (regime_filter.py) took from it
(the trend drift, the volatile scale, the hazard, the first scale) are now the fitted model's parameters.
"""

from __future__ import annotations

import json
import math
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

INPUT_BARS = 20
"""The trailing window of the inputs: one bar's change is mostly noise (a 1-bar fit found 1-2-bar volatility states
and no trend on the synthetic market); 20 bars' change shows a drift."""
_SQRT_INPUT_BARS = math.sqrt(INPUT_BARS)
N_STATES = 4
"""Hidden states: enough for up, down, quiet and volatile, if the market has them."""
MAX_FIT_BARS = 60_000
"""The fit reads at most this many evidence bars, the newest training ones (~150 sessions of regular hours; the EM took ~1 s)."""
MIN_FIT_BARS = 2_000
"""Below this many evidence bars the fit is not tried: the belief is 0 (``RegimeModel.uninformative``)."""
FIT_ITERATIONS = 20
MAX_EVIDENCE = 6.0
"""A standardised input is clipped to +-6 before it is weighed: one jump does not make a regime."""
STAY_PROBABILITY = 0.99
"""The EM's starting transition matrix (sticky); the fit moves it."""

BELIEF_FOR_A_TREND = 0.5
"""The context's ``trend`` word (what the LLM's prompt says) is "up" above this belief, "down" below its negative."""


@dataclass(frozen=True)
class RegimeModel:
    """A fitted HMM's parameters and the standardisation of its inputs (plain lists: JSON in the checkpoint)."""

    input_mean: tuple[float, float]
    """Mean of the two inputs (``RegimeInputs``: 20-bar change in ATR * sqrt(20), mean range in ATR) over the training days' evidence bars."""
    input_std: tuple[float, float]
    start: tuple[float, ...]
    transition: tuple[tuple[float, ...], ...]
    means: tuple[tuple[float, float], ...]
    """Per state: mean standardised (change, range), states sorted by mean change."""
    variances: tuple[tuple[float, float], ...]
    fit_bars: int = 0
    """Evidence bars the fit read (0: uninformative)."""
    log_likelihood: float = 0.0

    @classmethod
    def uninformative(cls) -> RegimeModel:
        """One state of mean 0: the belief is always 0 (too few training bars to fit anything)."""
        return cls((0.0, 1.0), (1.0, 1.0), (1.0,), ((1.0,),), ((0.0, 0.0),), ((1.0, 1.0),))

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: dict) -> RegimeModel:
        tuples = lambda rows: tuple(tuple(float(x) for x in row) for row in rows)  # noqa: E731
        return cls(
            input_mean=tuple(float(x) for x in data["input_mean"]), input_std=tuple(float(x) for x in data["input_std"]),
            start=tuple(float(x) for x in data["start"]), transition=tuples(data["transition"]), means=tuples(data["means"]),
            variances=tuples(data["variances"]), fit_bars=int(data.get("fit_bars", 0)), log_likelihood=float(data.get("log_likelihood", 0.0)),
        )

    def describe(self) -> list[str]:
        """One line per state: its share of the training bars at rest, mean change and range, and how long it lasts."""
        if self.fit_bars == 0:
            return ["regime model: not fitted (too few training bars): the belief is 0"]
        stationary = _stationary(np.array(self.transition))
        lines = [f"regime model: {len(self.start)}-state Gaussian HMM on {self.fit_bars} training bars (log-likelihood {self.log_likelihood:.0f})"]
        for k, ((change, spread), stay) in enumerate(zip(self.means, np.diag(np.array(self.transition)))):
            raw_change = change * self.input_std[0] + self.input_mean[0]
            raw_range = spread * self.input_std[1] + self.input_mean[1]
            lines.append(
                f"  state {k}: {stationary[k]:5.1%} of bars, change {raw_change:+.3f} ATR ({change:+.3f} sd), "
                f"range {raw_range:.2f} ATR ({spread:+.2f} sd), lasts {1.0 / max(1.0 - stay, 1e-9):.0f} bars")
        return lines


MODEL_FILE_NAME = "regime_model.json"
"""Written by the env actor into <run_dir>/checkpoints/, beside the policy checkpoints trained on its belief."""


def save_regime_model(directory: Path, model: RegimeModel) -> Path:
    """``model`` as <directory>/regime_model.json (atomically: a tmp file and os.replace)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / MODEL_FILE_NAME
    temp = directory / f".{MODEL_FILE_NAME}.tmp-{os.getpid()}"
    temp.write_text(json.dumps(model.to_dict(), indent=1))
    os.replace(temp, path)
    return path


def record_regime_model(log, model: RegimeModel | None, save_to: Path | None) -> list[str]:
    """Log what each state of the model behind market_regime looks like and, when training (``save_to``: the run's
    checkpoints folder), save it beside the policy checkpoints; the lines, for the run's report notes."""
    if model is None:
        return []
    lines = model.describe()
    log.info("regime_model", fit_bars=model.fit_bars, description=lines[0], states=lines[1:])
    if save_to is not None:
        save_regime_model(save_to, model)
    return lines


def load_regime_model_beside(checkpoint: Path | str) -> RegimeModel | None:
    """The regime model saved beside a policy checkpoint file (or in a checkpoints folder); None when there is none."""
    location = Path(checkpoint)
    path = (location if location.is_dir() else location.parent) / MODEL_FILE_NAME
    return read_regime_model(path) if path.is_file() else None


def read_regime_model(path: Path | str) -> RegimeModel:
    """A saved regime model (``save_regime_model``'s JSON); a missing or broken file raises ValueError naming it."""
    path = Path(path)
    try:
        return RegimeModel.from_dict(json.loads(path.read_text()))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such regime model file") from None
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a regime model ({error})") from error


def _stationary(transition: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eig(transition.T)
    vector = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
    return vector / vector.sum()


class RegimeInputs:
    """The model's two inputs at a bar, from the bars of its session so far (trailing windows: causal).

    x0 = the close's change over the last ``INPUT_BARS`` bars / (ATR * sqrt(INPUT_BARS)), x1 = the mean high-low range of
    those bars, each in its own bar's ATR. The windows restart each session (the overnight gap is no evidence), so
    a session's first ``INPUT_BARS`` bars carry none. Plain floats: the fit, the batch belief and the stream all read
    these numbers from this one class."""

    def __init__(self) -> None:
        self._closes: deque[float] = deque(maxlen=INPUT_BARS + 1)
        self._ranges: deque[float] = deque(maxlen=INPUT_BARS)

    def push(self, close: float, high_low: float, atr: float, new_session: bool) -> tuple[float, float] | None:
        """(x0, x1) after this bar, or None when it carries no evidence."""
        if new_session:
            self._closes.clear()
            self._ranges.clear()
        usable = atr > 0.0 and math.isfinite(atr) and math.isfinite(close) and math.isfinite(high_low)
        if not usable:  # a bar without a usable ATR breaks the windows: start again after it
            self._closes.clear()
            self._ranges.clear()
            return None
        self._closes.append(close)
        self._ranges.append(high_low / atr)
        if len(self._closes) <= INPUT_BARS:
            return None
        return (close - self._closes[0]) / (atr * _SQRT_INPUT_BARS), sum(self._ranges) / INPUT_BARS


def regime_inputs(close: np.ndarray, high_low: np.ndarray, atr: np.ndarray, session: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x [N, 2], evidence [N] bool): ``RegimeInputs`` over every bar; x is NaN where a bar carries no evidence."""
    inputs = RegimeInputs()
    x = np.full((len(close), 2), np.nan)
    rows = zip(close.tolist(), high_low.tolist(), atr.tolist(), _new_sessions(session).tolist())
    for t, (c, r, a, s) in enumerate(rows):
        pair = inputs.push(c, r, a, s)
        if pair is not None:
            x[t] = pair
    return x, ~np.isnan(x[:, 0])


def _new_sessions(session: np.ndarray) -> np.ndarray:
    new_session = np.ones(len(session), dtype=bool)
    new_session[1:] = session[1:] != session[:-1]
    return new_session


def fit_regime_model(close: np.ndarray, high_low: np.ndarray, atr: np.ndarray, session: np.ndarray, seed: int = 0) -> RegimeModel:
    """The HMM of the given bars (the training days only: the caller cuts them), or ``uninformative`` when too few."""
    from hmmlearn.hmm import GaussianHMM  # imported here: only a fit needs it, not the stream

    x, evidence = regime_inputs(close, high_low, atr, session)
    rows = np.flatnonzero(evidence)[-MAX_FIT_BARS:]
    if len(rows) < MIN_FIT_BARS:
        return RegimeModel.uninformative()
    mean, std = x[rows].mean(axis=0), x[rows].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    z = np.clip((x[rows] - mean) / std, -MAX_EVIDENCE, MAX_EVIDENCE)
    # One sequence per run of consecutive evidence bars (a session after its first INPUT_BARS bars).
    breaks = np.flatnonzero(np.diff(rows) != 1) + 1
    lengths = np.diff(np.concatenate(([0], breaks, [len(rows)])))
    # Started from fixed means, not hmmlearn's k-means (which took ~18 s on 2 busy cores, past the actors' 30 s start-up
    # grace): a falling, a rising, a quiet and a wide state, each a quantile of the training days' own inputs.
    hmm = GaussianHMM(n_components=N_STATES, covariance_type="diag", n_iter=FIT_ITERATIONS, random_state=seed, init_params="",
                      params="stmc", implementation="scaling")
    hmm.startprob_ = np.full(N_STATES, 1.0 / N_STATES)
    off_diagonal = (1.0 - STAY_PROBABILITY) / (N_STATES - 1)
    hmm.transmat_ = np.full((N_STATES, N_STATES), off_diagonal) + np.eye(N_STATES) * (STAY_PROBABILITY - off_diagonal)
    low, high = np.quantile(z, [0.15, 0.85], axis=0)
    hmm.means_ = np.array([[low[0], 0.0], [high[0], 0.0], [0.0, low[1]], [0.0, high[1]]])
    hmm.covars_ = np.full((N_STATES, 2), 0.5)
    hmm.fit(z, lengths)
    order = np.argsort(hmm.means_[:, 0])
    variances = np.array([np.diag(c) for c in hmm.covars_])[order]
    return RegimeModel(
        input_mean=(float(mean[0]), float(mean[1])), input_std=(float(std[0]), float(std[1])),
        start=tuple(hmm.startprob_[order].tolist()),
        transition=tuple(tuple(row) for row in hmm.transmat_[np.ix_(order, order)].tolist()),
        means=tuple(tuple(row) for row in hmm.means_[order].tolist()),
        variances=tuple(tuple(row) for row in variances.tolist()),
        fit_bars=len(rows), log_likelihood=float(hmm.score(z, lengths)),
    )


class RegimeBelief:
    """The forward (filtering) recursion of a ``RegimeModel``, one bar at a time: bar t uses bars <= t only.

    Plain Python floats and ``math`` on purpose: the batch features and the stream call this same code, which
    keeps them identical bit for bit (numpy's vector exp may differ from its scalar one in the last bit)."""

    def __init__(self, model: RegimeModel) -> None:
        self._inputs = RegimeInputs()
        self._transition = [list(row) for row in model.transition]
        self._mean_in, self._std_in = model.input_mean, model.input_std
        self._means = [list(row) for row in model.means]
        self._inverse_variances = [[1.0 / v for v in row] for row in model.variances]
        self._log_norms = [-0.5 * sum(math.log(v) for v in row) for row in model.variances]
        scale = max(abs(row[0]) for row in model.means)
        self._change_weights = [row[0] / scale if scale > 0 else 0.0 for row in model.means]
        self._states = range(len(model.start))
        self._probabilities = list(model.start)

    def push(self, close: float, high_low: float, atr: float, new_session: bool) -> float:
        """The belief after a bar (its ``close``, its ``high_low`` range, its ``atr``; ``new_session`` at a session's first).

        A bar without evidence (``RegimeInputs``) only moves the state probabilities one step through the
        transition matrix."""
        states, transition, previous = self._states, self._transition, self._probabilities
        predicted = [sum(previous[i] * transition[i][j] for i in states) for j in states]
        pair = self._inputs.push(close, high_low, atr, new_session)
        if pair is not None:
            z0 = min(max((pair[0] - self._mean_in[0]) / self._std_in[0], -MAX_EVIDENCE), MAX_EVIDENCE)
            z1 = min(max((pair[1] - self._mean_in[1]) / self._std_in[1], -MAX_EVIDENCE), MAX_EVIDENCE)
            logs = [self._log_norms[k] - 0.5 * ((z0 - self._means[k][0]) ** 2 * self._inverse_variances[k][0]
                                                + (z1 - self._means[k][1]) ** 2 * self._inverse_variances[k][1]) for k in states]
            top = max(logs)
            predicted = [p * math.exp(log - top) for p, log in zip(predicted, logs)]
        total = sum(predicted)
        self._probabilities = [p / total for p in predicted] if total > 0 else list(predicted)
        ahead = [sum(self._probabilities[i] * transition[i][j] for i in states) for j in states]
        return sum(q * w for q, w in zip(ahead, self._change_weights))

    @property
    def probabilities(self) -> list[float]:
        """The filtered state probabilities after the last bar."""
        return list(self._probabilities)


def regime_belief(close: np.ndarray, high_low: np.ndarray, atr: np.ndarray, session: np.ndarray, model: RegimeModel) -> np.ndarray:
    """``RegimeBelief`` over every bar at once (the batch features): float64 [N] in [-1, 1]."""
    belief = RegimeBelief(model)
    rows = zip(close.tolist(), high_low.tolist(), atr.tolist(), _new_sessions(session).tolist())
    return np.array([belief.push(c, r, a, s) for c, r, a, s in rows], dtype=np.float64)


def trend_of(belief: float) -> int:
    """+1 up, -1 down, 0 sideways: the context's trend (``BELIEF_FOR_A_TREND``)."""
    return 1 if belief > BELIEF_FOR_A_TREND else (-1 if belief < -BELIEF_FOR_A_TREND else 0)


def trends_of(belief: np.ndarray) -> np.ndarray:
    """``trend_of`` for every bar."""
    return np.where(belief > BELIEF_FOR_A_TREND, 1, np.where(belief < -BELIEF_FOR_A_TREND, -1, 0))
