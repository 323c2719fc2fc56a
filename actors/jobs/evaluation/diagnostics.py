"""Why the policy does not learn, when it does not: per fold, how it trades and what it does where the edges are.

Per fold, over the seeds' policies at the last budget on the fold's test window (means over the seeds):

- trades a day, bars held, and dollars a day before and after costs (costs: the commissions the trades paid plus
  ``slippage_ticks`` x tick value a contract on both sides, what the env charges a market fill);
- at the two places the ``realistic`` market plants its edges (actors/common/market_stats_rules.py), what the
  policy's position is and what it earns there, beside what the rule that trades that edge earns on the same bars:

  - ``first30``: 15:29-15:58 ET (decided on the 15:29 close, out at the close) on days whose first half hour
    (prior close to 10:00) rose or fell; the rule holds that sign (Gao, Han, Li and Zhou 2018);
  - ``fade15``: the 10 bars after a 15-bar move beyond 2 sigma of the session's own one-bar returns so far; the rule
    holds the opposite side.

  ``with`` / ``against`` / ``flat`` are the shares of those bars on which the policy held the rule's side, the other
  side, or nothing; ``policy_usd`` and ``rule_usd`` are dollars per event on those bars, before costs (the rule's
  costs are the same few round trips whatever the policy does).

A policy's position on a bar is the side it held from that bar's close to the next one: a trade entered at bar
``entry_bar``'s open was decided on the close before it, as the rules decide on a close.
"""

from __future__ import annotations

import numpy as np

from actors.common.instruments import resolve_instrument
from actors.common.market_stats_rules import EXTENDED_MOVE_SIGMAS

FIRST30_BAR_MINUTE = 9 * 60 + 59  # the bar whose close is 10:00 ET
LAST_HALF_HOUR = (15 * 60 + 29, 15 * 60 + 58)  # rule positions held from the 15:29 close to the 15:59 close
FADE_LOOKBACK, FADE_HOLD = 15, 10


def edge_positions(close: np.ndarray, minute: np.ndarray, session: np.ndarray, start: int, stop: int) -> dict[str, np.ndarray]:
    """The two edge rules' positions (-1, 0, +1) on bars [start, stop), decided on each bar's close; whole sessions
    are read from the bars before ``start`` too (the prior close, the session's returns so far)."""
    positions = {name: np.zeros(stop - start) for name in ("first30", "fade15")}
    days = np.flatnonzero(np.diff(session[start:stop], prepend=session[start] - 1)) + start
    for first in days.tolist():
        day_start = first
        while day_start > 0 and session[day_start - 1] == session[first]:
            day_start -= 1
        day_stop = first
        while day_stop < len(session) and session[day_stop] == session[first]:
            day_stop += 1
        _first30(close, minute, day_start, day_stop, start, stop, positions["first30"])
        _fade(close, day_start, day_stop, start, stop, positions["fade15"])
    return positions


def _first30(close, minute, day_start, day_stop, start, stop, out) -> None:
    known = np.flatnonzero(minute[day_start:day_stop] == FIRST30_BAR_MINUTE)
    if day_start == 0 or not len(known):
        return
    side = np.sign(close[day_start + known[0]] - close[day_start - 1])
    window = np.flatnonzero((minute[day_start:day_stop] >= LAST_HALF_HOUR[0]) & (minute[day_start:day_stop] <= LAST_HALF_HOUR[1]))
    bars = day_start + window
    bars = bars[(bars >= start) & (bars < stop)]
    out[bars - start] = side


def _fade(close, day_start, day_stop, start, stop, out) -> None:
    closes = close[day_start:day_stop]
    one_bar = np.diff(np.log(closes), prepend=np.log(closes[0]))
    sigma = np.sqrt(np.cumsum(one_bar**2) / np.arange(1, len(closes) + 1))
    moved = np.full(len(closes), np.nan)
    moved[FADE_LOOKBACK:] = np.log(closes[FADE_LOOKBACK:] / closes[:-FADE_LOOKBACK])
    with np.errstate(invalid="ignore"):
        signal = np.where(np.abs(moved) > EXTENDED_MOVE_SIGMAS * sigma * np.sqrt(FADE_LOOKBACK), -np.sign(moved), 0.0)
    held = np.zeros(len(closes))
    for bar in np.flatnonzero(signal).tolist():  # a new signal restarts the hold
        held[bar : bar + FADE_HOLD] = signal[bar]
    held[-1] = 0.0  # flat at the session's last close
    bars = np.arange(day_start, day_stop)
    inside = (bars >= start) & (bars < stop)
    out[bars[inside] - start] = held[inside]


def policy_positions(trades, start: int, stop: int) -> np.ndarray:
    """The side held from each bar's close to the next, bars [start, stop), from the closed trades."""
    held = np.zeros(stop - start)
    for trade in trades:
        first, last = max(trade.entry_bar - 1, start), min(trade.exit_bar - 1, stop)
        if last > first:
            held[first - start : last - start] = trade.side
    return held


def _edge_row(rule: np.ndarray, policy: np.ndarray, usd_move: np.ndarray, events: int) -> dict:
    active = rule != 0
    bars = int(active.sum())
    share = (lambda mask: float((mask & active).sum() / bars)) if bars else (lambda mask: float("nan"))
    return {"events": events, "bars": bars,
            "with": share(policy == rule), "against": share(policy == -rule), "flat": share(policy == 0),
            "policy_usd": float((policy * usd_move)[active].sum() / events) if events else float("nan"),
            "rule_usd": float((rule * usd_move)[active].sum() / events) if events else float("nan")}


def _events(rule: np.ndarray) -> int:
    """Runs of the same non-zero side: one event each."""
    starts = (rule != 0) & (np.diff(rule, prepend=0.0) != 0)
    return int(starts.sum())


def fold_diagnostics(config, dataset, fold_index: int, start: int, stop: int, windows: list) -> dict:
    """One fold's block: ``windows`` are the seeds' WindowResults on test bars [start, stop) of ``dataset``."""
    instrument = resolve_instrument(config.instrument)
    contracts = config.env.contracts_per_trade
    usd_per_point = instrument.multiplier * contracts
    close = dataset.close
    move = np.zeros(stop - start)
    upper = min(stop, len(close) - 1)
    move[: upper - start] = (close[start + 1 : upper + 1] - close[start:upper]) * usd_per_point
    rules = edge_positions(close, dataset.features.minute_et.astype(np.int64), dataset.features.session_id, start, stop)
    slippage_usd = instrument.slippage_ticks * instrument.tick_value
    rows = []
    for window in windows:
        days = max(len(window.daily_pnl), 1)
        trades = window.trades
        costs = sum(t.commission_usd + 2 * slippage_usd * t.contracts for t in trades)
        after = float(window.daily_pnl.sum())
        held = policy_positions(trades, start, stop)
        rows.append({
            "trades_per_day": len(trades) / days,
            "bars_held": float(np.mean([t.bars_held for t in trades])) if trades else float("nan"),
            "usd_per_day_after_costs": after / days, "usd_per_day_before_costs": (after + costs) / days,
            "costs_per_day": costs / days,
            **{name: _edge_row(rule, held, move, _events(rule)) for name, rule in rules.items()},
        })
    return {"fold": fold_index, "seeds": len(rows), **_mean_rows(rows)}


def _mean_rows(rows: list[dict]) -> dict:
    if not rows:
        return {}
    merged = {}
    for key, value in rows[0].items():
        if isinstance(value, dict):
            merged[key] = _mean_rows([row[key] for row in rows])
        else:
            values = np.array([row[key] for row in rows], dtype=np.float64)
            merged[key] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
    return merged


def diagnostic_lines(blocks: list[dict]) -> list[str]:
    """evaluate's text: one line per fold, then one per edge and fold."""
    lines = []
    for block in blocks:
        if "trades_per_day" not in block:
            continue
        lines.append(f"fold {block['fold'] + 1}: {block['trades_per_day']:.1f} trades a day, {block['bars_held']:.1f} bars held, "
                     f"${block['usd_per_day_before_costs']:,.0f} a day before costs, ${block['usd_per_day_after_costs']:,.0f} after "
                     f"(costs ${block['costs_per_day']:,.0f})")
        for edge, label in (("first30", "15:30 after a first half hour up/down"), ("fade15", "after a 2-sigma 15-bar move")):
            row = block[edge]
            lines.append(f"  {label}: {row['events']:.0f} events, policy with the rule {_pct(row['with'])}, against "
                         f"{_pct(row['against'])}, flat {_pct(row['flat'])}; ${row['policy_usd']:,.1f} an event vs the rule's "
                         f"${row['rule_usd']:,.1f}")
    return lines


def _pct(value: float) -> str:
    return "n/a" if value != value else f"{100 * value:.0f}%"
