"""A local server speaking the OpenAI /v1/chat/completions wire format, for the http backend's tests."""

import json
from email.message import Message
from http.server import BaseHTTPRequestHandler

from tests.local_http import LocalHttpServer


class ChatServer(LocalHttpServer):
    """Listens on 127.0.0.1 (a free port) in a daemon thread; a subclass answers each POST in ``answer``."""

    def __init__(self) -> None:
        super().__init__()
        self.base_url = f"{self.url}/v1"

    def respond(self, request: BaseHTTPRequestHandler) -> tuple[int, str, bytes]:
        body = json.loads(request.rfile.read(int(request.headers["Content-Length"])))
        status, reply = self.answer(request.path, request.headers, body)
        return status, "application/json", reply if isinstance(reply, bytes) else json.dumps(reply).encode()

    def answer(self, path: str, headers: Message, body: dict) -> tuple[int, object]:
        """The HTTP status and the reply (JSON-able, or raw bytes) to one request."""
        raise NotImplementedError
