"""The synthetic news markets: a base market (``realistic``, actors/common/realistic.py) with releases and headlines on top.

Events, each a ``MarketEvent`` kept beside the bars (like the hidden regime) and never in their columns:

- scheduled releases at their real times (US/Eastern): 08:30 CPI (monthly), nonfarm payrolls (first Friday),
  retail sales (monthly), initial jobless claims (every Thursday) reach regular hours as the opening gap;
  10:00 ISM manufacturing (first business day) and consumer sentiment (second Friday) and 14:00 FOMC
  decisions (every 32 business days: about 8 a year) hit inside the session;
- unscheduled headlines at random minutes of the session (``headlines_per_day`` on average).

Each event has a surprise z (a sign and a size ``|z|``). Four scenarios:

- ``news`` (sized like the literature; actors/common/news_burst.py has the figures and sources): the jump inside
  the release bar, a volatility burst whose size and length scale with the tier and ``|z|`` (about 15 minutes),
  extra volume on event bars, NO drift after the release. ``|z| ~ |N(0, 1)|``; the words
  (actors/common/news_sized_words.py) carry the tier and the size ("in line", "well above", "shock") as well as
  the sign, some templates held out of training (``NewsMarket.template_held_out``). A reader one bar late cannot
  call the direction; it can know when the next minutes are dangerous.
- ``news_null``: the same events and words; the bursts and jumps (same tiers and sizes, shuffled) at bars and in
  signs drawn independently of them.
- ``news_drift``: the earlier market, STRONGER THAN THE LITERATURE, kept as a unit test of reading direction: a
  jump at the event's bar and a drift the same way over the next ``drift_bars`` (30) bars worth half the jump
  (per-event signal-to-noise 0.72 / 0.37 / 0.21 by importance), fixed polarity, no extra volume; ``|z|`` =
  ``0.5 + 0.7 |N(0,1)|``; words from actors/common/news_words.py (sign only).
- ``news_drift_null``: its twin, the same events and words moving by the same amounts in independent signs.

``news_drift`` sizes (``EFFECTS``), per unit of ``|z|``: ASSUMPTIONS of the order of NQ's release-day moves, not
fitted to data here: a jump of 0.40 % (high importance), 0.15 % (medium), 0.08 % (low) and a further drift of
half that over 30 minutes. ``news`` keeps those jumps and drops the drift.

Words: the words carry the surprise's sign with probability ``reliability`` (0.8) and the opposite sign otherwise
(a market that reads the news differently than the wire). Releases read their figure against the consensus
("CPI y/y 3.4% vs 3.1% expected": hotter inflation reads bearish); headlines come from templates with
paraphrases and hedges, so no one string gives the sign away. ``news_text_sign`` is the word truth the tests
and the keyword floor are scored against.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from actors.common.events import MarketEvent
from actors.common.news_burst import apply_bursts, null_placement, spike_volume
from actors.common.news_releases import RELEASES, ReleaseKind
from actors.common.news_sized_words import WrittenEvent, sized_headline, sized_release
from actors.common.markets import MarketRequest, SyntheticMarket, register_pair
from actors.common.news_words import headline_text, release_text
from actors.common.realistic import (
    REALISTIC_SCENARIOS, RealisticScenario, build_bars, generate_scenario, hidden_regime, realistic_pieces, realistic_returns, realistic_scenario,
)
from actors.common.synthetic import BARS_PER_SESSION, MarketScenario, session_timestamps

NEWS_SCENARIOS = ("news", "news_null", "news_drift", "news_drift_null")
"""``news``/``news_null``: sized like the literature (bursts, no drift); ``news_drift``/``news_drift_null``: the
earlier market, stronger than the literature, a unit test of reading direction (module docstring)."""
DRIFT_SCENARIOS = ("news_drift", "news_drift_null")
NEWS_BASE = "realistic"
"""The base market under ``news`` (actors/common/realistic.py; ``regimes`` is one line away)."""
NULL_BASE = "realistic_null"
"""The base under ``news_null``: the same seed's market with every planted edge removed, so the twin has nothing to learn."""
SESSION_OPEN_MINUTE = 9 * 60 + 30
ET = "America/New_York"


FOMC_EVERY_BUSINESS_DAYS = 32
"""~8 decisions a year (252 / 32)."""

EFFECTS = {"high": (0.0040, 0.0020), "medium": (0.0015, 0.00075), "low": (0.0008, 0.0004)}
"""Importance -> (jump, drift over drift_bars) as log returns per unit |z| (ASSUMPTIONS: module docstring)."""


@dataclass(frozen=True)
class NewsScenario:
    """The overlay's planted structure; every effect size is a field."""

    name: str = "news"
    base: MarketScenario | RealisticScenario | str = NEWS_BASE
    planted: bool = True
    """False: the moves' signs are drawn independently of the surprises (``news_null``)."""
    reliability: float = 0.8
    """Chance that an event's words carry its surprise's sign (else the opposite)."""
    headlines_per_day: float = 2.0
    drift_bars: int = 30
    effect_scale: float = 1.0
    """Multiplies every jump and drift (0 = events with no effect at all)."""
    style: str = "burst"
    """``burst``: the literature-sized moves of news_burst.py (``news``); ``drift``: jump + drift (``news_drift``)."""

    def __post_init__(self) -> None:
        if self.style not in ("burst", "drift"):
            raise ValueError(f"style must be 'burst' or 'drift', got {self.style!r}")
        if not 0.0 <= self.reliability <= 1.0:
            raise ValueError(f"reliability must be in [0, 1], got {self.reliability}")
        if self.drift_bars < 1:
            raise ValueError(f"drift_bars must be >= 1, got {self.drift_bars}")


def news_scenario(name: str, base: MarketScenario | RealisticScenario | str | None = None, **overrides) -> NewsScenario:
    """``news`` or ``news_null`` (its base market ``base``, else NEWS_BASE / NULL_BASE), effect sizes overridden."""
    if name not in NEWS_SCENARIOS:
        raise ValueError(f"unknown news scenario {name!r}; choose one of {NEWS_SCENARIOS}")
    planted = name in ("news", "news_drift")
    default_base = NEWS_BASE if planted else NULL_BASE
    style = "drift" if name in DRIFT_SCENARIOS else "burst"
    return NewsScenario(name=name, base=default_base if base is None else base, planted=planted, style=style, **overrides)


@dataclass(frozen=True, eq=False)
class NewsMarket(SyntheticMarket):
    """Bars, hidden regimes and, beside them for evaluation and replay, the events and their truths."""

    events: tuple[MarketEvent, ...] = ()
    """Sorted by time; releases stamped at their scheduled time, headlines at publication."""
    event_bar: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Per event: the bar whose close first shows it (the session's first bar for an 08:30 release)."""
    surprise: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Per event: the signed surprise z (its sign is what an oracle of the news knows)."""
    move_sign: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Per event: the sign the market moved (= sign(surprise) on news, independent on news_null)."""
    text_sign: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Per event: the sign the words carry (= sign(surprise) with probability reliability)."""
    news: NewsScenario = field(default_factory=NewsScenario)
    template_held_out: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    """Per event: True when its words use a held-out template (news_sized_words.HELD_OUT; all False on news_drift)."""
    burst_bar: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Per burst (``news``): the bar it starts at; the event bars on ``news``, bars drawn apart on ``news_null``."""


@dataclass(frozen=True)
class _Planned:
    time_ns: int
    bar: int
    kind: str
    importance: str
    release: ReleaseKind | None


def _release_days(dates: pd.DatetimeIndex) -> list[tuple[int, ReleaseKind]]:
    """(session index, release) pairs from a simplified US calendar (the rules in the module docstring)."""
    planned: list[tuple[int, ReleaseKind]] = []
    months = dates.to_period("M")
    for day, date in enumerate(dates):
        same_month = dates[(months == months[day])]
        nth_in_month = int((same_month < date).sum())
        fridays_before = int(((same_month < date) & (same_month.day_of_week == 4)).sum())
        if date.weekday() == 3:
            planned.append((day, RELEASES["Initial Jobless Claims"]))
        if date.weekday() == 4 and fridays_before == 0:
            planned.append((day, RELEASES["Nonfarm Payrolls"]))
        if date.weekday() == 4 and fridays_before == 1:
            planned.append((day, RELEASES["Consumer Sentiment"]))
        if nth_in_month == 0:
            planned.append((day, RELEASES["ISM Manufacturing PMI"]))
        if nth_in_month == 7:
            planned.append((day, RELEASES["CPI y/y"]))
        if nth_in_month == 10:
            planned.append((day, RELEASES["Retail Sales m/m"]))
        if day % FOMC_EVERY_BUSINESS_DAYS == FOMC_EVERY_BUSINESS_DAYS // 2:
            planned.append((day, RELEASES["FOMC rate decision"]))
    return planned


def _event_plan(index: pd.DatetimeIndex, rng: np.random.Generator, headlines_per_day: float) -> list[_Planned]:
    days = len(index) // BARS_PER_SESSION
    opens_utc = index[::BARS_PER_SESSION]
    dates = pd.DatetimeIndex(opens_utc.tz_convert(ET).normalize().tz_localize(None))
    plan = []
    for day, release in _release_days(dates):
        hour, minute = (int(part) for part in release.time_et.split(":"))
        stamp = pd.Timestamp(dates[day]) + pd.Timedelta(hours=hour, minutes=minute)
        time_ns = int(stamp.tz_localize(ET).tz_convert("UTC").value)
        offset = max(hour * 60 + minute - SESSION_OPEN_MINUTE, 0)  # before the open: the open bar shows it
        plan.append(_Planned(time_ns, day * BARS_PER_SESSION + offset, "release", release.importance, release))
    for day in range(days):
        for _ in range(int(rng.poisson(headlines_per_day))):
            offset = int(rng.integers(1, BARS_PER_SESSION - 10))
            time_ns = int(index[day * BARS_PER_SESSION + offset].value) + int(rng.integers(0, 60)) * 1_000_000_000
            importance = "medium" if rng.random() < 0.4 else "low"
            plan.append(_Planned(time_ns, day * BARS_PER_SESSION + offset, "headline", importance, None))
    return sorted(plan, key=lambda item: (item.time_ns, item.kind))


def generate_news_market(days: int = 60, seed: int = 0, start_price: float = 18_000.0, start_date: str = "2024-01-02",
                         tick_size: float = 0.25, news: NewsScenario | str = "news") -> NewsMarket:
    """The base market of ``seed`` with the events of ``seed`` on top. ``news`` and ``news_null`` of one seed share
    every event and every word; only the sign of the moves differs (planted vs independent)."""
    news = news_scenario(news) if isinstance(news, str) else news
    if news.style == "burst":
        return _generate_burst_market(days, seed, start_price, start_date, tick_size, news)
    base = generate_scenario(days, seed, start_price, start_date, tick_size, news.base)
    rng = np.random.default_rng([seed, 44])  # the events' own stream: the base market's draws are untouched
    plan = _event_plan(base.bars.index, rng, news.headlines_per_day)
    n = len(plan)
    z = (0.5 + 0.7 * np.abs(rng.standard_normal(n))) * rng.choice((-1.0, 1.0), n)
    words_agree = rng.random(n) < news.reliability
    text_sign = np.where(words_agree, np.sign(z), -np.sign(z))
    independent_sign = rng.choice((-1.0, 1.0), n)
    move_sign = np.sign(z) if news.planted else independent_sign
    events = tuple(_event(item, float(z_i), float(sign), rng, i) for i, (item, z_i, sign) in enumerate(zip(plan, z, text_sign)))
    event_bar = np.array([item.bar for item in plan], dtype=np.int64)
    bars = _apply_moves(base.bars, event_bar, move_sign * np.abs(z), [item.importance for item in plan], news, tick_size)
    return NewsMarket(bars, base.regime, base.scenario, events=events, event_bar=event_bar, surprise=z, move_sign=move_sign,
                      text_sign=text_sign, news=news, template_held_out=np.zeros(n, bool), burst_bar=event_bar)


def _generate_burst_market(days: int, seed: int, start_price: float, start_date: str, tick_size: float,
                           news: NewsScenario) -> NewsMarket:
    """``news`` / ``news_null``: the realistic base's own draws, its sigma raised by each event's burst (news_burst.py)."""
    base = realistic_scenario(news.base) if isinstance(news.base, str) and news.base in REALISTIC_SCENARIOS else news.base
    if not isinstance(base, RealisticScenario):
        raise ValueError(f"the {news.name} market needs a realistic base market (realistic, realistic_null), got {news.base!r}")
    pieces = realistic_pieces(days, seed, base)
    rng = np.random.default_rng([seed, 53])  # the events' own stream: the base market's draws are untouched
    index = session_timestamps(days, start_date)
    plan = _event_plan(index, rng, news.headlines_per_day)
    n = len(plan)
    z = np.abs(rng.standard_normal(n)) * rng.choice((-1.0, 1.0), n)
    text_sign = np.where(rng.random(n) < news.reliability, np.sign(z), -np.sign(z))
    written = [sized_release(item.release, sign, abs(z_i), rng) if item.release else sized_headline(sign, abs(z_i), rng)
               for item, z_i, sign in zip(plan, z, text_sign)]
    events = tuple(_written_event(item, text, i) for i, (item, text) in enumerate(zip(plan, written)))
    event_bar = np.array([item.bar for item in plan], dtype=np.int64)
    tiers = [e.importance for e in events]
    pre_open = np.array([item.release is not None and item.release.time_et < "09:30" for item in plan], dtype=bool)
    if news.planted:
        burst_bar, burst_tiers, burst_size = event_bar, tiers, z
    else:
        burst_bar, burst_tiers, burst_size = null_placement(event_bar, tiers, z, len(index), rng)
        pre_open = np.zeros(n, dtype=bool)
    raised, extra_jumps = apply_bursts(pieces, base, burst_bar, pre_open, burst_size, burst_tiers, news.effect_scale)
    returns = realistic_returns(raised, base, extra_jumps=extra_jumps)
    bars = build_bars(raised, returns, start_price, tick_size, start_date)
    bars["volume"] = spike_volume(bars["volume"].to_numpy(), burst_bar, burst_size * news.effect_scale, burst_tiers)
    return NewsMarket(bars, hidden_regime(raised, base, returns), base, events=events, event_bar=event_bar, surprise=z,
                      move_sign=np.sign(burst_size), text_sign=text_sign, news=news,
                      template_held_out=np.array([w.held_out for w in written], dtype=bool), burst_bar=burst_bar)


def _written_event(item: _Planned, written: WrittenEvent, number: int) -> MarketEvent:
    if item.release is None:
        return MarketEvent(time_ns=item.time_ns, kind="headline", importance=written.importance, text=written.text,
                           event_id=f"synthetic:headline:{number}")
    return MarketEvent(time_ns=item.time_ns, kind="release", importance=written.importance, text=written.text,
                       name=item.release.name, actual=written.actual, consensus=written.consensus, previous=written.previous,
                       event_id=f"synthetic:{item.release.name}:{item.time_ns}")


def _event(item: _Planned, z: float, text_sign: float, rng: np.random.Generator, number: int) -> MarketEvent:
    if item.release is None:
        return MarketEvent(time_ns=item.time_ns, kind="headline", importance=item.importance,
                           text=headline_text(text_sign, rng), event_id=f"synthetic:headline:{number}")
    release = item.release
    text, actual, consensus, previous = release_text(release, text_sign, abs(z), rng)
    return MarketEvent(time_ns=item.time_ns, kind="release", importance=release.importance, text=text, name=release.name,
                       actual=actual, consensus=consensus, previous=previous, event_id=f"synthetic:{release.name}:{item.time_ns}")


def _apply_moves(bars: pd.DataFrame, event_bar: np.ndarray, signed_size: np.ndarray, importance: list[str], news: NewsScenario,
                 tick_size: float) -> pd.DataFrame:
    """Shift the log prices from each event's bar on: the jump at once, the drift over drift_bars, then held."""
    n_bars = len(bars)
    step = np.zeros(n_bars)  # log-return added to each bar's close
    for bar, size, level in zip(event_bar.tolist(), signed_size.tolist(), importance):
        jump, drift = EFFECTS[level]
        step[bar] += size * jump * news.effect_scale
        end = min(bar + 1 + news.drift_bars, n_bars)
        step[bar + 1:end] += size * drift * news.effect_scale / news.drift_bars
    offset = np.cumsum(step)
    session_start = (np.arange(n_bars) % BARS_PER_SESSION) == 0
    # Inside a session a bar opens where the last closed; at a session's open the gap carries an 08:30 release.
    open_offset = np.where(session_start, offset, np.concatenate(([0.0], offset[:-1])))
    close_scale, open_scale = np.exp(offset), np.exp(open_offset)

    def to_tick(values: np.ndarray) -> np.ndarray:
        return np.round(values / tick_size) * tick_size

    open_ = to_tick(bars["open"].to_numpy() * open_scale)
    close = to_tick(bars["close"].to_numpy() * close_scale)
    high = np.maximum(to_tick(bars["high"].to_numpy() * close_scale), np.maximum(open_, close))
    low = np.minimum(to_tick(bars["low"].to_numpy() * close_scale), np.minimum(open_, close))
    return pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": bars["volume"].to_numpy()}, index=bars.index)


def news_text_sign(market: NewsMarket) -> np.ndarray:
    """The sign each event's words carry (+1 bullish, -1 bearish)."""
    return market.text_sign


def write_headlines_jsonl(events: tuple[MarketEvent, ...] | list[MarketEvent], path) -> int:
    """The headlines as a headlines file (actors/common/event_files.py reads it back: time with its zone, text,
    importance, id), for a user to read what the market planted or to replay it. Returns the rows written."""
    import json  # only the writers need it

    rows = [e for e in events if e.kind == "headline"]
    with open(path, "w", encoding="utf-8") as out:
        for event in rows:
            out.write(json.dumps({"time": _iso(event.time_ns), "text": event.text, "importance": event.importance,
                                  "id": event.event_id}) + "\n")
    return len(rows)


def write_calendar_csv(events: tuple[MarketEvent, ...] | list[MarketEvent], path) -> int:
    """The scheduled releases as an economic calendar file (event_files.py's columns: time with its zone, name,
    importance, actual, consensus, previous, text; an unknown figure is empty). Returns the rows written."""
    rows = [e for e in events if e.kind == "release"]
    frame = pd.DataFrame({
        "time": [_iso(e.time_ns) for e in rows], "name": [e.name for e in rows], "importance": [e.importance for e in rows],
        "actual": [e.actual for e in rows], "consensus": [e.consensus for e in rows], "previous": [e.previous for e in rows],
        "text": [e.text for e in rows],
    })
    frame.to_csv(path, index=False, na_rep="")
    return len(rows)


def _iso(time_ns: int) -> str:
    return pd.Timestamp(time_ns, tz="UTC").tz_convert(ET).isoformat()


# ---------------------------------------------------------------------- the markets this module registers


def _bars(name: str, request: MarketRequest) -> NewsMarket:
    return generate_news_market(request.days, request.seed, request.start_price, request.start_date, request.tick_size, name)


register_pair(_bars, calibration=("news / news_null: the jump in the release bar and the volatility burst sized from the "
                                  "literature (Ederington & Lee 1993/95; Chordia, Green & Kottimukkalur 2018; this module's "
                                  "docstring, docs/experiments/news.md); tests/actors/common/test_news_burst.py checks the planted bursts"),
              market=("news", "realistic with releases and headlines sized like the literature: a jump in the release bar, a "
                              "volatility burst scaled by tier and surprise, no drift; the words carry sign, tier and size"),
              twin=("news_null", "the same events and words, the bursts at bars drawn independently of them"))
register_pair(_bars, calibration=("news_drift: a drift after each event worth half its jump, far stronger than the literature "
                                  "(docs/experiments/44-news.md): a unit test of reading direction, not evidence"),
              market=("news_drift", "the earlier news market: a drift after each event, stronger than the literature (a test of "
                                    "reading direction)"),
              twin=("news_drift_null", "news_drift's events and words over realistic_null, moves independent of them"))


def main(argv: list[str] | None = None) -> None:
    """Write a news market to files a paper replay reads: bars.csv (the feed's replay source), calendar.csv and
    headlines.jsonl (its event sources)::

        python -m actors.common.news_market --days 20 --seed 0 --out runs/news_market [--null]
        bin/run paper --set feed.source=replay --set feed.replay_path=runs/news_market/bars.csv \\
            --set 'feed.event_calendar_paths=["runs/news_market/calendar.csv"]' \\
            --set 'feed.event_headline_paths=["runs/news_market/headlines.jsonl"]'
    """
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--null", action="store_true", help="news_null: the same events, moves independent of them")
    parser.add_argument("--drift", action="store_true", help="news_drift: the earlier market, a drift after each event")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    market = generate_news_market(args.days, seed=args.seed, news=("news_drift" if args.drift else "news") + ("_null" if args.null else ""))
    market.bars.to_csv(out / "bars.csv", index_label="timestamp")
    releases = write_calendar_csv(market.events, out / "calendar.csv")
    headlines = write_headlines_jsonl(market.events, out / "headlines.jsonl")
    print(f"{len(market.bars)} bars, {releases} releases, {headlines} headlines -> {out}")


if __name__ == "__main__":
    main()
