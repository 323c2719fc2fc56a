"""How dangerous the next minutes are: the hindsight volatility label and the floors a risk read must beat.

The label (``forward_range_atr`` -> ``bucket``): the realised range of the next ``RISK_HORIZON_BARS`` (15) bars
(highest high minus lowest low after the decision bar, inside its session) in units of the ATR of the 14 bars
before the decision bar (what the market was like before the event), bucketed into RISK_LEVELS by thresholds
fitted on the training days (``fit_thresholds``: quantiles of every bar's range there, by default the 80th and
98th: ELEVATED is a one-in-five quarter hour, EXTREME a one-in-fifty one).

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
DEFAULT_QUANTILES = (0.80, 0.98)
"""ELEVATED: the range of a quarter hour one in five reaches; EXTREME: one in fifty. Chosen over (0.90, 0.99) and
(0.95, 0.995) as the split where the words tell most (docs/experiments/news.md: the oracle of tier and size gains 12
points over the commonest level at (0.80, 0.98), 3 and 0 at the others)."""

SIZE_WORDS = {
    "in_line": ("as expected", "in line", "matching", "no surprise", "as forecast"),
    "shock": ("shock", "stunning", "emergency", "massively", "far above", "far below", "alert"),
    "large": ("breaking", "big surprise", "major surprise", "unexpected", "surprise", "sharply", "well above", "well below",
              "off guard", "more than expected"),
}
"""Size words a keyword reader looks for: "in line" first ("no surprise" is not a surprise), then the strongest (none
of them: a modest surprise). Written from the TRAINING templates only (news_sized_words.HELD_OUT left out), as a
floor that read the training days would be: on held-out wordings ("a historic surprise", "Fed stuns markets",
"as fully priced") it may miss, as a trained reader may."""
MEDIUM_WORDS = ("fed", "powell", "white house", "treasury", "congress", "beijing", "commerce department")
"""A headline naming a policy maker reads medium importance; any other headline low."""


def forward_range_atr(highs: np.ndarray, lows: np.ndarray, closes: np.ndarray, bars: Sequence[int] | np.ndarray,
                      horizon: int = RISK_HORIZON_BARS) -> np.ndarray:
    """Per bar: the next ``horizon`` bars' range over the ATR of the ``RISK_ATR_BARS`` bars before it; NaN where the
    session ends first or no bar precedes it."""
    previous = np.concatenate(([closes[0]], closes[:-1]))
    true_range = np.maximum(highs, previous) - np.minimum(lows, previous)
    bars = np.asarray(bars, dtype=np.int64)
    out = np.full(len(bars), np.nan)
    ok = (bars >= 1) & (bars % BARS_PER_SESSION + horizon < BARS_PER_SESSION) & (bars + horizon < len(closes))
    if not ok.any():
        return out
    windows = np.lib.stride_tricks.sliding_window_view
    ahead_high, ahead_low = windows(highs[1:], horizon).max(axis=1), windows(lows[1:], horizon).min(axis=1)  # [i]: bars i+1..i+horizon
    summed = np.concatenate(([0.0], np.cumsum(true_range)))
    chosen = bars[ok]
    start = np.maximum(chosen - RISK_ATR_BARS, 0)
    atr = (summed[chosen] - summed[start]) / (chosen - start)
    spread = ahead_high[chosen] - ahead_low[chosen]
    out[ok] = np.where(atr > 0, spread / np.where(atr > 0, atr, 1.0), np.nan)
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


def event_risk_labels(market, thresholds: tuple[float, float]) -> np.ndarray:
    """Per event of a news market: the hindsight level of the next 15 bars after the bar that makes it public."""
    h, l, c = (market.bars[k].to_numpy(dtype=np.float64) for k in ("high", "low", "close"))
    return bucket(forward_range_atr(h, l, c, market.event_bar), thresholds)


def risk_floor_figures(market, train_fraction: float = 0.5, quantiles: tuple[float, float] = DEFAULT_QUANTILES) -> dict:
    """The floors' match with the hindsight level on the test days' event bars (the later ``1 - train_fraction`` of the
    days); thresholds and lookup tables fitted on the training days. Each match with its count (for an interval)."""
    h, l, c = (market.bars[k].to_numpy(dtype=np.float64) for k in ("high", "low", "close"))
    days = len(c) // BARS_PER_SESSION
    split_bar = int(round(days * train_fraction)) * BARS_PER_SESSION
    thresholds = fit_thresholds(forward_range_atr(h, l, c, np.arange(1, split_bar)), quantiles)
    labels = event_risk_labels(market, thresholds)
    train = (market.event_bar < split_bar) & (labels >= 0)
    test = (market.event_bar >= split_bar) & (labels >= 0)
    events = list(market.events)
    keys = {"calendar rule": [calendar_key(e) for e in events], "keyword rule": [keyword_key(e) for e in events],
            "oracle (tier, true size)": [oracle_key(e, z) for e, z in zip(events, market.surprise)],
            "always the commonest": ["one"] * len(events)}
    held = np.asarray(market.template_held_out, dtype=bool) if len(market.template_held_out) else np.zeros(len(events), bool)
    figures: dict = {"thresholds": thresholds, "test_events": int(test.sum()), "held_out_events": int((test & held).sum()),
                     "label_shares": [float(np.mean(labels[test] == level)) for level in range(3)]}
    for name, key in keys.items():
        table = LevelTable([key[i] for i in np.flatnonzero(train & ~held)], labels[train & ~held])
        predicted = table.predict(key)
        right = predicted == labels
        figures[name] = float(np.mean(right[test])) if test.any() else float("nan")
        figures[f"{name} held out"] = float(np.mean(right[test & held])) if (test & held).any() else float("nan")
    return figures


def main(argv: list[str] | None = None) -> None:
    """The risk floors' match with the hindsight volatility level on news and news_null::

        python -m actors.common.news_risk --days 250 --seeds 3
    """
    import argparse

    from actors.common.news_market import generate_news_market

    parser = argparse.ArgumentParser(description=main.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=250)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    for name in ("news", "news_null"):
        runs = [risk_floor_figures(generate_news_market(args.days, seed=seed, news=name)) for seed in range(args.seeds)]
        n = sum(r["test_events"] for r in runs)
        shares = np.mean([r["label_shares"] for r in runs], axis=0)
        print(f"{name}: {n} test events over {args.seeds} seeds x {args.days} days (the later half of each); label shares "
              f"CALM/ELEVATED/EXTREME {shares[0]:.2f}/{shares[1]:.2f}/{shares[2]:.2f}; thresholds (ATR) "
              + ", ".join(f"{r['thresholds'][0]:.2f}/{r['thresholds'][1]:.2f}" for r in runs))
        held = sum(r["held_out_events"] for r in runs)
        for floor in ("calendar rule", "keyword rule", "oracle (tier, true size)", "always the commonest"):
            match = sum(r[floor] * r["test_events"] for r in runs) / n
            on_held = sum(r[f"{floor} held out"] * r["held_out_events"] for r in runs if r["held_out_events"]) / max(held, 1)
            print(f"  {floor:<26} match {match:.3f} {_interval(match, n)}; on the {held} held-out-template events "
                  f"{on_held:.3f} {_interval(on_held, held)}")


def _interval(share: float, n: int) -> str:
    half = 1.96 * math.sqrt(share * (1 - share) / max(n, 1))
    return f"[{share - half:.3f}, {share + half:.3f}]"


if __name__ == "__main__":
    main()
