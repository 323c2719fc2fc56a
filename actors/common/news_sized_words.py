"""The words of the literature-sized ``news`` market (actors/common/news_market.py): sign, tier and size.

On ``news`` what a reader can know from the words is how dangerous the next minutes are, so the words carry
the event's tier (a release's name says it; a headline about policy makers is ``medium``, one about a company
``low``) and the surprise's size (``SIZE_NAMES``: in line, modest, large, shock) as well as its sign:

- releases read their figure against the consensus, at a distance of ``|z|`` typical surprises (the release's
  ``spread``), with a verdict graded by size ("in line with", "slightly above", "well above", "far above ...
  a shock"); an in-line figure may equal its consensus;
- FOMC decisions in graded sentences ("Fed holds as expected" .. "Fed in surprise 75bp cut");
- headlines ``[lead-in] subject phrase [tail]`` with the size in the lead-in or tail ("SHOCK: ", ", as expected").

Some templates are HELD OUT (``HELD_OUT``: one release form of five, one FOMC sentence per side and size, one
headline tail of four per size): an event written with one is flagged (``WrittenEvent.held_out``) so training can drop it
and evaluation can score it apart, a reader must generalise to a wording it never saw (the documented split).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from actors.common.news_releases import ReleaseKind
from actors.common.news_words import (
    COMPANIES, COMPANY_BEARISH, COMPANY_BULLISH, POLICY_BEARISH, POLICY_BULLISH, POLICY_MAKERS,
)

SIZE_NAMES = ("in_line", "modest", "large", "shock")
SIZE_EDGES = (0.3, 1.0, 2.0)
"""|z| below 0.3 is in line, below 1.0 modest, below 2.0 large, else a shock (|z| ~ |N(0, 1)|: 24 / 44 / 27 / 5 %)."""

HEADLINE_LEAD_INS = {
    "in_line": ("", "Report: "),
    "modest": ("", "Report: ", "Sources: "),
    "large": ("BREAKING: ", "Big surprise: ", "Unexpected: "),
    "shock": ("SHOCK: ", "FLASH - stunning: ", "ALERT: shock move: "),
}
HEADLINE_TAILS = {
    "in_line": (", as expected", ", in line with expectations", ", as forecast", ", no surprise there"),
    "modest": ("", ", sources say", " - wire", ", people familiar say"),
    "large": (", a big surprise", ", catching markets off guard", ", a major surprise", ", well beyond forecasts"),
    "shock": (", stunning markets", " in a shock move", ", a shock to markets", ", a historic surprise"),
}
VERDICTS = {  # (above, below) by size; a release's polarity turns above into bullish or bearish
    "in_line": (("in line with", "in line with"), ("matching", "matching")),
    "modest": (("slightly above", "slightly below"), ("a touch above", "a touch below")),
    "large": (("well above", "well below"), ("sharply above", "sharply below")),
    "shock": (("far above", "far below"), ("massively above", "massively below")),
}
RELEASE_FORMS = (
    "{name} {actual}{unit}, {verdict} the {consensus}{unit} forecast",
    "{name} comes in at {actual}{unit}, {verdict} consensus {consensus}{unit}",
    "US {name}: {actual}{unit} (est. {consensus}{unit}, prior {previous}{unit}), {verdict} expectations",
    "{name} {actual}{unit} vs {consensus}{unit} expected",
    "{name} prints {actual}{unit}, {verdict} the {consensus}{unit} consensus",
)
SHOCK_SUFFIX = " - a shock"
FOMC = {  # (bullish, bearish) sentences by size
    "in_line": (("Fed holds rates as expected, tone a little softer", "Fed cuts 25bp as fully priced"),
                ("Fed holds rates as expected, tone a little firmer", "Fed holds as priced, no change to guidance")),
    "modest": (("Fed holds, signals cuts later this year", "FOMC statement drops tightening bias"),
               ("Fed holds, signals fewer cuts", "FOMC statement keeps tightening bias")),
    "large": (("Fed cuts 50bp, more than expected", "Powell surprises with dovish pivot"),
              ("Fed hikes 25bp in a surprise move", "Powell surprises with hawkish turn")),
    "shock": (("Fed in shock 75bp emergency-size cut", "Fed stuns markets with surprise QE restart"),
              ("Fed in shock 75bp hike", "Fed stuns markets with surprise hike and faster QT")),
}
HELD_OUT = frozenset((
    RELEASE_FORMS[4],
    *(pair[1] for sides in FOMC.values() for pair in sides),
    *(tails[-1] for tails in HEADLINE_TAILS.values()),
))
"""The templates training never sees (module docstring): the last release form, the second FOMC sentence of each side
and size, the last headline tail of each size (about a quarter of the events)."""


@dataclass(frozen=True)
class WrittenEvent:
    text: str
    importance: str
    held_out: bool
    actual: float = math.nan
    consensus: float = math.nan
    previous: float = math.nan


def size_name(size: float) -> str:
    """The size bucket of a surprise ``|z|`` (SIZE_EDGES)."""
    return SIZE_NAMES[int(np.searchsorted(SIZE_EDGES, abs(size), side="right"))]


def _pick(options: tuple[str, ...], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]


def sized_headline(sign: float, size: float, rng: np.random.Generator) -> WrittenEvent:
    """A headline whose words read ``sign`` and the size bucket of ``size``; policy news is medium, company news low."""
    policy = rng.random() < 0.5
    subjects = POLICY_MAKERS if policy else COMPANIES
    phrases = (POLICY_BULLISH if sign > 0 else POLICY_BEARISH) if policy else (COMPANY_BULLISH if sign > 0 else COMPANY_BEARISH)
    plain, hedged = _pick(phrases, rng)
    bucket = size_name(size)
    phrase = hedged if bucket in ("in_line", "modest") and rng.random() < 0.35 else plain
    lead, tail = _pick(HEADLINE_LEAD_INS[bucket], rng), _pick(HEADLINE_TAILS[bucket], rng)
    text = f"{lead}{_pick(subjects, rng)} {phrase}{tail}"
    return WrittenEvent(text[0].upper() + text[1:], "medium" if policy else "low", tail in HELD_OUT)


def sized_release(release: ReleaseKind, sign: float, size: float, rng: np.random.Generator) -> WrittenEvent:
    """A release line: its figure ``size`` typical surprises from the consensus the way ``sign`` reads for NQ."""
    bucket = size_name(size)
    if release.name.startswith("FOMC"):
        text = _pick(FOMC[bucket][0 if sign > 0 else 1], rng)
        return WrittenEvent(text, release.importance, text in HELD_OUT)
    consensus = round(release.consensus + rng.normal(0.0, release.spread / 2.0), release.decimals)
    distance = round(abs(size) * release.spread, release.decimals)
    actual = round(consensus + sign * release.polarity * distance, release.decimals)
    previous = round(consensus + rng.normal(0.0, release.spread / 2.0), release.decimals)
    above_words, below_words = zip(*VERDICTS[bucket])
    verdict = _pick(above_words if actual >= consensus else below_words, rng)
    form = _pick(RELEASE_FORMS, rng)

    def figure(value: float) -> str:
        return f"{value:.{release.decimals}f}"

    text = form.format(name=release.name, actual=figure(actual), consensus=figure(consensus), previous=figure(previous),
                       unit=release.unit, verdict=verdict)
    text += SHOCK_SUFFIX if bucket == "shock" else ""
    return WrittenEvent(text, release.importance, form in HELD_OUT, actual, consensus, previous)
