"""The offline gates around events (actors/common/news_gates.py): the calendar blackout is flat from T-2 to T+2
minutes of each high release only, the reading gates for 15 bars after the event's bar, and the walk pays what it
held, gaps and costs included."""

from __future__ import annotations

import numpy as np
import pytest

from actors.common.news_gates import COST_PER_SIDE_USD, GATE_MINUTES, POINT_USD, gate_figures, gate_masks, walk
from actors.common.news_market import generate_news_market


def test_the_walk_pays_what_was_held_through_each_bar_and_its_gap_and_the_costs_of_each_change():
    opens, closes = np.array([100.0, 102.0, 103.0]), np.array([101.0, 103.0, 101.0])
    pnl = walk(closes, opens, np.array([1.0, 1.0, -1.0]), np.array([False, False, False]))
    assert pnl.tolist() == pytest.approx([1 * POINT_USD - COST_PER_SIDE_USD, (1 + 1) * POINT_USD,
                                          (0 * 1 + 2) * POINT_USD - 2 * COST_PER_SIDE_USD])
    flat = walk(closes, opens, np.array([1.0, 1.0, 1.0]), np.array([False, True, False]))
    assert flat[1] == pytest.approx(1 * POINT_USD - COST_PER_SIDE_USD)  # held into bar 1's open gap, then closed


def test_each_gate_is_flat_where_its_rule_says():
    market = generate_news_market(60, seed=2, news="news")
    masks = gate_masks(market)
    high = [int(b) for e, b in zip(market.events, market.event_bar) if e.kind == "release" and e.importance == "high"]
    assert high and all(masks["calendar"][b - 2:b + 3].all() for b in high if b >= 2)
    assert masks["calendar"].sum() <= 5 * len(high) and not masks["none"].any()
    for name in ("keyword", "oracle"):
        starts = np.flatnonzero(masks[name][1:] & ~masks[name][:-1]) + 1
        assert len(starts) and all(masks[name][s - 1] == 0 for s in starts)
        assert set((starts - 1).tolist()) <= set(market.event_bar.tolist())  # a window opens the bar after an event
        assert masks[name].sum() <= GATE_MINUTES * len(market.events)
    figures = gate_figures(market)
    assert set(figures) == {"none", "calendar", "keyword", "oracle"} and figures["none"]["flat_share"] == 0.0
