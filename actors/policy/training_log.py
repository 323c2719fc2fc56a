"""SB3's logger wired to TensorBoard and to structured log events, and the frozen-policy watch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat

Figures = dict[str, float]


def figure_name(sb3_key: str) -> str:
    """'train/approx_kl' -> 'approx_kl'; other sections keep their prefix ('rollout_ep_rew_mean')."""
    section, _, name = sb3_key.partition("/")
    if not name:
        return section
    return name if section == "train" else f"{section}_{name}"


class FiguresWriter(KVWriter):
    """An SB3 output format that hands each dump, as plain floats, to a callback (a ppo_update log event)."""

    def __init__(self, emit: Callable[[Figures], None]) -> None:
        self._emit = emit

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        figures: Figures = {"num_timesteps": float(step)}
        for key, value in key_values.items():
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                figures[figure_name(key)] = float(value)
        self._emit(figures)

    def close(self) -> None:
        pass


def make_training_logger(tensorboard_dir: Path | None, emit: Callable[[Figures], None]) -> Logger:
    """SB3 Logger writing TensorBoard event files (when a directory is given) and figure callbacks."""
    formats: list[KVWriter] = [FiguresWriter(emit)]
    folder = None
    if tensorboard_dir is not None:
        tensorboard_dir.mkdir(parents=True, exist_ok=True)
        folder = str(tensorboard_dir)
        formats.append(TensorBoardOutputFormat(folder))
    return Logger(folder=folder, output_formats=formats)


class FrozenPolicyWatch:
    """Counts consecutive PPO updates whose approx_kl is below a threshold.

    The seeds' run 004 trained 82k steps with approx_kl ~1e-10 and clip_fraction 0 without
    anyone noticing; this makes that state a loud, repeated warning.
    """

    def __init__(self, kl_threshold: float, warn_after_updates: int) -> None:
        self.kl_threshold = kl_threshold
        self.warn_after_updates = warn_after_updates
        self.consecutive_frozen = 0

    def observe(self, approx_kl: float) -> bool:
        """Record one update; True when the policy now counts as frozen (warn)."""
        if not np.isfinite(approx_kl) or approx_kl < self.kl_threshold:
            self.consecutive_frozen += 1
        else:
            self.consecutive_frozen = 0
        return self.consecutive_frozen >= self.warn_after_updates
