"""Inspect AI eval logs (inspect.aisi.org.uk/eval-logs.html): a `.json` log is one EvalLog object
(`version`, `status`, `eval` with `task` and `model`, `plan`, `results`, `stats`, `samples`); an
`.eval` log is a zip holding `header.json` (the EvalLog without samples) and one
`samples/<id>_epoch_<epoch>.json` per sample. A sample has `id`, `epoch`, `input`, `target`,
`messages`, `output` (`model`, `choices[].message`, `completion`), `scores`, `metadata`, `error`.

A task over these requests uses each request id as the sample id; the response is the output's
completion (else the first choice's text).

A log is read within bounds: a `.json` log of at most MAX_JSON_LOG bytes, an `.eval` log whose header and
sample members hold at most MAX_MEMBER bytes each and MAX_TOTAL bytes together once unzipped, and no
more than MAX_RATIO times the file's size (checked from the zip's directory before anything is
unzipped, and again while unzipping). A log over these is
refused with one line. A member that cannot be read (not JSON, nested too deep, too large, a broken
entry) is one problem of that member, and the other samples are still read. Of each sample only what
the conversion needs (id, epoch, error, the output's model, completion and first choice) is kept.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from ctxrobust.evaluation.formats.files import open_regular, parse, read_regular, size_text
from ctxrobust.evaluation.report import plain

MAX_MEMBER = 64 * 1024 * 1024  # bytes of one zip member read into memory (one sample; a ctxrobust request's is KBs)
MAX_TOTAL = 2 * 1024 * 1024 * 1024  # bytes of all the members read from one .eval log, unzipped (and of the .eval file itself)
MAX_RATIO = 100  # unzipped bytes per byte of the .eval file, above MIN_RATIO_CHECK: JSON deflates 5-20 times, a zip bomb 1,000
MIN_RATIO_CHECK = 256 * 1024 * 1024  # unzipped totals below this are not held to MAX_RATIO
MAX_DIRECTORY = 64 * 1024 * 1024  # bytes of the zip's central directory, parsed whole on opening (about 500,000 members)
MAX_JSON_LOG = 256 * 1024 * 1024  # bytes of a .json log, parsed whole (larger logs: `inspect log convert --to eval`)
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
    samples: list = field(default_factory=list)  # slim samples, in member (or list) order
    problems: list[tuple[str | None, str]] = field(default_factory=list)  # (sample member lost, or None: a note on the log; why)


def read_log(path: Path) -> Log:
    """The model and samples of a .json or .eval log; ValueError (one line) for a file that is not one or is
    over the bounds."""
    with open_regular(path) as handle:
        if zipfile.is_zipfile(handle):
            handle.seek(0)
            return _read_eval(handle)
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
    return Log(_model(data), [_slim(sample) for sample in samples])


def _read_eval(handle) -> Log:
    size = handle.seek(0, 2)
    handle.seek(0)
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
        archive = zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise ValueError(f"not a readable zip file ({plain(exc)})") from None
    with archive:
        infos = archive.infolist()
        header = next((i for name in HEADERS for i in infos if i.filename == name), None)
        samples = sorted(
            (i for i in infos if i.filename.startswith("samples/") and i.filename.endswith(".json") and not i.is_dir()),
            key=lambda i: i.filename,
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
        log = Log(None)
        budget = MAX_TOTAL
        for info in wanted:
            name = plain(info.filename)
            if info.file_size > MAX_MEMBER:
                problem = f"{size_text(info.file_size)} unzipped, more than the {size_text(MAX_MEMBER)} read of one member; not read"
                log.problems.append((None, f"{name}: {problem}") if info is header else (name, problem))
                continue
            try:
                with archive.open(info) as member:
                    raw = member.read(min(MAX_MEMBER, budget) + 1)
            except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError, ValueError, OSError) as exc:
                problem = f"cannot be unzipped ({plain(exc)}); not read"
                log.problems.append((None, f"{name}: {problem}") if info is header else (name, problem))
                continue
            if len(raw) > budget:
                raise ValueError(f"its members hold more than the {size_text(MAX_TOTAL)} read from one log, unzipped")
            budget -= len(raw)
            if len(raw) > MAX_MEMBER:
                problem = f"more than the {size_text(MAX_MEMBER)} read of one member, unzipped; not read"
                log.problems.append((None, f"{name}: {problem}") if info is header else (name, problem))
                continue
            value, problem = parse(raw)
            del raw
            if info is header:
                if problem is None and not isinstance(value, dict):
                    problem = "not a JSON object"
                if problem is not None:  # about the log, no sample lost
                    log.problems.append((None, f"{name}: {problem}; the model is named from the samples"))
                log.model = _model(value)
            elif problem is not None:
                log.problems.append((name, problem))
            else:
                log.samples.append(_slim(value))
    return log
