"""How dangerous the next minutes are: the hindsight volatility label and the floors a risk read must beat.

The label (``forward_range_atr`` -> ``bucket``): the realised range of the next ``RISK_HORIZON_BARS`` (15) bars
(highest high minus lowest low after the decision bar, inside its session) in units of the ATR of the 14 bars
before the decision bar (what the market was like before the event), bucketed into RISK_LEVELS by thresholds
fitted on the training days (``fit_thresholds``: quantiles of every bar's range there, by default the 90th and
99th: ELEVATED is a one-in-ten quarter hour, EXTREME a one-in-a-hundred one).

The floors, each a lookup fitted on the training days' event bars (the label's most common level per key, so
each is the best its information allows) and scored on the test days' event bars:

- ``calendar_key``: what a prop firm's economic calendar knows: a scheduled release's tier; every headline is
  "unscheduled" (the calendar cannot see it coming);
- ``keyword_key``: a word-list reading of tier and size (``SIZE_WORDS``, ``MEDIUM_WORDS``; a release's figure
  against its consensus in units of its typical surprise, actors/common/news_releases.py ``spread``);
- ``oracle_key``: the event's true tier and surprise size (worth nothing on ``news_null``, as the words).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

from actors.common.events import MarketEvent
from actors.common.news_releases import RELEASES
from actors.common.news_sized_words import size_name
from actors.common.synthetic import BARS_PER_SESSION

RISK_LEVELS = ("CALM", "ELEVATED", "EXTREME")
CALM, ELEVATED, EXTREME = range(3)
RISK_HORIZON_BARS = 15
RISK_ATR_BARS = 14
DEFAULT_QUANTILES = (0.90, 0.99)

SIZE_WORDS = {
    "in_line": ("as expected", "in line", "matching", "no surprise", "as priced", "fully priced", "as forecast"),
    "shock": ("shock", "stunning", "stuns", "historic", "emergency", "massively", "far above", "far below", "alert"),
    "large": ("breaking", "big surprise", "major surprise", "unexpected", "surprise", "surprises", "sharply", "well above",
              "well below", "off guard", "more than expected", "beyond forecasts"),
}
"""Size words a keyword reader looks for: "in line" first ("no surprise" is not a surprise), then the strongest (none
of them: a modest surprise)."""
MEDIUM_WORDS = ("fed", "powell", "white house", "treasury", "congress", "beijing", "commerce department")
"""A headline naming a policy maker reads medium importance; any other headline low."""


def forward_range_atr(highs: np.ndarray, lows: np.ndarray, closes: np.ndarray, bars: Sequence[int] | np.ndarray,
                      horizon: int = RISK_HORIZON_BARS) -> np.ndarray:
    """Per bar: the next ``horizon`` bars' range over the ATR of the ``RISK_ATR_BARS`` bars before it; NaN where the
    session ends first or no bar precedes it."""
    previous = np.concatenate(([closes[0]], closes[:-1]))
    true_range = np.maximum(highs, previous) - np.minimum(lows, previous)
    out = np.full(len(bars), np.nan)
    for i, bar in enumerate(np.asarray(bars, dtype=np.int64).tolist()):
        if bar < 1 or bar % BARS_PER_SESSION + horizon >= BARS_PER_SESSION:
            continue
        atr = true_range[max(bar - RISK_ATR_BARS, 0):bar].mean()
        if atr > 0:
            out[i] = (highs[bar + 1:bar + 1 + horizon].max() - lows[bar + 1:bar + 1 + horizon].min()) / atr
    return out


def fit_thresholds(ranges: np.ndarray, quantiles: tuple[float, float] = DEFAULT_QUANTILES) -> tuple[float, float]:
    """(ELEVATED, EXTREME) thresholds: quantiles of the training days' ranges (NaNs ignored)."""
    finite = ranges[np.isfinite(ranges)]
    if len(finite) == 0:
        raise ValueError("no finite range to fit risk thresholds on")
    low, high = np.quantile(finite, quantiles)
    return float(low), float(high)


def bucket(ranges: np.ndarray, thresholds: tuple[float, float]) -> np.ndarray:
    """RISK_LEVELS indices (-1 where the range is NaN)."""
    levels = np.searchsorted(np.asarray(thresholds), np.nan_to_num(ranges, nan=0.0), side="right")
    return np.where(np.isfinite(ranges), levels, -1).astype(np.int64)


def calendar_key(event: MarketEvent) -> Hashable:
    return event.importance if event.kind == "release" else "unscheduled"


def oracle_key(event: MarketEvent, surprise: float) -> Hashable:
    return event.importance, size_name(surprise)


def keyword_key(event: MarketEvent) -> Hashable:
    """(tier, size) as word lists and a figure against its consensus read them."""
    if event.kind == "release":
        tier = event.importance
    else:
        tier = "medium" if any(_has(event.text, word) for word in MEDIUM_WORDS) else "low"
    return tier, keyword_size(event)


def keyword_size(event: MarketEvent) -> str:
    release = RELEASES.get(event.name)
    if release is not None and math.isfinite(event.actual) and math.isfinite(event.consensus):
        return size_name(abs(event.actual - event.consensus) / release.spread)
    for size, words in SIZE_WORDS.items():
        if any(_has(event.text, word) for word in words):
            return size
    return "modest"


def _has(text: str, phrase: str) -> bool:
    return re.search(rf"\b{re.escape(phrase)}\b", text.lower()) is not None


class LevelTable:
    """The most common label per key on the training rows; an unseen key gets the overall most common one."""

    def __init__(self, keys: Sequence[Hashable], labels: Sequence[int]) -> None:
        kept = [(k, int(v)) for k, v in zip(keys, labels) if v >= 0]
        if not kept:
            raise ValueError("no labelled row to fit a risk table on")
        by_key: dict[Hashable, Counter[int]] = {}
        for key, level in kept:
            by_key.setdefault(key, Counter())[level] += 1
        self.table = {key: counts.most_common(1)[0][0] for key, counts in by_key.items()}
        self.default = Counter(level for _, level in kept).most_common(1)[0][0]

    def predict(self, keys: Sequence[Hashable]) -> np.ndarray:
        return np.array([self.table.get(key, self.default) for key in keys], dtype=np.int64)
