"""Paper trading a replayed session: warm-up history from the feed, lockstep thoughts, and what became of them.

The paper env's shell on the harness (bars, verdicts and thoughts sent as the wire carries them), and the
thought accounting (ThoughtTally, unused_thoughts_cause) alone.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pandas as pd
import pytest

from actors.env.pacing import ThoughtTally, unused_thoughts_cause
from bus.messages import Bar, EnvObs, LlmThought, RiskVerdict
from runtime.testing import actor_harness

WARMUP = 30
PAPER = {"env.mode": "paper", "env.n_envs": 1, "env.paper_warmup_bars": WARMUP, "env.paper_window_bars": 120,
         "env.feed_silence_warn_secs": 600.0, "env.feed_silence_flatten_secs": 1200.0}


def session_bars(n: int, start: str = "2024-03-05 14:30") -> list[Bar]:
    """``n`` one-minute NQ bars at real price levels (about 16,000, quarter ticks) from ``start`` (UTC)."""
    rng = np.random.default_rng(7)
    close = 16_000.0 + np.round(np.cumsum(rng.normal(0.0, 2.0, n)) * 4) / 4
    starts = pd.date_range(start, periods=n, freq="1min", tz="UTC").as_unit("ns").asi8
    return [Bar(symbol="NQ", source="replay", start_ns=int(t), open=float(c - 0.25), high=float(c + 1.0), low=float(c - 1.0),
                close=float(c), volume=100.0) for t, c in zip(starts, close)]


def as_history(bar: Bar) -> Bar:
    return Bar(symbol=bar.symbol, source=bar.source, start_ns=bar.start_ns, open=bar.open, high=bar.high, low=bar.low,
               close=bar.close, volume=bar.volume, history=True)


def verdict(step: int) -> RiskVerdict:
    return RiskVerdict(env_ids=[0], step=step, actions=np.zeros(1, dtype=np.int64), vetoed=[False], reasons=[""], degraded=[False])


def thought(step_seen: int, fallback: bool = False) -> LlmThought:
    return LlmThought(env_id=0, episode_id=0, step_seen=step_seen, query_id=f"q{step_seen}", action=0, confidence=0.0 if fallback else 0.6,
                      mode="four_step", latency_ms=5_000.0, fallback=fallback)


async def test_history_bars_only_warm_up_and_the_first_decision_is_on_the_first_played_bar(tmp_path):
    bars = session_bars(WARMUP + 3)
    async with actor_harness("env", PAPER, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]])
        assert h.messages(EnvObs) == []  # warm after 30 history bars, but nothing is decided on history

        await h.deliver(bars[WARMUP])
        first = await h.recv(EnvObs)
        await h.deliver(verdict(first.step), bars[WARMUP + 1])
        await h.recv(EnvObs)
        await h.stop()

    summary = json.loads((tmp_path / "paper" / "summary.json").read_text())
    decisions = [json.loads(line) for line in (tmp_path / "paper" / "decisions.jsonl").read_text().splitlines()]
    assert first.step == 0 and decisions[0]["bar_start_ns"] == bars[WARMUP].start_ns  # the bar at T
    assert summary["history_bars"] == WARMUP and summary["feed_bars"] == 2 and summary["warmup_bars"] == 0


async def test_a_run_that_ends_in_the_warm_up_says_so_with_the_count(tmp_path):
    async with actor_harness("env", PAPER, run_dir=tmp_path) as h:
        await h.deliver(*session_bars(12))
        await h.stop()

    summary = json.loads((tmp_path / "paper" / "summary.json").read_text())
    assert summary["decisions"] == 0 and summary["warmup_bars_known"] == 12 and summary["warmup_bars_needed"] == WARMUP


async def test_lockstep_holds_a_bars_observation_until_the_previous_bars_thought_arrives(tmp_path):
    bars = session_bars(WARMUP + 2)
    async with actor_harness("env", {**PAPER, "env.thought_lag_steps": 1, "env.thought_wait_deadline_ms": 60_000.0}, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]], bars[WARMUP])
        await h.recv(EnvObs)  # step 0: nothing was seen before it, nothing to wait for
        await h.deliver(verdict(0), bars[WARMUP + 1])
        assert len(h.messages(EnvObs)) == 1  # step 1 waits for the thought about step 0

        await h.deliver(thought(0))
        second = await h.recv(EnvObs)
        await h.stop()

    summary = json.loads((tmp_path / "paper" / "summary.json").read_text())
    assert second.step == 1
    assert summary["thought_waits"] == 1 and summary["thoughts_late"] == 0 and summary["thoughts_arrived"] == 1
    assert summary["thought_age_mean_bars"] == 1.0


async def test_a_reasoner_slower_than_the_bars_counts_stale_thoughts_and_the_summary_names_the_cause(tmp_path):
    bars = session_bars(WARMUP + 30)
    async with actor_harness("env", PAPER, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]])
        for step, bar in enumerate(bars[WARMUP:]):
            await h.deliver(bar)
            await h.recv(EnvObs)
            # A four-step thought arrives 11 bars after the bar it saw (each bar 0.5 s, each thought 5 s).
            await h.deliver(*([thought(step - 11, fallback=step == 29)] if step >= 11 else []), verdict(step))
        await h.stop()

    summary = json.loads((tmp_path / "paper" / "summary.json").read_text())
    assert summary["thoughts_arrived"] == 19 and summary["thoughts_dropped_stale"] == 19 and summary["thoughts_fallback"] == 1
    assert summary["thoughts_used"] == 0 and summary["max_staleness_steps"] == 10
    assert summary["thought_age_min_bars"] == 11 == summary["thought_age_max_bars"] and summary["thought_age_mean_secs"] > 0
    cause = summary["thoughts_unused_cause"]
    assert "19 thoughts arrived" in cause and "11 bars old (max_staleness_steps = 10)" in cause and "--speed agent" in cause


async def test_a_bar_that_comes_before_the_verdict_on_the_previous_one_waits_for_it(tmp_path):
    """Direct lanes: an agent-paced feed reads risk's verdict and sends the next bar, which can reach the env before
    that same verdict does. Played at once, the bar would drop the decision (bars_without_decision)."""
    bars = session_bars(WARMUP + 2)
    async with actor_harness("env", {**PAPER, "env.max_late_verdict_wait_ms": 60_000.0}, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]], bars[WARMUP])
        await h.recv(EnvObs)
        await h.deliver(bars[WARMUP + 1])  # before the verdict on step 0
        assert len(h.messages(EnvObs)) == 1

        await h.deliver(verdict(0))
        second = await h.recv(EnvObs)
        await h.deliver(verdict(1))  # nothing left on its way: the stop does not wait
        counters = dict(h.actor.counters)
        await h.stop()

    summary = json.loads((tmp_path / "paper" / "summary.json").read_text())
    decisions = [json.loads(line) for line in (tmp_path / "paper" / "decisions.jsonl").read_text().splitlines()]
    assert second.step == 1 and [d["step"] for d in decisions] == [0, 1]
    assert summary["bars_without_decision"] == 0 and counters["bars_waited_for_verdict"] == 1
    assert counters.get("verdict_waits_expired", 0) == 0


async def test_a_verdict_that_never_comes_lets_the_waiting_bar_play_after_the_wait(tmp_path):
    bars = session_bars(WARMUP + 2)
    async with actor_harness("env", {**PAPER, "env.max_late_verdict_wait_ms": 200.0}, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]], bars[WARMUP])
        await h.recv(EnvObs)
        await h.deliver(bars[WARMUP + 1])
        second = await h.recv(EnvObs)  # after the wait
        counters = dict(h.actor.counters)
        await h.stop()

    summary = json.loads((tmp_path / "paper" / "summary.json").read_text())
    assert second.step == 1 and summary["bars_without_decision"] == 1 and counters["verdict_waits_expired"] == 1


async def test_a_stop_waits_for_the_verdict_on_the_last_bar(tmp_path):
    """bin/run paper --until-feed-done stops when the feed has read the verdict on its last bar; the env may not have."""
    bars = session_bars(WARMUP + 1)
    async with actor_harness("env", {**PAPER, "env.max_late_verdict_wait_ms": 60_000.0}, run_dir=tmp_path) as h:
        await h.deliver(*[as_history(bar) for bar in bars[:WARMUP]], bars[WARMUP])
        await h.recv(EnvObs)
        h.actor.request_stop("done:feed")
        stopping = asyncio.ensure_future(h.stop())
        await asyncio.sleep(0.3)
        still_waiting = not stopping.done()
        await h.deliver(verdict(0))
        assert await asyncio.wait_for(stopping, 30) == 0

    decisions = [json.loads(line) for line in (tmp_path / "paper" / "decisions.jsonl").read_text().splitlines()]
    assert still_waiting and [d["step"] for d in decisions] == [0]


def test_the_cause_names_the_bar_interval_and_the_thought_time_when_both_were_measured():
    tally = ThoughtTally(max_staleness_steps=10)
    for age in (10, 11, 11):
        tally.add(age + 1, 5.2, 5_000.0, fallback=False)
    summary = {**tally.figures(), "decisions": 121.0, "thoughts_used": 0.0, "bar_interval_mean_secs": 0.5}

    cause = unused_thoughts_cause(summary)

    assert cause.startswith("3 thoughts arrived, all 11-12 bars old (max_staleness_steps = 10)")
    assert "a bar came every 0.5 s and a thought took ~5 s" in cause


@pytest.mark.parametrize(("figures", "expected"), [
    ({"decisions": 40.0, "thoughts_arrived": 0.0}, "no thought arrived"),
    ({"decisions": 40.0, "thoughts_arrived": 4.0, "thoughts_fallback": 4.0}, "all fallbacks"),
    ({"decisions": 0.0}, "no decision was made"),
    ({"decisions": 40.0, "thoughts_used": 12.0}, ""),
])
def test_the_cause_of_unused_thoughts_follows_what_was_measured(figures, expected):
    cause = unused_thoughts_cause(figures)
    assert (expected in cause) if expected else cause == ""


@pytest.mark.slow
def test_bin_run_paper_lockstep_with_an_agent_paced_replay_has_a_thought_in_every_decision_after_the_first(tmp_path):
    """The README's two commands, small: the warm-up from the file, a decision on every played bar from T, each with the previous bar's thought."""
    import subprocess
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    csv_path, run_dir = tmp_path / "nq.csv", tmp_path / "paper-run"
    subprocess.run([str(root / "bin" / "run"), "paper", "--write-bars", str(csv_path), "--days", "2"], check=True, capture_output=True, timeout=120)
    runtime = subprocess.Popen([str(root / "bin" / "run"), "paper", "--lockstep", "--until-feed-done", "--run-dir", str(run_dir), "--quiet",
                                "--set", f"env.paper_warmup_bars={WARMUP}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (run_dir / "bus.json").is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        feed = subprocess.run([str(root / "bin" / "feed"), "--run", str(run_dir), "--source", "replay", "--path", str(csv_path),
                               "--start", "2023-11-28 09:30", "--speed", "agent", "--max-bars", "6",
                               *[arg for actor in ("env", "policy", "reasoner", "fusion", "risk") for arg in ("--wait-for", actor)]],
                              capture_output=True, text=True, timeout=240)
        output, _ = runtime.communicate(timeout=120)
    finally:
        if runtime.poll() is None:
            runtime.kill()

    summary = json.loads((run_dir / "paper" / "summary.json").read_text())
    decisions = [json.loads(line) for line in (run_dir / "paper" / "decisions.jsonl").read_text().splitlines()]
    assert feed.returncode == 0 and runtime.returncode == 0, feed.stderr + output
    assert summary["history_bars"] == WARMUP and summary["decisions"] == 6 and summary["bars_without_decision"] == 0, \
        _what_the_run_logged(run_dir, summary)
    assert decisions[0]["bar_start_ns"] == pd.Timestamp("2023-11-28 09:30", tz="America/New_York").value
    assert summary["thoughts_used"] >= 5 and summary["llm_staleness_max_bars"] == 1  # every decision after the first
    assert "thoughts_arrived" in output and "LLM: " in output


def _what_the_run_logged(run_dir, summary: dict) -> str:
    """For a failure: the summary, and the events the feed, env and risk logged (not their periodic stats)."""
    lines = [f"summary: {summary}"]
    for actor in ("feed", "env", "risk", "supervisor"):
        path = run_dir / "logs" / f"{actor}.jsonl"
        if path.is_file():
            events = [line for line in path.read_text().splitlines() if '"event": "stats"' not in line]
            lines += [f"--- {actor}", *events[-25:]]
    return "\n".join(lines)
