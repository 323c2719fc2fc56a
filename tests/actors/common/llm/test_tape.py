from actors.common.llm.tape import TAPE_BARS, TAPE_FEATURES, market_tape, tape_numbers


def series(step: float, n: int = 100):
    closes = [18000.0 + step * i for i in range(n)]
    return [c + 1.0 for c in closes], [c - 1.0 for c in closes], closes


def test_a_rising_market_reads_as_up_moves_at_the_top_of_its_range():
    highs, lows, closes = series(+0.5)

    tape = market_tape(highs, lows, closes, 99, atr=2.0, tick_size=0.25, vwap_distance_pct=0.05, minutes_to_flat=120.2)

    numbers = tape_numbers(tape)
    assert tape.startswith("moves +1 +1") and "| 60 bars +15.0 ATR |" in tape and "ATR 8 ticks" in tape
    assert len(numbers) == TAPE_FEATURES and numbers[12:14] == [5.0, 15.0] and numbers[-1] == 120.0
    assert numbers[14] > 95  # range position, %


def test_a_falling_market_reads_as_down_moves_and_big_moves_are_clipped_to_three_atr():
    highs, lows, closes = series(-4.0)

    numbers = tape_numbers(market_tape(highs, lows, closes, 99, 2.0, 0.25, -0.2, 30.0))

    assert numbers[:12] == [-3.0] * 12 and numbers[13] == -120.0 and numbers[14] < 5


def test_no_tape_before_sixty_bars_or_without_an_atr_and_a_partial_line_is_not_read():
    highs, lows, closes = series(0.5)

    assert market_tape(highs, lows, closes, TAPE_BARS - 1, 2.0, 0.25, 0.0, 60.0) == ""
    assert market_tape(highs, lows, closes, 99, 0.0, 0.25, 0.0, 60.0) == ""
    assert tape_numbers("") is None and tape_numbers("not enough bars yet") is None
