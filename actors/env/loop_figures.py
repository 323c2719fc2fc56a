"""What the env loop tells (actors/env/loop.py): the progress it publishes, its gauges, and the summary of a run
(the batch's metrics, the decision statistics, the LLM's part in the decisions, what one decision costs in time).

A mixin of ``EnvLoop``: it reads the loop's state (its batch, counters, decision statistics, thought-lag
figures, the step reached) and changes none of it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

import numpy as np

from runtime.rate import StepRate

DECISION_LATENCY_WINDOW = 4096
"""Recent decisions behind the latency percentiles."""


class LoopFigures:
    """The env loop's figures; ``EnvLoop`` sets the fields read here in its on_start."""

    _decision_latency_ns: deque[int]

    def decision_latency_us(self) -> dict[str, float]:
        """env.obs published -> its risk.verdict received: what one decision of the loop costs in time."""
        if not self._decision_latency_ns:
            return {}
        p50, p99 = np.percentile(np.asarray(self._decision_latency_ns, dtype=np.float64) / 1e3, [50, 99])
        return {"decision_latency_p50_us": float(p50), "decision_latency_p99_us": float(p99)}

    def summary(self) -> dict[str, float]:
        metrics, _, _ = self.batch.run_summary()
        decisions = self.decisions.summary()
        if not self.decisions.decisions:  # no fusion actor: its figures would read as zeros, not as absent
            decisions = {key: value for key, value in decisions.items() if key == "veto_rate"}
        return {"episodes": float(self.counters["episodes"]), **metrics, **decisions, **self.lag_figures(), **self.decision_latency_us(), "loop_steps": float(self.step_index),
                "verdict_timeouts": float(self.counters["verdict_timeouts"]), "illegal_actions": float(self.counters["illegal_actions"])}

    async def _report_progress(self) -> None:
        meter = StepRate(self.env_steps)
        while True:
            await asyncio.sleep(self.config.env.progress_interval_secs)
            self.progress(self.env_steps, self._total_steps, meter.rate(self.env_steps), self._figures())

    def _figures(self) -> dict[str, float]:
        returns = self.batch.recent_returns
        return {
            "mean_episode_return": float(np.mean(returns)) if returns else 0.0,
            "episodes": float(self.counters["episodes"]),
            "loop_steps": float(self.step_index),
            "verdict_timeouts": float(self.counters["verdict_timeouts"]),
            **self.lag_figures(),
        }

    def lag_figures(self) -> dict[str, float]:
        """The LLM's part in the decisions (actors/env/pacing.py): the share with a thought at most K steps old,
        staleness extremes; in lockstep also late steps and the time the loop waited for thoughts."""
        figures = self.lag.figures()
        if figures:
            figures["llm_staleness_steps"] = self.decisions.summary()["llm_staleness_steps"]
        if self.gate is not None:
            figures.update(self.gate.figures(time.monotonic() - self._loop_started))
        return figures

    def gauges(self) -> dict[str, float]:
        # Names must differ from the counters' (episodes, verdict_timeouts): the stats log merges both.
        if self.batch is None:
            return {}
        elapsed = max(time.monotonic() - self._started, 1e-9)
        returns = self.batch.recent_returns
        return {
            "mean_episode_return": float(np.mean(returns)) if returns else 0.0,
            "loop_step": float(self.step_index),
            "env_steps_per_sec": self.env_steps / elapsed,
            **self.decision_latency_us(),
        }
