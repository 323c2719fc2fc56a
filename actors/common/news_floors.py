"""Floors and a ceiling for the news market (actors/common/news_market.py): what reading the news is worth.

Each is a plain function of the events, priced in hindsight dollars at each event's bar: the decision when the
event has just become public, a long or a short entered at the next bar's open and closed by the triple barrier
(actors/common/hindsight.py, the LoRA labels' stop, target and horizon):

- ``keyword_actions``: a bag-of-words rule on the event's text with FIXED lists (KEYWORD_PHRASES, then
  KEYWORD_BULLISH, KEYWORD_BEARISH; written to cover every template of both news markets, so the floor is fair):
  BUY when more bullish than bearish words, SELL when fewer, HOLD on a tie; and for a release with its figures,
  the figure against its consensus read through the release's polarity (``keyword_event_sign``: above-consensus
  payrolls bullish, above-consensus CPI bearish), which words alone cannot tell;
- ``flat_actions``: stay flat around events (HOLD: $0, the prop-firm news rule's answer);
- ``oracle_actions``: the side of each surprise's sign, known (the ceiling of reading an event once it is public;
  on news_null it is worth nothing, as everything there).

``news_floor_figures`` gives them side by side with the keyword rule's accuracy on the words' signs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from actors.common.actions import BUY, HOLD, SELL
from actors.common.events import MarketEvent
from actors.common.hindsight import BarrierSpec, action_pnl_usd, triple_barrier_label
from actors.common.news_releases import RELEASES

KEYWORD_BULLISH = frozenset((
    "beat", "beats", "beating", "raise", "raises", "record", "buyback", "eases", "ease", "easing", "deal", "stimulus",
    "win", "wins", "strong", "stronger", "surge", "surges", "rally", "cooler", "cools", "dovish", "approves", "upgrade",
    "optimism", "progress", "boost", "cut", "cuts", "softer",
))
KEYWORD_BEARISH = frozenset((
    "miss", "misses", "missing", "probe", "tariff", "tariffs", "tighten", "tightens", "tightening", "weak", "weaker", "warn",
    "warns", "lose", "loses", "hike", "hikes", "hotter", "hawkish", "collapse", "downgrade", "fears", "fewer", "slump",
    "plunge", "sanctions", "firmer",
))
KEYWORD_PHRASES = {
    "rate cuts": 1, "cuts rates": 1, "cuts later": 1, "more cuts": 1, "drops tightening bias": 1, "qe restart": 1,
    "inflation easing": 1, "inflation is easing": 1, "dovish pivot": 1,
    "fewer cuts": -1, "cuts full-year guidance": -1, "cut its guidance": -1, "walks away": -1, "walk away": -1,
    "higher for longer": -1, "higher rates": -1, "re-accelerating": -1, "picking up": -1, "keeps tightening bias": -1,
    "not yet confident": -1, "faster qt": -1, "hawkish turn": -1,
}
"""Phrases read before single words (and removed, so "fewer cuts" is not also the bullish word "cuts")."""
"""Fixed, documented lists of generic market words (a floor anyone could write). Written beside the synthetic
templates, so they cover most of their verbs: on the words' own signs the rule is nearly always right where it takes
a side; what it cannot do is read a figure against its consensus ("above" or "higher" is good news for payrolls and
bad for CPI, so such words are in neither list)."""
_WORD = re.compile(r"[a-z]+")
NQ_LABEL = BarrierSpec(horizon_bars=60, stop_atr=3.0, target_atr=3.0, multiplier=20.0, cost_per_trade_usd=2 * 2.25 + 2 * 5.0)
"""The LoRA labels' barrier (lora.hindsight_*: 60 bars, 3 ATR stop and target) for one NQ contract ($20 a point),
costs of $2.25 commission a side and a tick ($5) of slippage a fill (ASSUMED NQ figures: the env's instrument
presets hold the run's own; pass a ``barrier_spec`` of actors/env/hindsight.py for those)."""
ATR_BARS = 14


def keyword_sign(text: str) -> int:
    """+1 when the text has more bullish than bearish phrases and words, -1 when fewer, 0 on a tie (none of either)."""
    lowered = text.lower()
    score = 0
    for phrase, sign in KEYWORD_PHRASES.items():
        score += sign * lowered.count(phrase)
        lowered = lowered.replace(phrase, " ")
    words = _WORD.findall(lowered)
    score += sum(word in KEYWORD_BULLISH for word in words) - sum(word in KEYWORD_BEARISH for word in words)
    return int(np.sign(score))


def keyword_event_sign(event: MarketEvent) -> int:
    """A release with its figures: sign(actual - consensus) x the release's polarity (0 when equal); otherwise the
    words' ``keyword_sign``."""
    release = RELEASES.get(event.name)
    if release is not None and math.isfinite(event.actual) and math.isfinite(event.consensus):
        return int(np.sign(event.actual - event.consensus) * release.polarity)
    return keyword_sign(event.text)


def keyword_actions(events: Sequence[MarketEvent]) -> np.ndarray:
    return np.array([_side(keyword_event_sign(event)) for event in events], dtype=np.int64)


def oracle_actions(surprise: np.ndarray) -> np.ndarray:
    return np.array([_side(int(np.sign(z))) for z in surprise], dtype=np.int64)


def flat_actions(n_events: int) -> np.ndarray:
    return np.full(n_events, HOLD, dtype=np.int64)


def _side(sign: int) -> int:
    return BUY if sign > 0 else SELL if sign < 0 else HOLD


def event_outcomes(bars: pd.DataFrame, event_bar: np.ndarray, spec: BarrierSpec = NQ_LABEL) -> tuple[np.ndarray, np.ndarray]:
    """(long $, short $) per event: entered at the open after the event's bar, closed by the barrier; NaN where the
    data ends before the horizon."""
    opens, highs, lows, closes = (bars[c].to_numpy(dtype=np.float64) for c in ("open", "high", "low", "close"))
    atr = simple_atr(highs, lows, closes)
    long, short = np.full(len(event_bar), np.nan), np.full(len(event_bar), np.nan)
    for i, bar in enumerate(event_bar.tolist()):
        label = triple_barrier_label(opens, highs, lows, closes, bar, float(atr[bar]), spec)
        if label is not None:
            long[i], short[i] = label.long.pnl_usd, label.short.pnl_usd
    return long, short


def simple_atr(highs: np.ndarray, lows: np.ndarray, closes: np.ndarray, bars: int = ATR_BARS) -> np.ndarray:
    """The mean true range of the last ``bars`` bars (the first bars use what there is)."""
    previous = np.concatenate(([closes[0]], closes[:-1]))
    true_range = np.maximum(highs, previous) - np.minimum(lows, previous)
    return pd.Series(true_range).rolling(bars, min_periods=1).mean().to_numpy()


def dollars(actions: np.ndarray, long: np.ndarray, short: np.ndarray) -> np.ndarray:
    """What each event's action made in hindsight (0 for HOLD; NaN rows are the data's end)."""
    return np.array([action_pnl_usd(int(a), l, s) for a, l, s in zip(actions, long, short)])


def news_floor_figures(events: Sequence[MarketEvent], event_bar: np.ndarray, surprise: np.ndarray, text_sign: np.ndarray,
                       bars: pd.DataFrame, spec: BarrierSpec = NQ_LABEL) -> dict[str, float]:
    """Per event, in hindsight $ (mean a priced event): the keyword rule, flat, the oracle; and the keyword rule's
    accuracy on the words' signs (of the events it takes a side on) and the share it takes a side on."""
    long, short = event_outcomes(bars, event_bar, spec)
    priced = ~np.isnan(long)
    keyword = keyword_actions(events)
    figures = {"events": float(priced.sum())}
    for name, actions in (("keyword", keyword), ("flat", flat_actions(len(events))), ("oracle", oracle_actions(surprise))):
        figures[f"{name}_usd_per_event"] = float(np.mean(dollars(actions[priced], long[priced], short[priced]))) if priced.any() else 0.0
    signs = np.array([keyword_event_sign(event) for event in events])
    sided = signs != 0
    figures["keyword_sided_share"] = float(sided.mean()) if len(signs) else 0.0
    figures["keyword_accuracy_on_words"] = float(np.mean(signs[sided] == text_sign[sided])) if sided.any() else 0.0
    figures["keyword_accuracy_on_surprise"] = float(np.mean(signs[sided] == np.sign(surprise[sided]))) if sided.any() else 0.0
    return figures
