import numpy as np
import pytest

from actors.reasoner.cache import ThoughtCache
from actors.reasoner.thought import Thought

MASK = (True, True, True, False, False, False)


def thought(confidence=0.8, fallback=False):
    return Thought(action=1, confidence=confidence, mode="four_step", analysis="a", options="o", risks="r",
                   decision="BUY | 0.80 | up", reason="up", fallback=fallback, parse_how="pipe", latency_ms=900.0,
                   prompt_tokens=300, reused_prompt_tokens=100, generated_tokens=60, generation_secs=0.5,
                   adapter_version=0)


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def obs(value=0.31):
    row = np.zeros(261, dtype=np.float32)
    row[228:240] = value
    return row


def test_states_that_round_alike_share_a_key_and_others_do_not():
    cache = ThoughtCache(decimals=1)

    assert cache.key(obs(0.31), MASK, 0) == cache.key(obs(0.34), MASK, 0)
    assert cache.key(obs(0.31), MASK, 0) != cache.key(obs(0.36), MASK, 0)
    assert cache.key(obs(0.31), MASK, 0) != cache.key(obs(0.31), MASK, 1)
    assert cache.key(obs(0.31), MASK, 0) != cache.key(obs(0.31), (True,) * 6, 0)


def test_each_reuse_decays_the_confidence_and_marks_the_thought_cached():
    cache = ThoughtCache(confidence_decay=0.2)
    key = cache.key(obs(), MASK, 0)
    cache.put(key, thought(0.8))

    first, second = cache.get(key), cache.get(key)

    assert first.cached and first.confidence == pytest.approx(0.64)
    assert second.confidence == pytest.approx(0.512)
    assert (cache.hits, cache.misses) == (2, 0)


def test_a_thought_decayed_below_the_minimum_or_past_its_ttl_is_not_reused():
    clock = FakeClock()
    cache = ThoughtCache(confidence_decay=0.5, min_confidence=0.3, ttl_secs=10.0, clock=clock)
    key, other = cache.key(obs(0.1), MASK, 0), cache.key(obs(0.9), MASK, 0)
    cache.put(key, thought(0.8))
    cache.put(other, thought(0.8))

    assert cache.get(key).confidence == pytest.approx(0.4)
    assert cache.get(key) is None  # 0.2 < 0.3
    clock.now = 11.0
    assert cache.get(other) is None
    assert cache.hit_rate() == pytest.approx(1 / 3)


def test_the_oldest_entry_is_evicted_and_fallbacks_are_never_cached():
    cache = ThoughtCache(max_entries=2)
    keys = [cache.key(obs(v), MASK, 0) for v in (0.1, 0.5, 0.9)]
    for key in keys:
        cache.put(key, thought())
    cache.put(cache.key(obs(0.7), MASK, 0), thought(fallback=True))

    assert len(cache) == 2
    assert cache.get(keys[0]) is None and cache.get(keys[2]) is not None
