"""The synthetic markets (``data.scenario``, ``bin/run evaluate --market NAME``), each registered once.

A market is a ``Market``: its name, the function that makes its bars, its null twin (the same seed's market with
every edge removed), its calibration notes and its one-line help. The module that generates a market registers it
(``register(Market(...))`` at the end of actors/common/synthetic.py, realistic.py, news_market.py), and every
reader asks this registry: the [data] section's check of ``data.scenario`` and its line in the configuration
reference (actors/env/config.py), the env factory (actors/env/factory.py), ``bin/run evaluate --market``'s help
(actors/jobs/cli.py) and the names evaluate accepts (actors/jobs/evaluate.py).

Adding a market (docs/developing.md): a module that builds a ``SyntheticMarket`` from a ``MarketRequest`` and
registers its ``Market`` and its null twin's at its end (``register_pair``, or ``register`` for one ``Market``); a new module is one more line in ``MARKET_MODULES``.
tests/actors/common/test_markets.py checks that every registered market has every part and a registered twin.

The registry imports the generator modules (numpy, pandas, scipy) only when first read, so ``bin/run --help``
stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

MARKET_MODULES = ("actors.common.synthetic", "actors.common.realistic", "actors.common.news_market")
"""The modules that register markets; importing each registers its markets (a new generator module: one line here)."""


@dataclass(frozen=True)
class MarketRequest:
    """What a market is made from: the [data] section's synthetic keys and the instrument's tick."""

    days: int
    """Sessions to generate (390 one-minute RTH bars each)."""
    seed: int
    """Same seed, same bars; a market and its null twin share every draw of the seed."""
    start_price: float = 18_000.0
    """First price, points."""
    start_date: str = "2024-01-02"
    """First session date: the sessions are the CME equity futures calendar's from it (actors/common/trading_calendar.py:
    weekends and holidays skipped; a half day is a full 390-bar session)."""
    tick_size: float = 0.25
    """Prices are rounded to this, points."""
    settings: Any = None
    """The [data] section (actors/env/config.py DataConfig) for a market's own keys (regimes reads
    trend_drift_sigmas, min_regime_bars, max_regime_bars); None = the market's defaults."""


@dataclass(frozen=True, eq=False)
class SyntheticMarket:
    """What a market makes: bars and, beside them for evaluation only, the hidden regime of each bar (a news market
    adds its events: actors/common/news_market.py NewsMarket)."""

    bars: pd.DataFrame
    regime: np.ndarray
    """int8 per bar: an index into actors/common/synthetic.py REGIMES."""
    scenario: Any
    """The scenario that planted its structure, with its effect sizes (synthetic.MarketScenario,
    realistic.RealisticScenario)."""


@dataclass(frozen=True)
class Market:
    """One synthetic market: every field is required (tests/actors/common/test_markets.py)."""

    name: str
    """What data.scenario and --market say."""
    help: str
    """One line for ``bin/run evaluate --help`` and the configuration reference."""
    calibration: str
    """Where its effect sizes come from and where they are checked (a module, a document, a test)."""
    make_bars: Callable[[MarketRequest], SyntheticMarket]
    """The bars and, beside them, the hidden truth (regimes; events for a news market)."""
    null_twin: str | None
    """The market of the same seed with every edge removed (what an edge found here must not find there); None for a
    market that is itself a twin (another market names it)."""


_MARKETS: dict[str, Market] = {}
_loaded = False


def register(market: Market) -> Market:
    """Add ``market``; a second market of the same name is an error (two modules claiming one name)."""
    missing = [name for name in ("name", "help", "calibration") if not str(getattr(market, name)).strip()]
    if missing or not callable(market.make_bars):
        raise ValueError(f"market {market.name!r} lacks {', '.join(missing) or 'make_bars'}")
    if market.name in _MARKETS and _identity(_MARKETS[market.name]) != _identity(market):
        raise ValueError(f"market {market.name!r} is registered twice")
    _MARKETS[market.name] = market
    return market


def _identity(market: Market) -> tuple:
    """What makes two registrations one market: a module run as a script (``python -m``) registers its markets again."""
    return market.name, market.help, market.calibration, market.null_twin, getattr(market.make_bars, "__qualname__", "")


def register_pair(make: Callable[[str, MarketRequest], SyntheticMarket], calibration: str, market: tuple[str, str],
                  twin: tuple[str, str]) -> None:
    """Register a market and its null twin, each given as (name, help line), both made by ``make(name, request)`` and
    both under one calibration note: what a generator module does at its end, once for each market it makes."""
    for (name, help_line), null_twin in ((market, twin[0]), (twin, None)):
        register(Market(name=name, help=help_line, calibration=calibration, make_bars=_maker(make, name), null_twin=null_twin))


def _maker(make: Callable[[str, MarketRequest], SyntheticMarket], name: str) -> Callable[[MarketRequest], SyntheticMarket]:
    def make_bars(request: MarketRequest) -> SyntheticMarket:
        return make(name, request)
    make_bars.__qualname__ = f"{make.__module__}.{make.__qualname__}:{name}"  # what _identity compares
    return make_bars


def unregister(name: str) -> None:
    """Remove a market (a test's toy market, once the test is done)."""
    _MARKETS.pop(name, None)


def markets() -> dict[str, Market]:
    """Every registered market by name, the built-in modules' first (their modules imported on the first call)."""
    global _loaded
    if not _loaded:
        for module in MARKET_MODULES:
            importlib.import_module(module)
        _loaded = True
    return dict(_MARKETS)


def market_names() -> tuple[str, ...]:
    return tuple(markets())


def market(name: str) -> Market:
    """The market called ``name``; an unknown name is a ValueError listing the known ones."""
    found = markets().get(name)
    if found is None:
        raise ValueError(f"unknown market {name!r}; choose one of {' | '.join(market_names())}")
    return found


def market_help() -> dict[str, str]:
    """name -> its help line (the configuration reference and the --market help list them)."""
    return {name: item.help for name, item in markets().items()}


def make_market(name: str, request: MarketRequest) -> SyntheticMarket:
    """The bars of market ``name`` for ``request``."""
    return market(name).make_bars(request)
