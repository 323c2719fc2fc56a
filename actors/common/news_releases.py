"""The scheduled releases of the synthetic news market: what each is called, when it comes out, which way its surprise
reads for NQ and how its figure is written.

A module of its own because both the market (actors/common/news_market.py, which schedules them) and its words
(actors/common/news_words.py, which writes their figures against consensus) read it; in either one the other would
have to import back up.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReleaseKind:
    name: str
    importance: str
    time_et: str
    polarity: float
    """+1: a figure above consensus reads bullish for NQ (activity); -1: bearish (inflation, jobless claims)."""
    consensus: float
    spread: float
    """Typical |actual - consensus| for a one-sigma surprise, in the figure's unit."""
    unit: str
    decimals: int


RELEASES: dict[str, ReleaseKind] = {kind.name: kind for kind in (
    ReleaseKind("CPI y/y", "high", "08:30", -1.0, 3.1, 0.2, "%", 1),
    ReleaseKind("Nonfarm Payrolls", "high", "08:30", +1.0, 180.0, 60.0, "K", 0),
    ReleaseKind("Retail Sales m/m", "medium", "08:30", +1.0, 0.3, 0.4, "%", 1),
    ReleaseKind("Initial Jobless Claims", "medium", "08:30", -1.0, 220.0, 15.0, "K", 0),
    ReleaseKind("ISM Manufacturing PMI", "medium", "10:00", +1.0, 49.0, 1.2, "", 1),
    ReleaseKind("Consumer Sentiment", "low", "10:00", +1.0, 68.0, 3.0, "", 1),
    ReleaseKind("FOMC rate decision", "high", "14:00", +1.0, 0.0, 1.0, "", 0),
)}
