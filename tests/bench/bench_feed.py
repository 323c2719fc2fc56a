"""Feed benchmark (``bin/bench feed``): the bar builder at speed 0 beside pandas resampling.

1. Trades -> 1-minute bars: the same seeded trades through ``BarBuilder.add_trade`` one by one
   (what a live source does) and through ``DataFrame.resample("1min")`` (vectorised, all at
   once: the baseline's ceiling, not something a live feed can do). Reported as trades/s and
   bars/s; the bars are checked equal.
2. 1-minute bars -> 5-minute bars through the replay source at speed 0 plus the builder (the
   feed actor's whole path short of the bus), beside pandas resampling the same bars.

3. Features per bar (``--feature-bars``, 0 skips it): what paper trading does with each new bar, on a 600-bar
   window: the rolling update (``FeatureStream.push``, target < 1 ms) and the whole window step
   (``LiveWindow.append`` + ``split``: features, calendar, env data), beside the batch version it replaced
   (``compute_features`` over the window, and ``live_split``: a frame built and everything recomputed).

4. Paper-mode lag (``--lag-bars``, 0 skips it): ``bin/run paper`` with the default actors, the reasoner
   thinking, and this process as the feed: it publishes each closed bar on md.bar and times it to the
   risk.verdict for that bar (p50/p99; target p99 < 50 ms), beside the raw bus round trip (pyzmq
   ping-pong through the same kind of broker) as the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from actors.feed.bars import BarBuilder
from actors.feed.sources import PacedBars, SourceBar
from actors.common.synthetic import generate_bars
from runtime.settings import CPU_PLACEMENTS
from tests.bench.common import percentiles_us, print_table

MIN_NS = 60 * 10**9


def seeded_trades(n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` trades over about n/100 minutes (a busy futures minute), random walk prices, sorted times."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2024-03-04 14:30", tz="UTC").value
    ts = start + np.sort(rng.integers(0, n // 100 * MIN_NS, n))
    price = 18_000 + np.round(np.cumsum(rng.normal(0, 0.25, n)) / 0.25) * 0.25
    size = rng.integers(1, 10, n).astype(np.float64)
    return pd.DataFrame({"price": price, "size": size}, index=pd.DatetimeIndex(ts, tz="UTC"))


def builder_trades(trades: pd.DataFrame) -> tuple[float, list]:
    ts = trades.index.as_unit("ns").asi8.tolist()
    prices, sizes = trades["price"].tolist(), trades["size"].tolist()
    builder = BarBuilder(MIN_NS)
    add = builder.add_trade
    bars: list = []
    t0 = time.perf_counter()
    for t, p, s in zip(ts, prices, sizes):
        out = add(t, p, s)
        if out:
            bars.extend(out)
    bars.extend(builder.flush(ts[-1] + MIN_NS))
    return time.perf_counter() - t0, bars


def pandas_trades(trades: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    t0 = time.perf_counter()
    ohlc = trades["price"].resample("1min").ohlc()
    ohlc["volume"] = trades["size"].resample("1min").sum()
    ohlc = ohlc.dropna()
    return time.perf_counter() - t0, ohlc


async def replay_through_builder(bars: pd.DataFrame) -> tuple[float, int]:
    source = PacedBars("replay", bars, speed=0.0)
    builder = BarBuilder(5 * MIN_NS)
    count = 0
    t0 = time.perf_counter()
    async for record in source.records():
        assert isinstance(record, SourceBar)
        count += len(builder.add_bar(record.start_ns, record.open, record.high, record.low, record.close, record.volume, record.interval_ns))
    return time.perf_counter() - t0, count


def pandas_bars(bars: pd.DataFrame) -> tuple[float, int]:
    t0 = time.perf_counter()
    out = bars.resample("5min").agg({"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}).dropna()
    return time.perf_counter() - t0, len(out)


ROOT = Path(__file__).resolve().parents[2]
LOOP_ACTORS = ("env", "policy", "reasoner", "fusion", "risk")
PAPER_LAG_SETTINGS = ("runtime.startup_grace_secs=300.0", "env.paper_warmup_bars=30", "env.paper_window_bars=600", "env.feed_silence_warn_secs=60.0", "env.feed_silence_flatten_secs=120.0")


def _wait_for_loop(client, timeout_secs: float = 300.0) -> None:
    from bus.messages import Heartbeat

    seen: set[str] = set()
    deadline = time.monotonic() + timeout_secs
    while not seen.issuperset(LOOP_ACTORS):
        seen.add(client.recv(Heartbeat, timeout_secs=max(deadline - time.monotonic(), 0.1)).actor)


def paper_lag(n_bars: int, pace_secs: float, warmup: int = 30, placement: str = "split") -> tuple[list[int], float]:
    """ns from publishing each closed bar to receiving the risk.verdict for it; and the share of decisions with a thought."""
    from bus.broker import BusAddresses
    from bus.client import SyncBus
    from bus.messages import Bar, FusionDecision, Heartbeat, RiskVerdict

    run_dir = Path(tempfile.mkdtemp(prefix="bench-paper-")) / "run"
    overrides = [arg for setting in (*PAPER_LAG_SETTINGS, f"runtime.cpu_placement={placement}") for arg in ("--set", setting)]
    runtime = subprocess.Popen([str(ROOT / "bin" / "run"), "paper", "--run-dir", str(run_dir), "--quiet", *overrides],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lags: list[int] = []
    with_thought = 0
    try:
        deadline = time.monotonic() + 60
        while not (run_dir / "bus.json").is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        client = SyncBus(BusAddresses.read(run_dir), sender="bench-feed")
        client.subscribe(Heartbeat, RiskVerdict, FusionDecision)
        _wait_for_loop(client)
        frame = generate_bars(days=max(2, (warmup + n_bars) // 390 + 1), seed=0).iloc[: warmup + n_bars]
        for i, (ts, row) in enumerate(zip(frame.index.asi8, frame.itertuples())):
            started = time.monotonic()
            sent_ns = time.monotonic_ns()
            client.publish(Bar(symbol="NQ", start_ns=int(ts), open=row.open, high=row.high, low=row.low, close=row.close, volume=row.volume, source="bench"))
            step = i - (warmup - 1)
            while step >= 0:  # until this bar's verdict; its fusion decision says whether a thought was used
                msg = client.recv(timeout_secs=10)
                if isinstance(msg, FusionDecision) and msg.step == step:
                    with_thought += int(msg.llm_actions[0] >= 0)
                elif isinstance(msg, RiskVerdict) and msg.step == step:
                    lags.append(time.monotonic_ns() - sent_ns)
                    break
            time.sleep(max(pace_secs - (time.monotonic() - started), 0.0))
        client.close()
    finally:
        runtime.send_signal(signal.SIGINT)
        try:
            runtime.wait(60)
        except subprocess.TimeoutExpired:
            runtime.kill()
    return lags, with_thought / max(len(lags), 1)


def lag_rows(n_bars: int, pace_secs: float, placements: list[str]) -> list[tuple[str, str, str, str, str]]:
    from tests.bench.bench_bus import pingpong_raw

    base50, base99 = percentiles_us(pingpong_raw(2000, 200))
    rows = []
    for placement in placements:
        lags, thought_share = paper_lag(n_bars, pace_secs, placement=placement)
        p50, p99 = percentiles_us(lags)
        rows += [
            (f"paper, {placement}: md.bar published -> risk.verdict, p50 ms", f"{p50 / 1e3:.2f}", f"{base50 / 1e3:.3f}", f"{base50 / p50:.3f}", "-"),
            (f"paper, {placement}: md.bar published -> risk.verdict, p99 ms", f"{p99 / 1e3:.2f}", f"{base99 / 1e3:.3f}", f"{base99 / p99:.3f}", "< 50"),
            (f"paper, {placement}: decisions with a thought ({len(lags)} bars, {pace_secs:g} s apart)", f"{thought_share:.0%}", "-", "-", "-"),
        ]
    return rows


def feature_rows(n_bars: int, window_bars: int = 600) -> list[tuple[str, str, str, str, str]]:
    """Per-bar cost of the incremental features and window against the batch recomputation, on the same bars."""
    from actors.common.market_settings import AccountConfig
    from actors.env.feature_stream import FeatureStream
    from actors.env.features import compute_features
    from actors.env.live_window import LiveWindow, live_split

    flat_minute = AccountConfig().flat_minute_of_day
    frame = generate_bars(days=(window_bars + n_bars) // 390 + 2, seed=0).iloc[: window_bars + n_bars]
    starts = frame.index.as_unit("ns").asi8.tolist()
    rows = frame[["open", "high", "low", "close", "volume"]].to_numpy().tolist()
    stream, window = FeatureStream(), LiveWindow(window_bars)
    push_ns, window_ns, batch_ns, split_ns = [], [], [], []
    for i, (start_ns, (open_, high, low, close, volume)) in enumerate(zip(starts, rows)):
        t0 = time.perf_counter_ns()
        stream.push(start_ns, high, low, close, volume)
        t1 = time.perf_counter_ns()
        window.append(start_ns, open_, high, low, close, volume)
        window.split(flat_minute)
        t2 = time.perf_counter_ns()
        if i < window_bars:
            continue
        push_ns.append(t1 - t0)
        window_ns.append(t2 - t1)
        recent = frame.iloc[i + 1 - window_bars : i + 1]
        t3 = time.perf_counter_ns()
        compute_features(recent)
        t4 = time.perf_counter_ns()
        live_split(recent, flat_minute)
        batch_ns.append(t4 - t3)
        split_ns.append(time.perf_counter_ns() - t4)
    (p50, p99), (base50, base99) = percentiles_us(push_ns), percentiles_us(batch_ns)
    (w50, w99), (s50, s99) = percentiles_us(window_ns), percentiles_us(split_ns)
    return [
        ("feature update per bar, p50 us", f"{p50:,.0f}", f"{base50:,.0f}", f"{base50 / p50:.1f}", "-"),
        ("feature update per bar, p99 us", f"{p99:,.0f}", f"{base99:,.0f}", f"{base99 / p99:.1f}", "< 1,000"),
        ("paper window per bar (features + calendar + env data), p50 us", f"{w50:,.0f}", f"{s50:,.0f}", f"{s50 / w50:.1f}", "-"),
        ("paper window per bar, p99 us", f"{w99:,.0f}", f"{s99:,.0f}", f"{s99 / w99:.1f}", "-"),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bin/bench feed", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trades", type=int, default=1_000_000, help="trades aggregated in part 1 (default 1,000,000)")
    parser.add_argument("--days", type=int, default=20, help="sessions of 1-minute bars replayed in part 2 (default 20)")
    parser.add_argument("--feature-bars", type=int, default=500, help="bars timed in part 3, features per bar (0 skips it; default 500)")
    parser.add_argument("--lag-bars", type=int, default=120, help="bars timed in part 4, paper-mode lag (0 skips it; default 120)")
    parser.add_argument("--lag-pace-secs", type=float, default=0.5, help="seconds between the bars of part 4 (default 0.5)")
    parser.add_argument("--placement", nargs="+", choices=CPU_PLACEMENTS, default=list(CPU_PLACEMENTS),
                        help="part 4: runtime.cpu_placement values to measure (default both)")
    args = parser.parse_args(argv)

    trades = seeded_trades(args.trades)
    secs, bars = builder_trades(trades)
    base_secs, base = pandas_trades(trades)
    assert len(bars) == len(base), (len(bars), len(base))
    assert np.allclose([b.close for b in bars], base["close"]) and np.allclose([b.volume for b in bars], base["volume"])

    minute_bars = generate_bars(days=args.days, seed=0)
    replay_secs, replay_count = asyncio.run(replay_through_builder(minute_bars))
    replay_base_secs, replay_base_count = pandas_bars(minute_bars)

    rows = [
        ("trades -> 1m bars, trades/s", f"{len(trades) / secs:,.0f}", f"{len(trades) / base_secs:,.0f}", f"{base_secs / secs:.3f}", "-"),
        ("trades -> 1m bars, bars/s out", f"{len(bars) / secs:,.0f}", f"{len(base) / base_secs:,.0f}", f"{base_secs / secs:.3f}", ">= 1,000 (live: 1 bar/min)"),
        ("replay 1m -> 5m (speed 0), bars in/s", f"{len(minute_bars) / replay_secs:,.0f}", f"{len(minute_bars) / replay_base_secs:,.0f}", f"{replay_base_secs / replay_secs:.3f}", "-"),
        ("replay 1m -> 5m, bars out", f"{replay_count}", f"{replay_base_count}", "-", "equal"),
    ]
    print_table(f"Feed: bar builder vs pandas resample ({len(trades):,} trades, {len(minute_bars):,} 1m bars; ratio = project speed / pandas speed)", rows)
    if args.feature_bars:
        print_table(f"Paper features per bar on a 600-bar window, {args.feature_bars} bars (baseline: the batch version recomputed over the window; "
                    "ratio = baseline / project)", feature_rows(args.feature_bars))
    if args.lag_bars:
        print_table("Paper-mode lag with the reasoner running (baseline: raw pyzmq ping-pong through a broker; ratio = baseline / project)",
                    lag_rows(args.lag_bars, args.lag_pace_secs, args.placement))


if __name__ == "__main__":
    main()
