"""A stand-in OpenAI-compatible chat-completions endpoint on 127.0.0.1 for the tests: scripted
answers, and scripted faults (429, 500, slow replies, malformed bodies) served before them."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class ChatServer:
    """`answer(messages, n)` gives the text of the n-th (0-based) request with these messages.
    `faults` is consumed one per request before any answer: "429", "500", "slow" (sleeps
    `slow_seconds`, longer than the client's timeout), "malformed" (200, not JSON), "no-choices"
    (200, JSON without choices). `delay` slows every answer."""

    def __init__(
        self, answer: Callable[[list, int], str], faults=(), delay: float = 0.0, slow_seconds: float = 3.0, model: str = "served-model"
    ):
        self.answer, self.faults, self.delay, self.slow_seconds, self.model = answer, list(faults), delay, slow_seconds, model
        self.lock = threading.Lock()
        self.seen: Counter = Counter()  # answered requests per messages
        self.calls = 0  # every POST, faults included
        self.answered = 0
        self.authorizations: set[str] = set()
        self.bodies: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, payload: bytes, headers=()):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                with server.lock:
                    server.calls += 1
                if self.path != "/v1/chat/completions":
                    return self._send(404, b'{"error": {"message": "no such route"}}')
                with server.lock:
                    server.authorizations.add(self.headers.get("Authorization", ""))
                    fault = server.faults.pop(0) if server.faults else None
                if fault == "429":
                    return self._send(429, b'{"error": {"message": "slow down", "type": "rate_limit"}}', [("Retry-After", "0")])
                if fault == "500":
                    return self._send(500, b'{"error": {"message": "boom"}}')
                if fault == "slow":
                    time.sleep(server.slow_seconds)
                    return self._send(500, b'{"error": {"message": "too late"}}')
                if fault == "malformed":
                    return self._send(200, b"{this is not json")
                if fault == "no-choices":
                    return self._send(200, b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m"}')
                if server.delay:
                    time.sleep(server.delay)
                key = json.dumps(body["messages"], sort_keys=True)
                with server.lock:
                    n = server.seen[key]
                    server.seen[key] += 1
                    server.answered += 1
                    server.bodies.append(body)
                text = server.answer(body["messages"], n)
                payload = {
                    "id": f"chatcmpl-{server.answered}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": server.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                self._send(200, json.dumps(payload).encode("utf-8"))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
