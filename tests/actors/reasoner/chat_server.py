"""A local server speaking the OpenAI /v1/chat/completions wire format, for the http backend's tests."""

import json
import threading
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    """Listens on 127.0.0.1 (a free port) in a daemon thread; a subclass answers each POST in ``answer``."""

    def __init__(self) -> None:
        chat_server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, reply = chat_server.answer(self.path, self.headers, body)
                payload = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str, headers: Message, body: dict) -> tuple[int, object]:
        """The HTTP status and the reply (JSON-able, or raw bytes) to one request."""
        raise NotImplementedError

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
