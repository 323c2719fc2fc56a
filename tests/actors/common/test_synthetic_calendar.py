"""The synthetic markets trade the exchange's calendar (actors/common/trading_calendar.py, exchange_calendars CMES):
no session on a holiday, every session a CME session, a half day a full session, and past the calendar's range one
clear error before any process starts."""

from __future__ import annotations

import pandas as pd
import pytest

from actors.common.markets import MarketRequest, make_market, market_names
from actors.common.trading_calendar import CalendarError, cme_calendar, is_half_day, is_session, session_dates
from actors.jobs.cli import main

HOLIDAY_SPAN = MarketRequest(days=12, seed=1, start_date="2023-12-20")
"""Twelve sessions across Christmas and New Year: 2023-12-20 .. 2024-01-08."""


def _session_dates(bars: pd.DataFrame) -> list[pd.Timestamp]:
    """The ET date of each session's first bar (a bar starts 09:30 ET on its session's date)."""
    return sorted({stamp.normalize().tz_localize(None) for stamp in bars.index.tz_convert("America/New_York")})


@pytest.mark.parametrize("name", market_names())
def test_no_market_trades_christmas_or_new_year_and_every_session_is_a_cme_session(name):
    bars = make_market(name, HOLIDAY_SPAN).bars
    dates = _session_dates(bars)
    assert len(dates) == HOLIDAY_SPAN.days and len(bars) == 390 * HOLIDAY_SPAN.days
    assert pd.Timestamp("2023-12-25") not in dates and pd.Timestamp("2024-01-01") not in dates
    assert all(is_session(date) for date in dates)
    assert dates == list(cme_calendar().sessions[cme_calendar().sessions >= "2023-12-20"][: HOLIDAY_SPAN.days])


def test_a_news_markets_releases_fall_on_its_sessions():
    market = make_market("news", MarketRequest(days=30, seed=2, start_date="2024-03-20"))  # Good Friday, 2024-03-29
    sessions = set(_session_dates(market.bars))
    assert pd.Timestamp("2024-03-29") not in sessions
    for event in market.events:
        assert pd.Timestamp(event.time_ns, tz="UTC").tz_convert("America/New_York").normalize().tz_localize(None) in sessions


def test_a_half_day_is_a_full_390_bar_session():
    bars = make_market("regimes", MarketRequest(days=3, seed=0, start_date="2024-07-03")).bars
    day = bars[bars.index.tz_convert("America/New_York").normalize() == pd.Timestamp("2024-07-04", tz="America/New_York")]
    assert is_half_day("2024-07-04") and len(day) == 390


def test_sessions_past_the_calendar_or_before_it_or_from_no_date_are_one_clear_error():
    last = cme_calendar().last_session
    with pytest.raises(CalendarError, match=r"run past the last session: .* 3 sessions fit; start earlier or ask for fewer days"):
        session_dates(cme_calendar().sessions[-3], 4)
    assert session_dates(cme_calendar().sessions[-3], 3)[-1] == last
    with pytest.raises(CalendarError, match="is before the first session"):
        session_dates("1990-01-02", 2)
    with pytest.raises(CalendarError, match="'next tuesday' is not a date"):
        session_dates("next tuesday", 2)


def test_bin_run_names_the_settings_in_one_line_before_any_process(tmp_path, capsys):
    start = str(cme_calendar().sessions[-5].date())
    code = main(["run", "--set", f"data.synthetic_start_date='{start}'", "--set", "data.synthetic_days=6",
                 "--run-dir", str(tmp_path / "run"), "--quiet", "--duration-secs", "5"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == 1 and len(err) == 1, err
    assert err[0].startswith(f"bin/run: data.synthetic_start_date = '{start}', data.synthetic_days = 6: 6 sessions from")
    assert not (tmp_path / "run").exists()
