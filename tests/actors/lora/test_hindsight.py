from actors.common.hindsight import BUY, HOLD, SELL, BarrierSpec, triple_barrier_label

# ATR 10, stop 1 ATR, target 2 ATR, $20 a point, $10 of costs per round trip.
SPEC = BarrierSpec(horizon_bars=3, stop_atr=1.0, target_atr=2.0, multiplier=20.0, cost_per_trade_usd=10.0)


def bars(rows):
    """rows of (open, high, low, close)."""
    return tuple(list(column) for column in zip(*rows))


def test_a_rise_through_the_long_target_labels_buy():
    o, h, l, c = bars([(100, 101, 99, 100), (100, 105, 98, 104), (104, 121, 103, 120), (120, 121, 119, 120)])

    label = triple_barrier_label(o, h, l, c, step=0, atr=10.0, spec=SPEC)

    assert label.action == BUY
    assert (label.long.exit, label.long.bars_held, label.long.pnl_usd) == ("target", 2, 20 * 20.0 - 10.0)
    assert label.short.exit == "stop"
    assert label.pnl_usd == 390.0


def test_a_fall_through_the_short_target_labels_sell():
    o, h, l, c = bars([(100, 101, 99, 100), (100, 102, 95, 96), (96, 97, 79, 80), (80, 81, 79, 80)])

    label = triple_barrier_label(o, h, l, c, step=0, atr=10.0, spec=SPEC)

    assert label.action == SELL
    assert (label.short.exit, label.short.pnl_usd) == ("target", 20 * 20.0 - 10.0)
    assert label.long.exit == "stop"


def test_a_quiet_market_labels_hold_because_costs_eat_the_drift():
    o, h, l, c = bars([(100, 101, 99, 100), (100, 101, 99, 100), (100, 101, 99, 100.25), (100, 101, 99, 100.25)])

    label = triple_barrier_label(o, h, l, c, step=0, atr=10.0, spec=SPEC)

    assert label.action == HOLD
    assert label.long.exit == label.short.exit == "time"
    assert label.long.pnl_usd == 0.25 * 20.0 - 10.0
    assert label.pnl_usd == 0.0


def test_a_bar_touching_stop_and_target_counts_as_the_stop():
    o, h, l, c = bars([(100, 101, 99, 100), (100, 125, 85, 110), (110, 111, 109, 110), (110, 111, 109, 110)])

    label = triple_barrier_label(o, h, l, c, step=0, atr=10.0, spec=SPEC)

    assert label.long.exit == label.short.exit == "stop"
    assert label.action == HOLD


def test_no_label_until_the_horizon_bar_is_known():
    o, h, l, c = bars([(100, 101, 99, 100), (100, 101, 99, 100)])

    assert triple_barrier_label(o, h, l, c, step=0, atr=10.0, spec=SPEC) is None
