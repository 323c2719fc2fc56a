from actors.common.actions import ACTION_NAMES
from actors.common.llm.parser import MISSING_CONFIDENCE, DecisionParser

ALL = [True] * 6
FLAT = [True, True, True, False, False, False]  # entries only
IN_POSITION = [True, False, False, True, True, True]  # stop management only


def test_the_pipe_format_parses_action_confidence_and_reason():
    parser = DecisionParser()

    decision = parser.parse("SELL | 0.92 | Bearish divergence on RSI", FLAT)

    assert (decision.action, decision.confidence, decision.reason) == (2, 0.92, "Bearish divergence on RSI")
    assert not decision.fallback and decision.how == "pipe"


def test_seed_000_decision_fields_parse():
    decision = DecisionParser().parse("Decision: HOLD\nConfidence: 0.6\nReasoning: wait for a clear signal", ALL)

    assert (decision.action, decision.confidence, decision.reason) == (0, 0.6, "wait for a clear signal")
    assert decision.how == "decision_field"


def test_percentages_and_seed_aliases_are_understood():
    parser = DecisionParser()

    assert parser.parse("MOVE_TO_BE | 75% | protect profits", IN_POSITION).action == 3
    assert parser.parse("buy|70|momentum", FLAT).confidence == 0.7
    assert parser.parse("Final decision: enable trail", IN_POSITION).action == 4


def test_free_text_takes_the_first_allowed_action_it_mentions():
    decision = DecisionParser().parse("I would rather go long here, confidence 0.8, trend is up", FLAT)

    assert (decision.action, decision.confidence, decision.how) == (1, 0.8, "free_text")


def test_garbage_text_falls_back_to_hold_with_zero_confidence_and_is_counted():
    parser = DecisionParser()

    decisions = [parser.parse(text, FLAT) for text in ("", "asdf 123 ?!", "\x00\x01 ~~~ |||", "0.9 | 0.8 | 0.7")]

    assert all(d.fallback and d.action == 0 and d.confidence == 0.0 for d in decisions)
    assert parser.fallbacks == 4
    assert parser.counts["fallback_no_action"] == 4


def test_an_explicit_answer_naming_a_masked_action_falls_back_and_is_counted():
    parser = DecisionParser()

    decision = parser.parse("SELL | 0.9 | breakdown", IN_POSITION)

    assert decision.fallback and decision.action == 0 and decision.confidence == 0.0
    assert parser.counts["fallback_forbidden_action"] == 1


def test_an_action_without_a_confidence_gets_the_seed_default_and_is_counted():
    parser = DecisionParser()

    decision = parser.parse("Decision: BUY", FLAT)

    assert decision.confidence == MISSING_CONFIDENCE and decision.confidence_missing
    assert parser.counts["confidence_missing"] == 1


def test_every_action_name_round_trips_through_the_pipe_format():
    parser = DecisionParser()

    for action, name in enumerate(ACTION_NAMES):
        assert parser.parse(f"{name} | 0.50 | x", ALL).action == action
