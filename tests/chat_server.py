"""A stand-in OpenAI-compatible chat-completions endpoint on 127.0.0.1 for the tests: scripted
answers, and scripted faults (429, 500, slow replies, malformed bodies, bodies that drip or never end,
content that is not text) served before them."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import parse_qsl, urlsplit

FAULTS = (
    None,  # answered normally
    "429",
    "500",
    "slow",  # sleeps `slow_seconds` (longer than the client's timeout), then 500
    "malformed",  # 200, not JSON
    "no-choices",  # 200, JSON without choices
    "drip",  # 200, the whole answer one byte every `drip_seconds`
    "endless",  # 200 and headers promising a body that never comes (until the server is closed)
    "hang",  # no status line or headers at all (until the server is closed)
    "list-content",  # 200, the message content a list of parts
    "number-content",  # 200, the message content a number
    "no-content",  # 200, a message without content or refusal
)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many requests connect at once: none waits for a retransmitted SYN


class ChatServer:
    """`answer(messages, n)` gives the text of the n-th (0-based) request with these messages.
    `faults` is consumed one per request before any answer (each one of FAULTS; None answers
    normally); `every` is a fault served to every request once `faults` is used up. `delay` slows
    every answer, `model` is the name answers are given under."""

    def __init__(
        self,
        answer: Callable[[list, int], str],
        faults=(),
        delay: float = 0.0,
        slow_seconds: float = 3.0,
        model: str = "served-model",
        every: str | None = None,
        drip_seconds: float = 0.05,
    ):
        for fault in [*faults, every]:
            assert fault in FAULTS, fault
        self.answer, self.faults, self.delay, self.slow_seconds, self.model = answer, list(faults), delay, slow_seconds, model
        self.every, self.drip_seconds = every, drip_seconds
        self.lock = threading.Lock()
        self.closing = threading.Event()  # set on exit: requests held open ("endless", "hang") end
        self.seen: Counter = Counter()  # answered requests per messages
        self.calls = 0  # every POST, faults included
        self.answered = 0
        self.authorizations: set[str] = set()
        self.bodies: list[dict] = []
        self.queries: list[dict] = []  # the query string of every POST
        self.times: list[float] = []  # time.monotonic() as each POST arrived
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _headers(self, status: int, length: int, headers=()):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(length))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()

            def _send(self, status: int, payload: bytes, headers=()):
                try:
                    self._headers(status, len(payload), headers)
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _hold(self):
                server.closing.wait()
                self.close_connection = True

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                parts = urlsplit(self.path)
                with server.lock:
                    server.calls += 1
                    server.times.append(time.monotonic())
                    server.queries.append(dict(parse_qsl(parts.query, keep_blank_values=True)))
                if parts.path != "/v1/chat/completions":
                    return self._send(404, b'{"error": {"message": "no such route"}}')
                with server.lock:
                    server.authorizations.add(self.headers.get("Authorization", ""))
                    fault = server.faults.pop(0) if server.faults else server.every
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
                if fault == "hang":
                    return self._hold()
                if fault == "endless":
                    try:
                        self._headers(200, 1000)
                        self.wfile.write(b'{"id": "x", ')
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    return self._hold()
                if server.delay:
                    time.sleep(server.delay)
                key = json.dumps(body["messages"], sort_keys=True)
                with server.lock:
                    n = server.seen[key]
                    server.seen[key] += 1
                    server.answered += 1
                    server.bodies.append(body)
                text = server.answer(body["messages"], n)
                message = {"role": "assistant", "content": text}
                if fault == "list-content":
                    message["content"] = [{"type": "text", "text": text}]
                elif fault == "number-content":
                    message["content"] = 42
                elif fault == "no-content":
                    del message["content"]
                payload = json.dumps(
                    {
                        "id": f"chatcmpl-{server.answered}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": server.model,
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode("utf-8")
                if fault != "drip":
                    return self._send(200, payload)
                try:
                    self._headers(200, len(payload))
                    for byte in payload:
                        if server.closing.is_set():
                            break
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(server.drip_seconds)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
