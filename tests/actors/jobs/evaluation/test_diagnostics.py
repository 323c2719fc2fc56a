"""Diagnostics (actors/jobs/evaluation/diagnostics.py): where the edges' rules hold positions, and the policy beside them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from actors.env.dataset import Dataset
from actors.env.trading import Trade
from actors.jobs.config import load_config
from actors.jobs.evaluation.chain import WindowResult
from actors.jobs.evaluation.diagnostics import diagnostic_lines, edge_positions, fold_diagnostics, policy_positions

from ...env.conftest import bars_frame

CONFIG = load_config(None, {})


def two_days(jump_at: int = 200) -> pd.DataFrame:
    """Two sessions: the first flat at 20,000 with a tick of noise; the second up 10 points by 10:00, with a 40-point
    jump at bar ``jump_at`` (a 2-sigma 15-bar move by any measure)."""
    noise = np.tile([0.0, 0.25], 195)
    first = [(20_000 + n, 20_001 + n, 19_999 + n, 20_000 + n) for n in noise]
    second = []
    for i, n in enumerate(noise):
        price = 20_000 + min(i, 30) / 3 + n + (40.0 if i >= jump_at else 0.0)
        second.append((price, price + 1, price - 1, price))
    return pd.concat([bars_frame(first, start_et="2024-03-04 09:30"), bars_frame(second, start_et="2024-03-05 09:30")])


def dataset() -> Dataset:
    return Dataset.from_frame(two_days(), CONFIG.account.flat_minute_of_day, warmup_bars=30)


def test_the_first_half_hour_rule_holds_its_sign_over_the_last_half_hour_and_the_fade_holds_10_bars():
    data = dataset()
    rules = edge_positions(data.close, data.features.minute_et.astype(np.int64), data.features.session_id, 390, 780)
    first30, fade = rules["first30"], rules["fade15"]
    held = np.flatnonzero(first30)
    assert (first30[held] == 1).all() and held[0] == 359 and held[-1] == 388  # 15:29 ... 15:58 of the second day
    assert (fade[200:210] == -1).all() and fade[199] == 0  # against the jump, for 10 bars from its close


def test_the_policy_s_position_is_the_side_held_from_each_close_to_the_next():
    trade = Trade(1, -1, 1, 105, 110, 0, 0, 0.0, 0.0, 0.0, 0.0, 5, "signal", 0.0, 0.0)
    held = policy_positions([trade], 100, 120)
    assert held.tolist() == [0] * 4 + [-1] * 5 + [0] * 11  # decided on bar 104's close, out at bar 110's open


def test_a_policy_that_trades_the_rule_is_with_it_all_the_time_and_earns_what_it_earns():
    data = dataset()
    trade = Trade(1, 1, 1, 390 + 360, 390 + 390, 0, 0, 0.0, 0.0, 50.0, 4.0, 30, "close", 0.0, 0.0)  # out at the close
    window = WindowResult(np.array([1, 2]), np.array([0.0, 50.0]), [trade], 390)
    block = fold_diagnostics(CONFIG, data, 0, 390, 780, [window])
    first30 = block["first30"]
    assert first30["events"] == 1 and first30["with"] == 1.0 and first30["flat"] == 0.0
    assert np.isclose(first30["policy_usd"], first30["rule_usd"])
    assert block["trades_per_day"] == 0.5 and block["usd_per_day_after_costs"] == 25.0
    assert block["usd_per_day_before_costs"] > block["usd_per_day_after_costs"]  # commission and slippage added back
    assert block["fade15"]["flat"] == 1.0  # it held nothing after the jump
    assert any("15:30 after a first half hour" in line for line in diagnostic_lines([block]))
