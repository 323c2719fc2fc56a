"""Whether a trained adapter is published: better than the current one beyond doubt, and not collapsed.

Both adapters answer the same held-out prompts, so the test is paired: per prompt, the new
adapter's hit (1/0) minus the current one's; the mean of those differences is the gain in match
rate, and its standard error is their standard deviation over sqrt(n). Published only when the
whole interval (gain - z x se) is above zero: on 8 held-out bars a 0.25 -> 0.25 round was
published before this rule; now a gain must be larger than the noise of the prompts it is
measured on.

Above one answer everywhere: beating the current weights is not enough when those are the base model, which
answers HOLD where the labels are BUY or SELL. An adapter that answers BUY and SELL at random beats it by 40 points;
on the ``null`` market (nothing to read) such a round was published. So, where the labels are mixed (no label as
common as ``collapse_share``), the new answers must also beat the best single answer (the held-out labels'
commonest, chosen in hindsight: a generous floor) on the same prompts beyond the same paired interval.

Collapsed: one action on more than ``collapse_share`` of the held-out prompts while their labels
are mixed (no label that common). Small LLMs fine-tuned on trade outcomes fall into this (the
"hold collapse"); such an adapter is refused whatever its match rate, and the refusal is an
alarm (``lora_collapse``) in the logs and the version's metrics.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from actors.common.actions import ACTION_NAMES

NO_STEPS, NOT_BETTER, NOT_ABOVE_ONE_ANSWER, COLLAPSED, PUBLISHED = (
    "no_steps", "not_better", "not_above_one_answer", "collapse", "published")


@dataclass(frozen=True, slots=True)
class Verdict:
    publish: bool
    why: str
    """published | not_better | not_above_one_answer | collapse | no_steps."""
    before: float
    """Held-out match rate of the current (last published, else base) weights."""
    after: float
    gain_low: float
    """Lower end of the paired interval of after - before."""
    gain_high: float
    collapsed: bool
    top_action: str
    """The new weights' most common answer on the held-out prompts ..."""
    top_share: float
    """... and its share."""
    answer_mix: dict[str, float] = field(default_factory=dict)
    """Share of each answer of the new weights on the held-out prompts."""
    one_answer_gain_low: float = 0.0
    """Lower end of the paired interval of after - (one answer everywhere); inf when the labels are not mixed."""

    def metrics(self) -> dict[str, float]:
        return {"gain_low": self.gain_low, "gain_high": self.gain_high, "collapse": float(self.collapsed),
                **({"one_answer_gain_low": self.one_answer_gain_low} if math.isfinite(self.one_answer_gain_low) else {}),
                "top_share": self.top_share, **{f"answers_{name}": share for name, share in self.answer_mix.items()}}


def paired_gain(before_hits: Sequence[bool], after_hits: Sequence[bool], z: float) -> tuple[float, float, float]:
    """(mean, low, high) of after - before over the same prompts (0, 0, 0 for none)."""
    if len(before_hits) != len(after_hits):
        raise ValueError(f"paired hits differ in length: {len(before_hits)} vs {len(after_hits)}")
    n = len(after_hits)
    if n == 0:
        return 0.0, 0.0, 0.0
    diffs = [float(a) - float(b) for a, b in zip(after_hits, before_hits)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    half = z * math.sqrt(var / n) if n > 1 else math.inf  # one prompt proves nothing
    return mean, mean - half, mean + half


def is_collapsed(answers: Sequence[int], labels: Sequence[int], share: float) -> tuple[bool, int, float]:
    """(collapsed, most common answer, its share): one answer on more than ``share`` of the prompts while no label
    is that common (a task whose labels are all BUY is rightly answered BUY everywhere)."""
    if not answers:
        return False, 0, 0.0
    top, count = Counter(answers).most_common(1)[0]
    top_share = count / len(answers)
    label_share = Counter(labels).most_common(1)[0][1] / len(labels) if labels else 1.0
    return top_share > share and label_share <= share, int(top), top_share


def publish_verdict(before_answers: Sequence[int], after_answers: Sequence[int], labels: Sequence[int], *,
                    z: float, collapse_share: float, trained: bool = True) -> Verdict:
    """The rule of this module, on the answers of the current and the new weights to the same held-out prompts."""
    before_hits = [a == y for a, y in zip(before_answers, labels)]
    after_hits = [a == y for a, y in zip(after_answers, labels)]
    n = max(len(labels), 1)
    _, low, high = paired_gain(before_hits, after_hits, z)
    collapsed, top, top_share = is_collapsed(after_answers, labels, collapse_share)
    floor_low = _one_answer_gain_low(after_hits, labels, z, collapse_share)
    mix = Counter(after_answers)
    if not trained:
        why = NO_STEPS
    elif collapsed:
        why = COLLAPSED
    elif low <= 0:
        why = NOT_BETTER
    elif floor_low <= 0:
        why = NOT_ABOVE_ONE_ANSWER
    else:
        why = PUBLISHED
    return Verdict(why == PUBLISHED, why, sum(before_hits) / n, sum(after_hits) / n, low, high, collapsed,
                   ACTION_NAMES[top], top_share, {ACTION_NAMES[a]: mix[a] / n for a in sorted(mix)}, floor_low)


def _one_answer_gain_low(after_hits: Sequence[bool], labels: Sequence[int], z: float, mixed_below: float) -> float:
    """Lower end of the paired gain of the new answers over the labels' commonest answer everywhere; +inf (no floor
    to beat) when the labels are not mixed: a task whose labels are all BUY is rightly answered BUY everywhere."""
    if not labels:
        return math.inf
    commonest, count = Counter(labels).most_common(1)[0]
    if count / len(labels) > mixed_below:
        return math.inf
    return paired_gain([y == commonest for y in labels], after_hits, z)[1]
