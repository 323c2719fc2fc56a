"""A local HTTP server for the tests of our HTTP clients (the RSS source, the OpenAI-style chat engine): real sockets,
the real protocol, on 127.0.0.1 at a free port. One place starts it, answers and stops it; a subclass says what to
answer in ``respond``."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalHttpServer:
    """http.server in daemon threads; each GET or POST is answered by ``respond`` (None: 404)."""

    def __init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner._answer(self)

            def do_POST(self):
                owner._answer(self)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def respond(self, request: BaseHTTPRequestHandler) -> tuple[int, str, bytes] | None:
        """(status, content type, body) for one request (``request.command``, ``.path``, ``.headers``, ``.rfile``)."""
        raise NotImplementedError

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        answer = self.respond(request)
        if answer is None:
            request.send_error(404)
            return
        status, content_type, body = answer
        request.send_response(status)
        request.send_header("Content-Type", content_type)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
