"""The environment actor: instruments, bars (file or synthetic), features, account rules, the gym env.

What a job needs from this package: ``check_data`` (read the user's bars once, before any process
starts), ``DataError``, and the report writer (``write_report``, ``format_metrics_table``,
``entries_sentence``, ``MIN_TRADES``), and for market-history experiences an env over the
training days (``make_env``) and the hindsight labels' barriers (``barrier_spec``). They are
loaded on first use, so importing ``actors.env.config`` (every config load does) stays free of pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from config.schema import Config

__all__ = ["MIN_TRADES", "DataError", "barrier_spec", "check_data", "entries_sentence", "format_metrics_table", "load_bars",
           "make_env", "write_report"]

_LAZY_EXPORTS = {
    "DataError": "actors.common.bar_files",
    "load_bars": "actors.common.bar_files",
    "MIN_TRADES": "actors.env.statistics",
    "barrier_spec": "actors.env.hindsight",
    "make_env": "actors.env.factory",
    "entries_sentence": "actors.env.report",
    "format_metrics_table": "actors.env.report",
    "write_report": "actors.env.report",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def check_data(config: Config) -> tuple[str, ...]:
    """Read the user's bars file once (data.source = "file" and the env actor runs), so a broken file is
    one DataError naming file, row and column instead of an env actor failing until the restart limit.

    Returns the warnings of data that reads but does not fit the env's rules (bar interval, prices
    that move less than a tick, bars in the preset's flat window): a job prints them before trading."""
    from actors import ENV
    from actors.common.bar_files import load_bars
    from actors.common.instruments import resolve_instrument
    from actors.env.datafit import check_fit

    if config.data.source != "file" or ENV not in config.runtime.actors:
        return ()
    frame, _ = load_bars(config.data.path, config.data.timezone, config.data.dayfirst)
    instrument = resolve_instrument(config.instrument)
    fit = check_fit(frame, source=config.data.path, symbol=instrument.symbol, tick_size=instrument.tick_size,
                    flat_minute_of_day=config.account.flat_minute_of_day)
    return fit.warnings
