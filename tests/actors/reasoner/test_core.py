import numpy as np
import pytest

from actors.common.llm.prompts import SAMPLE_CONTEXT
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.core import ReasonerCore
from actors.reasoner.engine import Completion

MASK = [True, True, True, False, False, False]


class ScriptedEngine:
    """Answers every step with the same decision text; records what it was asked."""

    def __init__(self, answer="BUY | 0.80 | trend up"):
        self.answer = answer
        self.adapter_version = 0
        self.conversations: list[list[dict]] = []
        self.adapters: list[tuple[str, int]] = []

    def chat(self, messages, *, max_tokens, grammar=None):
        self.conversations.append(list(messages))
        return Completion(self.answer, 100, 40, 8, 0.01, 0.05, 0.06)

    def forget_context(self):
        pass

    def load_adapter(self, path, version):
        self.adapters.append((path, version))
        self.adapter_version = version

    def close(self):
        pass


def observe(core, env_id, step, obs_value=0.0, context=None):
    obs = np.full(261, obs_value, dtype=np.float32)
    return core.observe(env_id=env_id, episode_id=0, step=step, obs=obs, mask=MASK, context=context or SAMPLE_CONTEXT)


def think_next(core):
    request = core.next_request()
    return core.from_cache(request) or core.finish(request, core.think(request))


def test_a_thought_is_about_the_newest_observation_and_carries_its_step_and_a_unique_query_id():
    core = ReasonerCore(ReasonerConfig(cache_enabled=False), ScriptedEngine(), query_id_prefix="123")
    for step in range(5):
        observe(core, env_id=0, step=step)

    first = think_next(core)
    observe(core, env_id=0, step=5)
    second = think_next(core)

    assert (first.request.step, second.request.step) == (4, 5)
    assert (first.query_id, second.query_id) == ("123-1", "123-2")
    assert first.thought.action == 1 and first.thought.confidence == pytest.approx(0.8)
    assert core.gauges()["obs_replaced"] == 4


def test_the_four_steps_are_one_growing_conversation():
    engine = ScriptedEngine()
    core = ReasonerCore(ReasonerConfig(cache_enabled=False), engine, query_id_prefix="1")
    observe(core, env_id=0, step=0)

    think_next(core)

    lengths = [len(c) for c in engine.conversations]
    assert lengths == [2, 4, 6, 8]
    for shorter, longer in zip(engine.conversations, engine.conversations[1:]):
        assert longer[: len(shorter)] == shorter  # each prompt extends the previous one


def test_the_same_rounded_state_is_served_from_the_cache_with_decayed_confidence():
    engine = ScriptedEngine()
    core = ReasonerCore(ReasonerConfig(cache_confidence_decay=0.25), engine, query_id_prefix="1")
    observe(core, env_id=0, step=0, obs_value=0.31)
    fresh = think_next(core)
    observe(core, env_id=0, step=1, obs_value=0.33)

    reused = think_next(core)

    assert reused.thought.cached and not fresh.thought.cached
    assert reused.thought.confidence == pytest.approx(0.6)
    assert reused.request.step == 1 and reused.query_id != fresh.query_id
    assert len(engine.conversations) == 4  # the model thought once
    assert core.gauges()["cache_hit_rate"] == pytest.approx(0.5)


def test_only_a_newer_adapter_is_requested_and_the_newest_wins():
    engine = ScriptedEngine()
    core = ReasonerCore(ReasonerConfig(), engine, query_id_prefix="1")

    core.request_adapter("/a/v3.gguf", 3)
    core.request_adapter("/a/v2.gguf", 2)
    core.swap_adapter(core.take_adapter_request())
    core.request_adapter("/a/v3-again.gguf", 3)

    assert engine.adapters == [("/a/v3.gguf", 3)]
    assert core.take_adapter_request() is None


def test_an_observation_the_query_policy_skips_does_not_wait_for_a_thought():
    core = ReasonerCore(ReasonerConfig(query_policy="every_n", query_every_n_steps=3), ScriptedEngine(), query_id_prefix="1")

    accepted = [observe(core, env_id=0, step=step) for step in range(4)]

    assert accepted == [True, False, False, True]
    assert core.gauges()["skipped_by_policy"] == 2


def test_one_worker_call_thinks_for_the_newest_observation_of_every_waiting_env():
    engine = ScriptedEngine()
    core = ReasonerCore(ReasonerConfig(cache_enabled=False, mode="single_shot", max_batch_sequences=3), engine,
                        query_id_prefix="9")
    for env_id in range(4):
        observe(core, env_id=env_id, step=1)
        observe(core, env_id=env_id, step=2)

    requests = core.next_requests()
    thoughts = core.think_many(requests)

    assert [(r.env_id, r.step) for r in requests] == [(0, 2), (1, 2), (2, 2)]
    assert len(thoughts) == 3 and all(t.action == 1 for t in thoughts)
    assert len(engine.conversations) == 3  # one single-shot prompt per env
    assert [r.env_id for r in core.next_requests()] == [3]


class AbortableEngine(ScriptedEngine):
    """A ScriptedEngine that, once aborted, refuses like a real engine (GenerationAborted)."""

    def __init__(self):
        super().__init__()
        self.aborted = False

    def chat(self, messages, *, max_tokens, grammar=None):
        from actors.reasoner.engine import GenerationAborted

        if self.aborted:
            raise GenerationAborted("aborted")
        return super().chat(messages, max_tokens=max_tokens, grammar=grammar)

    def abort(self):
        self.aborted = True


def test_after_an_abort_no_thought_is_made_and_no_adapter_is_loaded():
    engine = AbortableEngine()
    core = ReasonerCore(ReasonerConfig(cache_enabled=False, mode="single_shot"), engine, query_id_prefix="1")
    observe(core, env_id=0, step=1)
    core.request_adapter("/a/v2.gguf", 2)

    core.abort()
    thoughts = core.think_many(core.next_requests())
    core.swap_adapter(core.take_adapter_request())

    assert engine.aborted and thoughts == []
    assert engine.conversations == [] and engine.adapters == []


def test_an_engine_without_abort_still_lets_the_core_stop_thinking():
    core = ReasonerCore(ReasonerConfig(cache_enabled=False), ScriptedEngine(), query_id_prefix="1")
    observe(core, env_id=0, step=1)

    core.abort()

    assert core.think_many(core.next_requests()) == []
