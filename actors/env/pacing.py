"""Bounded thought lag (``env.thought_lag_steps = K``): when the env may publish its next observation.

With K >= 1 the env actor publishes the observation of step N+1 only once, for every env of the
batch, an ``llm.thought`` has arrived that saw that env at step >= N+1-K. K = 1 is "each step uses
the previous step's result": the LLM thinks about step N while policy, fusion, risk and the env
handle it, so the loop runs at the LLM's pace, not at the sum of both.

- The env publishes ONE env.obs per step for all the envs it hosts, so the wait is for all of them:
  the slowest env's thought sets the pace of the batch.
- A wait has a deadline (``env.thought_wait_deadline_ms``): past it the step goes on without the
  missing thoughts and counts as a late step. A reasoner that is down or restarting is that case:
  every step then costs one deadline, never a hang; when thoughts come back, so does lockstep.
- Any thought counts, whatever fusion makes of it (a parse fallback, a cached thought): the
  reasoner has answered for that step, and waiting longer would not bring a better one.
- Step 0 of a run cannot have a thought (nothing was seen before it), and at the first step of a
  new episode the thought about the old episode's last step satisfies the gate but fusion does
  not use it (another episode): both show as decisions without a fresh thought in ``LagStats``.

Plain Python, no bus: the actor calls ``begin`` after each step, ``record`` per thought and
``expire`` at the deadline (actors/env/loop.py).
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np


class ThoughtGate:
    """The newest step seen per env by a thought, and the one open wait for the next observation."""

    def __init__(self, lag_steps: int, deadline_secs: float) -> None:
        if lag_steps < 1:
            raise ValueError(f"a thought gate needs lag_steps >= 1, got {lag_steps}")
        self.lag_steps = lag_steps
        self.deadline_secs = deadline_secs
        self._newest_seen: dict[int, int] = {}
        self._wait_step = -1
        self._wait_envs: list[int] = []
        self._wait_started = 0.0
        self.waits = 0
        """Observations that had to wait for at least one thought."""
        self.late_steps = 0
        """Waits that ended at the deadline, without every thought."""
        self.waited_secs = 0.0
        """Time between a step's end and the release of the next observation, over all waits."""
        self.thoughts = 0

    @property
    def waiting(self) -> bool:
        return self._wait_step >= 0

    def missing(self, env_ids: Iterable[int], next_step: int) -> list[int]:
        """The envs without a thought that saw them at step >= next_step - K."""
        oldest_ok = next_step - self.lag_steps
        return [env_id for env_id in env_ids if self._newest_seen.get(env_id, -1) < oldest_ok]

    def newest_seen(self, env_ids: Iterable[int]) -> list[int]:
        """Per env, the newest step a thought received so far saw (-1: none): what an observation published now
        depends on (EnvObs.thought_steps), so fusion can wait for the same thoughts on direct lanes."""
        return [self._newest_seen.get(env_id, -1) for env_id in env_ids]

    def begin(self, next_step: int, env_ids: list[int], now: float) -> bool:
        """The env is ready to publish ``next_step`` for ``env_ids``: True when it may do so now,
        False when a wait opens (``record`` or ``expire`` closes it)."""
        missing = self.missing(env_ids, next_step)
        if not missing:
            return True
        self.waits += 1
        self._wait_step, self._wait_envs, self._wait_started = next_step, missing, now
        return False

    def record(self, env_id: int, step_seen: int, now: float) -> bool:
        """A thought arrived; True when it completes the open wait (the observation may go out)."""
        self.thoughts += 1
        if step_seen > self._newest_seen.get(env_id, -1):
            self._newest_seen[env_id] = step_seen
        if not self.waiting:
            return False
        self._wait_envs = self.missing(self._wait_envs, self._wait_step)
        if self._wait_envs:
            return False
        self._close(now)
        return True

    def expire(self, now: float) -> list[int]:
        """The deadline passed: close the open wait as a late step; the envs still without a thought."""
        if not self.waiting:
            return []
        missing = self._wait_envs
        self.late_steps += 1
        self._close(now)
        return missing

    def _close(self, now: float) -> None:
        self.waited_secs += max(now - self._wait_started, 0.0)
        self._wait_step, self._wait_envs = -1, []

    def figures(self, wall_secs: float) -> dict[str, float]:
        return {
            "thought_lag_steps": float(self.lag_steps),
            "thought_waits": float(self.waits),
            "late_steps": float(self.late_steps),
            "thought_wait_secs": self.waited_secs,
            "thought_wait_share": self.waited_secs / wall_secs if wall_secs > 0 else 0.0,
        }


class LateVerdictWait:
    """Paper, direct lanes: bars that come while the previous bar's risk.verdict is still out wait for it.

    An agent-paced feed reads the verdict on bar N and sends bar N+1 at once; on direct lanes that bar can reach the
    env before the verdict does, and played at once it would drop the decision. Waiting bars are played in order once
    the verdict is taken (``taken``) or after ``wait_secs`` (counted verdict_waits_expired). A stop waits as long for
    a verdict on its way (``before_stop``; the feed is done once it has read the verdict on its last bar)."""

    def __init__(self, wait_secs: float, play: Callable[[Any], None], counters: Counter) -> None:
        self.wait_secs = wait_secs
        self._play = play
        self._counters = counters
        self._bars: deque = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._taken = asyncio.Event()

    def hold(self, bar: Any, verdict_out: bool) -> bool:
        """True when ``bar`` waits: a verdict is out, or earlier bars wait."""
        if not self._bars and not (verdict_out and self.wait_secs > 0):
            return False
        self._bars.append(bar)
        self._counters["bars_waited_for_verdict"] += 1
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.wait_secs, self._expired)
        return True

    def taken(self) -> None:
        """The verdict that was out is in: the waiting bars are played."""
        self._taken.set()
        self._release()

    async def before_stop(self, verdict_out: bool) -> None:
        if verdict_out and self.wait_secs > 0:
            self._taken.clear()
            try:
                await asyncio.wait_for(self._taken.wait(), self.wait_secs)
            except asyncio.TimeoutError:
                self._counters["stop_without_last_verdict"] += 1
        self._release()

    def _expired(self) -> None:
        self._timer = None
        self._counters["verdict_waits_expired"] += 1
        self._release()

    def _release(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._bars:
            self._play(self._bars.popleft())


class LagStats:
    """How old the thought behind each decision was, from fusion.decision's ``llm_staleness``
    (-1 = no usable thought). The mean is DecisionStats' ``llm_staleness_steps``; this adds the
    share within the lag bound and the extremes (as Sample Factory reports policy lag)."""

    def __init__(self, lag_steps: int) -> None:
        self.lag_steps = max(lag_steps, 1)
        """Bound of a fresh thought; free-running (K = 0) is judged against 1 step, lockstep's best."""
        self.decisions = 0
        self.within_lag = 0
        self.min_steps = -1
        self.max_steps = -1

    def add(self, staleness: np.ndarray) -> None:
        staleness = np.asarray(staleness, dtype=np.int64)
        self.decisions += len(staleness)
        used = staleness[staleness >= 0]
        self.within_lag += int((used <= self.lag_steps).sum())
        if len(used):
            low, high = int(used.min()), int(used.max())
            self.min_steps = low if self.min_steps < 0 else min(self.min_steps, low)
            self.max_steps = max(self.max_steps, high)

    def figures(self) -> dict[str, float]:
        if not self.decisions:
            return {}
        return {
            "lag_query_rate": self.within_lag / self.decisions,
            "llm_staleness_min_steps": float(self.min_steps),
            "llm_staleness_max_steps": float(self.max_steps),
        }


class ThoughtTally:
    """What became of the LLM's thoughts in a paper session, and why none was used when none was.

    A thought's age is counted when it arrives: in bars, from the step it saw to the next decision that
    could use it, and in seconds, from the observation it saw going out. A thought older than fusion's
    ``max_staleness_steps`` on arrival can never be used (``dropped_stale``); a fallback (an answer
    the parser could not read) is counted apart; ``late`` (decisions that went on without their thought
    after the lockstep deadline) comes from the ThoughtGate.
    """

    def __init__(self, max_staleness_steps: int) -> None:
        self.max_staleness_steps = max_staleness_steps
        self.arrived = 0
        self.fallbacks = 0
        self.dropped_stale = 0
        self.usable = 0
        """Neither stale nor a fallback: fusion could have used these."""
        self.ages_bars: list[int] = []
        self.ages_secs: list[float] = []
        self.latencies_ms: list[float] = []

    def add(self, age_bars: int, age_secs: float | None, latency_ms: float, fallback: bool) -> None:
        self.arrived += 1
        self.fallbacks += int(fallback)
        stale = age_bars > self.max_staleness_steps
        self.dropped_stale += int(stale)
        self.usable += int(not stale and not fallback)
        self.ages_bars.append(age_bars)
        if age_secs is not None:
            self.ages_secs.append(age_secs)
        self.latencies_ms.append(latency_ms)

    def figures(self, late: int = 0) -> dict[str, float]:
        figures = {
            "thoughts_arrived": float(self.arrived), "thoughts_fallback": float(self.fallbacks),
            "thoughts_dropped_stale": float(self.dropped_stale), "thoughts_late": float(late), "thoughts_usable": float(self.usable),
            "max_staleness_steps": float(self.max_staleness_steps),
        }
        if self.ages_bars:
            figures.update(thought_age_mean_bars=float(np.mean(self.ages_bars)), thought_age_min_bars=float(min(self.ages_bars)),
                           thought_age_max_bars=float(max(self.ages_bars)), thought_latency_mean_ms=float(np.mean(self.latencies_ms)))
        if self.ages_secs:
            figures["thought_age_mean_secs"] = float(np.mean(self.ages_secs))
        return figures


def unused_thoughts_cause(summary: dict[str, float]) -> str:
    """Why no decision of a session used a thought, from its measured figures ('' when some did)."""
    if summary.get("thoughts_used", 0.0) > 0:
        return ""
    arrived = int(summary.get("thoughts_arrived", 0))
    if summary.get("decisions", 0.0) == 0:
        return "no decision was made, so no thought could be used"
    if arrived == 0:
        return ("no thought arrived: is the reasoner in runtime.actors, and did it finish one? (its log: bin/tail RUN_DIR --actor reasoner); "
                "a first four-step thought takes a few seconds on 2 cores")
    fallbacks, stale = int(summary.get("thoughts_fallback", 0)), int(summary.get("thoughts_dropped_stale", 0))
    if fallbacks == arrived:
        return f"{arrived} thoughts arrived, all fallbacks (answers the parser could not read: no action, or a reason that says nothing)"
    bound = int(summary.get("max_staleness_steps", 0))
    low, high = int(summary.get("thought_age_min_bars", 0)), int(summary.get("thought_age_max_bars", 0))
    ages = f"{low}" if low == high else f"{low}-{high}"
    pace = ""
    if summary.get("bar_interval_mean_secs") and summary.get("thought_latency_mean_ms"):
        pace = (f": a bar came every {summary['bar_interval_mean_secs']:.2g} s and a thought took "
                f"~{summary['thought_latency_mean_ms'] / 1000:.2g} s")
    if stale and not summary.get("thoughts_usable", 0.0):
        share = "all" if stale == arrived else f"{stale} of them"
        return (f"{arrived} thoughts arrived, {share} {ages} bars old (max_staleness_steps = {bound})"
                f"{f', {fallbacks} of them fallbacks' if fallbacks else ''}{pace}; use bin/feed --speed agent or bin/run paper --lockstep")
    return (f"{arrived} thoughts arrived ({stale} older than max_staleness_steps = {bound}, {fallbacks} fallbacks), "
            f"{ages} bars old{pace}, and fusion used none of them")
