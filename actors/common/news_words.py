"""The words of the synthetic news market (actors/common/news_market.py): varied texts that carry a sign.

Hand-written because they are ours: the wording is the planted signal. A headline is
``[lead-in] subject + phrase [tail]``, the phrase drawn from a bullish or a bearish list, plain or hedged
("may", "is said to", "sources say"), so the same sign has hundreds of spellings and a reader must read
the meaning, not match one string. A release reads its figure against the consensus in one of several
forms, with or without a verdict word ("hotter than expected"), so the numbers alone can carry the sign.
"""

from __future__ import annotations

import math

import numpy as np

from actors.common.news_releases import ReleaseKind

COMPANIES = ("Nvidia", "Apple", "Microsoft", "Amazon", "Alphabet", "Meta", "Broadcom", "Tesla")
POLICY_MAKERS = ("the White House", "the Treasury", "Fed officials", "Congress", "Beijing", "the Commerce Department")
# (plain, hedged) phrases: company news for COMPANIES, policy news for POLICY_MAKERS.
COMPANY_BULLISH = (
    ("beats earnings estimates", "is expected to beat estimates"),
    ("raises full-year guidance", "may raise its guidance"),
    ("announces a large buyback", "is weighing a large buyback"),
    ("reports record demand", "may report record demand"),
    ("wins an antitrust ruling", "is likely to win an antitrust ruling"),
)
COMPANY_BEARISH = (
    ("misses earnings estimates", "is expected to miss estimates"),
    ("cuts full-year guidance", "may cut its guidance"),
    ("faces an antitrust probe", "could face an antitrust probe"),
    ("warns of weak demand", "may warn of weak demand"),
    ("loses a major court case", "is likely to lose a major court case"),
)
POLICY_BULLISH = (
    ("eases export curbs", "may ease export curbs"),
    ("signals rate cuts ahead", "is said to favour rate cuts"),
    ("reaches a trade deal", "is close to a trade deal"),
    ("approves new stimulus", "could approve new stimulus"),
    ("sees inflation easing", "hints inflation is easing"),
)
POLICY_BEARISH = (
    ("tightens export curbs", "may tighten export curbs"),
    ("signals rates stay higher for longer", "is said to favour higher rates"),
    ("walks away from trade talks", "may walk away from trade talks"),
    ("announces new tariffs", "is weighing new tariffs"),
    ("sees inflation re-accelerating", "hints inflation is picking up"),
)
LEAD_INS = ("", "", "", "BREAKING: ", "Report: ", "Sources: ", "Unconfirmed: ")
TAILS = ("", "", "", ", sources say", ", people familiar say", " - report", " - wire")
HEDGED_SHARE = 0.35
"""Share of headlines in the hedged form."""

RELEASE_FORMS = (
    "{name} {actual}{unit} vs {consensus}{unit} expected",
    "{name} comes in at {actual}{unit}, consensus {consensus}{unit}",
    "US {name}: {actual}{unit} (est. {consensus}{unit}, prior {previous}{unit})",
    "{name} {actual}{unit}, {verdict} the {consensus}{unit} forecast",
    "{name} prints {actual}{unit} against {consensus}{unit} expected",
)
FOMC_BULLISH = ("Fed cuts rates by 25bp", "Fed holds, signals cuts later this year", "Powell: policy well positioned to ease",
                "FOMC statement drops tightening bias", "Fed holds; dots show more cuts")
FOMC_BEARISH = ("Fed hikes rates by 25bp", "Fed holds, signals fewer cuts", "Powell: not yet confident inflation is beaten",
                "FOMC statement keeps tightening bias", "Fed holds; dots show fewer cuts")


def headline_text(sign: float, rng: np.random.Generator) -> str:
    """A headline whose words read ``sign`` (+1 bullish, -1 bearish) for the index."""
    if rng.random() < 0.5:
        subjects, phrases = COMPANIES, COMPANY_BULLISH if sign > 0 else COMPANY_BEARISH
    else:
        subjects, phrases = POLICY_MAKERS, POLICY_BULLISH if sign > 0 else POLICY_BEARISH
    plain, hedged = phrases[int(rng.integers(len(phrases)))]
    phrase = hedged if rng.random() < HEDGED_SHARE else plain
    subject = subjects[int(rng.integers(len(subjects)))]
    text = f"{LEAD_INS[int(rng.integers(len(LEAD_INS)))]}{subject} {phrase}{TAILS[int(rng.integers(len(TAILS)))]}"
    return text[0].upper() + text[1:]


def release_text(release: ReleaseKind, sign: float, size: float, rng: np.random.Generator) -> tuple[str, float, float, float]:
    """(text, actual, consensus, previous) of a release whose figure against consensus reads ``sign`` for NQ."""
    if release.name.startswith("FOMC"):
        choices = FOMC_BULLISH if sign > 0 else FOMC_BEARISH
        return choices[int(rng.integers(len(choices)))], math.nan, math.nan, math.nan
    step = 10.0 ** -release.decimals
    consensus = round(release.consensus + rng.normal(0.0, release.spread / 2.0), release.decimals)
    # At least one step away from the consensus, the way the words lean: bullish = above for activity, below for inflation.
    distance = max(round(size * release.spread, release.decimals), step)
    actual = round(consensus + sign * release.polarity * distance, release.decimals)
    previous = round(consensus + rng.normal(0.0, release.spread / 2.0), release.decimals)
    above = actual > consensus
    verdict = ("above" if above else "below") if rng.random() < 0.5 else (
        ("hotter than" if above else "cooler than") if "CPI" in release.name else ("beating" if above else "missing") if release.polarity > 0
        else ("above" if above else "below"))
    form = RELEASE_FORMS[int(rng.integers(len(RELEASE_FORMS)))]

    def figure(value: float) -> str:
        return f"{value:.{release.decimals}f}"

    text = form.format(name=release.name, actual=figure(actual), consensus=figure(consensus), previous=figure(previous),
                       unit=release.unit, verdict=verdict)
    return text, actual, consensus, previous


def calendar_line(release_name: str, consensus: float, unit: str = "") -> str:
    """A release as a calendar shows it before it is out."""
    return f"{release_name} (consensus {consensus:g}{unit})" if not math.isnan(consensus) else release_name
