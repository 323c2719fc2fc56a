from actors.common.actions import BUY, HOLD, SELL
from actors.common.llm.parser import DecisionParser
from actors.common.llm.reasons import agreeing_reason, reason_contradicts

ENTRY = [True, True, True, False, False, False]


def test_the_parser_counts_answers_whose_reason_contradicts_their_action():
    parser = DecisionParser()

    for text in ("SELL | 0.70 | uptrend, above VWAP, momentum positive", "BUY | 0.60 | Downtrend, below VWAP",
                 "BUY | 0.70 | uptrend, above VWAP", "HOLD | 0.40 | downtrend, wait", "SELL | 0.70 | downtrend"):
        parser.parse(text, ENTRY)

    assert parser.counts["reason_contradicts_action"] == 2
    assert parser.counts["pipe"] == 5  # counted beside how it was read, not instead


def test_a_reason_against_its_action_is_rewritten_and_an_agreeing_one_is_kept():
    assert agreeing_reason(BUY, "downtrend, below VWAP, momentum negative") == "against the trend, below VWAP, momentum negative"
    assert agreeing_reason(SELL, "uptrend, above VWAP") == "against the trend, above VWAP"
    assert agreeing_reason(BUY, "uptrend, above VWAP") == "uptrend, above VWAP"
    assert agreeing_reason(HOLD, "downtrend") == "downtrend"
    assert not reason_contradicts(BUY, agreeing_reason(BUY, "downtrend"))
    assert not reason_contradicts(SELL, "no uptrendish word")
