"""Seeded synthetic NQ-like 1-minute bars: the embedded default data, with a known answer.

Regular trading hours only (09:30-15:59 US/Eastern, 390 bars a session, on the CME equity futures
calendar's sessions: weekends and holidays skipped, half days traded in full; ``session_timestamps``), a U-shaped intraday volatility and volume curve and an overnight gap at each
open. Same seed, same bars. Every bar carries a hidden regime (``SyntheticMarket.regime``)
that is kept beside the bars for evaluation only (the oracle of actors/env/references.py);
it never reaches the bars' columns, the features or an observation.

Scenarios (``data.scenario``), each a ``MarketScenario`` whose parameters are the
planted effect sizes, so a harder market is one setting away:

``regimes`` (the default): regimes that switch every ``min_regime_bars``-``max_regime_bars``
bars (uniform, mean 165): trend up and trend down (25 % each) drift by
``trend_drift_sigmas`` = 0.2 of the bar's sigma per bar, range (35 %) pulls 2 % of the
distance to the level where the regime began back per bar, volatile (15 %) has 2.2x the
sigma and no drift. Inside a trend, the return over the last n bars has a
signal-to-noise ratio of 0.2 x sqrt(n): 1.55 at n = 60, so the sign of a 60-bar return
is right about 94 % of the time once a trend has run 60 bars (Phi(1.55)), and the trend
is certain at two standard errors after (2 / 0.2)^2 = 100 bars, within the mean regime.
Why 0.2: at the calibrated volatility a round trip of 3 MNQ ($7.7 of commission and
slippage) costs 0.27 of a bar's sigma in dollars, 4.5x what it cost at the old, too-wide
volatility, and at 0.12 the momentum rules netted about nothing (0-26 % of the oracle on
seeds 0 and 1, no risk stage); at 0.2 the 60-bar rule makes 39-43 % of the oracle
($300-340 of $760-800 a day), a trend a momentum rule can read but not exhaust. 0.12 and 0.15 stay one
setting away (harder: momentum at 0-26 % of the oracle). The 261 features hold returns and slopes up to 200 bars (momentum, SMA
slopes, VWAP distance), so a trend is readable from them after some 30-60 bars of it.
``tests/actors/common/test_synthetic.py``
recovers the drift per regime from the bars within its tolerance.

``null``: the same seed's twin with nothing to learn: the same regime sequence drives
only the volatility (volatile = 2.2x sigma) and the volume, trends have no drift and
ranges no pull. A random walk with the same volatility profile, gaps, fat tails and
volume: any edge found on it is noise.

``realistic`` and ``realistic_null``: a market calibrated on what traders exploit (intraday momentum,
hour-scale mean reversion, volatility clustering at realistic strength) and its edge-free twin; built
by actors/common/realistic.py (which builds on this module); ``realistic.generate_scenario`` makes any of
the four.

Calibration against real NQ (11 regular sessions, 2023-11-20 to 2023-12-04, price
~16,000; actors/common/README.md has the side-by-side table): the 1-minute return sigma
at midday is 0.025 % (``per_minute_sigma``), the first 15 minutes' bars are about 2.4x
as wide as midday ones (``open_volatility_boost``), and rare jumps (``jump_probability``,
``jump_sigmas``) give fat tails.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from actors.common.markets import MarketRequest, SyntheticMarket, register_pair  # SyntheticMarket: what every generator returns
from actors.common.trading_calendar import session_dates

BARS_PER_SESSION = 390
SESSION_OPEN_ET = "09:30"
REGIMES = ("trend_up", "trend_down", "range", "volatile")
REGIME_PROBABILITIES = (0.25, 0.25, 0.35, 0.15)
TREND_UP, TREND_DOWN, RANGE, VOLATILE = range(len(REGIMES))

_BASE_VOLUME = 900.0


@dataclass(frozen=True)
class MarketScenario:
    """A synthetic market's planted structure; every effect size is a field."""

    name: str = "regimes"
    trend_drift_sigmas: float = 0.2
    """Drift per bar in a trend regime, as a share of the bar's sigma (0 = no trends to find)."""
    range_pull: float = 0.02
    """Share of the distance to the range regime's starting level recovered per bar (0 = no mean reversion)."""
    min_regime_bars: int = 30
    max_regime_bars: int = 300
    """Regime lengths are uniform in [min_regime_bars, max_regime_bars)."""
    per_minute_sigma: float = 0.00018
    """1-minute log-return sigma at midday outside the volatile regime (real NQ: 0.025 %)."""
    volatile_sigma_factor: float = 2.2
    open_volatility_boost: float = 1.6
    """Extra sigma at the open, decaying with a 30-minute time constant (1.6: first 15 minutes ~2.4x midday)."""
    close_volatility_boost: float = 0.5
    overnight_sigma: float = 0.004
    jump_probability: float = 0.001
    """Chance per bar of a jump (news) of jump_sigmas times the bar's sigma, random sign."""
    jump_sigmas: float = 15.0

    def __post_init__(self) -> None:
        if not 1 <= self.min_regime_bars < self.max_regime_bars:
            raise ValueError(f"regime lengths need 1 <= min_regime_bars < max_regime_bars, got {self.min_regime_bars}, {self.max_regime_bars}")
        if self.per_minute_sigma <= 0:
            raise ValueError(f"per_minute_sigma must be > 0, got {self.per_minute_sigma}")

    @property
    def mean_regime_bars(self) -> float:
        return (self.min_regime_bars + self.max_regime_bars - 1) / 2.0


SCENARIOS: dict[str, MarketScenario] = {
    "regimes": MarketScenario(),
    "null": MarketScenario(name="null", trend_drift_sigmas=0.0, range_pull=0.0),
}




def scenario(name: str, **overrides: float) -> MarketScenario:
    """The named scenario, with any effect size overridden (``scenario("regimes", trend_drift_sigmas=0.06)``)."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; choose one of {tuple(SCENARIOS)} (every market: actors.common.markets)")
    return replace(SCENARIOS[name], **overrides) if overrides else SCENARIOS[name]


def configured_scenario(name: str, data: Any = None) -> MarketScenario:
    """``regimes`` or ``null`` with the [data] section's regime keys (``data``: DataConfig; None = the defaults):
    regime lengths for both, the trend drift for ``regimes`` only (``null`` has none to set)."""
    if data is None:
        return scenario(name)
    drift = data.trend_drift_sigmas if name == "regimes" else 0.0
    return scenario(name, trend_drift_sigmas=drift, min_regime_bars=data.min_regime_bars, max_regime_bars=data.max_regime_bars)


def session_timestamps(days: int, start_date: str) -> pd.DatetimeIndex:
    """UTC bar start times of ``days`` RTH sessions from ``start_date``: the CME equity futures calendar's sessions
    (weekends and exchange holidays skipped; a half day, e.g. 2024-07-04, is a full 390-bar session here: the
    generators shape every day as 390 bars). Past the calendar's range: CalendarError, one line from bin/run."""
    dates = session_dates(start_date, days)
    opens = (dates + pd.Timedelta(SESSION_OPEN_ET + ":00")).tz_localize("America/New_York")
    open_ns = opens.tz_convert("UTC").as_unit("ns").asi8.astype(np.int64)
    minute_ns = np.arange(BARS_PER_SESSION, dtype=np.int64) * 60_000_000_000
    stamps = (open_ns[:, None] + minute_ns[None, :]).ravel()
    return pd.DatetimeIndex(pd.to_datetime(stamps, unit="ns", utc=True), name="timestamp")


def _regime_per_bar(n_bars: int, rng: np.random.Generator, market: MarketScenario) -> np.ndarray:
    regime = np.empty(n_bars, dtype=np.int8)
    position = 0
    while position < n_bars:
        length = int(rng.integers(market.min_regime_bars, market.max_regime_bars))
        regime[position : position + length] = rng.choice(len(REGIMES), p=REGIME_PROBABILITIES)
        position += length
    return regime


def _intraday_curve(minute: np.ndarray, open_boost: float, close_boost: float) -> np.ndarray:
    return 1.0 + open_boost * np.exp(-minute / 30.0) + close_boost * np.exp(-(BARS_PER_SESSION - 1 - minute) / 30.0)


def _close_path(regime: np.ndarray, sigma: np.ndarray, shocks: np.ndarray, gaps: np.ndarray, start_price: float,
                market: MarketScenario) -> np.ndarray:
    """Log-price path; a loop because the range regime pulls towards an anchor (a recursion)."""
    n_bars = len(regime)
    log_price = np.empty(n_bars)
    level = float(np.log(start_price))
    anchor = level
    previous_regime = -1
    drift_sigmas, pull = market.trend_drift_sigmas, market.range_pull
    for t in range(n_bars):
        current = int(regime[t])
        if current != previous_regime:
            anchor = level
            previous_regime = current
        step_sigma = float(sigma[t])
        if current == TREND_UP:
            drift = drift_sigmas * step_sigma
        elif current == TREND_DOWN:
            drift = -drift_sigmas * step_sigma
        elif current == RANGE:
            drift = -pull * (level - anchor)
        else:
            drift = 0.0
        level += float(gaps[t]) + drift + step_sigma * float(shocks[t])
        log_price[t] = level
    return log_price


def generate_bars(days: int = 60, seed: int = 0, start_price: float = 18_000.0, start_date: str = "2024-01-02", tick_size: float = 0.25,
                  market: MarketScenario | str = "regimes") -> pd.DataFrame:
    """``days`` sessions of 1-minute OHLCV bars, indexed by UTC bar start time."""
    return generate_market(days, seed, start_price, start_date, tick_size, market).bars


def generate_market(days: int = 60, seed: int = 0, start_price: float = 18_000.0, start_date: str = "2024-01-02", tick_size: float = 0.25,
                    market: MarketScenario | str = "regimes") -> SyntheticMarket:
    """``days`` sessions of bars and their hidden regimes. The same seed gives every scenario the same
    regimes, shocks, gaps and volume: ``null`` is the ``regimes`` market of that seed with its edge removed.
    Any scenario, the realistic ones included: actors.common.realistic.generate_scenario."""
    if days < 1:
        raise ValueError(f"days must be >= 1, got {days}")
    market = scenario(market) if isinstance(market, str) else market
    rng = np.random.default_rng(seed)
    index = session_timestamps(days, start_date)
    n_bars = len(index)
    minute = np.tile(np.arange(BARS_PER_SESSION), days).astype(np.float64)
    session_start = minute == 0

    regime = _regime_per_bar(n_bars, rng, market)
    sigma = market.per_minute_sigma * _intraday_curve(minute, market.open_volatility_boost, market.close_volatility_boost)
    sigma = np.where(regime == VOLATILE, sigma * market.volatile_sigma_factor, sigma)
    # Fat tails: a normal scaled by a random variance (Student-t like, variance kept near 1), plus rare jumps.
    shocks = rng.standard_normal(n_bars) * np.sqrt(rng.gamma(4.0, 0.25, n_bars))
    jumps = (rng.random(n_bars) < market.jump_probability) * rng.choice((-1.0, 1.0), n_bars) * market.jump_sigmas
    shocks = shocks + jumps
    gaps = np.where(session_start, rng.normal(0.0, market.overnight_sigma, n_bars), 0.0)
    gaps[0] = 0.0
    close = np.exp(_close_path(regime, sigma, shocks, gaps, start_price, market))

    previous_close = np.concatenate(([start_price], close[:-1]))
    open_ = np.where(session_start, close / np.exp(sigma * shocks), previous_close * np.exp(rng.normal(0, 0.1, n_bars) * sigma))
    wick = np.abs(rng.standard_normal((2, n_bars))) * 0.6 * sigma * close
    high = np.maximum(open_, close) + wick[0]
    low = np.minimum(open_, close) - wick[1]

    def to_tick(values: np.ndarray) -> np.ndarray:
        return np.round(values / tick_size) * tick_size

    open_, close = to_tick(open_), to_tick(close)
    high = np.maximum(to_tick(high), np.maximum(open_, close))
    low = np.minimum(to_tick(low), np.minimum(open_, close))

    surprise = np.abs(shocks)
    volume = _BASE_VOLUME * _intraday_curve(minute, 2.5, 1.8) * rng.lognormal(0.0, 0.35, n_bars) * (1.0 + 0.3 * surprise)
    volume = np.where(regime == VOLATILE, volume * 1.6, volume)
    bars = pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": np.round(volume)}, index=index)
    return SyntheticMarket(bars, regime, market)


# ---------------------------------------------------------------------- the markets this module registers


def _bars(name: str, request: MarketRequest) -> SyntheticMarket:
    return generate_market(request.days, request.seed, request.start_price, request.start_date, request.tick_size,
                           configured_scenario(name, request.settings))


register_pair(_bars, calibration=("volatility, gaps, jumps and volume calibrated on 11 real NQ sessions (this module's "
                                  "docstring, actors/common/README.md); tests/actors/common/test_synthetic.py recovers the "
                                  "planted drift per regime"),
              market=("regimes", "planted trends and ranges, the trend drift one setting away (data.trend_drift_sigmas; the default)"),
              twin=("null", "the regimes market of the same seed with no drift and no pull: a random walk, nothing to learn"))
