"""PaperSession, SilenceWatch and PaperRecorder (actors/env/live.py): paper trading fed bar by bar, no processes."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from actors.common.actions import BUY, HOLD
from actors.common.market_settings import AccountConfig, InstrumentConfig
from actors.env.config import EnvConfig
from actors.common.instruments import resolve_instrument
from actors.env.live import LiveBar, PaperSession, SilenceWatch
from actors.env.paper_recorder import PaperRecorder
from actors.common.synthetic import generate_bars

WARMUP = 30


def feed_bars(frame: pd.DataFrame) -> list[LiveBar]:
    return [LiveBar(int(ts), *map(float, row)) for ts, row in zip(frame.index.asi8, frame[["open", "high", "low", "close", "volume"]].to_numpy())]


@pytest.fixture(scope="module")
def bars() -> list[LiveBar]:
    return feed_bars(generate_bars(2, seed=3))


def nq_session(**kwargs) -> PaperSession:
    return PaperSession(resolve_instrument(InstrumentConfig()), AccountConfig(), EnvConfig(), warmup_bars=WARMUP, window_bars=200, **kwargs)


def warm_session(bars: list[LiveBar]) -> PaperSession:
    session = nq_session()
    for bar in bars[:WARMUP]:
        session.add_bar(bar)
    return session


def test_no_decision_is_asked_before_the_warmup_bars_are_known(bars):
    session = nq_session()

    steps = [session.add_bar(bar) for bar in bars[:WARMUP]]

    assert all(step.warming and not step.ready for step in steps[:-1])
    assert steps[-1].ready and session.step == 0
    obs, masks = session.observation()
    assert obs.shape == (1, 261) and masks.shape == (1, 6)


def test_a_history_frame_warms_the_features_up_so_the_first_feed_bar_is_decided(bars):
    history = generate_bars(2, seed=3).iloc[:WARMUP - 1]
    session = nq_session(history=history)

    step = session.add_bar(bars[WARMUP - 1])

    assert step.ready and session.counters["history_bars"] == WARMUP - 1


def test_each_bar_asks_for_one_decision_and_a_second_answer_for_it_is_ignored(bars):
    session = warm_session(bars)

    first = session.decide(session.step, BUY)
    second = session.decide(session.step, HOLD)
    stale = session.decide(session.step - 1, HOLD)

    assert first and not second and not stale
    assert session.counters["decisions"] == 1 and session.counters["decisions_ignored"] == 2


def test_a_decision_fills_at_the_next_bars_open_with_slippage_and_commission(bars):
    session = warm_session(bars)
    session.decide(session.step, BUY)
    next_bar = bars[WARMUP]

    step = session.add_bar(next_bar)

    position = session.env.position
    assert step.executed_action == BUY and step.decision_step == 0
    assert position is not None and position.entry_price == pytest.approx(next_bar.open + 0.25)  # NQ: 1 tick of slippage
    assert session.env.account.balance == pytest.approx(50_000.0 - 2.50)  # entry commission


def test_a_duplicate_or_older_bar_is_ignored_and_nothing_is_decided_twice_for_it(bars):
    session = warm_session(bars)
    session.decide(session.step, BUY)
    session.add_bar(bars[WARMUP])
    step_before = session.step

    duplicate = session.add_bar(bars[WARMUP])
    older = session.add_bar(bars[WARMUP - 5])

    assert duplicate is None and older is None
    assert session.step == step_before
    assert session.counters["duplicate_bars"] == 1 and session.counters["late_bars"] == 1


def test_a_bar_without_a_decision_holds(bars):
    session = warm_session(bars)

    step = session.add_bar(bars[WARMUP])

    assert step.executed_action == HOLD and step.decision_step == -1
    assert session.counters["bars_without_decision"] == 1


def test_a_feed_that_resumes_after_a_gap_goes_on_deciding(bars):
    session = warm_session(bars)

    step = session.add_bar(bars[WARMUP + 30])  # 30 bars missed while the feed was away

    assert step.ready and session.step == 1


def test_flatten_closes_the_position_at_the_last_close_and_drops_the_waiting_decision(bars):
    session = warm_session(bars)
    session.decide(session.step, BUY)
    session.add_bar(bars[WARMUP])
    session.decide(session.step, HOLD)

    closed = session.flatten("feed_silent")

    assert closed is not None and closed.trade.exit_reason == "feed_silent"
    assert closed.trade.exit_price == pytest.approx(bars[WARMUP].close - 0.25)
    assert closed.decision_steps == [0]
    assert not session.in_position and session.flatten("feed_silent") is None
    assert session.add_bar(bars[WARMUP + 1]).executed_action == HOLD


def test_silence_warns_once_then_flattens_once_only_in_a_position():
    watch = SilenceWatch(warn_secs=10.0, flatten_secs=30.0)
    assert watch.check(100.0, in_position=True) == ""  # no bar yet: nothing went silent
    watch.on_bar(0.0)

    actions = [watch.check(now, in_position=True) for now in (5.0, 10.0, 20.0, 30.0, 40.0)]

    assert actions == ["", "warn", "", "flatten", ""]
    assert watch.on_bar(45.0) == 45.0  # the silence it ended
    assert [watch.check(now, in_position=False) for now in (55.0, 80.0)] == ["warn", ""]


def test_a_crypto_perpetual_trades_around_the_clock_under_the_none_preset():
    frame = generate_bars(2, seed=5).iloc[: WARMUP + 5]
    night = pd.date_range("2024-03-09 23:00", periods=len(frame), freq="1min", tz="US/Eastern").tz_convert("UTC")  # a Saturday night
    frame.index = pd.DatetimeIndex(night)
    crypto = resolve_instrument(InstrumentConfig(symbol="BTC-PERP", tick_size=0.1, multiplier=0.001, commission_per_side=0.035, slippage_ticks=1))
    session = PaperSession(crypto, AccountConfig(preset="none"), EnvConfig(), warmup_bars=WARMUP, window_bars=100)
    crypto_bars = feed_bars(frame)
    for bar in crypto_bars[:WARMUP]:
        session.add_bar(bar)

    _, masks = session.observation()
    session.decide(session.step, BUY)
    session.add_bar(crypto_bars[WARMUP])

    assert masks[0, BUY]
    assert session.env.position.entry_price == pytest.approx(crypto_bars[WARMUP].open + 0.1)
    assert session.env.account.balance == pytest.approx(50_000.0 - 0.035)


def test_the_recorder_appends_lines_a_reader_sees_at_once(tmp_path, bars):
    session = warm_session(bars)
    recorder = PaperRecorder(tmp_path)
    session.decide(session.step, BUY)
    step = session.add_bar(bars[WARMUP])

    recorder.bar(step, 0, "BUY", session.position_row())
    recorder.decision({"step": 0, "action": "BUY"})

    rows = list(csv.DictReader((tmp_path / "equity.csv").open()))
    assert len(rows) == 1 and rows[0]["position"] == "1" and rows[0]["executed_action"] == "BUY"
    assert json.loads((tmp_path / "positions.jsonl").read_text())["entry_price"] == pytest.approx(bars[WARMUP].open + 0.25)
    assert json.loads((tmp_path / "decisions.jsonl").read_text()) == {"step": 0, "action": "BUY"}
    recorder.close()


def test_paper_prompts_carry_the_same_tape_as_the_data_sets_own_bars():
    # The LLM reads the market from the tape (actors/common/llm/tape.py): paper mode must show it too, and the
    # same numbers a backtest over those bars would show, or an adapter trained on history meets other prompts live.
    from actors.common.llm.tape import TAPE_FEATURES, market_tape, tape_numbers
    from actors.env.dataset import Dataset

    frame = generate_bars(2, seed=3)
    session = PaperSession(resolve_instrument(InstrumentConfig()), AccountConfig(), EnvConfig(),
                           warmup_bars=EnvConfig().paper_warmup_bars, window_bars=EnvConfig().paper_window_bars)
    tapes = []
    for bar in feed_bars(frame)[:EnvConfig().paper_warmup_bars + 3]:
        step = session.add_bar(bar)
        if step is not None and step.ready:
            session.decide(session.step, HOLD)
            tapes.append((session.env.bar, session.context()["tape"]))

    assert len(tapes) == 4  # the first decision at the last warm-up bar, then one a bar
    data = Dataset.from_frame(frame, AccountConfig().flat_minute_of_day, warmup_bars=0)
    for t, tape in tapes:
        assert len(tape_numbers(tape) or []) == TAPE_FEATURES, tape
        assert tape == market_tape(data.high, data.low, data.close, t, float(data.features.atr[t]), 0.25,
                                   float(data.features.vwap_distance_pct[t]), float(data.schedule.minutes_to_flat[t]))
