"""Inspect AI eval logs (inspect.aisi.org.uk/eval-logs.html): a `.json` log is one EvalLog object
(`version`, `status`, `eval` with `task` and `model`, `plan`, `results`, `stats`, `samples`); an
`.eval` log is a zip holding `header.json` (the EvalLog without samples) and one
`samples/<id>_epoch_<epoch>.json` per sample. A sample has `id`, `epoch`, `input`, `target`,
`messages`, `output` (`model`, `choices[].message`, `completion`), `scores`, `metadata`, `error`.

A task over these requests uses each request id as the sample id; the response is the output's
completion (else the first choice's text).

An `.eval` log's members are zstd-compressed (zip method 93, Inspect's default) or deflated (older logs):
zstd members are unzipped here with `zstandard`, a block at a time, whatever `zipfile` itself supports.

A log is read within bounds: a `.json` log of at most MAX_JSON_LOG bytes, an `.eval` log whose header and
sample members hold at most MAX_MEMBER bytes each and MAX_TOTAL bytes together once unzipped, and no
more than MAX_RATIO times the file's size (checked from the zip's directory before anything is
unzipped, and again while unzipping; a member that unzips to more than its directory declares is not
read). A log over these is refused with one line. Members are read one at a time (`entries`). A member
that cannot be read (not JSON, nested too deep, too large, a broken entry) is one problem of that
member, and the other samples are still read. Of each sample only what the conversion needs (id, epoch,
error, the output's model, completion and first choice) is kept.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.formats.files import open_regular, parse, read_regular, size_text
from ctxrobust.evaluation.report import plain

MAX_MEMBER = 64 * 1024 * 1024  # bytes of one zip member read into memory (one sample; a ctxrobust request's is KBs)
MAX_TOTAL = 2 * 1024 * 1024 * 1024  # bytes of all the members read from one .eval log, unzipped (and of the .eval file itself)
MAX_RATIO = 100  # unzipped bytes per byte of the .eval file, above MIN_RATIO_CHECK: JSON deflates 5-20 times, a zip bomb 1,000
MIN_RATIO_CHECK = 256 * 1024 * 1024  # unzipped totals below this are not held to MAX_RATIO
MAX_DIRECTORY = 64 * 1024 * 1024  # bytes of the zip's central directory, parsed whole on opening (about 500,000 members)
MAX_JSON_LOG = 256 * 1024 * 1024  # bytes of a .json log, parsed whole (larger logs: `inspect log convert --to eval`)
MAX_WINDOW = 1 << 27  # bytes of a zstd frame's window held while unzipping (zstd's own default limit)
BLOCK = 1 << 20  # bytes unzipped at a time
ZSTD = 93  # the zip compression method of zstd members, Inspect's default
HEADERS = ("header.json", "_journal/start.json")


def is_json_log(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data


def _content_text(content) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: [{"type": "text", "text": ...}, {"type": "reasoning", ...}]
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def sample_text(sample: dict) -> tuple[str | None, str | None]:
    """(text, failure) of one sample."""
    if sample.get("error"):
        error = sample["error"]
        return None, f"the sample failed: {plain(error.get('message') if isinstance(error, dict) else error)}"
    output = sample.get("output")
    if not isinstance(output, dict):
        return None, "the sample has no output"
    if isinstance(output.get("completion"), str) and output["completion"]:
        return output["completion"], None
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        text = _content_text(message.get("content") if isinstance(message, dict) else None)
        if text is not None:
            return text, None
    if isinstance(output.get("completion"), str):
        return output["completion"], None
    return None, "the sample output holds no completion"


def _slim(sample):
    """What the conversion reads of a sample: the rest (input, messages, events, ...) is let go at once."""
    if not isinstance(sample, dict):
        return sample
    slim = {key: sample[key] for key in ("id", "epoch", "error") if key in sample}
    output = sample.get("output")
    if isinstance(output, dict):
        kept = {key: output[key] for key in ("model", "completion") if key in output}
        if isinstance(output.get("choices"), list):
            kept["choices"] = output["choices"][:1]
        slim["output"] = kept
    elif "output" in sample:
        slim["output"] = output
    return slim


def _model(header) -> str | None:
    run = header.get("eval") if isinstance(header, dict) else None
    model = run.get("model") if isinstance(run, dict) else None
    return model if isinstance(model, str) and model else None


@dataclass
class Log:
    model: str | None  # the header's model, if it names one


def entries(path: Path, log: Log | None = None) -> Iterator[tuple[str | None, dict | None, str | None]]:
    """(member name, slim sample, None) per sample of a .json or .eval log, or (member name, None, why it cannot be
    read); (None, None, note) about the log as a whole (a header that cannot be read). `log.model` is set from the
    header before the first sample is given. ValueError (one line) for a file that is not a log or is over the
    bounds, found from its directory before anything is given. An .eval log's members are read one at a time."""
    log = log if log is not None else Log(None)
    with open_regular(path) as handle:
        if zipfile.is_zipfile(handle):
            handle.seek(0)
            yield from _eval_entries(handle, log)
            return
    data, problem = parse(
        read_regular(path, MAX_JSON_LOG, " (an Inspect .json log, parsed whole)", "; convert it with `inspect log convert --to eval`")
    )
    if problem is not None:
        raise ValueError(f"not an Inspect eval log: {problem}")
    if not is_json_log(data):
        raise ValueError("not an Inspect eval log (expected an object with 'eval' and 'samples')")
    samples = data.get("samples") or []
    if not isinstance(samples, list):
        raise ValueError("its 'samples' is not a list; not an Inspect eval log")
    log.model = _model(data)
    del data
    for sample in samples:
        yield None, _slim(sample), None


def header_model(path: Path) -> str | None:
    """The model an Inspect log's header names (an .eval log's header member alone is read), or None: not a log,
    over its bounds, or no model named."""
    log = Log(None)
    try:
        next(iter(entries(path, log)), None)
    except (ValueError, zipfile.BadZipFile, CtxRobustError, OSError):
        return None
    return log.model


class _Unreadable(Exception):
    """One member that cannot be read: its problem."""


def _directory(handle, size: int):
    """The zip's infos once its directory is known to be within bounds."""
    if size > MAX_TOTAL:
        raise ValueError(f"an .eval log of {size_text(size)}, more than the {size_text(MAX_TOTAL)} read from one log")
    end = getattr(zipfile, "_EndRecData", None)  # the directory's size, before ZipFile reads all of it
    try:
        record = end(handle) if end is not None else None
    except (OSError, ValueError, struct.error):
        record = None  # ZipFile below says what is wrong
    handle.seek(0)
    if record is not None and record[zipfile._ECD_SIZE] > MAX_DIRECTORY:
        raise ValueError(
            f"its zip directory is {size_text(record[zipfile._ECD_SIZE])}, more than the {size_text(MAX_DIRECTORY)} read from one log; "
            "split the evaluation into several logs"
        )
    try:
        return zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise ValueError(f"not a readable zip file ({plain(exc)})") from None


def _eval_entries(handle, log: Log) -> Iterator[tuple[str | None, dict | None, str | None]]:
    size = handle.seek(0, 2)
    handle.seek(0)
    archive = _directory(handle, size)
    with archive:
        latest = {}  # a name written again supersedes the earlier member (Inspect appends, the last one wins)
        for info in archive.infolist():
            if not info.is_dir():
                latest[info.filename] = info
        header = next((latest[name] for name in HEADERS if name in latest), None)
        samples = sorted(
            (i for name, i in latest.items() if name.startswith("samples/") and name.endswith(".json")), key=lambda i: i.filename
        )
        if header is None and not samples:
            raise ValueError("a zip file without header.json or samples/: not an Inspect .eval log")
        wanted = ([header] if header is not None else []) + samples
        declared = sum(i.file_size for i in wanted)
        if declared > MAX_TOTAL:
            raise ValueError(
                f"its header and {len(samples)} sample(s) hold {size_text(declared)} unzipped, more than the "
                f"{size_text(MAX_TOTAL)} read from one log; split the evaluation into several logs"
            )
        if declared > max(MIN_RATIO_CHECK, MAX_RATIO * size):
            raise ValueError(
                f"its header and {len(samples)} sample(s) unzip to {size_text(declared)}, more than {MAX_RATIO} times the "
                f"{size_text(size)} of the file (JSON logs deflate far less: a zip bomb, not read)"
            )
        budget = [MAX_TOTAL]
        if header is not None:
            value, problem = _read(archive, handle, header, budget)
            if problem is None and not isinstance(value, dict):
                problem = "not a JSON object"
            log.model = _model(value)
            del value
            if problem is not None:  # about the log, no sample lost
                yield None, None, f"{plain(header.filename)}: {problem}; the model is named from the samples"
        for info in samples:
            value, problem = _read(archive, handle, info, budget)
            if problem is not None:
                yield plain(info.filename), None, problem
            else:
                yield plain(info.filename), _slim(value), None


def _read(archive, handle, info, budget: list[int]):
    """(JSON value, None) of one member, or (None, why not); ValueError once the members read exceed MAX_TOTAL."""
    if info.file_size > MAX_MEMBER:
        return None, f"{size_text(info.file_size)} unzipped, more than the {size_text(MAX_MEMBER)} read of one member; not read"
    try:
        raw = _member(archive, handle, info, min(MAX_MEMBER, budget[0]))
    except _Unreadable as exc:
        return None, str(exc)
    if len(raw) > budget[0]:
        raise ValueError(f"its members hold more than the {size_text(MAX_TOTAL)} read from one log, unzipped")
    budget[0] -= len(raw)
    if len(raw) > MAX_MEMBER:
        return None, f"more than the {size_text(MAX_MEMBER)} read of one member, unzipped; not read"
    return parse(raw)


def _member(archive, handle, info, limit: int) -> bytes:
    """At most limit + 1 bytes of one member, unzipped: zstd members (Inspect's default) here, in bounded memory;
    stored and deflated ones through zipfile. _Unreadable names why a member cannot be read."""
    try:
        if info.compress_type == ZSTD:
            return _zstd_member(handle, info, limit)
        with archive.open(info) as member:
            return member.read(limit + 1)
    except _Unreadable:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError, ValueError, OSError) as exc:
        raise _Unreadable(f"cannot be unzipped ({plain(exc)}); not read") from None


class _Span:
    """The compressed bytes of one member: a file-like read of at most `size` bytes from `start`."""

    def __init__(self, handle, start: int, size: int):
        self.handle, self.position, self.left = handle, start, size

    def read(self, n: int = -1) -> bytes:
        n = self.left if n is None or n < 0 else min(n, self.left)
        if n <= 0:
            return b""
        self.handle.seek(self.position)
        data = self.handle.read(min(n, 1 << 20))
        self.position += len(data)
        self.left -= len(data)
        return data


def _zstd_member(handle, info, limit: int) -> bytes:
    """A zstd member (zip method 93) unzipped by `zstandard`, a block at a time: never more than limit + 1 bytes nor
    one more than the directory declares (a member that unzips to more is a bomb, not read), its CRC-32 checked."""
    import zstandard

    if info.flag_bits & 0x1:
        raise _Unreadable("an encrypted member; not read")
    handle.seek(info.header_offset)
    local = handle.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise _Unreadable("cannot be unzipped (its local header is missing); not read")
    name_length, extra_length = struct.unpack("<2H", local[26:30])
    span = _Span(handle, info.header_offset + 30 + name_length + extra_length, info.compress_size)
    wanted = min(limit, info.file_size) + 1
    out = bytearray()
    crc = 0
    try:
        reader = zstandard.ZstdDecompressor(max_window_size=MAX_WINDOW).stream_reader(span, read_across_frames=True, closefd=False)
        while len(out) < wanted:
            block = reader.read(min(BLOCK, wanted - len(out)))
            if not block:
                break
            crc = zlib.crc32(block, crc)
            out += block
    except zstandard.ZstdError as exc:
        raise _Unreadable(f"cannot be unzipped (zstd: {plain(exc)}); not read") from None
    if len(out) > info.file_size:
        raise _Unreadable(f"unzips to more than the {size_text(info.file_size)} its zip directory declares (a zip bomb?); not read")
    if len(out) < info.file_size or crc != info.CRC:
        raise _Unreadable("cannot be unzipped (its size or CRC-32 is not the one its zip directory declares); not read")
    return bytes(out)
