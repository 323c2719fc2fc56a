"""The simple rules as reference policies: the first half hour's sign held from 15:30, and the fade of a 15-bar move.

Each acts only at its bar and condition, agrees with the calibration's own version of the rule (the diagnostics'
``edge_positions``, written apart from it), and reads nothing after the bar it decides on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from actors.common.actions import BUY, HOLD, SELL
from actors.common.instruments import resolve_instrument
from actors.env.dataset import Dataset
from actors.env.env import FuturesTradingEnv
from actors.env.factory import build_dataset
from actors.env.references import fade_policy, fade_side, first_half_hour_policy
from actors.jobs.config import load_config
from actors.jobs.evaluation.chain import play_window
from actors.jobs.evaluation.diagnostics import edge_positions
from actors.jobs.evaluation.walkforward import day_split

DAYS = 8


@pytest.fixture(scope="module")
def setting():
    config = load_config(None, {"data.scenario": "realistic", "data.synthetic_days": DAYS})
    return config, build_dataset(config.data, config.account, 0, 0.25)


def env_on(config, dataset: Dataset) -> FuturesTradingEnv:
    """An env at the first bar of day 1 (day 0 has no prior close), playing to the end."""
    split = day_split(dataset, "days", 1, len(dataset.session_starts))
    env = FuturesTradingEnv(split, resolve_instrument(config.instrument), config.account, config.env)
    env.reset(options={"start": split.start, "n_bars": split.stop - 1 - split.start})
    return env


def first_half_hour_sides(dataset: Dataset) -> dict[int, int]:
    """Per session (its first bar), the sign of the prior close to the 09:59 bar's close, from the closes alone."""
    minute = dataset.features.minute_et.astype(int)
    sides = {}
    for day, first in enumerate(dataset.session_starts.tolist()[1:], start=1):
        stop = int(dataset.session_starts[day + 1]) if day + 1 < len(dataset.session_starts) else len(dataset)
        known = first + int(np.flatnonzero(minute[first:stop] == 9 * 60 + 59)[0])
        sides[first] = int(np.sign(dataset.close[known] - dataset.close[first - 1]))
    return sides


def test_the_first_half_hour_rule_enters_once_a_day_at_15_30_on_the_side_of_the_first_half_hour(setting):
    config, dataset = setting
    split = day_split(dataset, "days", 1, DAYS)
    played = play_window(config, split, first_half_hour_policy(30), risk=False)
    sides = first_half_hour_sides(dataset)
    minute = dataset.features.minute_et.astype(int)
    first_entries = {}
    for trade in played.trades:
        day = int(dataset.session_starts[np.searchsorted(dataset.session_starts, trade.entry_bar, side="right") - 1])
        assert 15 * 60 + 30 <= minute[trade.entry_bar] <= 15 * 60 + 59  # decided on 15:29's close or later, never before
        assert trade.side == sides[day]
        first_entries.setdefault(day, minute[trade.entry_bar])
    assert set(first_entries.values()) == {15 * 60 + 30}  # the first entry of each day is the bar after 15:29
    assert len(first_entries) == sum(1 for side in sides.values() if side != 0) == DAYS - 1
    assert all(trade.exit_reason in ("forced_flat", "stop", "target", "episode_end") for trade in played.trades)

    later = play_window(config, split, first_half_hour_policy(60), risk=False)
    assert min(minute[t.entry_bar] for t in later.trades) == 15 * 60  # the 60-minute hold enters at 15:00


def test_the_fade_takes_the_calibrations_side_on_every_bar_and_stays_flat_without_a_move(setting):
    """Stepped flat (HOLD) through the days, the fade's entry on each bar is the side of the diagnostics' fade15 (an
    independent numpy version of the rule) and of ``fade_side`` on the session's closes so far."""
    config, dataset = setting
    env = env_on(config, dataset)
    reference = edge_positions(dataset.close, dataset.features.minute_et.astype(np.int64), dataset.features.session_id,
                               env.bar, len(dataset))["fade15"]
    start, decide = env.bar, fade_policy(2.0)
    session = dataset.features.session_id
    seen = set()
    while True:
        t = env.bar
        action = decide(env)
        flat_ok = env.action_masks()[BUY] and env.action_masks()[SELL]
        last_bar_of_day = t + 1 == len(dataset) or session[t + 1] != session[t]
        if flat_ok and not last_bar_of_day:  # the calibration flattens the day's last bar; the env's flat time does here
            side = {BUY: 1, SELL: -1, HOLD: 0}[action]
            assert side == reference[t - start], f"bar {t}"
            first = int(np.searchsorted(session, session[t]))
            assert side == fade_side(dataset.close[first:t + 1], 2.0)
            seen.add(side)
        _, _, terminated, truncated, _ = env.step(HOLD)
        if terminated or truncated:
            break
    assert seen == {-1, 0, 1}
    with pytest.raises(ValueError, match="sigmas > 0"):
        fade_policy(0.0)
    with pytest.raises(ValueError, match="hold_minutes"):
        first_half_hour_policy(0)


def twin_after(dataset: Dataset, cut: int, flat_minute: int | None) -> Dataset:
    """``dataset`` with every bar after ``cut`` moved (prices x 0.99-1.01), the same regime HMM."""
    frame = pd.DataFrame({name: getattr(dataset, name).copy() for name in ("open", "high", "low", "close", "volume")},
                         index=dataset.index)
    later = slice(cut + 1, None)
    scale = np.random.default_rng(2).uniform(0.99, 1.01, len(frame) - cut - 1)
    for name in ("open", "high", "low", "close"):
        frame.iloc[later, frame.columns.get_loc(name)] = np.round(frame[name].to_numpy()[later] * scale / 0.25) * 0.25
    return Dataset.from_frame(frame, flat_minute, regime_model=dataset.regime_model)


@pytest.mark.parametrize("rule", ["first_half_hour", "fade"])
def test_a_later_bar_never_changes_a_rules_action(setting, rule):
    """Two datasets, the same bars up to a cut (15:40 of day 4) and other bars after it: each rule's actions agree up to
    the cut and differ after it (so the comparison can fail). Both envs stay flat (HOLD is played), so an action is the
    side the rule wants there."""
    config, dataset = setting
    minute = dataset.features.minute_et.astype(int)
    day = int(dataset.session_starts[4])
    cut = day + int(np.flatnonzero(minute[day:] == 15 * 60 + 40)[0])
    twin = twin_after(dataset, cut, config.account.flat_minute_of_day)
    make = {"first_half_hour": lambda: first_half_hour_policy(30), "fade": lambda: fade_policy(1.5)}[rule]
    env_a, env_b = env_on(config, dataset), env_on(config, twin)
    decide_a, decide_b = make(), make()
    differs = False
    while True:
        action_a, action_b = decide_a(env_a), decide_b(env_b)
        if env_a.bar <= cut:
            assert action_a == action_b, f"bar {env_a.bar} (cut {cut}): a later bar changed the action"
        differs |= action_a != action_b
        done = [env.step(HOLD)[2:4] for env in (env_a, env_b)]
        if any(any(flags) for flags in done):
            break
    assert differs
