"""The CME equity futures calendar from exchange_calendars: sessions, holidays, half days, closes."""

import pandas as pd
import pytest

from actors.common.trading_calendar import is_half_day, is_session, session_close_utc, trading_day


def test_an_ordinary_weekday_is_a_full_session():
    day = trading_day("2024-03-12")
    assert day.session and not day.half_day and not day.holiday
    assert day.close_utc is not None and day.close_utc.tzinfo is not None


def test_christmas_and_good_friday_are_holidays():
    for date in ("2024-12-25", "2024-03-29"):
        day = trading_day(date)
        assert not day.session and day.holiday and day.close_utc is None
        assert "holiday" in day.describe()


def test_independence_day_and_black_friday_are_half_days_closing_at_noon_chicago():
    for date in ("2024-07-04", "2024-11-29"):
        assert is_session(date) and is_half_day(date)
        close = session_close_utc(date).tz_convert("America/Chicago")
        assert (close.hour, close.minute) == (12, 0)
    assert session_close_utc("2024-07-04").time() < session_close_utc("2024-07-03").time()


def test_a_weekend_is_neither_a_session_nor_a_holiday():
    day = trading_day(pd.Timestamp("2024-03-09"))
    assert not day.session and not day.holiday and day.describe().startswith("a weekend")


def test_a_date_outside_the_calendar_is_refused_naming_the_range():
    with pytest.raises(ValueError, match="outside the CMES calendar"):
        trading_day("1990-01-02")
