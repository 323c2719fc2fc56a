"""The environment actor: instruments, bars (file or synthetic), features, account rules, the gym env, the report.

What a job needs from this package it imports from the module that holds it: ``check_data`` (here: read the
user's bars once, before any process starts), ``actors.common.bar_files.DataError``, the report
(``actors.env.report``: ``write_report``, ``format_metrics_table``, ``entries_sentence``),
``actors.env.statistics.MIN_TRADES``, and for market-history experiences an env over the training days
(``actors.env.factory.make_env``) and the hindsight labels' barriers (``actors.env.hindsight.barrier_spec``).
This module imports nothing at load, so importing ``actors.env.config`` (every config load does) stays free of pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from actors.env.config import EnvSettings

__all__ = ["check_data"]


def check_data(config: EnvSettings) -> tuple[str, ...]:
    """Read the user's bars files once (data.source = "file", a paper run's env.paper_history_path; the env actor
    runs), so a broken file is one DataError naming file, row and column instead of an env actor failing until the
    restart limit.

    Returns the warnings of data that reads but does not fit the env's rules (bar interval, prices
    that move less than a tick, bars in the preset's flat window): a job prints them before trading."""
    from actors import ENV
    from actors.common.bar_files import load_bars
    from actors.common.instruments import resolve_instrument
    from actors.env.datafit import check_fit

    if ENV not in config.runtime.actors:
        return ()
    if config.env.mode == "paper" and config.env.paper_history_path:  # the bars that warm a paper run's features up
        load_bars(config.env.paper_history_path, config.data.timezone, config.data.dayfirst)
    if config.data.source == "synthetic":
        _check_synthetic_days(config.data.synthetic_start_date, config.data.synthetic_days)
    if config.data.source != "file":
        return ()
    frame, _ = load_bars(config.data.path, config.data.timezone, config.data.dayfirst)
    instrument = resolve_instrument(config.instrument)
    fit = check_fit(frame, source=config.data.path, symbol=instrument.symbol, tick_size=instrument.tick_size,
                    flat_minute_of_day=config.account.flat_minute_of_day)
    return fit.warnings


def _check_synthetic_days(start_date: str, days: int) -> None:
    """The synthetic sessions fit the exchange calendar's range: one line naming the settings now, not an env actor failing."""
    from actors.common.trading_calendar import CalendarError, session_dates

    try:
        session_dates(start_date, days)
    except CalendarError as exc:
        raise CalendarError(f"data.synthetic_start_date = {start_date!r}, data.synthetic_days = {days}: {exc}") from None
