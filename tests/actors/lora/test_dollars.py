"""An adapter's held-out answers valued in hindsight dollars (actors/lora/dollars.py)."""

from __future__ import annotations

import math

from actors.common.actions import BUY, HOLD, SELL
from actors.lora.dollars import answer_usd, dollar_gain, usd_text
from actors.lora.experience import Experience


def _experience(name: str, long_usd: float | None, short_usd: float | None) -> Experience:
    meta = {} if long_usd is None else {"long_pnl_usd": long_usd, "short_pnl_usd": short_usd}
    return Experience(name, [], (True, True, True), "BUY | 0.80 | uptrend", BUY, 0.0, "hindsight", meta)


def test_an_answer_is_worth_the_trade_it_names_and_a_hold_nothing():
    bar = _experience("a", 120.0, -150.0)

    assert (answer_usd(BUY, bar), answer_usd(SELL, bar), answer_usd(HOLD, bar)) == (120.0, -150.0, 0.0)


def test_the_gain_is_paired_over_the_prompts_with_side_dollars_and_the_oracle_takes_the_better_side_or_nothing():
    rising, falling, dull = _experience("r", 100.0, -120.0), _experience("f", -120.0, 100.0), _experience("d", -10.0, -12.0)
    trade = _experience("t", None, None)  # a closed trade's experience: no side dollars, left out
    held_out = [rising, falling, dull, trade] * 10
    before = [HOLD, HOLD, HOLD, BUY] * 10
    after = [BUY, SELL, BUY, SELL] * 10

    gain = dollar_gain(held_out, before, after, z=1.96)

    assert gain.n == 30
    assert gain.before == 0.0 and math.isclose(gain.after, (100 + 100 - 10) / 3)
    assert 0.0 < gain.gain_low < gain.after < gain.gain_high  # every prompt but the dull one gained
    assert math.isclose(gain.oracle, 200 / 3)  # nothing on the dull bar: both sides lose their costs
    assert "+0.0 -> +63.3 $ a prompt" in usd_text(gain.metrics())


def test_without_side_dollars_there_is_no_figure_rather_than_a_zero():
    gain = dollar_gain([_experience("t", None, None)], [HOLD], [BUY], z=1.96)

    assert gain.n == 0 and gain.metrics() == {} and usd_text(gain.metrics()) == ""
