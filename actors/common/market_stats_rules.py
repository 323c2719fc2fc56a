"""What the simple rules traders use would earn on a market's bars, after costs: the edge a market offers.

Every rule is intraday (flat at each session's last close), decides on a bar's close and fills at that
close, paying ``RuleCosts.per_side_usd`` a contract on every side (commission plus the instrument's
slippage ticks: what the env charges a market fill, actors/env and actors/common/instruments.py).
Sessions must be whole (390 bars, 09:30-15:59 ET), as the synthetic markets are.

Rules (``RULES``; each gives a position of -1, 0 or +1 per bar, held over the next bar's return):

- ``intraday_momentum_open``: at 15:30 (the 15:29 bar's close) the sign of the day's return since
  the open, held to the close (Gao, Han, Li and Zhou 2018, the day's version).
- ``intraday_momentum_first30``: at 15:30 the sign of the first half hour's return (prior close to
  10:00), held to the close (their rule).
- ``momentum_60`` / ``momentum_15``: the sign of the last 60 (15) bars' return, every bar.
- ``reversion_60`` / ``reversion_15``: after an extended move (the last 60 (15) bars' return beyond
  2 sigma of such returns, sigma from the same session's returns so far), the opposite side for the
  next 30 (10) bars.

``rule_sharpe(frame, costs)`` gives each rule's net daily dollars and annualised Sharpe with its 95 %
interval (Lo 2002's iid standard error, sqrt((1 + SR^2 / 2) / days)).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from actors.common.instruments import InstrumentSpec
from actors.common.statistics import TRADING_DAYS_PER_YEAR, sharpe_interval
from actors.common.synthetic import BARS_PER_SESSION

EXTENDED_MOVE_SIGMAS = 2.0


@dataclass(frozen=True)
class RuleCosts:
    contracts: int
    multiplier: float
    per_side_usd: float
    """Dollars a contract pays on each side: commission plus slippage ticks x tick value."""

    @classmethod
    def of(cls, instrument: InstrumentSpec, contracts: int) -> RuleCosts:
        return cls(contracts, instrument.multiplier, instrument.commission_per_side + instrument.slippage_ticks * instrument.tick_value)


@dataclass(frozen=True)
class RuleResult:
    rule: str
    days: int
    mean_usd: float
    """Net dollars a day."""
    sharpe: float
    """Annualised (x sqrt(252)) Sharpe of the net daily dollars."""
    sharpe_low: float
    sharpe_high: float
    round_trips_a_day: float


def session_closes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(closes days x 390, the prior session's last close per day: the first day's own open)."""
    close = frame["close"].to_numpy(dtype=np.float64)
    if len(close) % BARS_PER_SESSION:
        raise ValueError(f"rules need whole sessions of {BARS_PER_SESSION} bars; got {len(close)} bars")
    closes = close.reshape(-1, BARS_PER_SESSION)
    prior = np.concatenate(([frame["open"].iloc[0]], closes[:-1, -1]))
    return closes, prior


def _hold_last_half_hour(side: np.ndarray) -> np.ndarray:
    position = np.zeros((len(side), BARS_PER_SESSION))
    position[:, BARS_PER_SESSION - 31 : BARS_PER_SESSION - 1] = side[:, None]  # decided on the 15:29 close, out at 15:59
    return position


def intraday_momentum_open(closes: np.ndarray, prior: np.ndarray) -> np.ndarray:
    return _hold_last_half_hour(np.sign(closes[:, BARS_PER_SESSION - 31] - closes[:, 0]))


def intraday_momentum_first30(closes: np.ndarray, prior: np.ndarray) -> np.ndarray:
    return _hold_last_half_hour(np.sign(closes[:, 29] - prior))


def _lagged_return(closes: np.ndarray, lookback: int) -> np.ndarray:
    moved = np.full(closes.shape, np.nan)
    moved[:, lookback:] = np.log(closes[:, lookback:] / closes[:, :-lookback])
    return moved


def momentum(lookback: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def rule(closes: np.ndarray, prior: np.ndarray) -> np.ndarray:
        return np.nan_to_num(np.sign(_lagged_return(closes, lookback)))

    return rule


def reversion(lookback: int, hold: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Fade a ``lookback``-bar move beyond EXTENDED_MOVE_SIGMAS for ``hold`` bars (a new signal restarts the hold)."""

    def rule(closes: np.ndarray, prior: np.ndarray) -> np.ndarray:
        one_bar = np.diff(np.log(closes), axis=1, prepend=np.log(closes[:, :1]))
        seen = np.arange(1, BARS_PER_SESSION + 1)[None, :]
        running_sigma = np.sqrt(np.cumsum(one_bar**2, axis=1) / seen)  # the session's own sigma so far (causal)
        moved = _lagged_return(closes, lookback)
        signal = np.where(np.abs(moved) > EXTENDED_MOVE_SIGMAS * running_sigma * np.sqrt(lookback), -np.sign(moved), np.nan)
        filled = pd.DataFrame(signal.T).ffill(limit=hold - 1).to_numpy().T
        return np.nan_to_num(filled)

    return rule


RULES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "intraday_momentum_open": intraday_momentum_open,
    "intraday_momentum_first30": intraday_momentum_first30,
    "momentum_60": momentum(60),
    "momentum_15": momentum(15),
    "reversion_60": reversion(60, 30),
    "reversion_15": reversion(15, 10),
}


def daily_pnl_usd(closes: np.ndarray, position: np.ndarray, costs: RuleCosts) -> tuple[np.ndarray, np.ndarray]:
    """(net dollars per day, round trips per day) of holding ``position[t]`` over bar t+1; flat after the last bar."""
    position = position.copy()
    position[:, -1] = 0.0
    points = np.sum(position[:, :-1] * np.diff(closes, axis=1), axis=1)
    sides = np.abs(np.diff(position, axis=1, prepend=0.0)).sum(axis=1)
    net = points * costs.multiplier * costs.contracts - sides * costs.per_side_usd * costs.contracts
    return net, sides / 2.0


def rule_daily_pnl(frame: pd.DataFrame, costs: RuleCosts, rules: dict[str, Callable] | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per rule: (net dollars per day, round trips per day)."""
    closes, prior = session_closes(frame)
    return {name: daily_pnl_usd(closes, rule(closes, prior), costs) for name, rule in (rules or RULES).items()}


def summarise(rule: str, net: np.ndarray, trips: np.ndarray) -> RuleResult:
    sharpe, low, high = sharpe_interval(net, TRADING_DAYS_PER_YEAR, no_spread=0.0)
    return RuleResult(rule, len(net), float(net.mean()), sharpe, low, high, float(trips.mean()))


def rule_sharpe(frame: pd.DataFrame, costs: RuleCosts, rules: dict[str, Callable] | None = None) -> list[RuleResult]:
    """Each rule's net dollars a day and annualised Sharpe with its interval on ``frame``."""
    return [summarise(name, net, trips) for name, (net, trips) in rule_daily_pnl(frame, costs, rules).items()]
