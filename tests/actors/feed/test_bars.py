import math

import pytest

from actors.feed.bars import OHLCV, BarBuilder, timeframe_ns

MIN = 60 * 10**9
T0 = 1_700_000_040 * 10**9  # a minute boundary (1_700_000_040 is divisible by 60)


def one_minute(late_policy: str = "drop") -> BarBuilder:
    return BarBuilder(MIN, late_policy)


def bar_at(builder: BarBuilder, minute: int, price: float = 100.0, volume: float = 1.0, interval_ns: int = MIN):
    return builder.add_bar(T0 + minute * MIN, price, price + 1, price - 1, price + 0.5, volume, interval_ns)


def test_timeframes_parse_to_nanoseconds():
    assert timeframe_ns("1m") == MIN
    assert timeframe_ns("30s") == 30 * 10**9
    assert timeframe_ns("4h") == 4 * 3600 * 10**9
    assert timeframe_ns("1d") == 86400 * 10**9


@pytest.mark.parametrize("text", ["", "5", "m", "0m", "1y", "1.5m"])
def test_malformed_timeframes_are_rejected(text):
    with pytest.raises(ValueError):
        timeframe_ns(text)


def test_trades_build_one_bar_per_minute_stamped_at_its_start_and_closed_by_the_next_minute():
    builder = one_minute()

    opened = builder.add_trade(T0 + 1, 100.0, 2)
    builder.add_trade(T0 + 20 * 10**9, 103.0, 1)
    builder.add_trade(T0 + 40 * 10**9, 99.0, 1)
    builder.add_trade(T0 + MIN - 1, 101.0, 3)
    closed = builder.add_trade(T0 + MIN, 102.0, 1)

    assert opened == []
    assert closed == [OHLCV(T0, 100.0, 103.0, 99.0, 101.0, 7.0)]


def test_a_trade_exactly_on_the_boundary_belongs_to_the_next_bar():
    builder = one_minute()
    builder.add_trade(T0, 100.0, 1)

    closed = builder.add_trade(T0 + MIN, 200.0, 1)
    closed_next = builder.flush(T0 + 2 * MIN)

    assert closed[0].close == 100.0
    assert closed_next == [OHLCV(T0 + MIN, 200.0, 200.0, 200.0, 200.0, 1.0)]


def test_five_minute_bars_align_to_the_epoch_and_close_with_their_fifth_one_minute_bar():
    builder = BarBuilder(5 * MIN)
    start = T0 - T0 % (5 * MIN)

    outputs = [bar_at(builder, (start - T0) // MIN + i, price=100.0 + i) for i in range(5)]

    assert outputs[:4] == [[], [], [], []]
    (bar,) = outputs[4]
    assert bar.start_ns == start and bar.open == 100.0 and bar.close == 104.5
    assert bar.high == 105.0 and bar.low == 99.0 and bar.volume == 5.0


def test_flush_closes_the_open_bar_only_once_the_clock_is_past_its_end():
    builder = one_minute()
    builder.add_trade(T0 + 5, 100.0, 1)

    early = builder.flush(T0 + MIN - 1)
    on_time = builder.flush(T0 + MIN)

    assert early == []
    assert [b.start_ns for b in on_time] == [T0]


@pytest.mark.parametrize("record", [
    (math.nan, 101.0, 99.0, 100.0, 1.0),
    (100.0, 101.0, 99.0, math.inf, 1.0),
    (0.0, 101.0, 99.0, 100.0, 1.0),
    (-5.0, 101.0, 99.0, 100.0, 1.0),
    (100.0, 99.0, 101.0, 100.0, 1.0),  # high < low
    (100.0, 101.0, 99.0, 100.0, -1.0),
])
def test_bad_bars_are_dropped_and_counted(record):
    builder = one_minute()

    out = builder.add_bar(T0, *record)

    assert out == [] and builder.counts["bad"] == 1 and builder.counts["records"] == 0
    assert builder.flush(T0 + 10 * MIN) == []


def test_bad_trades_are_dropped_and_counted():
    builder = one_minute()

    builder.add_trade(T0, math.nan, 1)
    builder.add_trade(T0, 0.0, 1)
    builder.add_trade(T0, 100.0, -1)

    assert builder.counts["bad"] == 3


def test_a_repeated_input_bar_is_dropped_as_a_duplicate_whether_or_not_its_bar_closed():
    builder = BarBuilder(5 * MIN)
    start_minute = (T0 - T0 % (5 * MIN) - T0) // MIN
    bar_at(builder, start_minute)

    bar_at(builder, start_minute)  # same open bucket
    for i in range(1, 5):
        bar_at(builder, start_minute + i)
    again = bar_at(builder, start_minute + 2)  # bucket closed meanwhile

    assert again == []
    assert builder.counts["duplicates"] == 2
    assert builder.counts["bars"] == 1 and builder.counts["late"] == 0


def test_trades_with_a_seen_id_are_duplicates_and_without_ids_only_an_exact_repeat_is():
    builder = one_minute()

    builder.add_trade(T0 + 1, 100.0, 1, trade_id="a")
    builder.add_trade(T0 + 1, 100.0, 1, trade_id="a")
    builder.add_trade(T0 + 2, 100.0, 1, trade_id="b")
    builder.add_trade(T0 + 3, 100.0, 1)
    builder.add_trade(T0 + 3, 100.0, 1)
    builder.add_trade(T0 + 4, 100.0, 1)
    (bar,) = builder.flush(T0 + MIN)

    assert builder.counts["duplicates"] == 2
    assert bar.volume == 4.0


def test_an_out_of_order_trade_inside_the_open_bar_is_merged_and_counted():
    builder = one_minute()
    builder.add_trade(T0 + 30 * 10**9, 101.0, 1)

    builder.add_trade(T0 + 10 * 10**9, 99.0, 1)  # earlier: becomes the open
    (bar,) = builder.flush(T0 + MIN)

    assert builder.counts["out_of_order"] == 1
    assert bar == OHLCV(T0, 99.0, 101.0, 99.0, 101.0, 2.0)


def test_a_late_bar_is_dropped_and_counted_by_default():
    builder = one_minute()
    bar_at(builder, 0)
    bar_at(builder, 1)

    out = builder.add_trade(T0 + 10, 500.0, 1)

    assert out == []
    assert builder.counts["late"] == 1 and builder.counts["late_dropped"] == 1


def test_a_late_trade_amends_its_closed_bar_when_configured():
    builder = one_minute("amend")
    bar_at(builder, 0, price=100.0)
    bar_at(builder, 1)

    (amended,) = builder.add_trade(T0 + 10, 500.0, 2)

    assert amended.start_ns == T0 and amended.high == 500.0 and amended.volume == 3.0
    assert builder.counts["amended"] == 1


def test_a_record_for_a_minute_between_the_last_closed_and_the_open_bar_is_late():
    builder = one_minute()
    bar_at(builder, 0)
    builder.add_trade(T0 + 3 * MIN + 1, 100.0, 1)  # opens minute 3, gap of 2

    out = builder.add_trade(T0 + 2 * MIN + 1, 100.0, 1)

    assert out == [] and builder.counts["late"] == 1


def test_gaps_are_counted_with_the_number_of_missing_bars():
    builder = one_minute()
    bar_at(builder, 0)

    bar_at(builder, 4)
    bar_at(builder, 5)

    assert builder.counts["gaps"] == 1 and builder.counts["gap_bars"] == 3
    assert builder.last_gap.after_start_ns == T0 and builder.last_gap.missing_bars == 3


def test_one_minute_bars_into_one_minute_bars_pass_straight_through_in_order():
    builder = one_minute()

    published = [bar for minute in range(10) for bar in bar_at(builder, minute, price=100.0 + minute)]

    assert [b.start_ns for b in published] == [T0 + i * MIN for i in range(10)]
    assert [b.open for b in published] == [100.0 + i for i in range(10)]
