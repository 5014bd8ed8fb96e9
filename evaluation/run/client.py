"""One chat completion through the `openai` client library (its asyncio client), with bounded retries
and backoff.

`--timeout` is a deadline for one whole answer: connecting, the headers and every byte of the body
(a server that drips its body, or never ends it, is cut off when it passes). Answers are read whole
before they are parsed, up to MAX_BODY bytes, and checked here: an answer is a string (or an empty
one for a refusal); content that is a list, a number or missing is a malformed answer.

Retried: 429 (honouring Retry-After, capped), 5xx, 408, timeouts, dropped connections and bodies that
are not a chat completion. Not retried: other 4xx (a bad request stays bad). A timeout before the attempt's
connection was made is a connection failure for the breaker; one after it is not. The API key is held by
the client only; no message here contains it. The base URL and the key are checked before any
request (`endpoint`, `check_api_key`), each refused with one line.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
import random
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ctxrobust import jsontext
from ctxrobust.errors import CtxRobustError

MAX_BODY = 16 * 1024 * 1024  # the longest answer body read (bytes); a longer one is a malformed answer
MAX_NAME = 200  # served model names and finish reasons are kept up to this many characters
BASE_URL_EXAMPLE = "e.g. http://localhost:8000/v1 or https://api.openai.com/v1"
ATTEMPT: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar("attempt", default=None)  # the attempt a request hook belongs to
CONNECTED = ("connect_tcp.complete", "connect_unix_socket.complete", "send_request_headers.started")  # httpcore trace events


class Attempt:
    """One attempt in flight: whether its connection was made (a pooled one counts as made)."""

    __slots__ = ("connected",)

    def __init__(self) -> None:
        self.connected = False


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 6  # attempts after the first
    base: float = 1.0  # seconds before the first retry; doubles each time
    cap: float = 60.0  # longest wait
    timeout: float = 300.0  # seconds for one whole answer (connect, headers, body)


@dataclass(frozen=True)
class Answer:
    text: str | None  # None: failed
    served_model: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    attempts: int = 1


class Failure(Exception):
    """A failed attempt: whether to retry, how long the endpoint asked to wait, whether the endpoint
    answered at all (`reached`: not after a timeout) and, when no connection was made, how connecting
    failed (`unreachable`)."""

    def __init__(self, message: str, retry: bool, wait: float | None = None, unreachable: str | None = None, reached: bool = True):
        super().__init__(message)
        self.retry, self.wait, self.unreachable = retry, wait, unreachable
        self.reached = reached and unreachable is None


@dataclass(frozen=True)
class Endpoint:
    """A checked base URL: what the client is given (without query or fragment) and the query it sends
    with every request (kept apart so that it is never spliced into the path)."""

    base_url: str
    query: dict = field(default_factory=dict)


def _shown_url(url: str) -> str:
    """The URL as an error shows it: without credentials, query or fragment, escaped, cut when long."""
    from ctxrobust.release_files import printable

    if _parses(url):
        shown = public_url(url)
    else:  # what cannot be parsed is cut by hand: no user:password@, no query, no fragment
        shown = re.sub(r"(//)[^/]*@", r"\1", url.split("#", 1)[0].split("?", 1)[0])
    return printable(shown, limit=200)


def _parses(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises for a port out of range)
    except ValueError:
        return False
    return True


def endpoint(url: str) -> Endpoint:
    """The base URL checked before any request: http or https, a host, a port in range; the query
    string (e.g. `api-version=...`) sent as the query of each request; one clear line if it is wrong."""
    what = f"--base-url {_shown_url(url)}"
    if not url or any(c.isspace() or not c.isprintable() for c in url):
        raise CtxRobustError(f"{what}: holds a space or control character; give the endpoint URL ({BASE_URL_EXAMPLE})")
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # "[::1": an unclosed IPv6 bracket
        raise CtxRobustError(f"{what}: not a URL ({exc}); give the endpoint URL ({BASE_URL_EXAMPLE})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise CtxRobustError(f"{what}: not an http:// or https:// URL; give the endpoint URL ({BASE_URL_EXAMPLE})")
    try:
        parts.port  # noqa: B018
    except ValueError:
        port = parts.netloc.rpartition(":")[2]
        raise CtxRobustError(f"{what}: port {port!r} is not a number from 1 to 65535") from None
    if not parts.hostname:
        raise CtxRobustError(f"{what}: names no host; give the endpoint URL ({BASE_URL_EXAMPLE})")
    if parts.port == 0:
        raise CtxRobustError(f"{what}: port 0 is not a number from 1 to 65535")
    query = dict(parse_qsl(parts.query, keep_blank_values=True)) if parts.query else {}
    return Endpoint(urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), query)


def check_api_key(key: str, env: str) -> None:
    """An API key that can be sent in a header: no line break, control character, surrounding space
    or non-ASCII character (the key itself is never shown)."""
    if not key.isascii():
        problem = "a character outside ASCII"
    elif any(not c.isprintable() for c in key):
        problem = "a line break or control character" if any(c in "\r\n" for c in key) else "a control character"
    elif key != key.strip():
        problem = "a space at its start or end"
    else:
        return
    raise CtxRobustError(
        f"the API key in ${env} holds {problem}, which cannot be sent in a request header; set {env} to the key alone (nothing was sent)"
    )


def public_url(url: str) -> str:
    """The endpoint without user name, password, query or fragment (which may carry credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _retry_after(exc) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _name(value) -> str | None:
    """A served model name or finish reason as it is kept: a string, cut to MAX_NAME, valid UTF-8."""
    if not isinstance(value, str):
        return None
    return value[:MAX_NAME].encode("utf-8", "replace").decode("utf-8")


def _why(exc: BaseException) -> str:
    """How connecting failed, from the deepest cause the transport kept ("ConnectionRefusedError: [Errno
    111] Connect call failed ..."), one short line."""
    from ctxrobust.release_files import printable

    deepest, seen = exc, set()
    while len(seen) < 20 and id(deepest) not in seen:
        seen.add(id(deepest))
        cause = deepest.__cause__ or deepest.__context__
        if cause is None:
            break
        deepest = cause
    text = " ".join(str(deepest).split())
    if deepest is exc or not text:
        return "connection failed"
    return printable(f"{type(deepest).__name__}: {text}" if isinstance(deepest, OSError) else text, limit=160)


def _kind(value) -> str:
    return {list: "a list", dict: "an object", bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def parse_completion(data: bytes) -> Answer:
    """The answer in a chat-completion body, or a Failure (retried) naming what is wrong with it."""
    try:
        completion = jsontext.loads(data)
    except ValueError:  # not JSON, not UTF-8, or nested too deeply
        raise Failure("malformed response body (not JSON)", True) from None
    if not isinstance(completion, dict):
        raise Failure(f"malformed response body ({_kind(completion)}, not a chat completion)", True)
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise Failure("malformed response body (no choices)", True)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise Failure("malformed response body (no message)", True)
    content = message.get("content")
    if content is None:
        if not isinstance(message.get("refusal"), str):
            raise Failure("malformed response body (no message content)", True)
        content = ""  # a refusal: an empty, invalid answer
    if not isinstance(content, str):
        raise Failure(f"malformed response body (the message content is {_kind(content)}, not text)", True)
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escaped in the JSON
        raise Failure("malformed response body (the message content is not valid Unicode text)", True) from None
    return Answer(content, _name(completion.get("model")), _name(choices[0].get("finish_reason")))


def _timed_out(message: str) -> Failure:
    """A timeout: before the attempt's connection was made it is a connection failure (the breaker counts
    it); after, the endpoint was reached but did not answer in time (neither counted nor a reset)."""
    attempt = ATTEMPT.get()
    if attempt is not None and not attempt.connected:
        return Failure(f"{message} while connecting", True, unreachable="timed out connecting")
    return Failure(message, True, reached=False)


class ChatClient:
    """Chat completions from one endpoint; `complete` is a coroutine, cancelled at once when the run stops."""

    def __init__(self, base_url: str, api_key: str, policy: RetryPolicy, seed: int = 0, pace=None, breaker=None):
        """`pace` (a pacing.RateCap) is awaited before every attempt; `breaker` (a pacing.Breaker) hears
        of every attempt that could not connect and of every one that reached the endpoint."""
        import openai

        self.openai = openai
        where = endpoint(base_url)
        http_client = openai.DefaultAsyncHttpxClient(event_hooks={"request": [self._going_out]})
        self.client = openai.AsyncOpenAI(
            base_url=where.base_url,
            api_key=api_key,
            max_retries=0,
            timeout=policy.timeout,
            default_query=where.query or None,
            http_client=http_client,
        )
        self.policy = policy
        self.pace, self.breaker = pace, breaker
        self._random = random.Random(seed)

    async def _going_out(self, request) -> None:
        """The HTTP client's request hook: through httpcore's trace it marks the attempt connected once
        its connection is made, and gives its turn under the rate cap on when the request's first bytes
        are written, after any connecting, so the spacing holds on the wire."""
        pace, attempt = self.pace, ATTEMPT.get()

        async def trace(event: str, info: dict) -> None:
            if attempt is not None and event.endswith(CONNECTED):
                attempt.connected = True
            if event.endswith("send_request_headers.started") and pace is not None:
                pace.give(attempt)

        request.extensions["trace"] = trace

    async def close(self) -> None:
        await self.client.close()

    async def _read(self, body: dict) -> bytes:
        openai = self.openai
        try:
            async with self.client.chat.completions.with_streaming_response.create(**body) as response:
                data = bytearray()
                async for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > MAX_BODY:
                        raise Failure(f"malformed response body (longer than {MAX_BODY // (1024 * 1024)} MB)", True)
                return bytes(data)
        except openai.RateLimitError as exc:
            raise Failure("429 rate limited", True, _retry_after(exc)) from None
        except openai.APITimeoutError:
            raise _timed_out("timed out") from None
        except openai.APIConnectionError as exc:
            raise Failure("connection failed", True, unreachable=_why(exc)) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            raise Failure(f"HTTP {status}", status >= 500 or status == 408, _retry_after(exc)) from None
        except openai.APIResponseValidationError:
            raise Failure("malformed response body", True) from None
        except (Failure, asyncio.TimeoutError):
            raise
        except Exception as exc:  # the transport failing while the body is read (reset, bad chunking or encoding)
            raise Failure(f"connection failed while reading the answer ({type(exc).__name__})", True) from None

    async def _once(self, body: dict) -> Answer:
        try:
            data = await asyncio.wait_for(self._read(body), self.policy.timeout)
        except asyncio.TimeoutError:
            raise _timed_out(f"timed out (no whole answer within {self.policy.timeout:g} s)") from None
        return parse_completion(data)

    async def complete(self, body: dict) -> Answer:
        """The answer to one body after at most 1 + retries attempts."""
        last = "not sent"
        for number in range(self.policy.retries + 1):
            try:
                answer = await self._attempt(body)
                if self.breaker is not None:
                    self.breaker.reached()
                return Answer(answer.text, answer.served_model, answer.finish_reason, attempts=number + 1)
            except Failure as failure:
                last = str(failure)
                if self.breaker is not None:
                    if failure.unreachable is not None:
                        self.breaker.failed(failure.unreachable)
                    elif failure.reached:
                        self.breaker.reached()
                if not failure.retry or number == self.policy.retries:
                    return Answer(None, error=last, attempts=number + 1)
                wait = min(self.policy.cap, self.policy.base * 2**number) * self._random.uniform(0.5, 1.0)
                if failure.wait is not None:
                    wait = min(self.policy.cap, max(wait, failure.wait))
                await asyncio.sleep(wait)
        return Answer(None, error=last)

    async def _attempt(self, body: dict) -> Answer:
        """One attempt, in its turn under the rate cap."""
        attempt = Attempt()
        ATTEMPT.set(attempt)
        if self.pace is None:
            return await self._once(body)
        await self.pace.take(attempt)
        try:
            return await self._once(body)
        finally:
            self.pace.give(attempt)  # an attempt that failed before it went out gives its turn on
