"""The tape: a compact numeric view of the last bars, the part of a prompt a hindsight label depends on.

Three trend words ("uptrend, above VWAP, momentum positive") are too coarse for the LLM to
learn a triple-barrier label from: a trend of the synthetic ``regimes`` market is readable
from the returns of its last 30-60 bars (actors/common/synthetic.py), so the prompt shows
them. One line, numbers only, rendered last in the context templates (the fixed text
before it stays in llama.cpp's KV cache):

    moves +1 +2 0 +1 -1 +2 +1 +1 0 +2 +1 +1 | 20 bars +2.4 ATR | 60 bars +9.5 ATR | range 92% | ATR 24 ticks | VWAP +1.3 ATR | 180 min to flat

- moves: the return of each of the last TAPE_STEPS blocks of STEP_BARS bars, oldest first, in
  ATRs rounded to a whole number and clipped to +-MAX_BUCKET (bucketed: the shape, not noise);
- 20 / 60 bars: the close's move over the last 20 and TAPE_BARS bars, in ATRs;
- range: where the close sits in the high-low range of the last TAPE_BARS bars (0 % low, 100 % high);
- ATR in ticks, the distance to VWAP in ATRs, minutes to the forced flat.

``tape_numbers`` reads the numbers back from the text: the learnability ceiling's classifier
(actors/lora/ceiling.py) is trained on exactly what the LLM is shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

STEP_BARS = 5
TAPE_STEPS = 12
TAPE_BARS = STEP_BARS * TAPE_STEPS
"""Bars the tape covers (60: the horizon of the momentum rule that captures ~40 % of the oracle)."""
SHORT_BARS = 20
MAX_BUCKET = 3
TAPE_FEATURES = TAPE_STEPS + 6
"""Numbers in a full tape line: the moves, two longer moves, range, ATR, VWAP, minutes."""

_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


def market_tape(highs: Sequence[float], lows: Sequence[float], closes: Sequence[float], t: int, atr: float,
                tick_size: float, vwap_distance_pct: float, minutes_to_flat: float) -> str:
    """The tape line of bar ``t`` ("" before there are TAPE_BARS bars behind it, or without a usable ATR)."""
    if t < TAPE_BARS or atr <= 0 or tick_size <= 0:
        return ""
    close = float(closes[t])
    moves = []
    for block in range(TAPE_STEPS, 0, -1):  # oldest block first: the line reads left to right in time
        end, start = t - (block - 1) * STEP_BARS, t - block * STEP_BARS
        moves.append(_bucket((float(closes[end]) - float(closes[start])) / atr))
    high = max(float(h) for h in highs[t - TAPE_BARS + 1: t + 1])
    low = min(float(x) for x in lows[t - TAPE_BARS + 1: t + 1])
    position = 50 if high <= low else round(100 * (close - low) / (high - low))
    vwap_atr = vwap_distance_pct / 100.0 * close / atr
    return tape_line(moves, (close - float(closes[t - SHORT_BARS])) / atr, (close - float(closes[t - TAPE_BARS])) / atr, position,
                     round(atr / tick_size), vwap_atr, max(round(minutes_to_flat), 0))


def tape_line(moves: Sequence[int], short_atr: float, long_atr: float, range_pct: int, atr_ticks: int, vwap_atr: float,
              minutes: int) -> str:
    """The tape's text from its numbers (shared with the env's per-data-set table, actors/env/tape_table.py)."""
    return (f"moves {' '.join(_signed_int(m) for m in moves)}"
            f" | {SHORT_BARS} bars {short_atr:+.1f} ATR"
            f" | {TAPE_BARS} bars {long_atr:+.1f} ATR"
            f" | range {range_pct}% | ATR {atr_ticks} ticks | VWAP {vwap_atr:+.1f} ATR"
            f" | {minutes} min to flat")


def tape_numbers(text: str) -> list[float] | None:
    """The numbers of a tape line, in order (what the classifier of the ceiling reads); None when the text
    is not a full tape (an empty tape before enough bars, or a template without it)."""
    numbers = [float(n) for n in _NUMBER.findall(text.replace(f"{SHORT_BARS} bars", "").replace(f"{TAPE_BARS} bars", ""))]
    return numbers if len(numbers) == TAPE_FEATURES else None


def _bucket(move_atr: float) -> int:
    return max(-MAX_BUCKET, min(MAX_BUCKET, round(move_atr)))


def _signed_int(value: int) -> str:
    return f"{value:+d}" if value else "0"
