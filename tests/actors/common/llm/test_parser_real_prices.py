"""Answers a small model gives on real NQ price levels (about 16,000, quarter ticks): a reason that says
nothing is a counted fallback, not a HOLD at confidence 1.0 (issue 24: 9 of 13 four-step thoughts)."""

from actors.common.llm.parser import DecisionParser

ALL = [True] * 6


def test_a_reason_made_of_confidence_numbers_is_a_counted_fallback_not_hold_at_one():
    parser = DecisionParser()

    decision = parser.parse("HOLD | 1.0 | Confidence: 1.00% to 1.00% to 1.00% to", ALL)

    assert decision.fallback and (decision.action, decision.confidence) == (0, 0.0)
    assert decision.how == "fallback_empty_reason" and parser.fallbacks == 1


def test_a_short_reason_about_the_market_at_real_prices_still_parses():
    parser = DecisionParser()

    decision = parser.parse("SELL | 0.7 | rejected at 16,012.25 resistance", ALL)
    terse = parser.parse("BUY | 0.6 | RSI 28", ALL)

    assert (decision.action, decision.confidence, decision.fallback) == (2, 0.7, False)
    assert terse.action == 1 and not terse.fallback and parser.fallbacks == 0


def test_a_decision_field_whose_reasoning_is_only_numbers_falls_back():
    decision = DecisionParser().parse("Decision: HOLD\nConfidence: 1.0\nReasoning: 16012.25 16012.50 1.00% to", ALL)

    assert decision.fallback and decision.how == "fallback_empty_reason"
