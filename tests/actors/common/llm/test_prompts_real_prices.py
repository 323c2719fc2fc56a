"""Both prompt formats at real NQ price levels (about 16,000, quarter-point ticks), as a replayed vendor file gives them."""

from actors.common.llm.prompts import SAMPLE_CONTEXT, PromptBook, prompt_fields
from actors.reasoner.config import ReasonerConfig

REAL = dict(SAMPLE_CONTEXT, price=16012.25, support=15990.5, resistance=16040.75, entry_price=16001.75, position=1, contracts=1, atr=9.25)


def test_the_four_step_context_shows_quarter_tick_prices_exactly():
    _, user = PromptBook(ReasonerConfig()).opening(prompt_fields(REAL, [True] * 6), "analyse")

    assert "price 16012.25" in user["content"] and "support 15990.50, resistance 16040.75" in user["content"]
    assert "entry 16001.75" in user["content"] and "e+" not in user["content"]


def test_the_single_shot_context_stays_relative_so_price_levels_do_not_change_its_size():
    book = PromptBook(ReasonerConfig())
    real = book.opening(prompt_fields(REAL, [True] * 6), "single_shot")[-1]["content"]
    sample = book.opening(prompt_fields(SAMPLE_CONTEXT, [True] * 6), "single_shot")[-1]["content"]

    assert "16012" not in real and abs(len(real) - len(sample)) < 40
