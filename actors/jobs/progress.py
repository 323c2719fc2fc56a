"""How a running job shows its progress: a tqdm bar on a terminal, a line every few seconds otherwise."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from actors.common.figures import FIGURES, brief_of
from bus.messages import Progress

if TYPE_CHECKING:
    from actors.jobs.config import Config

LINE_INTERVAL_SECS = 5.0
"""Without a terminal, one progress line per this many seconds (logs stay readable)."""


def console_enabled(config: Config, quiet: bool) -> bool:
    if quiet or config.logging.console == "off":
        return False
    return config.logging.console == "on" or sys.stderr.isatty()


class ProgressView:
    """Renders one actor's sys.progress (steps, steps/s, ETA) with the latest figures of every actor."""

    SHOWN_FIGURES = ("mean_episode_return", "approx_kl", "clip_fraction", "explained_variance", "thoughts", "episodes",
                     "lag_query_rate", "llm_staleness_max_steps", "late_steps", "thought_wait_share", "query_rate")

    def __init__(self, actor: str, label: str, enabled: bool) -> None:
        self.actor = actor
        self.label = label
        self.enabled = enabled
        self.bar = None
        self._last_line = 0.0
        self.figures: dict[str, float] = {}

    def update(self, msg: Progress) -> None:
        if not self.enabled or msg.actor != self.actor:
            self.figures.update(msg.figures)
            return
        if "warmup_bars_needed" in msg.figures:  # paper env: its features warming up, before any decision
            self._print_warmup(msg)
            return
        self.figures.update(msg.figures)
        figures = {brief_of(k): figure_text(k, self.figures[k]) for k in self.SHOWN_FIGURES if k in self.figures and self._defined(k)}
        if sys.stderr.isatty():
            self._draw_bar(msg, figures)
        elif time.monotonic() - self._last_line > LINE_INTERVAL_SECS:
            self._last_line = time.monotonic()
            self._print_line(msg, figures)

    def _defined(self, key: str) -> bool:
        """False for a figure that has no value yet: a mean return before any episode ended, a staleness before any thought."""
        if key == "mean_episode_return":
            return self.figures.get("episodes", 0.0) > 0
        if key.startswith("llm_staleness"):
            return self.figures[key] >= 0
        return True

    def _draw_bar(self, msg: Progress, figures: dict[str, str]) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=msg.total_steps or None, desc=self.label, unit="step", dynamic_ncols=True)
        self.bar.n = msg.steps
        self.bar.set_postfix(figures, refresh=False)
        self.bar.refresh()

    def _print_line(self, msg: Progress, figures: dict[str, str]) -> None:
        extra = ", ".join(f"{k} {v}" for k, v in figures.items())
        print(f"{self.label}: {steps_text(msg)}, {rate_text(msg.steps_per_sec)} steps/s{eta_text(msg)}{' · ' + extra if extra else ''}",
              file=sys.stderr, flush=True)

    def _print_warmup(self, msg: Progress) -> None:
        known, needed = int(msg.figures.get("warmup_bars_known", 0)), int(msg.figures["warmup_bars_needed"])
        text = f"warmed up: {needed} bars known, deciding" if known >= needed else f"warming up: {known} of {needed} bars"
        print(f"{self.label}: {text}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def figure_text(name: str, value: float) -> str:
    figure = FIGURES.get(name)
    return figure.text(value) if figure else f"{value:.3g}"


def steps_text(msg: Progress) -> str:
    """``steps/total steps``; past the total (the loop plays on while the job finishes its other work, e.g. a LoRA
    round beside a policy whose budget is spent) the total reads as reached, not as a count gone wrong."""
    if not msg.total_steps:
        return f"{msg.steps} steps"
    if msg.steps > msg.total_steps:
        return f"{msg.steps} steps (budget {msg.total_steps} reached, finishing)"
    return f"{msg.steps}/{msg.total_steps} steps"


def eta_text(msg: Progress) -> str:
    if not msg.total_steps or msg.steps_per_sec <= 0 or msg.steps >= msg.total_steps:
        return ""
    return f" eta {(msg.total_steps - msg.steps) / msg.steps_per_sec:.0f}s"


def rate_text(steps_per_sec: float) -> str:
    """Whole steps at full speed, two significant digits at the LLM's pace (0.4 steps/s is not 0)."""
    return f"{steps_per_sec:.0f}" if steps_per_sec >= 10 else f"{steps_per_sec:.2g}"
