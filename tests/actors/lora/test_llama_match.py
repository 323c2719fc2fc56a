"""The held-out match rate through llama.cpp (the exported GGUF adapter hot-swapped into a running engine, under
the decide grammar and the parser) equals the one measured in peft, on a planted task peft has learnt."""

import numpy as np
import pytest

from actors.lora.ceiling import Z_95
from actors.lora.publishing import paired_gain

LEARNT = 0.9
"""peft's held-out match rate at which the task counts as learnt (chance is 0.5)."""


def match_rate(answers, labels) -> float:
    return float(np.mean([a == y for a, y in zip(answers, labels)]))


@pytest.mark.slow
@pytest.mark.timeout(900)  # the first of the two pays for trend_rounds' training (about 5 minutes at load 11)
def test_the_hot_swapped_gguf_adapter_matches_as_often_in_llama_cpp_as_in_peft(trend_rounds):
    """On the trend task's training rounds (tests/actors/lora/conftest.py, shared with test_trainer.py): peft's answers
    are the last round's, measured on the store's held-out prompts right after it trained; llama.cpp answers the same
    prompts with that round's exported adapter."""
    labels = [e.action for e in trend_rounds.held_out]
    result = trend_rounds.reports[-1].result
    peft, llama, llama_base = list(result.after_answers), trend_rounds.llama_last, trend_rounds.llama_base
    assert len(peft) == len(labels) >= 20
    assert match_rate(peft, labels) >= LEARNT, match_rate(peft, labels)

    peft_hits, llama_hits = [a == y for a, y in zip(peft, labels)], [a == y for a, y in zip(llama, labels)]
    gap, low, high = paired_gain(peft_hits, llama_hits, Z_95)
    print(f"planted trend task after {sum(r.result.stats.steps for r in trend_rounds.reports)} steps: "
          f"peft {match_rate(peft, labels):.3f}, llama.cpp {match_rate(llama_base, labels):.3f} -> "
          f"{match_rate(llama, labels):.3f}, llama.cpp - peft {gap:+.3f} [{low:+.3f}, {high:+.3f}]")
    assert low <= 0.0 <= high  # the same match rate within the paired interval on the same prompts
    assert match_rate(llama, labels) >= LEARNT - 0.1
    assert match_rate(llama, labels) >= match_rate(llama_base, labels) + 0.25  # the adapter, not the base, reads the word
    assert np.mean([a == b for a, b in zip(peft, llama)]) >= 0.8  # and prompt by prompt the two paths answer alike
