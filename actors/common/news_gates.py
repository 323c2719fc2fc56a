"""Risk gates around events on the same test days: what standing aside is worth to an account, by who decides when.

A trader with no edge is kept in the market (one NQ contract, its side a seeded coin flip every ``HOLD_BARS`` bars,
flat at each session's end, costs paid at every change): the exposure a gate protects. Each gate flattens it for a
window and lets it re-enter after; every gate sees the same sides, days and prices (paired):

- ``none``: no gate;
- ``calendar``: the prop-firm blackout, flat from T-2 to T+2 minutes around each high-importance release (it knows
  the schedule, so it is flat BEFORE the release's bar; a headline it cannot see);
- ``keyword`` / ``oracle``: flat for ``GATE_MINUTES`` bars from the bar after the one that makes the event public
  (a reader acts after reading) when the floor's level (actors/common/news_risk.py tables fitted on the training
  days) is ELEVATED or more; ``oracle`` knows the event's tier and true size.

Per gate: net $ a day, the worst 5 % day, the maximum drawdown of the walk (all in $), and the share of bars flat
by the gate. ``python -m actors.common.news_gates --days 250 --seeds 3``.
"""

from __future__ import annotations

import numpy as np

from actors.common.news_risk import (
    DEFAULT_QUANTILES, ELEVATED, LevelTable, calendar_key, event_risk_labels, fit_thresholds, forward_range_atr, keyword_key,
    oracle_key,
)
from actors.common.synthetic import BARS_PER_SESSION

HOLD_BARS = 30
GATE_MINUTES = 15
BLACKOUT_MINUTES = 2
POINT_USD = 20.0
COST_PER_SIDE_USD = 2.25 + 5.0
"""NQ: $2.25 commission and a tick ($5) of slippage a side (assumed, as actors/common/news_floors.py)."""
GATES = ("none", "calendar", "keyword", "oracle")


def _sides(n_bars: int, rng: np.random.Generator) -> np.ndarray:
    """+1 / -1 per bar, a new coin every HOLD_BARS bars; 0 on each session's last bar (flat overnight)."""
    coins = rng.choice((-1.0, 1.0), n_bars // HOLD_BARS + 1)
    sides = np.repeat(coins, HOLD_BARS)[:n_bars]
    sides[BARS_PER_SESSION - 1::BARS_PER_SESSION] = 0.0
    return sides


def gate_masks(market, train_fraction: float = 0.5) -> dict[str, np.ndarray]:
    """Per gate, True on the bars it keeps the trader flat (the position held INTO each bar)."""
    n = len(market.bars)
    h, l, c = (market.bars[k].to_numpy(dtype=np.float64) for k in ("high", "low", "close"))
    split_bar = int(round(n // BARS_PER_SESSION * train_fraction)) * BARS_PER_SESSION
    labels = event_risk_labels(market, fit_thresholds(forward_range_atr(h, l, c, np.arange(1, split_bar)), DEFAULT_QUANTILES))
    train = (market.event_bar < split_bar) & (labels >= 0)
    events = list(market.events)
    masks = {name: np.zeros(n, dtype=bool) for name in GATES}
    for i, event in enumerate(events):
        if event.kind == "release" and event.importance == "high":
            bar = int(market.event_bar[i])
            masks["calendar"][max(bar - BLACKOUT_MINUTES, 0):bar + BLACKOUT_MINUTES + 1] = True
    for name, key in (("keyword", [keyword_key(e) for e in events]),
                      ("oracle", [oracle_key(e, z) for e, z in zip(events, market.surprise)])):
        table = LevelTable([key[i] for i in np.flatnonzero(train)], labels[train])
        for bar, level in zip(market.event_bar.tolist(), table.predict(key).tolist()):
            if level >= ELEVATED:
                masks[name][bar + 1:bar + 1 + GATE_MINUTES] = True
    return masks


def walk(closes: np.ndarray, opens: np.ndarray, sides: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """$ per bar of holding ``sides`` (entered at each bar's open, marked at its close), flat where ``flat``."""
    held = np.where(flat, 0.0, sides)
    previous = np.concatenate(([0.0], held[:-1]))
    gap = np.concatenate(([0.0], opens[1:] - closes[:-1]))  # the open's jump from the last close, for what was held
    pnl = previous * gap + held * (closes - opens)
    return pnl * POINT_USD - np.abs(held - previous) * COST_PER_SIDE_USD


def gate_figures(market, seed: int = 0, train_fraction: float = 0.5) -> dict[str, dict[str, float]]:
    """Per gate on the test days (the later ``1 - train_fraction``): $ a day, worst 5 % day, max drawdown, share flat."""
    n = len(market.bars)
    opens, closes = (market.bars[k].to_numpy(dtype=np.float64) for k in ("open", "close"))
    sides = _sides(n, np.random.default_rng([seed, 53, 7]))
    split_bar = int(round(n // BARS_PER_SESSION * train_fraction)) * BARS_PER_SESSION
    out = {}
    for name, flat in gate_masks(market, train_fraction).items():
        pnl = walk(closes, opens, sides, flat)[split_bar:]
        days = pnl.reshape(-1, BARS_PER_SESSION).sum(axis=1)
        equity = np.cumsum(pnl)
        out[name] = {"usd_per_day": float(days.mean()), "worst_5pct_day": float(np.quantile(days, 0.05)),
                     "max_drawdown": float(np.max(np.maximum.accumulate(np.concatenate(([0.0], equity)))[1:] - equity)),
                     "flat_share": float(flat[split_bar:].mean()), "days": float(len(days))}
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    from actors.common.news_market import generate_news_market

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=250)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    for name in ("news", "news_null"):
        runs = [gate_figures(generate_news_market(args.days, seed=seed, news=name), seed) for seed in range(args.seeds)]
        print(f"{name}: {args.seeds} seeds x {args.days} days, the later half tested; mean over seeds (per seed in brackets)")
        for gate in GATES:
            cells = []
            for key in ("usd_per_day", "worst_5pct_day", "max_drawdown", "flat_share"):
                values = [r[gate][key] for r in runs]
                cells.append(f"{key} {np.mean(values):,.3f} [" + ", ".join(f"{v:,.2f}" for v in values) + "]")
            print(f"  {gate:<9} " + "; ".join(cells))


if __name__ == "__main__":
    main()
