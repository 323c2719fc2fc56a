import msgspec
import pytest

from actors.reasoner import actions
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.prompts import SAMPLE_CONTEXT, PromptBook, prompt_fields
from bus import messages


def test_action_names_match_the_bus_contract():
    assert actions.ACTION_NAMES == messages.ACTION_NAMES


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


def test_a_mask_of_the_wrong_length_is_rejected():
    with pytest.raises(ValueError, match="6 entries"):
        actions.allowed_actions([True, False])
