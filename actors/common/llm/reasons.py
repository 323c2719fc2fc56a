"""Reasons that agree with their action: a BUY does not give "downtrend" as its reason, a SELL not "uptrend".

The parser counts answers whose reason contradicts their action (``reason_contradicts_action``: the
model says one thing and does another), and the LoRA trainer never teaches such an answer: a target
whose label goes against the trend the prompt showed says so ("against the trend") instead.
"""

from __future__ import annotations

import re

from actors.common.actions import BUY, SELL

CONTRADICTING_WORDS: dict[int, str] = {BUY: "downtrend", SELL: "uptrend"}
"""The trend word a reason of each directional action must not give."""
AGAINST_THE_TREND = "against the trend"


def reason_contradicts(action: int, reason: str) -> bool:
    """True when ``reason`` names the trend opposite to ``action`` (word-bounded, any case)."""
    word = CONTRADICTING_WORDS.get(int(action))
    return word is not None and re.search(rf"\b{word}\b", reason, re.IGNORECASE) is not None


def agreeing_reason(action: int, reason: str) -> str:
    """``reason`` with a trend word contradicting ``action`` replaced by AGAINST_THE_TREND."""
    word = CONTRADICTING_WORDS.get(int(action))
    if word is None:
        return reason
    return re.sub(rf"\b{word}\b", AGAINST_THE_TREND, reason, flags=re.IGNORECASE)
