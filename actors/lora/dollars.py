"""What an adapter's answers are worth: each held-out answer valued as the trade it names, in hindsight dollars.

The match rate counts a $5 label like a $500 one, and a right answer where the move is small may still lose its
costs. A hindsight experience knows what a long and a short from its bar made (the triple barrier's stop, target
and horizon, one contract, costs paid: ``meta`` ``long_pnl_usd`` / ``short_pnl_usd``, actors/lora/matching.py), so an
answer is worth the long's P&L for BUY, the short's for SELL and nothing for HOLD. Across held-out prompts of later
days the mean says whether the reading is worth trading, beside one side everywhere and the labels themselves (the
oracle: the better side, or nothing, every time). Experiences without those figures (closed trades) are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from actors.common.actions import BUY, SELL
from actors.common.hindsight import action_pnl_usd
from actors.lora.experience import Experience
from actors.lora.publishing import paired_gain

LONG_KEY, SHORT_KEY = "long_pnl_usd", "short_pnl_usd"


def has_side_dollars(experience: Experience) -> bool:
    return LONG_KEY in experience.meta and SHORT_KEY in experience.meta


def answer_usd(answer: int, experience: Experience) -> float:
    """The hindsight dollars of ``answer`` at ``experience``'s bar: the long's P&L for BUY, the short's for SELL, 0 else."""
    return action_pnl_usd(answer, experience.meta[LONG_KEY], experience.meta[SHORT_KEY])


@dataclass(frozen=True, slots=True)
class DollarGain:
    """Mean hindsight dollars a held-out prompt of the current and the new answers, and the paired interval of the
    difference (NaN everywhere when no held-out prompt carries side dollars)."""

    before: float
    after: float
    gain_low: float
    gain_high: float
    n: int
    oracle: float
    """The labels' own dollars a prompt (the better side or nothing): what a perfect reader would make."""

    def metrics(self) -> dict[str, float]:
        if not self.n:
            return {}
        return {"usd_before": self.before, "usd_after": self.after, "usd_gain_low": self.gain_low,
                "usd_gain_high": self.gain_high, "usd_oracle": self.oracle}


def dollar_gain(held_out: Sequence[Experience], before: Sequence[int], after: Sequence[int], z: float) -> DollarGain:
    """``before`` and ``after`` answer ``held_out`` in order; only the prompts with side dollars count."""
    rows = [(e, b, a) for e, b, a in zip(held_out, before, after, strict=True) if has_side_dollars(e)]
    if not rows:
        nan = float("nan")
        return DollarGain(nan, nan, nan, nan, 0, nan)
    values_before = [answer_usd(b, e) for e, b, _ in rows]
    values_after = [answer_usd(a, e) for e, _, a in rows]
    gain, low, high = paired_gain(values_before, values_after, z)
    oracle = sum(max(answer_usd(BUY, e), answer_usd(SELL, e), 0.0) for e, _, _ in rows) / len(rows)
    mean_before = sum(values_before) / len(rows)
    return DollarGain(mean_before, mean_before + gain, low, high, len(rows), oracle)


def usd_text(metrics: dict[str, float]) -> str:
    """``+4.2 -> +7.8 a prompt, gain [+1.0, +6.2]; oracle +40.1`` from a round's metrics; '' when it has none."""
    if not math.isfinite(metrics.get("usd_after", float("nan"))):
        return ""
    return (f"{metrics['usd_before']:+,.1f} -> {metrics['usd_after']:+,.1f} $ a prompt, gain "
            f"[{metrics['usd_gain_low']:+,.1f}, {metrics['usd_gain_high']:+,.1f}]; the labels (oracle) {metrics['usd_oracle']:+,.1f}")
