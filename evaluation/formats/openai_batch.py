"""OpenAI Batch API files (platform.openai.com/docs/api-reference/batch): input lines
`{custom_id, method, url, body}`, at most 50,000 requests and 200 MB per file; output (and error)
lines `{id, custom_id, response: {status_code, request_id, body} | null, error: {code, message} | null}`.
`vllm run-batch` reads the same input and writes the same output lines (its BatchRequestOutput:
`response.body` a chat completion, `error` set for requests that failed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from ctxrobust.canonical import dumps
from ctxrobust.evaluation.run.requests import Request, body

URL = "/v1/chat/completions"
MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024


def input_line(request: Request, model: str) -> dict:
    return {"custom_id": request.id, "method": "POST", "url": URL, "body": body(request, model)}


def part_path(target: Path, index: int) -> Path:
    return target.with_name(f"{target.stem}-{index:03d}{target.suffix}")


def write_input(
    requests: Iterable[Request], model: str, target: Path, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> list[tuple[Path, int]]:
    """Write the batch input, split into parts of at most `max_lines` lines and `max_bytes` bytes.
    One part is written to `target`; several to target-001.jsonl, target-002.jsonl, ... Each part is
    written beside its name and renamed when complete. Returns [(path, lines)]."""
    parts: list[tuple[Path, int]] = []  # temporary paths until the end
    handle, lines, size = None, 0, 0
    try:
        for request in requests:
            line = (dumps(input_line(request, model)) + "\n").encode("utf-8")
            if handle is None or lines >= max_lines or size + len(line) > max_bytes:
                if handle is not None:
                    _close(handle)
                    parts[-1] = (parts[-1][0], lines)
                temp = target.with_name(f".{target.name}.part{len(parts) + 1}")
                handle, lines, size = open(temp, "wb"), 0, 0
                parts.append((temp, 0))
            handle.write(line)
            lines += 1
            size += len(line)
        if handle is not None:
            _close(handle)
            parts[-1] = (parts[-1][0], lines)
            handle = None
        final = [(target if len(parts) == 1 else part_path(target, k + 1), n) for k, (_, n) in enumerate(parts)]
        for (temp, _), (path, _) in zip(parts, final):
            os.replace(temp, path)
        parts = []
        return final
    finally:
        if handle is not None:
            handle.close()
        for temp, _ in parts:
            Path(temp).unlink(missing_ok=True)


def _close(handle) -> None:
    handle.flush()
    os.fsync(handle.fileno())
    handle.close()


def completion_text(completion) -> str | None:
    """The first choice's message content of a chat-completion body, or None if it has none."""
    if not isinstance(completion, dict):
        return None
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, str):
            return content
        if content is None and isinstance(message.get("refusal"), str):
            return ""  # a refusal answers nothing: invalid
        return None
    text = choices[0].get("text")  # a completions-endpoint body
    return text if isinstance(text, str) else None


def output_record(line: dict) -> tuple[str | None, str | None, str | None, str | None]:
    """(custom_id, model, text, failure) of one output line: `failure` says why there is no text."""
    custom_id = line.get("custom_id")
    custom_id = custom_id if isinstance(custom_id, str) else None
    error, response = line.get("error"), line.get("response")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        if message is None and isinstance(error, dict) and isinstance(error.get("error"), dict):
            message = error["error"].get("message")  # vLLM's ErrorResponse nests it
        return custom_id, None, None, f"the request failed: {message}"
    if not isinstance(response, dict):
        return custom_id, None, None, "no response and no error"
    status = response.get("status_code")
    completion = response.get("body")
    model = completion.get("model") if isinstance(completion, dict) else None
    if status != 200:
        detail = (
            completion.get("error", {}).get("message")
            if isinstance(completion, dict) and isinstance(completion.get("error"), dict)
            else None
        )
        return custom_id, model, None, f"the request failed with status {status}" + (f": {detail}" if detail else "")
    text = completion_text(completion)
    if text is None:
        return custom_id, model, None, "the response body holds no message content"
    return custom_id, model, text, None


def is_output_line(line: dict) -> bool:
    return isinstance(line, dict) and "custom_id" in line and ("response" in line or "error" in line) and "body" not in line


def is_vllm(line: dict) -> bool:
    """`vllm run-batch` names its output lines "vllm-<hex>" and its requests "vllm-batch-<hex>"."""
    request_id = (line.get("response") or {}).get("request_id") if isinstance(line.get("response"), dict) else None
    return str(line.get("id", "")).startswith("vllm-") or str(request_id or "").startswith("vllm-batch-")


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                yield number, raw
