"""The env's tape table (actors/env/tape_table.py) writes the same text as market_tape, bar for bar."""

from __future__ import annotations

import numpy as np

from actors.common.llm.tape import TAPE_BARS, market_tape
from actors.env.tape_table import TapeTable


def reference(table_inputs: dict, t: int) -> str:
    i = table_inputs
    return market_tape(i["high"].tolist(), i["low"].tolist(), i["close"].tolist(), t, float(i["atr"][t]), i["tick_size"],
                       float(i["vwap_distance_pct"][t]), float(i["minutes_to_flat"][t]))


def test_every_bar_of_a_data_set_has_the_text_market_tape_writes(synthetic_dataset):
    data = synthetic_dataset
    inputs = {"high": data.high, "low": data.low, "close": data.close, "atr": data.features.atr, "tick_size": 0.25,
              "vwap_distance_pct": data.features.vwap_distance_pct, "minutes_to_flat": data.schedule.minutes_to_flat}
    table = TapeTable.of(data, 0.25)
    lines = [table.line(t) for t in range(len(data))]
    assert lines == [reference(inputs, t) for t in range(len(data))]
    assert lines[TAPE_BARS - 1] == "" and lines[TAPE_BARS].startswith("moves ")
    assert table.line(TAPE_BARS) is lines[TAPE_BARS]  # formatted once, then kept


def hand_made(n: int = 150) -> dict:
    rng = np.random.default_rng(7)
    close = 20_000.0 + np.cumsum(rng.choice([-2.5, -1.25, 0.0, 1.25, 2.5], size=n))
    return {"high": close + 1.0, "low": close - 1.0, "close": close, "atr": np.full(n, 2.5), "tick_size": 0.25,
            "vwap_distance_pct": rng.normal(0.0, 0.1, n), "minutes_to_flat": np.linspace(300.0, -5.0, n)}


def test_half_moves_round_to_even_and_minutes_past_the_flat_read_zero():
    inputs = hand_made()
    inputs["close"][100:] = inputs["close"][99]  # flat: moves of exactly 0
    inputs["close"][120] += 1.25  # a move of 0.5 ATR rounds to 0, of 1.5 ATR to 2 (half to even, as round())
    inputs["close"][125] += 3.75
    table = TapeTable(**inputs)
    for t in range(len(inputs["close"])):
        assert table.line(t) == reference(inputs, t), t
    assert table.line(len(inputs["close"]) - 1).endswith("| 0 min to flat")


def test_a_bar_without_a_usable_atr_or_with_a_missing_price_is_left_to_market_tape():
    inputs = hand_made(220)
    inputs["atr"][80] = 0.0  # no usable ATR: no tape
    inputs["high"][90] = np.nan  # holes in the highs: the windows over them are left to market_tape, which reads past
    inputs["high"][95] = np.nan  # a hole that is not the window's first bar and fails on one that is
    table = TapeTable(**inputs)
    assert table.line(80) == "" and table.line(81) == reference(inputs, 81)
    outcomes = {t: same_outcome(lambda: table.line(t), lambda: reference(inputs, t)) for t in range(90, 220)}
    assert outcomes[90 + TAPE_BARS - 1] == outcomes[95 + TAPE_BARS - 1] == "ValueError"  # the hole is the window's first bar
    assert outcomes[91] == outcomes[94 + TAPE_BARS - 1] == outcomes[219] == "text"


def same_outcome(table_line, reference_line) -> str:
    """Both write the same text, or both raise the same error; which of the two."""
    try:
        expected = reference_line()
    except ValueError:
        try:
            table_line()
        except ValueError:
            return "ValueError"
        raise AssertionError("the table wrote a tape where market_tape fails")
    assert table_line() == expected
    return "text"


def test_a_range_of_equal_highs_and_lows_sits_at_fifty_percent():
    inputs = hand_made()
    inputs["high"][:], inputs["low"][:] = 20_000.0, 20_000.0
    table = TapeTable(**inputs)
    assert "| range 50% |" in table.line(100) and table.line(100) == reference(inputs, 100)


def test_a_table_too_short_for_a_tape_writes_none():
    inputs = {key: (value[:TAPE_BARS] if isinstance(value, np.ndarray) else value) for key, value in hand_made().items()}
    table = TapeTable(**inputs)
    assert [table.line(t) for t in range(TAPE_BARS)] == [""] * TAPE_BARS
