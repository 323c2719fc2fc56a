"""A replay from --start: the warm-up history first, flagged; --speed agent: a bar only after the decision on the last."""

from __future__ import annotations

import asyncio

import numpy as np
import pandas as pd
import pytest

from actors.feed.cli import build_parser, feed_overrides
from actors.feed.sources import replay_source
from bus.messages import Bar, Done, RiskVerdict
from runtime.testing import actor_harness

WARMUP = 25


def write_vendor_csv(path, n: int = 80, first: str = "2023-11-28 08:50") -> pd.DatetimeIndex:
    """A vendor-style file: naive US/Eastern timestamps, NQ at about 16,000 in quarter ticks."""
    stamps = pd.date_range(first, periods=n, freq="1min")
    close = 16_000.0 + np.round(np.cumsum(np.random.default_rng(3).normal(0, 2, n)) * 4) / 4
    pd.DataFrame({"timestamp": stamps.strftime("%Y-%m-%d %H:%M:%S"), "open": close - 0.25, "high": close + 1.0, "low": close - 1.0,
                  "close": close, "volume": 50.0}).to_csv(path, index=False)
    return stamps.tz_localize("America/New_York")


def replay(path, **extra) -> dict:
    return {"feed.source": "replay", "feed.replay_path": str(path), "feed.replay_speed": 0.0, "feed.replay_start": "2023-11-28 09:30",
            "feed.symbol": "NQ", "env.paper_warmup_bars": WARMUP, **extra}


def verdict(step: int) -> RiskVerdict:
    return RiskVerdict(env_ids=[0], step=step, actions=np.zeros(1, dtype=np.int64), vetoed=[False], reasons=[""], degraded=[False])


async def test_a_replay_from_start_publishes_the_warmup_bars_first_flagged_as_history(tmp_path):
    stamps = write_vendor_csv(tmp_path / "nq.csv")
    start_ns = pd.Timestamp("2023-11-28 09:30", tz="America/New_York").value
    async with actor_harness("feed", replay(tmp_path / "nq.csv", **{"feed.max_bars": 5})) as h:
        done = await h.recv(Done)
        bars = h.messages(Bar)

    history, played = [b for b in bars if b.history], [b for b in bars if not b.history]
    assert bars[:WARMUP] == history and len(history) == WARMUP  # all of them first
    assert history[-1].start_ns == start_ns - 60 * 10**9 and history[0].start_ns == stamps[40 - WARMUP].value
    assert played[0].start_ns == start_ns and len(played) == 5  # --max-bars counts from the start
    assert done.summary["bars"] == 5 and done.summary["history_bars"] == WARMUP


def test_a_file_with_too_few_bars_before_the_start_says_how_many_it_found(tmp_path):
    write_vendor_csv(tmp_path / "nq.csv", first="2023-11-28 09:20")
    source = replay_source(str(tmp_path / "nq.csv"), speed=0.0, start="2023-11-28 09:30", warmup_bars=210)

    assert source.short_history is not None and len(source.history_starts) == 10
    assert "has 10 bars before 2023-11-28T09:30:00-05:00, the warm-up needs 210" in source.short_history.message()


def test_a_start_after_the_last_bar_is_a_clear_error(tmp_path):
    write_vendor_csv(tmp_path / "nq.csv")
    with pytest.raises(ValueError, match="no bars at or after '2023-12-01'"):
        replay_source(str(tmp_path / "nq.csv"), speed=0.0, start="2023-12-01", warmup_bars=10)


async def test_agent_speed_never_publishes_the_next_bar_before_the_decision_on_the_last(tmp_path):
    write_vendor_csv(tmp_path / "nq.csv")
    async with actor_harness("feed", replay(tmp_path / "nq.csv", **{"feed.pace": "agent", "feed.max_bars": 4})) as h:
        events: list[str] = []
        for step in range(4):
            bar = await h.recv(Bar, where=lambda b: not b.history)
            events.append(f"bar{step}")
            await asyncio.sleep(0.2)  # room for a wrong early bar to show up before the verdict
            events += [f"bar{step + 1}" for b in h.messages(Bar) if not b.history and b.start_ns > bar.start_ns]
            await h.deliver(verdict(step))
            events.append(f"verdict{step}")
        done = await h.recv(Done)

    assert events == ["bar0", "verdict0", "bar1", "verdict1", "bar2", "verdict2", "bar3", "verdict3"]
    assert done.summary["bars"] == 4 and done.summary["agent_timeouts"] == 0


def test_bin_feed_speed_agent_sets_the_agent_pace_and_a_number_the_replay_speed():
    parse = build_parser().parse_args
    agent = feed_overrides(parse(["--bus", "a,b", "--source", "replay", "--path", "x.csv", "--speed", "agent", "--warmup-bars", "120"]))
    fast = feed_overrides(parse(["--bus", "a,b", "--speed", "60"]))

    assert agent["feed.pace"] == "agent" and agent["feed.warmup_bars"] == 120 and "feed.replay_speed" not in agent
    assert fast["feed.replay_speed"] == 60.0 and "feed.pace" not in fast


async def test_agent_speed_takes_a_repeated_verdict_for_what_it_is_not_the_decision_on_the_next_bar(tmp_path):
    """The env re-sends an observation whose verdict is on its way (env.verdict_retry_ms); risk answers the step again.
    Counted as the next bar's decision, it would let the feed run one bar ahead and end before the last bar's decision."""
    write_vendor_csv(tmp_path / "nq.csv")
    async with actor_harness("feed", replay(tmp_path / "nq.csv", **{"feed.pace": "agent", "feed.max_bars": 3})) as h:
        await h.recv(Bar, where=lambda b: not b.history)
        await h.deliver(verdict(0))
        second = await h.recv(Bar, where=lambda b: not b.history)
        await h.deliver(verdict(0))  # the repeated answer
        await asyncio.sleep(0.3)  # room for a wrong early bar
        early = [b for b in h.messages(Bar) if not b.history and b.start_ns > second.start_ns]
        await h.deliver(verdict(1))
        third = await h.recv(Bar, where=lambda b: not b.history and b.start_ns > second.start_ns)
        await h.deliver(verdict(2))
        done = await h.recv(Done)
        stats = h.actor.counters

    assert early == [] and third.start_ns == second.start_ns + 60 * 10**9
    assert done.summary["bars"] == 3 and done.summary["agent_timeouts"] == 0 and stats["repeated_verdicts"] == 1
