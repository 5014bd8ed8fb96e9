"""OpenAI Batch API files (platform.openai.com/docs/api-reference/batch): input lines
`{custom_id, method, url, body}`, at most 50,000 requests and 200 MB per file; output (and error)
lines `{id, custom_id, response: {status_code, request_id, body} | null, error: {code, message} | null}`.
`vllm run-batch` reads the same input and writes the same output lines (its BatchRequestOutput:
`response.body` a chat completion, `error` set for requests that failed)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.formats.files import lines as read_lines
from ctxrobust.evaluation.formats.files import open_regular, parse
from ctxrobust.evaluation.report import plain
from ctxrobust.evaluation.run.requests import Request, body
from ctxrobust.output import check_output

URL = "/v1/chat/completions"
MAX_LINES = 50_000
MAX_BYTES = 200 * 1024 * 1024


def input_line(request: Request, model: str) -> dict:
    return {"custom_id": request.id, "method": "POST", "url": URL, "body": body(request, model)}


def part_path(target: Path, index: int) -> Path:
    return target.with_name(f"{target.stem}-{index:03d}{target.suffix}")


def _part_names(target: Path) -> re.Pattern:
    return re.compile(re.escape(target.stem) + r"-\d{3,}" + re.escape(target.suffix))


def check_parts(target: Path, inputs: Iterable[str | Path | None] = ()) -> None:
    """Refuse, before anything is written, an output whose batch parts (target-001.jsonl, ...) could be or shadow
    one of the command's inputs (a --benchmark file): an input named like a part in the output's folder, or a
    part name already there that leads to an input. The output itself is checked like any -o
    (`ctxrobust.output.check_output`)."""
    target = Path(target)
    given = [Path(p) for p in inputs if p is not None]
    check_output(target, "-o", given)
    names = _part_names(target)
    folders = {os.path.realpath(target.parent), os.path.abspath(target.parent)}
    for path in given:
        for form in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
            if str(form.parent) in folders and names.fullmatch(form.name):
                raise CtxRobustError(_shadow(target, form.name, path))
    if not given:
        return
    try:
        entries = [entry.name for entry in os.scandir(target.parent) if names.fullmatch(entry.name)]
    except OSError:
        entries = []
    for name in entries:
        for path in given:
            if _same(target.with_name(name), path):
                raise CtxRobustError(_shadow(target, name, path))


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _shadow(target: Path, name: str, given: Path) -> str:
    return (
        f"-o {plain(target)}: a batch split into parts writes {plain(target.with_name(name))}, which is (or leads to) "
        f"the input {plain(given)} of this command; writing it would destroy that input, name the output otherwise"
    )


def _cannot(target: Path, exc: OSError, written: list[Path]) -> CtxRobustError:
    already = f"; {len(written)} part(s) were already in place: {', '.join(plain(p) for p in written)}" if written else ""
    rest = "" if written else "; nothing was written, and the previous file(s), if any, are unchanged"
    return CtxRobustError(f"{plain(target)}: cannot write the batch input ({exc.strerror or exc}){rest}{already}")


def _final_check(path: Path, inputs: list[Path]) -> None:
    """A part's final name just before it is renamed into place: no folder or special file, no input."""
    if os.path.lexists(path) and not os.path.islink(path) and not os.path.isfile(path):
        raise CtxRobustError(f"{plain(path)}: is a folder or special file, not a file this batch part can replace; move it away")
    for given in inputs:
        if _same(path, given) or os.path.abspath(path) == os.path.abspath(given):
            raise CtxRobustError(
                f"{plain(path)}: is also the input {plain(given)} of this command; writing it would destroy that input, write elsewhere"
            )


def write_input(
    requests: Iterable[Request],
    model: str,
    target: Path,
    max_lines: int | None = None,
    max_bytes: int | None = None,
    inputs: Iterable[str | Path | None] = (),
) -> list[tuple[Path, int]]:
    """Write the batch input, split into parts of at most `max_lines` lines and `max_bytes` bytes (default
    MAX_LINES and MAX_BYTES, the API's limits).
    One part is written to `target`; several to target-001.jsonl, target-002.jsonl, ... Returns [(path, lines)].

    No part may be or shadow one of `inputs` (the command's input files): checked before anything is written.
    Each part is written to a new temporary file in the target's folder, created exclusively (never through a
    planted link), flushed to disk, and renamed into place once every part is complete; a failure (a full disk,
    an interrupt) leaves no temporary file, and its error names the target."""
    target = Path(target)
    max_lines = MAX_LINES if max_lines is None else max_lines
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    given = [Path(p) for p in inputs if p is not None]
    check_parts(target, given)
    temps: list[list] = []  # [temporary path, lines] per part, until renamed
    written: list[Path] = []
    handle = None
    try:
        try:
            lines = size = 0
            for request in requests:
                line = (dumps(input_line(request, model)) + "\n").encode("utf-8")
                if handle is None or lines >= max_lines or size + len(line) > max_bytes:
                    if handle is not None:
                        temps[-1][1] = lines
                        _close(handle)
                        handle = None
                    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
                    temps.append([temporary, 0])
                    handle = os.fdopen(fd, "wb")
                    lines = size = 0
                handle.write(line)
                lines += 1
                size += len(line)
            if handle is not None:
                temps[-1][1] = lines
                _close(handle)
                handle = None
        except OSError as exc:
            raise _cannot(target, exc, written) from None
        final = [(target if len(temps) == 1 else part_path(target, k + 1), n) for k, (_, n) in enumerate(temps)]
        for path, _ in final:
            _final_check(path, given)
        for k, (path, _) in enumerate(final):
            try:
                os.replace(temps[k][0], path)
            except OSError as exc:
                raise _cannot(path, exc, written) from None
            temps[k][0] = None
            written.append(path)
        return final
    finally:
        if handle is not None:
            try:
                handle.close()
            except OSError:
                pass
        for temporary, _ in temps:
            if temporary is not None:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass


def _close(handle) -> None:
    """Flush a part to disk and close it, readable like any output (mkstemp creates it 0600)."""
    try:
        handle.flush()
        os.fchmod(handle.fileno(), 0o644)
        os.fsync(handle.fileno())
    finally:
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
    """(custom_id, model, text, failure) of one output line: `failure` says why there is no text (the file's
    own words in it escaped and cut, so a hostile message cannot reach a terminal or report raw)."""
    custom_id = line.get("custom_id")
    custom_id = custom_id if isinstance(custom_id, str) else None
    error, response = line.get("error"), line.get("response")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        if message is None and isinstance(error, dict) and isinstance(error.get("error"), dict):
            message = error["error"].get("message")  # vLLM's ErrorResponse nests it
        return custom_id, None, None, f"the request failed: {plain(message)}"
    if not isinstance(response, dict):
        return custom_id, None, None, "no response and no error"
    status = response.get("status_code")
    completion = response.get("body")
    model = completion.get("model") if isinstance(completion, dict) else None
    model = model if isinstance(model, str) else None
    if status != 200:
        detail = (
            completion.get("error", {}).get("message")
            if isinstance(completion, dict) and isinstance(completion.get("error"), dict)
            else None
        )
        return custom_id, model, None, f"the request failed with status {plain(status, 20)}" + (f": {plain(detail)}" if detail else "")
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


def iter_lines(path: Path) -> Iterator[tuple[int, bytes | None]]:
    """(line number, raw line) of each non-blank line of a regular file; None for a line too long to read."""
    with open_regular(path) as handle:
        yield from read_lines(handle)


def line_models(path: Path) -> Iterator[tuple[str | None, str | None]]:
    """(request id, model) of each output line of a Batch file that can be read as one (the others are passed over:
    reading the file's records says what is wrong with them)."""
    for _, raw in iter_lines(path):
        if raw is None:
            continue
        line, problem = parse(raw)
        if problem is None and is_output_line(line):
            custom_id, model, _, _ = output_record(line)
            yield custom_id, model
