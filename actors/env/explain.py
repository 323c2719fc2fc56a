"""What the backtest report explains beyond the bars: where entries went (EntriesFunnel) and the
envs' bar histories joined into one run (run_history). Plain Python, fed by the env actor."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from actors.common.actions import BUY, SELL
from actors.env.batch import BarHistory

ENTRIES = (BUY, SELL)


@dataclass(frozen=True)
class VerdictRow:
    """One env's risk.verdict for a step."""

    action: int
    vetoed: bool
    reason: str
    halt: str


class EntriesFunnel:
    """Where entries went, over the flat decisions of a run. Stages (each decision counts in one):
    masked (the env allowed no entry: flat time, end of data), policy_hold (RL proposed no entry),
    fusion_hold (RL proposed one, fusion decided otherwise), vetoed_<reason> (risk changed it),
    refused_by_env (the env's masks turned the verdict's entry into HOLD), verdict_timeout (no verdict
    in time), executed; plus flat_bars (all flat decisions), proposed (RL entries) and
    no_fusion_decision (flat decisions with no fusion.decision to read: stages from the verdict only)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, entry_allowed: bool, fusion_row: tuple[int, int] | None, verdict: VerdictRow | None, executed: int) -> None:
        """One flat decision: ``fusion_row`` = (RL action, fused action) or None."""
        counts = self.counts
        counts["flat_bars"] += 1
        if not entry_allowed:
            counts["masked"] += 1
            return
        if fusion_row is None:
            counts["no_fusion_decision"] += 1
            if verdict is None or (not verdict.vetoed and verdict.action not in ENTRIES):
                return
        else:
            rl_action, fused = fusion_row
            if rl_action not in ENTRIES:
                counts["policy_hold"] += 1
                return
            counts["proposed"] += 1
            if fused not in ENTRIES:
                counts["fusion_hold"] += 1
                return
        if verdict is None:
            counts["verdict_timeout"] += 1
        elif verdict.vetoed and verdict.action not in ENTRIES:
            counts[f"vetoed_{verdict.reason or 'unknown'}"] += 1
        elif executed not in ENTRIES:
            counts["refused_by_env"] += 1
        else:
            counts["executed"] += 1

    def as_dict(self) -> dict[str, float]:
        order = ["flat_bars", "masked", "policy_hold", "proposed", "fusion_hold"]
        keys = order + sorted(key for key in self.counts if key.startswith("vetoed_")) + ["refused_by_env", "verdict_timeout", "executed", "no_fusion_decision"]
        return {key: float(self.counts.get(key, 0)) for key in keys if key in order or key == "executed" or self.counts.get(key)}


def run_history(histories: list[BarHistory], start_balance: float) -> BarHistory:
    """The envs' bars end to end (env order is time order in a backtest), equity chained into one run:
    a new evaluation account starts again at ``start_balance``, so only its change since then is carried."""
    parts = [history for history in histories if len(history.times_ns)]
    if not parts:
        return histories[0]
    increments = []
    for history in parts:
        new_account = np.concatenate(([True], history.evaluation[1:] != history.evaluation[:-1]))
        previous = np.concatenate(([start_balance], history.equity[:-1]))
        increments.append(history.equity - np.where(new_account, start_balance, previous))
    joined = {name: np.concatenate([getattr(history, name) for history in parts]) for name in ("times_ns", "close", "high", "low", "position", "evaluation")}
    return BarHistory(equity=start_balance + np.cumsum(np.concatenate(increments)), **joined)
