"""Trading metrics per episode and per run (docs/architecture.md, environment facts); decision-loop figures are in actors/common/decisions.py.

Conventions:
- Sharpe and Sortino use per-bar returns of mark-to-market equity (change / previous
  equity), annualised by sqrt(BARS_PER_YEAR) with BARS_PER_YEAR = 252 sessions x 390
  one-minute RTH bars = 98,280. Zero when returns do not vary.
- Sortino's downside deviation is sqrt(mean(min(r, 0)^2)) over all bars.
- Profit factor = gross profit / gross loss of closed trades; PROFIT_FACTOR_CAP (actors/common/statistics.py) when
  there is profit and no loss (JSON has no infinity), 0 with no profit.
- Max drawdown is the largest fall of equity from its running peak, in dollars, and
  (separately) the largest such fall in percent of its peak.
- Apex violations = trailing-drawdown breaches (forced-flat exits are counted apart:
  they are the rule being enforced, not broken).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

import numpy as np

from actors.common.statistics import TRADING_DAYS_PER_YEAR, profit_factor, sharpe_ratio, sortino_ratio

BARS_PER_YEAR = TRADING_DAYS_PER_YEAR * 390


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator > 0 else 0.0


def equity_metrics(equity_curve: Sequence[float] | np.ndarray) -> dict[str, float]:
    equity = np.asarray(equity_curve, dtype=np.float64)
    if len(equity) < 2:
        return {"net_pnl_usd": 0.0, "return_pct": 0.0, "sharpe": 0.0, "sortino": 0.0, "max_drawdown_usd": 0.0, "max_drawdown_pct": 0.0}
    returns = np.diff(equity) / equity[:-1]
    peak = np.maximum.accumulate(equity)
    falls = peak - equity
    worst = int(np.argmax(falls))
    return {
        "net_pnl_usd": float(equity[-1] - equity[0]),
        "return_pct": float((equity[-1] / equity[0] - 1.0) * 100.0),
        # ddof=0: the training log's figure since its start (over thousands of bars the two agree to 0.1 %).
        "sharpe": sharpe_ratio(returns, BARS_PER_YEAR, ddof=0),
        "sortino": sortino_ratio(returns, BARS_PER_YEAR, min_periods=1),
        "max_drawdown_usd": float(falls[worst]),
        "max_drawdown_pct": float(np.max(falls / peak) * 100.0),
    }


def trade_metrics(trades: Sequence) -> dict[str, float]:
    """From closed trades (objects with pnl_usd, bars_held, exit_reason)."""
    pnls = np.array([trade.pnl_usd for trade in trades], dtype=np.float64)
    gross_profit = float(pnls[pnls > 0].sum()) if len(pnls) else 0.0
    gross_loss = float(-pnls[pnls < 0].sum()) if len(pnls) else 0.0
    return {
        "trades": float(len(pnls)),
        "win_rate": _ratio(float((pnls > 0).sum()), len(pnls)),
        "profit_factor": profit_factor(gross_profit, gross_loss),
        "avg_trade_usd": float(pnls.mean()) if len(pnls) else 0.0,
        "avg_bars_held": float(np.mean([trade.bars_held for trade in trades])) if len(pnls) else 0.0,
        "forced_flat_exits": float(sum(trade.exit_reason == "forced_flat" for trade in trades)),
    }


def episode_metrics(equity_curve: Sequence[float], trades: Sequence, apex_violations: int, episode_return: float) -> dict[str, float]:
    return {
        **equity_metrics(equity_curve),
        **trade_metrics(trades),
        "apex_violations": float(apex_violations),
        "episode_return": float(episode_return),
        "bars": float(len(equity_curve) - 1),
    }


class RunMetrics:
    """Episodes stitched into one run: equity changes chained, trades pooled."""

    def __init__(self, start_balance: float) -> None:
        self.start_balance = start_balance
        # 8 bytes a bar (a list of floats took ~56): a day of full-speed training stitches millions of bars.
        self.equity_curve: array[float] = array("d", [start_balance])
        self.trades: list = []
        self.episodes = 0
        self.apex_violations = 0
        self.episode_returns: list[float] = []

    def add_episode(self, equity_curve: Sequence[float], trades: Sequence, apex_violations: int, episode_return: float) -> None:
        changes = np.diff(np.asarray(equity_curve, dtype=np.float64))
        self.equity_curve.frombytes((self.equity_curve[-1] + np.cumsum(changes)).tobytes())
        self.trades.extend(trades)
        self.episodes += 1
        self.apex_violations += apex_violations
        self.episode_returns.append(float(episode_return))

    def summary(self) -> dict[str, float]:
        return {
            **equity_metrics(self.equity_curve),
            **trade_metrics(self.trades),
            "apex_violations": float(self.apex_violations),
            "episodes": float(self.episodes),
            "mean_episode_return": float(np.mean(self.episode_returns)) if self.episode_returns else 0.0,
            "bars": float(len(self.equity_curve) - 1),
        }
