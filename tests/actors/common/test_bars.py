"""The shared bar: the bad-record rule and merging a late or earlier record into a closed bar."""

import math

import pytest

from actors.common.bars import OHLCVBar, is_bad_bar


@pytest.mark.parametrize("record", [
    (math.nan, 101.0, 99.0, 100.0, 1.0),
    (100.0, 101.0, 99.0, 100.0, math.inf),
    (0.0, 101.0, 99.0, 100.0, 1.0),
    (100.0, 99.0, 101.0, 100.0, 1.0),  # high < low
    (100.0, 101.0, 99.0, 100.0, -1.0),
])
def test_a_bar_with_a_non_finite_or_impossible_value_is_bad(record):
    assert is_bad_bar(*record)


def test_a_plain_bar_with_zero_volume_is_not_bad():
    assert not is_bad_bar(100.0, 101.0, 99.0, 100.5, 0.0)


def test_merging_a_later_record_keeps_the_open_and_takes_the_close():
    bar = OHLCVBar(0, 100.0, 102.0, 99.0, 101.0, 5.0)

    merged = bar.merged(OHLCVBar(0, 101.0, 104.0, 100.0, 103.0, 2.0))

    assert merged == OHLCVBar(0, 100.0, 104.0, 99.0, 103.0, 7.0)


def test_merging_an_earlier_record_takes_its_open_and_keeps_the_close():
    bar = OHLCVBar(0, 100.0, 102.0, 99.0, 101.0, 5.0)

    merged = bar.merged(OHLCVBar(0, 98.0, 100.0, 97.0, 99.0, 1.0), other_is_earlier=True)

    assert merged == OHLCVBar(0, 98.0, 102.0, 97.0, 101.0, 6.0)
