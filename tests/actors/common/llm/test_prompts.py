import msgspec
import pytest

from actors.common.llm.prompts import SAMPLE_CONTEXT, PromptBook, prompt_fields
from actors.reasoner.config import ReasonerConfig
from bus import messages


def test_the_sample_context_has_exactly_the_market_context_fields():
    assert set(SAMPLE_CONTEXT) == {f.name for f in msgspec.structs.fields(messages.MarketContext)}


def test_the_opening_holds_the_system_prompt_then_the_context_and_the_allowed_actions_only():
    book = PromptBook(ReasonerConfig())
    fields = prompt_fields(dict(SAMPLE_CONTEXT, position=-1, contracts=2), [True, False, False, True, True, False])

    system, user = book.opening(fields, "analyse")

    assert system == {"role": "system", "content": ReasonerConfig().system_prompt}
    assert "short 2" in user["content"]
    assert "Allowed actions: HOLD, MOVE_SL_TO_BE, ENABLE_TRAIL" in user["content"]
    assert "BUY" not in user["content"]


def test_the_system_prompt_is_identical_for_different_contexts_so_its_cache_is_shared():
    book = PromptBook(ReasonerConfig())
    first = book.opening(prompt_fields(SAMPLE_CONTEXT, [True] * 6), "analyse")
    second = book.opening(prompt_fields(dict(SAMPLE_CONTEXT, price=1.0, trend="down"), [True] * 6), "analyse")

    assert first[0] == second[0] and first[1] != second[1]


def test_a_template_with_an_unknown_field_is_rejected_naming_its_key():
    with pytest.raises(ValueError, match="reasoner.risks_prompt"):
        PromptBook(ReasonerConfig(risks_prompt="What about {no_such_field}?"))



def test_the_single_shot_opening_is_its_own_system_prompt_and_a_compact_context_with_what_the_decision_needs():
    config = ReasonerConfig()
    book = PromptBook(config)
    fields = prompt_fields(dict(SAMPLE_CONTEXT, position=1, contracts=1, drawdown_buffer=812.0), [True, False, False, True, True, False])

    system, user = book.opening(fields, "single_shot")
    _, four_step_user = book.opening(fields, "analyse")

    assert system == {"role": "system", "content": config.single_shot_system_prompt}
    assert "ACTION | confidence | reason" in system["content"] and "HOLD | 0.45 |" in system["content"]  # format and examples: cached
    for needed in ("vs VWAP", "trend up", "RSI 62", "ATR 12.5", "momentum +0.8", "Position long 1",
                   "drawdown buffer $812", "388 min to close", "HOLD, MOVE_SL_TO_BE, ENABLE_TRAIL"):
        assert needed in user["content"], needed
    # the tape (what a hindsight label depends on) comes last in both forms, after the text llama.cpp keeps cached
    assert "Last bars: " + SAMPLE_CONTEXT["tape"] in user["content"].split("\n")[2]
    assert four_step_user["content"].split("\n\n")[0].endswith("Last bars: " + SAMPLE_CONTEXT["tape"])
    assert len(user["content"]) < len(four_step_user["content"]) / 2
    assert "BUY" not in user["content"]


def test_the_compact_single_shot_template_is_checked_at_start_naming_its_key():
    with pytest.raises(ValueError, match="reasoner.single_shot_context_template"):
        PromptBook(ReasonerConfig(single_shot_context_template="{symbol} {no_such_field}"))
