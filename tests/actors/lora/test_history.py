import pytest

from actors.common.actions import BUY, SELL
from actors.common.hindsight import HindsightLabel, SideOutcome
from actors.common.llm.prompts import SAMPLE_CONTEXT, PromptBook
from actors.lora.experience import decide_messages
from actors.lora.history import HistoryBar, history_experiences, split_days
from actors.lora.store import ExperienceStore
from actors.reasoner.config import ReasonerConfig

FLAT_MASK = [True, True, True, False, False, False]


def label(action, long_pnl, short_pnl):
    return HindsightLabel(action, SideOutcome(long_pnl, "target", 3), SideOutcome(short_pnl, "stop", 1))


def test_a_history_bar_becomes_the_prompt_a_thought_would_have_had_and_its_hindsight_target():
    reasoner = ReasonerConfig()
    book = PromptBook(reasoner)
    falling = {**SAMPLE_CONTEXT, "trend": "down", "vwap_distance_pct": -0.3, "momentum": -2.0}

    [up, down] = history_experiences(book, reasoner.mode, 0.8, [("100", SAMPLE_CONTEXT, FLAT_MASK, label(BUY, 390.0, -210.0)),
                                                                 ("250", falling, FLAT_MASK, label(SELL, -210.0, 390.0))])

    assert (up.id, up.source, up.action, up.pnl_usd) == ("hindsight:history:100", "hindsight", BUY, 390.0)
    assert up.target == "BUY | 0.80 | uptrend, above VWAP, momentum positive"
    assert down.target == "SELL | 0.80 | downtrend, below VWAP, momentum negative"
    assert up.messages == decide_messages(book, reasoner.mode, SAMPLE_CONTEXT, FLAT_MASK)
    assert up.meta["short_pnl_usd"] == -210.0


def test_the_same_history_stored_twice_is_stored_once(tmp_path):
    reasoner = ReasonerConfig()
    rows = [(str(bar), SAMPLE_CONTEXT, FLAT_MASK, label(BUY, 100.0, -50.0)) for bar in range(5)]
    store = ExperienceStore(tmp_path / "x.sqlite", max_experiences=100, held_out_fraction=0.2)

    added = [store.add(history_experiences(PromptBook(reasoner), reasoner.mode, 0.8, rows)) for _ in range(2)]

    assert added == [5, 0]


def test_a_target_never_gives_a_reason_against_its_own_action():
    reasoner = ReasonerConfig()
    falling = {**SAMPLE_CONTEXT, "trend": "down", "vwap_distance_pct": -0.3, "momentum": -2.0}

    [bounce] = history_experiences(PromptBook(reasoner), reasoner.mode, 0.8, [("7", falling, FLAT_MASK, label(BUY, 300.0, -100.0))])

    assert bounce.target == "BUY | 0.80 | against the trend, below VWAP, momentum negative"


def test_the_later_days_are_held_out_and_a_bar_says_which_side_it_is_on(tmp_path):
    train, held = split_days([5, 3, 9, 3, 7, 1, 2, 8, 4, 6, 10], 0.2)
    assert (train, held) == ([1, 2, 3, 4, 5, 6, 7, 8], [9, 10])
    with pytest.raises(ValueError, match="2 trading days"):
        split_days([4, 4], 0.2)

    reasoner = ReasonerConfig()
    rows = [HistoryBar(str(bar), SAMPLE_CONTEXT, FLAT_MASK, label(BUY, 100.0, -50.0), day=bar // 10, held_out=bar >= 10)
            for bar in range(20)]
    experiences = history_experiences(PromptBook(reasoner), reasoner.mode, 0.8, rows)
    store = ExperienceStore(tmp_path / "x.sqlite", max_experiences=100, held_out_fraction=0.5)
    store.add(experiences)

    assert {e.meta["day"] for e in store.all(held_out=True)} == {1} and {e.meta["day"] for e in store.all(held_out=False)} == {0}
    assert experiences[0].meta["tape"] == SAMPLE_CONTEXT["tape"]
