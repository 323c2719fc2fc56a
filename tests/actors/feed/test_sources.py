import asyncio

import ccxt
import numpy as np
import pandas as pd
import pytest

from actors.feed.bars import BarBuilder
from actors.feed.config import FeedConfig
from actors.feed.sources import CcxtSource, PacedBars, SourceBar, make_exchange

MIN_MS = 60_000


def candle(minute: int, price: float, volume: float = 1.0) -> list:
    return [minute * MIN_MS, price, price + 1, price - 1, price + 0.5, volume]


class FakeClock:
    """Wall clock in seconds that only sleeping moves; records the sleeps."""

    def __init__(self, start_secs: float) -> None:
        self.now = start_secs
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, secs: float) -> None:
        self.sleeps.append(secs)
        self.now += secs


class RecordedExchange:
    """Plays back recorded fetch_ohlcv answers (a page or an exception) in order; notes each call."""

    id = "recorded"
    rateLimit = 500

    def __init__(self, answers: list, clock: FakeClock) -> None:
        self.answers = list(answers)
        self.clock = clock
        self.calls: list[tuple[float, int | None, int]] = []

    def fetch_ohlcv(self, symbol, timeframe, since=None, limit=None):
        self.calls.append((self.clock(), since, limit))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def recorded_session() -> list:
    return [
        # t = 10m03s: minutes 6..9 closed, minute 10 still forming (price 999 must never be published)
        [candle(6, 106), candle(7, 107), candle(8, 108), candle(9, 109), candle(10, 999)],
        ccxt.NetworkError("connection reset"),
        ccxt.ExchangeError("temporarily unavailable"),
        # minute 10 now closed and sent twice; minute 11 forming
        [candle(10, 110), candle(10, 110), candle(11, 999)],
        [candle(11, 111), candle(12, 999)],
        [candle(13, 999)],  # minute 12 never comes: a gap
        [candle(13, 113), candle(14, 999)],
    ]


async def take(source: CcxtSource, n: int) -> list[SourceBar]:
    out = []
    async for record in source.records():
        out.append(record)
        if len(out) == n:
            break
    return out


def run_recorded_session():
    clock = FakeClock(start_secs=10 * 60 + 3)
    exchange = RecordedExchange(recorded_session(), clock)
    feed = FeedConfig(timeframe="1m", ccxt_history_bars=3, ccxt_close_delay_secs=2.0, ccxt_backoff_secs=1.0,
                      ccxt_backoff_max_secs=30.0)
    source = CcxtSource(exchange, "BTC/USDT:USDT", feed, clock=clock, sleep=clock.sleep)
    records = asyncio.run(take(source, 7))
    builder = BarBuilder(60 * 10**9)
    published = [bar for r in records for bar in builder.add_bar(r.start_ns, r.open, r.high, r.low, r.close, r.volume, r.interval_ns)]
    return source, exchange, clock, builder, published


def test_ccxt_source_publishes_each_closed_candle_once_in_order_and_never_the_forming_one():
    source, _, _, builder, published = run_recorded_session()

    assert [b.start_ns // 10**9 // 60 for b in published] == [7, 8, 9, 10, 11, 13]
    assert [b.open for b in published] == [107, 108, 109, 110, 111, 113]
    assert all(b.open != 999 for b in published)
    assert source.counters["forming_skipped"] >= 5


def test_ccxt_source_flags_the_history_candles_of_its_first_poll_and_no_later_one():
    clock = FakeClock(start_secs=10 * 60 + 3)
    feed = FeedConfig(timeframe="1m", ccxt_history_bars=3, ccxt_close_delay_secs=2.0, ccxt_backoff_secs=1.0, ccxt_backoff_max_secs=30.0)
    records = asyncio.run(take(CcxtSource(RecordedExchange(recorded_session(), clock), "BTC/USDT:USDT", feed, clock=clock, sleep=clock.sleep), 7))

    assert [r.history for r in records] == [True] * 3 + [False] * 4


def test_ccxt_source_duplicate_is_dropped_and_gap_reported_by_the_builder():
    _, _, _, builder, _ = run_recorded_session()

    assert builder.counts["duplicates"] == 1
    assert builder.counts["gaps"] == 1 and builder.counts["gap_bars"] == 1


def test_ccxt_source_reconnects_after_network_and_exchange_errors_with_doubling_backoff():
    source, exchange, clock, _, _ = run_recorded_session()

    assert source.counters["reconnects"] == 2
    assert clock.sleeps[1:3] == [1.0, 2.0]  # after the first poll's wait: backoff 1 s, then 2 s
    assert "ExchangeError" in source.last_error


def test_ccxt_source_asks_since_the_last_candle_taken_and_respects_the_rate_limit():
    _, exchange, _, _, _ = run_recorded_session()

    sinces = [since for _, since, _ in exchange.calls]
    times = [t for t, _, _ in exchange.calls]
    assert sinces[0] is None and sinces[1] == 9 * MIN_MS + 1
    assert sinces[-1] == 11 * MIN_MS + 1
    assert min(np.diff(times)) >= exchange.rateLimit / 1000


def test_ccxt_source_polls_just_after_each_candle_closes():
    _, exchange, _, _, _ = run_recorded_session()

    ok_poll_times = [t for (t, _, _), answer in zip(exchange.calls, recorded_session()) if isinstance(answer, list)]
    assert [t % 60 for t in ok_poll_times[2:]] == pytest.approx([2.0, 2.0, 2.0])


def test_ccxt_source_gives_up_on_errors_no_retry_can_fix():
    clock = FakeClock(600)
    source = CcxtSource(RecordedExchange([ccxt.BadSymbol("no such market")], clock), "NOPE/USDT", FeedConfig(timeframe="1m"),
                        clock=clock, sleep=clock.sleep)

    with pytest.raises(ccxt.BadSymbol):
        asyncio.run(take(source, 1))


def test_ccxt_exchange_takes_its_key_from_the_environment_only(monkeypatch):
    monkeypatch.setenv("TEST_FEED_KEY", "k-123")
    monkeypatch.setenv("TEST_FEED_SECRET", "s-456")

    exchange = make_exchange("binance", market_type="swap", api_key_env="TEST_FEED_KEY", secret_env="TEST_FEED_SECRET")
    try:
        assert exchange.apiKey == "k-123" and exchange.secret == "s-456"
        assert exchange.enableRateLimit and exchange.options["defaultType"] == "swap"
    finally:
        asyncio.run(exchange.close())


def test_paced_bars_at_speed_zero_yield_every_bar_at_once_in_order():
    index = pd.date_range("2024-01-02 14:30", periods=5, freq="1min", tz="UTC")
    frame = pd.DataFrame({"open": 1.0, "high": 2.0, "low": 0.5, "close": 1.5, "volume": 3.0}, index=index)
    clock = FakeClock(0)
    source = PacedBars("replay", frame, speed=0.0, clock=clock, sleep=clock.sleep)

    records = asyncio.run(_collect(source))

    assert [r.start_ns for r in records] == list(index.as_unit("ns").asi8)
    assert all(r.interval_ns == 60 * 10**9 for r in records) and clock.sleeps == []


def test_paced_bars_at_speed_sixty_wait_a_second_per_minute_bar():
    index = pd.date_range("2024-01-02 14:30", periods=4, freq="1min", tz="UTC")
    frame = pd.DataFrame({"open": 1.0, "high": 2.0, "low": 0.5, "close": 1.5, "volume": 3.0}, index=index)
    clock = FakeClock(0)
    source = PacedBars("replay", frame, speed=60.0, clock=clock, sleep=clock.sleep)

    asyncio.run(_collect(source))

    assert clock.sleeps == pytest.approx([1.0, 1.0, 1.0])


async def _collect(source) -> list:
    return [r async for r in source.records()]
