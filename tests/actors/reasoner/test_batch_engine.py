import pytest

from actors.common.llm.grammar import decision_grammar
from actors.common.llm.model import default_model_path
from actors.common.llm.prompts import SAMPLE_CONTEXT, PromptBook, prompt_fields
from actors.reasoner.batch_engine import BatchLlamaEngine
from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import EngineError, GenerationAborted, LlamaEngine
from actors.reasoner.engines import build_engine
from tests.waiting import wait_until

FLAT = [True, True, True, False, False, False]
LONG = [True, False, False, True, True, False]

# Four envs in different states: the prompts share the system prompt and differ in the context.
CONTEXTS = [
    (dict(SAMPLE_CONTEXT), FLAT),
    (dict(SAMPLE_CONTEXT, trend="down", rsi=24.0, price=18011.5, pattern="double_top"), FLAT),
    (dict(SAMPLE_CONTEXT, position=1, contracts=2, entry_price=18200.0, unrealized_pnl=1000.0), LONG),
    (dict(SAMPLE_CONTEXT, rsi=71.3, momentum=-1.4, volume_trend="falling"), FLAT),
]


def _single_shot(book, context, mask):
    return book.opening(prompt_fields(context, mask), "single_shot")


@pytest.fixture(scope="module")
def engines():
    path = str(default_model_path())
    batched = BatchLlamaEngine(model_path=path, max_sequences=4, n_ctx=1024, temperature=0.0)
    one_at_a_time = LlamaEngine(model_path=path, n_ctx=1024, temperature=0.0)
    yield batched, one_at_a_time
    batched.close()
    one_at_a_time.close()


@pytest.fixture(scope="module")
def book():
    return PromptBook(ReasonerConfig(mode="single_shot"))


def test_batched_and_one_at_a_time_give_the_same_greedy_answers_under_the_grammar(engines, book):
    batched, one_at_a_time = engines
    conversations = [_single_shot(book, context, mask) for context, mask in CONTEXTS]
    grammars = [decision_grammar(mask) for _, mask in CONTEXTS]

    # 16 tokens: the action, the confidence and the reason's first words (24 cost a third more for the same check).
    together = batched.chat_many(conversations, max_tokens=16, grammars=grammars)
    in_turn = one_at_a_time.chat_many(conversations, max_tokens=16, grammars=grammars)

    assert [c.text for c in together] == [c.text for c in in_turn]
    assert all(c.text.split(" | ")[0] in ("HOLD", "BUY", "SELL", "MOVE_SL_TO_BE", "ENABLE_TRAIL") for c in together)


def test_batched_and_one_at_a_time_give_the_same_four_step_conversations(engines, book):
    batched, one_at_a_time = engines
    conversations = [_single_shot(book, context, mask) for context, mask in CONTEXTS[:3]]
    results = {}

    for name, engine in (("batched", batched), ("one_at_a_time", one_at_a_time)):
        growing = [list(c) for c in conversations]
        for _ in range(3):  # three turns of one growing conversation per env
            answers = engine.chat_many(growing, max_tokens=8)  # 8: each turn's answer still differs, a third less to generate
            for conversation, answer in zip(growing, answers):
                conversation += [{"role": "assistant", "content": answer.text.strip()},
                                 {"role": "user", "content": "And then?"}]
        results[name] = growing

    assert results["batched"] == results["one_at_a_time"]


def test_the_same_seed_gives_the_same_sampled_answer_batched_and_one_at_a_time():
    path = str(default_model_path())
    batched = BatchLlamaEngine(model_path=path, max_sequences=2, n_ctx=1024, temperature=0.7, seed=11)
    one_at_a_time = LlamaEngine(model_path=path, n_ctx=1024, temperature=0.7, seed=11)
    book = PromptBook(ReasonerConfig())
    conversations = [_single_shot(book, context, mask) for context, mask in CONTEXTS[:2]]

    together = [c.text for c in batched.chat_many(conversations, max_tokens=16)]
    in_turn = [c.text for c in one_at_a_time.chat_many(conversations, max_tokens=16)]
    batched.close()
    one_at_a_time.close()

    assert together == in_turn


def test_the_shared_system_prompt_is_read_once_for_all_sequences(engines, book):
    batched, _ = engines
    batched.forget_context()
    conversations = [_single_shot(book, context, mask) for context, mask in CONTEXTS]
    lengths = [len(batched._model.tokenize(batched.render(c).encode(), add_bos=False, special=True))
               for c in conversations]
    before = batched.prompt_tokens_decoded

    batched.chat_many(conversations, max_tokens=4)

    read = batched.prompt_tokens_decoded - before
    system_tokens = len(batched._model.tokenize(book.single_shot_system_prompt.encode(), add_bos=False, special=False))
    # Each sequence's own part, plus the shared part once: at least 3 system prompts fewer than 4 full prompts.
    assert read <= sum(lengths) - 3 * system_tokens


def test_the_next_turn_of_a_conversation_reads_only_its_new_suffix(engines, book):
    batched, _ = engines
    conversations = [_single_shot(book, context, mask) for context, mask in CONTEXTS[:2]]
    first = batched.chat_many(conversations, max_tokens=8)
    follow_ups = [[*c, {"role": "assistant", "content": a.text.strip()}, {"role": "user", "content": "Why?"}]
                  for c, a in zip(conversations, first)]

    second = batched.chat_many(follow_ups, max_tokens=8)

    for before, after in zip(first, second):
        assert after.evaluated_prompt_tokens < after.prompt_tokens - before.prompt_tokens + 8


def test_more_conversations_than_sequences_is_an_engine_error(engines, book):
    batched, _ = engines

    with pytest.raises(EngineError, match="exceed max_sequences"):
        batched.chat_many([_single_shot(book, *CONTEXTS[0])] * 5, max_tokens=4)


def test_the_config_chooses_the_batched_engine_and_a_closed_one_refuses_to_chat():
    engine = build_engine(ReasonerConfig(batched=True, max_batch_sequences=2, n_ctx=512))
    engine.close()

    assert isinstance(engine, BatchLlamaEngine) and engine.max_sequences == 2
    with pytest.raises(EngineError, match="closed"):
        engine.chat([{"role": "user", "content": "hi"}], max_tokens=2)
    one_at_a_time = build_engine(ReasonerConfig(batched=False, n_ctx=512))
    one_at_a_time.close()
    assert isinstance(one_at_a_time, LlamaEngine)


def test_more_batch_sequences_than_the_llama_batch_holds_is_a_config_error():
    with pytest.raises(ValueError, match="max_batch_sequences"):
        ReasonerConfig(max_batch_sequences=16, n_batch=8)


def test_an_adapter_swapped_on_the_live_context_answers_as_one_loaded_at_construction(tmp_path, book):
    from actors.lora.gguf_adapter import random_lora_adapter

    path = str(default_model_path())
    adapter = str(random_lora_adapter(path, tmp_path / "v2.gguf", rank=4, alpha=8.0, std=0.2))
    batched = BatchLlamaEngine(model_path=path, max_sequences=2, n_ctx=1024, temperature=0.0)
    loaded = LlamaEngine(model_path=path, n_ctx=1024, temperature=0.0, lora_path=adapter, lora_version=2)
    # One conversation: with LoRA matmuls in the graph, a prompt read in other chunks (the shared
    # prefix apart) can shift a near-tie of this random adapter's flat distributions.
    conversations = [_single_shot(book, *CONTEXTS[0])]
    base = [c.text for c in batched.chat_many(conversations, max_tokens=12)]

    batched.load_adapter(adapter, 2)
    swapped = [c.text for c in batched.chat_many(conversations, max_tokens=12)]
    reference = [c.text for c in loaded.chat_many(conversations, max_tokens=12)]
    batched.close()
    loaded.close()

    assert batched.adapter_version == 2
    assert swapped == reference and swapped != base


def test_an_abort_stops_the_batch_after_the_current_decode_step_and_no_answers_come_back(book):
    import threading

    engine = BatchLlamaEngine(model_path=str(default_model_path()), max_sequences=2, n_ctx=2048, temperature=0.0)
    conversations = [_single_shot(book, *CONTEXTS[0]), _single_shot(book, *CONTEXTS[1])]
    outcome: dict = {}

    def generate():
        try:
            outcome["result"] = engine.chat_many(conversations, max_tokens=1500, grammars=["root ::= [a-z ]{2000}"] * 2)
        except GenerationAborted as exc:
            outcome["result"] = exc

    thread = threading.Thread(target=generate, daemon=True)
    thread.start()
    wait_until(lambda: engine.decode_steps >= 3)  # generating (1500 steps take 20 s or more here)
    steps_at_abort = engine.decode_steps
    engine.abort()
    thread.join(120.0)
    engine.close()

    # Counted in decode steps, not seconds, so a busy machine cannot break it: at most the step in flight (and the one
    # started while abort() was called) follows, of 1,500.
    assert not thread.is_alive() and isinstance(outcome["result"], GenerationAborted)
    assert engine.decode_steps - steps_at_abort <= 2
