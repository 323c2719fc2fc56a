"""The news floors in evaluate's table: what reading the news earns on each fold's test days (``--market news|news_null``).

The floors themselves are actors/common/news_floors.py's (a keyword rule on the event's words, flat around events, the
oracle of the surprise's sign), priced in hindsight $ an event by the run's own barrier (lora.hindsight_* and the
instrument's costs). Here they are restricted to the events each fold's test days make public, so they sit beside the
policy's out-of-sample figures, and turned into rows: $ an event, and $ a test day (the policy's contracts an event,
the events' trades may overlap) to set against the policy's $ a day.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from actors.common.hindsight import BarrierSpec
from actors.common.news_floors import news_floor_figures
from actors.jobs.evaluation.folds import Fold

FLOORS = ("keyword", "flat", "oracle")


def news_floor_rows(dataset, folds: Sequence[Fold], spec: BarrierSpec, contracts: int = 1) -> list[dict]:
    """One row per fold (its test days' events), then one over every fold's test days; [] for a market without news.
    ``contracts`` a trade (env.contracts_per_trade: the policy's size, so the $ a day sit beside its own)."""
    truth = getattr(dataset, "event_truth", None)
    events = tuple(getattr(dataset, "events", ()))
    if not events or truth is None or not folds:
        return []
    event_bar = np.asarray(truth["event_bar"], dtype=np.int64)
    if len(event_bar) != len(events):
        raise ValueError(f"{dataset.source}: {len(events)} events but {len(event_bar)} event bars in event_truth")
    spec = replace(spec, multiplier=spec.multiplier * contracts, cost_per_trade_usd=spec.cost_per_trade_usd * contracts)
    bars = pd.DataFrame({name: getattr(dataset, name) for name in ("open", "high", "low", "close")})
    day_bounds = np.append(dataset.session_starts, len(dataset.close))
    rows, every = [], np.zeros(len(events), dtype=bool)
    for fold in folds:
        inside = (event_bar >= day_bounds[fold.test_start_day]) & (event_bar < day_bounds[fold.test_stop_day])
        every |= inside
        rows.append(_row(f"fold {fold.index + 1}", fold.test_stop_day - fold.test_start_day, inside, events, truth, bars, spec))
    rows.append(_row("all test days", sum(f.test_stop_day - f.test_start_day for f in folds), every, events, truth, bars, spec))
    return rows


def _row(label: str, days: int, inside: np.ndarray, events: tuple, truth: dict, bars: pd.DataFrame, spec: BarrierSpec) -> dict:
    chosen = [event for event, keep in zip(events, inside) if keep]
    figures = news_floor_figures(chosen, np.asarray(truth["event_bar"])[inside], np.asarray(truth["surprise"])[inside],
                                 np.asarray(truth["text_sign"])[inside], bars, spec)
    per_day = {f"{name}_usd_per_day": figures[f"{name}_usd_per_event"] * figures["events"] / days if days else 0.0 for name in FLOORS}
    return {"rows": label, "test_days": days, **figures, **per_day}


def news_floor_lines(rows: list[dict]) -> list[str]:
    """A Markdown table of the rows (nothing for a market without news)."""
    if not rows:
        return []
    lines = ["| test days of | days | events priced | keyword $ an event | flat $ an event | oracle $ an event | "
             "keyword $ a day | oracle $ a day | keyword takes a side | keyword = surprise's sign |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['rows']} | {r['test_days']} | {r['events']:.0f} | {r['keyword_usd_per_event']:+,.1f} | "
                     f"{r['flat_usd_per_event']:+,.1f} | {r['oracle_usd_per_event']:+,.1f} | {r['keyword_usd_per_day']:+,.0f} | "
                     f"{r['oracle_usd_per_day']:+,.0f} | {r['keyword_sided_share']:.2f} | {r['keyword_accuracy_on_surprise']:.2f} |")
    return lines


NEWS_NOTE = ("News floors (actors/common/news_floors.py), hindsight $ of env.contracts_per_trade contracts entered at the open after each event "
             "its test days make public, closed by the run's barrier (lora.hindsight_*): the keyword rule on the words, flat "
             "around events, the oracle of the surprise's sign. $ a day: the events' sum over the test days (trades may overlap).")
