from actors.common.llm.parser import DecisionParser
from actors.common.thoughts import ThoughtHeader
from actors.lora.experience import ThoughtRecord, market_reason
from actors.common.hindsight import BUY, HindsightLabel, SideOutcome
from actors.lora.matching import ExperienceMatcher, TradeOutcome

FLAT_MASK = (True, True, True, False, False, False)
LONG_MASK = (True, False, False, True, True, False)


def matcher(max_pending=10):
    return ExperienceMatcher(target_confidence=0.8, max_thoughts=100, max_pending_outcomes=max_pending)


def header(query_id, action=1):
    return ThoughtHeader(env_id=0, episode_id=1, step_seen=5, query_id=query_id, action=action, confidence=0.7)


def thought(query_id, action=1, mask=FLAT_MASK):
    return ThoughtRecord(header(query_id, action), messages=[{"role": "user", "content": f"prompt of {query_id}"}], mask=mask)


def outcome(query_ids, pnl=250.0, trade_id=1, side=1):
    return TradeOutcome(env_id=0, episode_id=1, trade_id=trade_id, side=side, pnl_usd=pnl, exit_reason="target",
                        llm_query_ids=tuple(query_ids))


def test_a_winning_long_teaches_its_entry_thought_to_buy_in_the_decide_format():
    m = matcher()
    m.add_thought(thought("r-1"))

    [experience] = m.add_outcome(outcome(["r-1"]))

    assert experience.action == 1 and experience.pnl_usd == 250.0 and experience.source == "trade"
    assert experience.target.startswith("BUY | 0.80 | ")
    assert experience.messages == [{"role": "user", "content": "prompt of r-1"}]
    parsed = DecisionParser().parse(experience.target, FLAT_MASK)
    assert (parsed.action, parsed.confidence, parsed.how) == (1, 0.8, "pipe")


def test_a_losing_entry_teaches_hold_and_a_losing_management_thought_teaches_nothing():
    m = matcher()
    m.add_thought(thought("r-1", action=2))
    m.add_thought(thought("r-2", action=3, mask=LONG_MASK))

    experiences = m.add_outcome(outcome(["r-1", "r-2"], pnl=-120.0, side=-1))

    assert [(e.meta["query_id"], e.action) for e in experiences] == [("r-1", 0)]


def test_an_outcome_before_its_thoughts_waits_and_matches_when_they_arrive():
    m = matcher()

    early = m.add_outcome(outcome(["r-1", "r-2"]))
    after_first = m.add_thought(thought("r-1"))
    after_second = m.add_thought(thought("r-2", action=4, mask=LONG_MASK))

    assert early == [] and after_first == []
    assert sorted((e.meta["query_id"], e.action) for e in after_second) == [("r-1", 1), ("r-2", 4)]
    assert m.pending_outcomes == 0


def test_a_duplicated_outcome_yields_its_experiences_once():
    m = matcher()
    m.add_thought(thought("r-1"))

    first = m.add_outcome(outcome(["r-1"]))
    again = m.add_outcome(outcome(["r-1"]))

    assert len(first) == 1 and again == []


def test_a_duplicated_thought_is_kept_once():
    m = matcher()
    m.add_thought(thought("r-1"))

    m.add_thought(thought("r-1"))

    assert m.counts["duplicate_thoughts"] == 1


def test_pending_outcomes_are_bounded_oldest_dropped_first():
    m = matcher(max_pending=2)

    for trade_id in (1, 2, 3):
        m.add_outcome(outcome([f"r-{trade_id}"], trade_id=trade_id))
    late = m.add_thought(thought("r-1"))

    assert m.pending_outcomes == 2 and m.counts["pending_outcomes_dropped"] == 1
    assert late == []


def test_a_hindsight_label_teaches_its_thought_the_winning_side_once():
    m = matcher()
    m.add_thought(thought("r-1", action=0))
    label = HindsightLabel(BUY, SideOutcome(390.0, "target", 2), SideOutcome(-210.0, "stop", 1))

    [experience] = m.add_hindsight("r-1", label)
    again = m.add_hindsight("r-1", label)

    assert (experience.id, experience.action, experience.pnl_usd, experience.source) == ("hindsight:r-1", 1, 390.0, "hindsight")
    assert experience.target.startswith("BUY | 0.80 | ")
    assert again == []


def test_a_hindsight_label_by_env_and_step_finds_the_thought_that_saw_that_step():
    m = matcher()
    m.add_thought(thought("r-1", action=0))  # saw env 0, step 5
    label = HindsightLabel(BUY, SideOutcome(390.0, "target", 2), SideOutcome(-210.0, "stop", 1))

    [experience] = m.add_hindsight_at(0, 5, label)
    other_step = m.add_hindsight_at(0, 6, label)

    assert experience.id == "hindsight:r-1" and experience.action == BUY
    assert other_step == [] and m.pending_hindsight == 1


def test_a_hindsight_label_before_its_thought_waits_and_matches_when_the_thought_arrives():
    m = matcher()
    label = HindsightLabel(BUY, SideOutcome(390.0, "target", 2), SideOutcome(-210.0, "stop", 1))

    early = m.add_hindsight_at(0, 5, label)
    [experience] = m.add_thought(thought("r-1"))

    assert early == [] and m.pending_hindsight == 0
    assert (experience.id, experience.source) == ("hindsight:r-1", "hindsight")


def test_a_target_gives_the_market_reason_its_prompt_showed_and_keeps_the_outcome_apart():
    m = matcher()
    m.add_thought(ThoughtRecord(header("r-1", action=2), messages=[], mask=FLAT_MASK,
                                market_reason="downtrend, below VWAP, momentum negative"))

    [experience] = m.add_outcome(outcome(["r-1"], side=-1))

    assert experience.target == "SELL | 0.80 | downtrend, below VWAP, momentum negative"
    assert experience.meta["outcome"] == "short won $250 by target"


def test_market_reason_reads_trend_vwap_and_momentum_in_the_examples_words():
    assert market_reason({"trend": "up", "vwap_distance_pct": 0.3, "momentum": 1.5}) == "uptrend, above VWAP, momentum positive"
    assert market_reason({"trend": "sideways", "vwap_distance_pct": 0.01, "momentum": 0.0}) == "sideways, near VWAP, momentum flat"
    assert market_reason({"trend": "down", "vwap_distance_pct": -0.5, "momentum": -2}) == "downtrend, below VWAP, momentum negative"
    assert market_reason({}) == "no clear trend, near VWAP, momentum flat"  # a context without the fields still reads


def test_a_thought_record_keeps_the_header_alone_not_the_thoughts_reasoning_text():
    from actors.common.llm.prompts import SAMPLE_CONTEXT, PromptBook
    from actors.lora.experience import thought_record
    from bus.messages import LlmThought
    from tests.actors.lora.planted import PLANTED_REASONER

    thought = LlmThought(env_id=2, episode_id=3, step_seen=40, query_id="q-40", action=1, confidence=0.7, mode="four_step",
                         analysis="a long analysis " * 50, options="...", risks="...", decision="BUY | 0.70 | up")

    record = thought_record(PromptBook(PLANTED_REASONER), "single_shot", thought, context=SAMPLE_CONTEXT, mask=FLAT_MASK)

    assert type(record.header) is ThoughtHeader  # 20,000 kept thoughts hold no reasoning text
    assert record.header == ThoughtHeader(env_id=2, episode_id=3, step_seen=40, query_id="q-40", action=1, confidence=0.7)
