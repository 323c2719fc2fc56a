"""Exact thought reuse: the memo in isolation, then a real SmolLM2 thinker at temperature 0."""

import dataclasses

import pytest

from actors.common.llm.model import default_model_path
from actors.common.llm.prompts import SAMPLE_CONTEXT
from actors.lora.gguf_adapter import random_lora_adapter
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.memo import ThoughtMemo
from actors.reasoner.thinker import Thinker
from actors.reasoner.thought import Thought
from tests.actors.reasoner.real_engine import engine_fixture

FLAT = [True, True, True, False, False, False]
GREEDY = dict(mode="single_shot", temperature=0.0, max_decide_tokens=20, cache_enabled=False)


def _thought(**changes) -> Thought:
    base = Thought(action=1, confidence=0.7, mode="single_shot", analysis="", options="", risks="", decision="BUY | 0.70 | up",
                   reason="up", fallback=False, parse_how="grammar", latency_ms=900.0, prompt_tokens=80, reused_prompt_tokens=200,
                   generated_tokens=12, generation_secs=0.1, adapter_version=0)
    return dataclasses.replace(base, **changes)


def test_a_repeated_prompt_gets_the_stored_answer_marked_as_reused_and_costing_no_tokens():
    memo = ThoughtMemo(max_entries=8)
    key = memo.key(0, [{"role": "user", "content": "price 18000"}], "root ::= x")
    memo.put(key, _thought())

    again = memo.get(key)

    assert again is not None and again.memo and again.decision == "BUY | 0.70 | up"
    assert (again.latency_ms, again.generated_tokens, again.prompt_tokens) == (0.0, 0, 0)
    assert memo.get(memo.key(0, [{"role": "user", "content": "price 18000.25"}], "root ::= x")) is None
    assert (memo.hits, memo.misses) == (1, 1)


def test_a_fallback_is_never_remembered_and_the_oldest_prompt_is_evicted_first():
    memo = ThoughtMemo(max_entries=2)
    keys = [memo.key(0, [{"role": "user", "content": str(i)}], None) for i in range(3)]
    memo.put(keys[0], _thought(fallback=True))
    for key in keys:
        memo.put(key, _thought())

    assert len(memo) == 2 and memo.get(keys[0]) is None and memo.get(keys[2]) is not None


def test_an_adapter_swap_flushes_every_answer_of_the_old_adapter():
    memo = ThoughtMemo(max_entries=8)
    memo.put(memo.key(0, [{"role": "user", "content": "a"}], None), _thought())

    assert memo.get(memo.key(1, [{"role": "user", "content": "a"}], None)) is None
    assert len(memo) == 0 and memo.flushes == 1


engine = engine_fixture(**GREEDY)


@pytest.mark.slow
def test_at_temperature_zero_the_same_prompt_gets_the_same_answer_whatever_the_kv_cache_held_between(engine):
    thinker = Thinker(engine, ReasonerConfig(**GREEDY))
    other = dict(SAMPLE_CONTEXT, trend="down", rsi=25.0, price=17950.0)

    first = thinker.think(SAMPLE_CONTEXT, FLAT)
    thinker.think(other, FLAT)  # the KV cache now holds another prompt
    steps_before = engine.decode_steps
    again = thinker.think(SAMPLE_CONTEXT, FLAT)

    assert not first.memo and again.memo
    assert (again.action, again.confidence, again.decision) == (first.action, first.confidence, first.decision)
    assert engine.decode_steps == steps_before  # answered without the model
    assert thinker.memo.hits == 1 and thinker.memo.misses == 2


@pytest.mark.slow
def test_a_swapped_adapter_is_asked_again_and_sampling_above_temperature_zero_never_uses_the_memo(engine, tmp_path):
    thinker = Thinker(engine, ReasonerConfig(**GREEDY))
    thinker.think(SAMPLE_CONTEXT, FLAT)
    adapter = random_lora_adapter(default_model_path(), tmp_path / "v1.gguf", rank=4, alpha=8.0, std=0.2)
    engine.load_adapter(str(adapter), 1)

    under_adapter = thinker.think(SAMPLE_CONTEXT, FLAT)

    assert not under_adapter.memo and under_adapter.adapter_version == 1 and thinker.memo.flushes == 1
    assert Thinker(engine, ReasonerConfig(**dict(GREEDY, temperature=0.2))).memo is None
