import threading
import time

import pytest

from actors.reasoner.config import ReasonerConfig
from actors.reasoner.engine import EngineError
from actors.reasoner.engines import build_engine
from tests.actors.reasoner.chat_server import ChatServer

QUESTION = [{"role": "user", "content": "Decide."}]


class CountingServer(ChatServer):
    """A /v1/chat/completions stub that answers after a delay and records how many requests overlapped."""

    def __init__(self, delay_secs: float = 0.2, fail_on: str = "") -> None:
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests = 0
        self._lock = threading.Lock()
        self._delay_secs = delay_secs
        self._fail_on = fail_on
        super().__init__()

    def answer(self, path, headers, body):
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        time.sleep(self._delay_secs)
        with self._lock:
            self.in_flight -= 1
        content = body["messages"][-1]["content"]
        status = 500 if self._fail_on and self._fail_on in content else 200
        return status, {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": f"HOLD | 0.50 | {content}"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        }


@pytest.fixture
def server():
    stub = CountingServer()
    yield stub
    stub.close()


def _conversations(n: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"env {i}"}] for i in range(n)]


def test_one_request_per_environment_is_in_flight_at_once_up_to_the_configured_concurrency(server):
    engine = build_engine(ReasonerConfig(backend="http", http_base_url=server.base_url, http_concurrency=4))

    completions = engine.chat_many(_conversations(6), max_tokens=8)

    engine.close()
    # Four at once (each is held 0.2 s, so four were in flight together), never more, six in all.
    assert server.max_in_flight == 4 and server.requests == 6
    # Answers come back in the order of the conversations.
    assert [c.text for c in completions] == [f"HOLD | 0.50 | env {i}" for i in range(6)]


def test_a_concurrency_of_one_sends_the_requests_in_turn(server):
    engine = build_engine(ReasonerConfig(backend="http", http_base_url=server.base_url, http_concurrency=1))

    engine.chat_many(_conversations(3), max_tokens=8)

    engine.close()
    assert server.max_in_flight == 1 and server.requests == 3


def test_a_failing_request_among_concurrent_ones_is_an_engine_error():
    stub = CountingServer(delay_secs=0.0, fail_on="env 2")
    engine = build_engine(ReasonerConfig(backend="http", http_base_url=stub.base_url, http_concurrency=4))

    with pytest.raises(EngineError, match="HTTP 500"):
        engine.chat_many(_conversations(4), max_tokens=8)

    engine.close()
    stub.close()
