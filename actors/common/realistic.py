"""The ``realistic`` synthetic market: NQ-like 1-minute RTH bars whose edges are the kinds traders report, at their strength.

``generate_realistic(days, seed, ..., market="realistic")`` (or ``generate_scenario``, which makes any
scenario of synthetic.py too) returns a ``SyntheticMarket`` (bars, hidden
``regime``, scenario) like actors/common/synthetic.py does; ``realistic_null`` is its twin: the same
seed's volatility, gaps, jumps and volume, with every planted edge removed (the same shocks, summed
into a plain random walk of the same variance).

What is planted (``RealisticScenario`` fields are the effect sizes):

- volatility: the U-shaped intraday curve (``open_volatility_boost``, ``close_volatility_boost``); an
  opening burst that grows with the overnight gap (volatility clustering after the open,
  ``gap_open_boost``); a day-level volatility that persists across days (``daily_vol_persistence``,
  ``daily_vol_sigma``: clustering from day to day); jumps (``jump_probability`` x ``jump_sigmas``) and
  a volatility burst after each that decays over ``jump_vol_bars`` (clustering after news). Fat tails
  from a gamma variance mix. All of these are in ``realistic_null`` too: none of them says where price goes.
- short-term continuation: a share ``continuation_share`` of each bar's variance is an AR(1) of
  coefficient ``continuation_phi`` (a move carries on for a few minutes; VR(5), VR(15) above 1).
- hour-scale mean reversion after extended moves: a share ``reversion_share`` of each bar's variance
  is the change of a transient, an AR(1) level with a ``reversion_bars`` time constant that starts each
  session at 0: a move made of it is given back, so an extended move partly reverts (VR(60) below 1).
- intraday momentum (Gao, Han, Li and Zhou 2018): the last half hour (the 30 returns ending 15:31 ..
  15:59) drifts by ``intraday_momentum_beta`` x the first half hour's return (the prior close to
  10:00, overnight gap included), spread evenly.
- trend days: each session has a drift of ``trend_day_sigmas`` x a standard normal x the bar's sigma,
  all day (a day that starts up tends to go on up a little: the other half of intraday momentum).

Hidden ``regime`` (int8, an index into synthetic.REGIMES, for the oracle of actors/env/references.py
and evaluation only): the sign of the planted conditional drift of each bar, what the generator knows
and a trader can only estimate. TREND_UP / TREND_DOWN in the last half hour where the planted
intraday momentum (plus the day's trend) points up / down; elsewhere TREND_DOWN / TREND_UP where the
transient, as the bar starts, sits more than ``REGIME_TRANSIENT_SIGMAS`` of its own sigma above / below 0
(price is stretched and expected to revert) or where the day's trend drift alone is strong; VOLATILE where a
jump's burst still more than doubles sigma; RANGE otherwise. ``realistic_null`` keeps the
regime its twin's rules would state on its own path (the transient and trend unapplied): the
oracle reading it there earns nothing, as on ``null``.

Building on it (the ``news`` scenario does): ``realistic_pieces(days, seed, market)`` draws everything
random for a market, in a fixed order, and returns ``RealisticPieces`` (``sigma``: each bar's sigma,
``shocks``, ``gaps``, ``jumps``, ``transient``, ``trend``...; arrays days x 390).
``realistic_returns(pieces, market, extra_drift=..., extra_jumps=...)`` sums them into each bar's log
return, a caller's extra per-bar drift and jumps (log returns, days x 390) added before the intraday
momentum is computed (so a news move in the first half hour feeds it). ``build_bars(pieces, returns,
start_price, tick_size, start_date)`` makes the OHLCV frame. ``generate_realistic`` is those three.
Everything is vectorised over days x 390 (scipy.signal.lfilter for the AR(1) pieces): 500 days in
well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.signal import lfilter

from actors.common.markets import MarketRequest, SyntheticMarket, register_pair
from actors.common.synthetic import (
    BARS_PER_SESSION, RANGE, TREND_DOWN, TREND_UP, VOLATILE, MarketScenario, generate_market, session_timestamps,
)

FIRST_HALF_HOUR = 30
"""Returns of the first 30 bars (the first ends 09:31, the 30th 10:00)."""
LAST_HALF_HOUR = slice(BARS_PER_SESSION - 30, BARS_PER_SESSION)
"""The 30 bars starting 15:30 .. 15:59: their returns make the last half hour."""
REGIME_TRANSIENT_SIGMAS = 1.5
_BASE_VOLUME = 900.0


@dataclass(frozen=True)
class RealisticScenario:
    """The realistic market's planted structure; every effect size is a field (0 = not planted)."""

    name: str = "realistic"
    planted: bool = True
    """False: the null twin (continuation, reversion, momentum and trend days summed into a plain walk)."""
    per_minute_sigma: float = 0.00021
    """1-minute sigma at midday before the fat-tail mix and the day's level (real NQ: 0.025 % measured)."""
    open_volatility_boost: float = 1.3
    close_volatility_boost: float = 0.45
    gap_open_boost: float = 0.4
    """Extra opening boost per overnight sigma of the day's gap (a big gap, a wilder open)."""
    daily_vol_persistence: float = 0.8
    daily_vol_sigma: float = 0.15
    """The day's log volatility: AR(1) across days with this coefficient and innovation sigma."""
    overnight_sigma: float = 0.004
    jump_probability: float = 0.001
    jump_sigmas: float = 15.0
    jump_vol_boost: float = 1.5
    jump_vol_bars: float = 20.0
    continuation_share: float = 0.0
    continuation_phi: float = 0.5
    reversion_share: float = 0.0
    reversion_bars: float = 15.0
    intraday_momentum_beta: float = 0.0
    trend_day_sigmas: float = 0.0

    def __post_init__(self) -> None:
        if self.per_minute_sigma <= 0:
            raise ValueError(f"per_minute_sigma must be > 0, got {self.per_minute_sigma}")
        if not 0 <= self.continuation_share + self.reversion_share < 1:
            raise ValueError("continuation_share + reversion_share must be in [0, 1) (shares of a bar's variance), "
                             f"got {self.continuation_share} + {self.reversion_share}")
        if not 0 <= self.continuation_phi < 1 or self.reversion_bars <= 0:
            raise ValueError(f"continuation_phi must be in [0, 1) and reversion_bars > 0, got {self.continuation_phi}, {self.reversion_bars}")


REALISTIC = RealisticScenario(continuation_share=0.13, continuation_phi=0.65, reversion_share=0.70, reversion_bars=17.0,
                              intraday_momentum_beta=0.04, trend_day_sigmas=0.035)
"""The strengths, measured by ``bin/bench market`` (docs/experiments/43-realistic-market.md), against the textbook
variance ratios real NQ's bands were measured with: over 3 seeds x 500 sessions VR(5) 1.11-1.13, VR(15) 1.08-1.12,
VR(60) 0.85-0.94, consecutive 60-bar correlation -0.01-0.03, and the best simple rule nets an annualised Sharpe of ~1.2
after 3 MNQ's costs. The means sit inside every band but near two edges: VR(15) >= 1.07, VR(60) <= 0.90 and the
60-bar correlation >= -0.05 pull against each other (more continuation lifts VR(15) and VR(60) together; more
reversion lowers both and the correlation), so a single seed can fall just outside one of them."""
REALISTIC_SCENARIOS: dict[str, RealisticScenario] = {
    "realistic": REALISTIC,
    "realistic_null": replace(REALISTIC, name="realistic_null", planted=False),
}


@dataclass(frozen=True, eq=False)
class RealisticPieces:
    """Everything random about one realistic market (arrays days x 390 unless said), before prices."""

    sigma: np.ndarray
    """Each bar's sigma (log return): intraday curve x gap-scaled open x day level x jump burst."""
    shocks: np.ndarray
    """Standard normals x the fat-tail mix: the white part of each bar."""
    continuation_shocks: np.ndarray
    reversion_shocks: np.ndarray
    jumps: np.ndarray
    """Jump log returns (0 on most bars)."""
    jump_burst: np.ndarray
    """The factor by which a jump's aftermath multiplies sigma (1 away from jumps)."""
    gaps: np.ndarray
    """days: each open's log return from the prior close (0 on the first day)."""
    day_trend: np.ndarray
    """days: the day's trend drift in units of the bar's sigma (before trend_day_sigmas scales it)."""
    volume_noise: np.ndarray
    wick_noise: np.ndarray = field(repr=False)
    open_noise: np.ndarray = field(repr=False)


def _ar1(values: np.ndarray, phi: float) -> np.ndarray:
    """x_t = phi x_{t-1} + values_t along each session (starting at 0 each day)."""
    return lfilter([1.0], [1.0, -phi], values, axis=1)


def _intraday_curve(minute: np.ndarray, open_boost: np.ndarray | float, close_boost: float) -> np.ndarray:
    return 1.0 + open_boost * np.exp(-minute / 30.0) + close_boost * np.exp(-(BARS_PER_SESSION - 1 - minute) / 30.0)


def realistic_pieces(days: int, seed: int, market: RealisticScenario) -> RealisticPieces:
    """Draw every random piece of a ``days``-session market; the same seed gives every scenario the same draws."""
    if days < 1:
        raise ValueError(f"days must be >= 1, got {days}")
    rng = np.random.default_rng(seed)
    shape = (days, BARS_PER_SESSION)
    gaps = rng.normal(0.0, market.overnight_sigma, days)
    gaps[0] = 0.0
    day_level = np.exp(lfilter([1.0], [1.0, -market.daily_vol_persistence], rng.normal(0.0, market.daily_vol_sigma, days)))
    shocks = rng.standard_normal(shape) * np.sqrt(rng.gamma(4.0, 0.25, shape))
    continuation_shocks = rng.standard_normal(shape)
    reversion_shocks = rng.standard_normal(shape)
    jump_at = rng.random(shape) < market.jump_probability
    jump_sign = rng.choice((-1.0, 1.0), shape)
    day_trend = rng.standard_normal(days)
    volume_noise = rng.lognormal(0.0, 0.35, shape)
    wick_noise = np.abs(rng.standard_normal((2, *shape)))
    open_noise = rng.normal(0.0, 0.1, shape)

    minute = np.arange(BARS_PER_SESSION, dtype=np.float64)[None, :]
    gap_size = np.abs(gaps) / market.overnight_sigma
    open_boost = market.open_volatility_boost + market.gap_open_boost * (gap_size[:, None] - np.sqrt(2 / np.pi))
    curve = _intraday_curve(minute, np.maximum(open_boost, 0.0), market.close_volatility_boost)
    decay = np.exp(-1.0 / market.jump_vol_bars)
    jump_burst = 1.0 + market.jump_vol_boost * lfilter([0.0, 1.0], [1.0, -decay], jump_at.astype(np.float64), axis=1)
    sigma = market.per_minute_sigma * curve * day_level[:, None] * jump_burst
    jumps = jump_at * jump_sign * market.jump_sigmas * sigma
    return RealisticPieces(sigma, shocks, continuation_shocks, reversion_shocks, jumps, jump_burst, gaps, day_trend,
                           volume_noise, wick_noise, open_noise)


def _components(pieces: RealisticPieces, market: RealisticScenario) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(white, continuation, transient level) in units of the bar's sigma; the two planted ones unit-variance per bar."""
    phi = market.continuation_phi
    continuation = _ar1(pieces.continuation_shocks * np.sqrt(1 - phi**2), phi)
    keep = np.exp(-1.0 / market.reversion_bars)
    # The transient's change has unit variance when its level is an AR(1) with innovations scaled by sqrt((1 + keep) / 2).
    transient = _ar1(pieces.reversion_shocks * np.sqrt((1 + keep) / 2), keep)
    return pieces.shocks, continuation, transient


def realistic_returns(pieces: RealisticPieces, market: RealisticScenario, extra_drift: np.ndarray | None = None,
                      extra_jumps: np.ndarray | None = None) -> np.ndarray:
    """Each bar's log return (days x 390; bar 0's is its move from the open's gap). ``extra_drift`` and
    ``extra_jumps`` (log returns per bar, a caller's news) are added before the intraday momentum reads the first half hour."""
    white, continuation, transient = _components(pieces, market)
    a_c, a_r = market.continuation_share, market.reversion_share
    sigma = pieces.sigma
    if market.planted:
        change = np.diff(transient, axis=1, prepend=0.0)
        unit = np.sqrt(1 - a_c - a_r) * white + np.sqrt(a_c) * continuation + np.sqrt(a_r) * change
        returns = sigma * unit + market.trend_day_sigmas * pieces.day_trend[:, None] * sigma
    else:
        # The same draws summed into a walk of the same variance: white and planted shocks, no memory, no drift.
        unit = np.sqrt(1 - a_c - a_r) * white + np.sqrt(a_c) * pieces.continuation_shocks + np.sqrt(a_r) * pieces.reversion_shocks
        returns = sigma * unit
    returns = returns + pieces.jumps
    if extra_drift is not None:
        returns = returns + extra_drift
    if extra_jumps is not None:
        returns = returns + extra_jumps
    if market.planted and market.intraday_momentum_beta:
        returns[:, LAST_HALF_HOUR] += market.intraday_momentum_beta * first_half_hour_return(pieces, returns)[:, None] / 30.0
    return returns


def first_half_hour_return(pieces: RealisticPieces, returns: np.ndarray) -> np.ndarray:
    """Per day: the prior close to 10:00 (the gap and the first 30 bars' returns; bar 0's return is from its open)."""
    return pieces.gaps + returns[:, :FIRST_HALF_HOUR].sum(axis=1)


def hidden_regime(pieces: RealisticPieces, market: RealisticScenario, returns: np.ndarray) -> np.ndarray:
    """The sign of each bar's planted conditional drift as REGIMES indices (see the module docstring)."""
    _, _, transient = _components(pieces, market)
    keep = np.exp(-1.0 / market.reversion_bars)
    transient_sigma = np.sqrt((1 + keep) / 2 / (1 - keep**2))
    regime = np.full(returns.shape, RANGE, dtype=np.int8)
    regime[pieces.jump_burst > 2.0] = VOLATILE
    if market.reversion_share > 0:
        before = np.concatenate([np.zeros((len(transient), 1)), transient[:, :-1]], axis=1)  # the state a bar starts from
        stretched = before / transient_sigma
        regime[stretched > REGIME_TRANSIENT_SIGMAS] = TREND_DOWN
        regime[stretched < -REGIME_TRANSIENT_SIGMAS] = TREND_UP
    if market.trend_day_sigmas > 0:
        strong_day = np.abs(pieces.day_trend) > 2.0
        day_side = np.where(pieces.day_trend > 0, TREND_UP, TREND_DOWN).astype(np.int8)
        regime = np.where(strong_day[:, None] & (regime == RANGE), day_side[:, None], regime)
    last = (market.intraday_momentum_beta * first_half_hour_return(pieces, returns) / 30.0
            + market.trend_day_sigmas * pieces.day_trend * pieces.sigma[:, -1])
    regime[:, LAST_HALF_HOUR] = np.where(last > 0, TREND_UP, TREND_DOWN)[:, None]
    return regime.ravel()


def build_bars(pieces: RealisticPieces, returns: np.ndarray, start_price: float = 18_000.0, tick_size: float = 0.25,
               start_date: str = "2024-01-02") -> pd.DataFrame:
    """OHLCV bars (UTC index) from each bar's log return; bar 0's open sits the day's gap from the prior close."""
    days = returns.shape[0]
    steps = np.concatenate([pieces.gaps[:, None], returns], axis=1).ravel()
    log_path = np.log(start_price) + np.cumsum(steps)
    log_path = log_path.reshape(days, BARS_PER_SESSION + 1)
    session_open, close = np.exp(log_path[:, 0]), np.exp(log_path[:, 1:])
    previous_close = np.concatenate([session_open[:, None], close[:, :-1]], axis=1)
    sigma = pieces.sigma
    open_ = previous_close * np.exp(pieces.open_noise * sigma)
    open_[:, 0] = session_open
    wick = pieces.wick_noise * 0.6 * sigma * close
    high = np.maximum(open_, close) + wick[0]
    low = np.minimum(open_, close) - wick[1]

    def to_tick(values: np.ndarray) -> np.ndarray:
        return np.round(values.ravel() / tick_size) * tick_size

    open_, close = to_tick(open_), to_tick(close)
    high = np.maximum(to_tick(high), np.maximum(open_, close))
    low = np.minimum(to_tick(low), np.minimum(open_, close))
    surprise = np.abs(pieces.shocks) + np.abs(pieces.jumps) / sigma  # the draws, not the returns: the null twin trades the same volume
    minute = np.arange(BARS_PER_SESSION, dtype=np.float64)[None, :]
    volume = _BASE_VOLUME * _intraday_curve(minute, 2.5, 1.8) * pieces.volume_noise * (1.0 + 0.3 * np.minimum(surprise, 20.0))
    volume = volume * np.sqrt(pieces.jump_burst)
    index = session_timestamps(days, start_date)
    return pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": np.round(volume.ravel())}, index=index)


def realistic_scenario(name: str, **overrides: float) -> RealisticScenario:
    if name not in REALISTIC_SCENARIOS:
        raise ValueError(f"unknown realistic scenario {name!r}; choose one of {tuple(REALISTIC_SCENARIOS)}")
    return replace(REALISTIC_SCENARIOS[name], **overrides) if overrides else REALISTIC_SCENARIOS[name]


def generate_realistic(days: int = 60, seed: int = 0, start_price: float = 18_000.0, start_date: str = "2024-01-02",
                       tick_size: float = 0.25, market: RealisticScenario | str = "realistic") -> SyntheticMarket:
    """``days`` sessions of the realistic market (or its null twin) and the hidden regime of each bar."""
    market = realistic_scenario(market) if isinstance(market, str) else market
    pieces = realistic_pieces(days, seed, market)
    returns = realistic_returns(pieces, market)
    bars = build_bars(pieces, returns, start_price, tick_size, start_date)
    return SyntheticMarket(bars, hidden_regime(pieces, market, returns), market)


def generate_scenario(days: int = 60, seed: int = 0, start_price: float = 18_000.0, start_date: str = "2024-01-02",
                      tick_size: float = 0.25, market: MarketScenario | RealisticScenario | str = "regimes") -> SyntheticMarket:
    """Any synthetic scenario by name or object: realistic ones here, regimes and null by synthetic.generate_market
    (here because this module builds on synthetic.py, which must not import it back)."""
    if isinstance(market, RealisticScenario) or market in REALISTIC_SCENARIOS:
        return generate_realistic(days, seed, start_price, start_date, tick_size, market)  # type: ignore[arg-type]
    return generate_market(days, seed, start_price, start_date, tick_size, market)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the markets this module registers


def _bars(name: str, request: MarketRequest) -> SyntheticMarket:
    return generate_realistic(request.days, request.seed, request.start_price, request.start_date, request.tick_size, name)


register_pair(_bars, calibration=("REALISTIC's strengths measured by bin/bench market against real NQ's variance-ratio bands "
                                  "(docs/experiments/43-realistic-market.md); tests/actors/common/test_realistic.py holds them "
                                  "in the bands"),
              market=("realistic", "intraday momentum, hour-scale reversion and volatility clustering at the strength traders report"),
              twin=("realistic_null", "realistic's twin: the same volatility, gaps, jumps and volume, every edge removed"))
