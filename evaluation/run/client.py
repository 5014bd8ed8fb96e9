"""One chat completion through the `openai` client library, with bounded retries and backoff.

Retried: 429 (honouring Retry-After, capped), 5xx, timeouts, dropped connections and bodies that are
not a chat completion. Not retried: other 4xx (a bad request stays bad). The API key is held by the
client only; no message here contains it.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import openai


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 6  # attempts after the first
    base: float = 1.0  # seconds before the first retry; doubles each time
    cap: float = 60.0  # longest wait
    timeout: float = 300.0  # seconds per attempt


@dataclass(frozen=True)
class Answer:
    text: str | None  # None: failed
    served_model: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    attempts: int = 1


class Failure(Exception):
    def __init__(self, message: str, retry: bool, wait: float | None = None):
        super().__init__(message)
        self.retry, self.wait = retry, wait


def public_url(url: str) -> str:
    """The endpoint without user name, password, query or fragment (which may carry credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _retry_after(exc) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class ChatClient:
    def __init__(self, base_url: str, api_key: str, policy: RetryPolicy, seed: int = 0):
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=policy.timeout)
        self.policy = policy
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def _jitter(self) -> float:
        with self._lock:
            return self._random.uniform(0.5, 1.0)

    def _once(self, body: dict) -> Answer:
        try:
            completion = self.client.chat.completions.create(**body)
        except openai.RateLimitError as exc:
            raise Failure("429 rate limited", True, _retry_after(exc)) from None
        except openai.APITimeoutError:
            raise Failure("timed out", True) from None
        except openai.APIConnectionError:
            raise Failure("connection failed", True) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            raise Failure(f"HTTP {status}", status >= 500 or status == 408, _retry_after(exc)) from None
        except openai.APIResponseValidationError:
            raise Failure("malformed response body", True) from None
        except ValueError:  # a body that is not JSON
            raise Failure("malformed response body", True) from None
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices or getattr(choices[0], "message", None) is None:
            raise Failure("malformed response body (no choices)", True)
        message = choices[0].message
        content = getattr(message, "content", None)
        if content is None and getattr(message, "refusal", None) is None:
            raise Failure("malformed response body (no message content)", True)
        return Answer(content or "", getattr(completion, "model", None), getattr(choices[0], "finish_reason", None))

    def complete(self, body: dict, stop: threading.Event | None = None) -> Answer:
        """The answer to one body after at most 1 + retries attempts."""
        last = "not sent"
        for attempt in range(self.policy.retries + 1):
            if stop is not None and stop.is_set():
                return Answer(None, error="stopped", attempts=attempt)
            try:
                answer = self._once(body)
                return Answer(answer.text, answer.served_model, answer.finish_reason, attempts=attempt + 1)
            except Failure as failure:
                last = str(failure)
                if not failure.retry or attempt == self.policy.retries:
                    return Answer(None, error=last, attempts=attempt + 1)
                wait = min(self.policy.cap, self.policy.base * 2**attempt) * self._jitter()
                if failure.wait is not None:
                    wait = min(self.policy.cap, max(wait, failure.wait))
                if stop is not None:
                    stop.wait(wait)
                else:
                    time.sleep(wait)
        return Answer(None, error=last)
