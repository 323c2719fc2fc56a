"""The moves of the literature-sized ``news`` market: a jump in the release bar, a volatility burst, extra volume, no drift.

What the literature says and what is planted here (``BURSTS`` and ``JUMPS`` hold the figures, ASSUMPTIONS of their order):

- the price adjusts at once: E-mini S&P futures react to macro releases within milliseconds and show no drift
  after them (Chordia, Green and Kottimukkalur 2018, RFS; Hu, Pan and Wang 2017/2022); in Ederington and Lee
  (1993 JF, 1995 JFQA) most of the move is done within the first minute. Here the whole jump is in the event's
  bar (``sign x |z| x JUMPS[tier]``: 0.40 %, 0.15 %, 0.08 % per typical surprise, as on ``news_drift``) and
  nothing drifts after it;
- volatility stays high for about fifteen minutes and its size is predictable from the release's importance
  and the surprise's size (Ederington and Lee 1993: volatility elevated ~15 minutes, slightly for hours). Here
  each bar's sigma after an event is multiplied by ``1 + boost x s x exp(-k / (decay x (0.5 + 0.5 s)))``,
  ``k`` minutes after the event, ``s = 0.3 + 0.7 |z|`` (an in-line release still stirs the market);
  ``boost, decay`` = 4.0, 10 min (high), 1.5, 6 min (medium), 0.6, 4 min (low). A large CPI surprise
  (|z| = 2) multiplies sigma ~7.8 at once and ~2 fifteen minutes later; a quiet company headline barely moves it;
- volume: the base market's volume follows sigma's burst (x sqrt of the factor) and the event's bar trades
  ``1 + VOLUME_SPIKE[tier] x s`` times its volume (volume spikes on announcement minutes);
- releases at 08:30 ET come out an hour before the regular session: their jump is in the opening gap, their
  burst's clock starts at 08:30 (mostly spent by 09:30), and the open is wilder by the base market's own
  rule for a gap (``gap_open_boost`` per overnight sigma of the added gap).

Not planted (said so on purpose): a pre-release drift (Kurov, Sancetta, Strasser and Wolfe 2019 find part of
the move before some releases) and a regime-dependent polarity (Andersen, Bollerslev, Diebold and Vega 2007:
equities' sign of reaction depends on the state of the economy); each would make the direction harder still
and changes nothing a risk read depends on. The polarity of each release is fixed (news_releases.py).

``news_null`` keeps the same events and words; its bursts and jumps have the same tiers and sizes (shuffled among
the events) at bars drawn independently of the events, in signs drawn independently: the words say nothing of
when the market will be dangerous.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from actors.common.realistic import RealisticPieces, RealisticScenario
from actors.common.synthetic import BARS_PER_SESSION

JUMPS = {"high": 0.0040, "medium": 0.0015, "low": 0.0008}
"""Importance -> the jump in the event's bar as a log return per typical surprise (|z| = 1)."""
BURSTS = {"high": (4.0, 10.0), "medium": (1.5, 6.0), "low": (0.6, 4.0)}
"""Importance -> (sigma boost at s = 1, decay in minutes at s = 1) (module docstring)."""
VOLUME_SPIKE = {"high": 3.0, "medium": 1.5, "low": 0.7}
PRE_OPEN_MINUTES = 60
"""08:30 releases: minutes from the release to the regular session's first bar."""
BURST_REACH_BARS = 120
"""A burst's factor is computed over this many bars after its event (exp(-120 / 27) < 0.012 at the longest)."""


def intensity(size: np.ndarray | float) -> np.ndarray:
    """``s = 0.3 + 0.7 |z|``: how hard an event of surprise size ``|z|`` stirs the market."""
    return 0.3 + 0.7 * np.abs(size)


def burst_factor(importance: str, size: float, minutes_after: np.ndarray) -> np.ndarray:
    """The sigma multiplier ``minutes_after`` the event (the module docstring's formula)."""
    boost, decay = BURSTS[importance]
    s = float(intensity(size))
    return 1.0 + boost * s * np.exp(-np.asarray(minutes_after, dtype=np.float64) / (decay * (0.5 + 0.5 * s)))


def apply_bursts(pieces: RealisticPieces, market: RealisticScenario, event_bar: np.ndarray, pre_open: np.ndarray,
                 signed_size: np.ndarray, importance: list[str], effect_scale: float = 1.0) -> tuple[RealisticPieces, np.ndarray]:
    """(pieces with sigma, gaps and jump_burst raised, the extra jumps days x 390) for events at ``event_bar``
    (``pre_open``: an 08:30 release whose jump is in the gap and whose burst started an hour before the open)."""
    days = pieces.sigma.shape[0]
    flat_factor = np.ones(days * BARS_PER_SESSION)
    extra_jumps = np.zeros(days * BARS_PER_SESSION)
    gaps = pieces.gaps.copy()
    open_boost = np.zeros(days)
    for bar, before_open, size, level in zip(event_bar.tolist(), pre_open.tolist(), signed_size.tolist(), importance):
        day, minute = divmod(bar, BARS_PER_SESSION)
        end = min((day + 1) * BARS_PER_SESSION, bar + BURST_REACH_BARS)
        elapsed = np.arange(end - bar) + (PRE_OPEN_MINUTES if before_open else 0)
        boost = (burst_factor(level, abs(size), elapsed) - 1.0) * effect_scale
        flat_factor[bar:end] += boost
        jump = size * JUMPS[level] * effect_scale
        if before_open and minute == 0:
            gaps[day] += jump
            open_boost[day] += market.gap_open_boost * abs(jump) / market.overnight_sigma
        else:
            extra_jumps[bar] += jump
    factor = flat_factor.reshape(days, BARS_PER_SESSION)
    factor = factor * (1.0 + open_boost[:, None] * np.exp(-np.arange(BARS_PER_SESSION)[None, :] / 30.0))
    raised = replace(pieces, sigma=pieces.sigma * factor, gaps=gaps, jump_burst=pieces.jump_burst * factor)
    return raised, extra_jumps.reshape(days, BARS_PER_SESSION)


def spike_volume(volume: np.ndarray, event_bar: np.ndarray, size: np.ndarray, importance: list[str]) -> np.ndarray:
    """The event bars' volume times ``1 + VOLUME_SPIKE[tier] x s``."""
    out = volume.astype(np.float64).copy()
    for bar, z, level in zip(event_bar.tolist(), size.tolist(), importance):
        out[bar] *= 1.0 + VOLUME_SPIKE[level] * float(intensity(z))
    return np.round(out)


def null_placement(event_bar: np.ndarray, importance: list[str], size: np.ndarray, n_bars: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, list[str], np.ndarray]:
    """``news_null``'s bursts: the same tiers and sizes shuffled among the events, at bars drawn independently of
    them (inside a session, not its first bar), in signs drawn independently. Returns (bars, tiers, signed sizes)."""
    order = rng.permutation(len(event_bar))
    days = n_bars // BARS_PER_SESSION
    bars = rng.integers(0, days, len(event_bar)) * BARS_PER_SESSION + rng.integers(1, BARS_PER_SESSION - 10, len(event_bar))
    signs = rng.choice((-1.0, 1.0), len(event_bar))
    return bars.astype(np.int64), [importance[i] for i in order], np.abs(size[order]) * signs
