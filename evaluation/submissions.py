"""Several submissions scored together: prediction files concatenated into one stream for the dataset's
own scorer, so every model shares the same bootstrap draws, with each file's problems reported under
its name, clashing model names kept apart, `--strict` applied per file, and a leaderboard.

Generic over datasets: the scorer sees one source of rows (`Stream`, an `evaluation.rows.Rows` read from
the files as it is iterated: nothing is written); this layer only relabels and maps back.

Submissions are told apart by their file, never by a name a submitter writes. Every line given to the
scorer carries, as its model, a name this layer wrote there for that file's model: a name found in one
file only is kept as it is, unless it holds a bracket (so it could pass for another file's model:
`m1 [a.jsonl]`); a name found in several files, or holding a bracket, is reported as
"<name> [<file label>]" in every file that has it, and the report says so. Labels are unique and
printable, so no two submissions' models share a reported name. A line whose model this layer cannot
establish exactly as the scorer would read it (not JSON, nested too deep, not an object, no string
`model`, `model` twice, a name the reader refuses) is a problem of its line and is not given to the
scorer at all.

Each file is read in a stream and never held whole: once to find its rows, model names and problems, then
each time the stream is read (its hash checked again each time, so a file changed in between is refused).
The stream is scored once. A file refused then (no valid row, or any problem under `--strict`) is left
out of the report without scoring the others again where the scorer's figures are per model (its module's
`without_models`: gsm-ic); otherwise the others are scored once more without it. The scorer returns its
problems and notices as data (`rows.Scored`), each problem placed by its line or its model; nothing is
captured from standard error or read back from text. A file's problems do not depend on the other files
(its models are its own), so that second pass refuses no one else. A file in another encoding,
compressed, empty, or not a regular file is refused with one line. Where the dataset has paired
differences between models, they are computed for up to MAX_PAIRED_MODELS models (their number grows
with the square of the models).

Each dataset's leaderboard spec (its registry entry) names the headline figures, whether higher or lower
is better, its invalid-response rate and, where its scorer shares draws across models, the paired
differences between models.
"""

from __future__ import annotations

import array
import hashlib
import html
import importlib
import inspect
import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ctxrobust.errors import CtxRobustError, PredictionsError
from ctxrobust.evaluation import rows as rows_module
from ctxrobust.evaluation.formats.files import lines as file_lines
from ctxrobust.evaluation.formats.files import long_line
from ctxrobust.evaluation.leaderboard import leaderboard, leaderboard_table
from ctxrobust.evaluation.predictions import (
    NOT_OBJECT,
    SNIFF,
    duplicate_message,
    encoding_problem,
    model_name_problem,
    open_regular,
    parse_line,
    rows_scorer,
    vouched_model_names,
)
from ctxrobust.evaluation.report import DIFFERENCE, fmt_metric, html_table, markdown_table, md_text, path_text, plain
from ctxrobust.evaluation.rows import Hashed, Problem, Rows, Scored, foreign_message

SUFFIXES = (".jsonl", ".json", ".ndjson", ".csv", ".parquet")
MAX_PAIRED_MODELS = 50  # paired differences for at most this many models (1,225 pairs); their number grows as n^2
MAX_LOGGED = 200  # problem lines of one file on stderr
MAX_LOGGED_TOTAL = 2_000  # problem lines of all files on stderr (every one is in the JSON report)
MAX_SHOWN_PER_FILE = 50  # problem lines of one file in the Markdown and HTML reports
MAX_SHOWN_TOTAL = 1_000
MAX_NAMED = 10  # file labels named in one line
BRACKETS = "[]\uff3b\uff3d"  # a name holding one of these could pass for another file's "<name> [<file>]"
MISSING_MODEL = "missing field 'model'"
MODEL_NOT_TEXT = "field 'model': Input should be a valid string"
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOKENS = re.compile(_STRING + rb"|[\[\]{}]", re.DOTALL)
_STRING_AT = re.compile(_STRING, re.DOTALL)
_COLON = re.compile(rb"[ \t\r\n]*:[ \t\r\n]*")


@dataclass
class Submission:
    path: Path
    label: str  # unique and printable among the submissions: the file name, with folders prepended where names repeat
    rows: int = 0  # non-blank lines (records, for a runner's file)
    sha256: str = ""
    models: dict[str, str] = field(default_factory=dict)  # model name in the file -> name in the report
    problems: list[dict] = field(default_factory=list)  # {"line", "message", "kind", "model"?}; line None: about the file
    status: str = "scored"
    reason: str = ""
    input_format: str = "native"
    own: list[dict] = field(default_factory=list, repr=False)  # problems found here (lines withheld, conversion)
    withheld: set = field(default_factory=set, repr=False)  # native: line numbers; converted: row indexes
    converted: object = field(default=None, repr=False)  # formats.convert.Converted of a runner's file
    dropped: int = 0  # records of a runner's file that gave no row
    group: object = field(default=None, repr=False)  # formats.grouping.Group of a run's several files (one model)

    def refuse(self, reason: str) -> None:
        self.status, self.reason = "refused", reason

    @property
    def shown(self) -> str:
        return plain(self.path) if self.group is None else self.label

    def as_dict(self) -> dict:
        files = {} if self.group is None else {"files": [path_text(p) for p in self.group.paths]}
        return {
            **files,
            "file": path_text(self.path),
            "label": self.label,
            "sha256": self.sha256,
            "rows": self.rows,
            "input_format": self.input_format,
            "status": self.status,
            "reason": self.reason,
            "models": dict(sorted(self.models.items())),
            "problems": [{"line": p["line"], "message": p["message"]} for p in self.problems],
        }

    def found(self) -> list[Problem]:
        """This submission's problems, typed (a refused one's reason first)."""
        out = [Problem(self.label, None, "refused", self.reason)] if self.status == "refused" else []
        return out + [Problem(self.label, p["line"], p["kind"], p["message"], p.get("model"), p.get("same_as")) for p in self.problems]


# -- which files ---------------------------------------------------------------------------------------


def expand(paths: list[Path]) -> list[Path]:
    """The prediction files named: files as given, folders as their *.jsonl / *.json / *.ndjson entries
    (sorted by name; hidden ones and subfolders left out); each file once (by device and inode, so a
    file named twice or through a link is one submission). Linear in the number of files: one stat each."""
    found: list[Path] = []
    seen: set = set()

    def add(path: Path, info: os.stat_result | None) -> None:
        key = (info.st_dev, info.st_ino) if info is not None else ("unreadable", os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            found.append(path)

    for path in map(Path, paths):
        try:
            info = os.stat(path)
        except OSError:
            if not os.path.lexists(path):
                raise CtxRobustError(f"{plain(path)}: no such predictions file or folder") from None
            add(path, None)  # a dangling link: refused when read, with its reason
            continue
        if not stat.S_ISDIR(info.st_mode):
            add(path, info)
            continue
        inside = []
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.name.startswith(".") or not entry.name.lower().endswith(SUFFIXES):
                        continue
                    try:
                        target = entry.stat()  # through a link: a link to a file is that file
                    except OSError:
                        target = None  # a dangling link: refused when read, with its reason
                    if target is None or not stat.S_ISDIR(target.st_mode):
                        inside.append((entry.name, Path(entry.path), target))
        except OSError as exc:
            raise CtxRobustError(f"{plain(path)}: cannot list the folder ({exc.strerror or exc})") from None
        if not inside:
            raise CtxRobustError(f"{plain(path)}: a folder with no predictions file (*.jsonl) in it")
        for _, entry_path, target in sorted(inside, key=lambda t: t[0]):
            add(entry_path, target)
    return found


def labels(paths: list[Path]) -> list[str]:
    """Short unique printable names: the file name, or as many parent folders as make it unique (only for
    the files whose names repeat); control characters written as escapes; a last resort " #<n>"."""
    parts = [Path(os.path.abspath(p)).parts for p in paths]
    depth = [1] * len(paths)
    shown = [plain(part[-1], None) for part in parts]
    while True:
        groups: dict[str, list[int]] = {}
        for i, text in enumerate(shown):
            groups.setdefault(text, []).append(i)
        clashing = [i for members in groups.values() if len(members) > 1 for i in members]
        if not clashing:
            return shown
        grown = False
        for i in clashing:
            if depth[i] < len(parts[i]):
                depth[i] += 1
                shown[i] = plain(os.path.join(*parts[i][-depth[i] :]), None)
                grown = True
        if not grown:  # the same text for different files (escapes that read alike): number them
            for i in clashing:
                shown[i] = f"{shown[i]} #{i + 1}"
            return shown


# -- reading each file once to find its rows and names ---------------------------------------------------


def _model_keys(raw: bytes) -> list[int]:
    """Where the value of each top-level "model" key of a JSON object line starts (after its colon)."""
    depth, found = 0, []
    for match in _TOKENS.finditer(raw):
        first = raw[match.start()]
        if first == 0x22:  # a string
            if depth == 1:
                colon = _COLON.match(raw, match.end())
                if colon is not None:
                    key = match.group()
                    if key == b'"model"' or (b"\\" in key and _decoded(key) == "model"):
                        found.append(colon.end())
        elif first in (0x7B, 0x5B):  # { [
            depth += 1
        else:
            depth -= 1
    return found


def _decoded(token: bytes) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _model_span(raw: bytes) -> tuple[int, int, str] | None:
    """(start, end, name) of the one top-level "model" string value of a line, or None."""
    keys = _model_keys(raw)
    if len(keys) != 1:
        return None
    token = _STRING_AT.match(raw, keys[0])
    if token is None:
        return None
    name = _decoded(token.group())
    return None if name is None else (token.start(), token.end(), name)


def _row_model(raw: bytes) -> tuple[str | None, str | None]:
    """(model name, None) of a line the scorer may be given, or (None, the line's problem)."""
    value, problem = parse_line(raw)
    if problem is not None:
        return None, problem
    if not isinstance(value, dict):
        return None, NOT_OBJECT
    keys = _model_keys(raw)
    if len(keys) > 1:
        return None, duplicate_message("model")
    if not keys or "model" not in value:
        return None, MISSING_MODEL
    name = value["model"]
    if not isinstance(name, str):
        return None, MODEL_NOT_TEXT
    span = _model_span(raw)
    if span is None or span[2] != name:  # cannot happen for a JSON object with one "model" key; never guess
        return None, MODEL_NOT_TEXT
    odd = model_name_problem(name)
    return (None, odd) if odd else (name, None)


def _survey_native(sub: Submission) -> list[str]:
    """Read a native file once: its hash, rows, model names (in order of first use) and the problems of the
    lines that will not be given to the scorer. Refuses the file (one line) when it cannot be read as
    UTF-8 JSON Lines at all."""
    names = {}
    try:
        handle = open_regular(sub.path)
    except PredictionsError as exc:
        sub.refuse(str(exc).removeprefix(f"{sub.shown}: "))
        return []
    with handle:
        problem = encoding_problem(handle.peek(SNIFF)[:SNIFF])
        if problem:
            sub.refuse(problem)
            return []
        hashed = Hashed(handle)
        for number, raw in file_lines(hashed, rows_module.MAX_LINE):  # a line over the bound is read past, never held
            sub.rows += 1
            name, problem = _row_model(raw) if raw is not None else (None, long_line(rows_module.MAX_LINE))
            if problem is not None:
                sub.withheld.add(number)
                sub.own.append({"line": number, "message": problem, "kind": "row"})
            else:
                names.setdefault(name, None)
    sub.sha256 = hashed.digest.hexdigest()
    return list(names)


def _item_aliases(dataset, options) -> dict[str, str]:
    """Request ids -> item ids the dataset's prompts module derives from the options (pseudowords: the benchmark)."""
    module = dataset.load("prompts")
    return module.item_aliases(options) if hasattr(module, "item_aliases") else {}


def _survey_converted(sub: Submission, dataset, aliases: dict[str, str], form: str, log: Callable[[str], None]) -> list[str]:
    """A runner's file (OpenAI Batch, vLLM, lm-eval, Inspect) read as the dataset's native rows, in memory."""
    from ctxrobust.evaluation.formats.convert import convert

    module = dataset.load("prompts")
    try:
        converted = convert(sub.path, form, module.prediction, aliases)
        sub.sha256 = _file_sha256(sub.path)
    except PredictionsError as exc:
        sub.refuse(str(exc).removeprefix(f"{sub.shown}: ").removeprefix(f"{sub.path}: "))
        return []
    log(f"{sub.shown}: read as {form} ({len(converted.rows)} response(s), {converted.failed} failed request(s))")
    return _converted_models(sub, converted)


def _converted_models(sub: Submission, converted) -> list[str]:
    """The model names of a runner file's (or run's) converted rows, in order; a row whose model the reader
    refuses is withheld from the scorer and is a problem of its record."""
    sub.converted, sub.dropped = converted, converted.dropped
    sub.rows = len(converted.rows) + converted.dropped
    sub.own += [_origin_problem(origin, message) for origin, message in converted.problems]
    names = {}
    for index, row in enumerate(converted.rows):
        name = row.get("model") if isinstance(row, dict) else None
        problem = MODEL_NOT_TEXT if not isinstance(name, str) else model_name_problem(name)
        if problem:
            sub.withheld.add(index)
            sub.own.append(_origin_problem(converted.origins[index], problem))
        else:
            names.setdefault(name, None)
    return list(names)


def _survey_group(sub: Submission, dataset, aliases: dict[str, str], log: Callable[[str], None]) -> list[str]:
    """The files of one run (a Batch job's outputs, error file and parts; lm-eval sample files; Inspect logs)
    read record by record as one submission (`formats.grouping`); each record keeps its file and origin."""
    from ctxrobust.evaluation.formats.convert import Converted

    module = dataset.load("prompts")
    names = {path: plain(path.name) for path in sub.group.paths}
    converted = Converted()
    try:
        for path, origin, row, problem in sub.group.records(module.prediction, aliases):
            where = None if origin is None else f"{names[path]} line {origin}" if isinstance(origin, int) else f"{names[path]} {origin}"
            converted.take(where, row, f"{names[path]}: {problem}" if where is None and row is None else problem)
        digest = hashlib.sha256()
        for path in sub.group.paths:
            digest.update(_file_sha256(path).encode("ascii"))
        sub.sha256 = digest.hexdigest()
    except PredictionsError as exc:
        sub.refuse(str(exc))
        return []
    converted.close()
    log(
        f"{sub.shown}: {len(sub.group.paths)} files of one run, read as {sub.input_format} "
        f"({len(converted.rows)} response(s), {converted.failed} failed request(s))"
    )
    return _converted_models(sub, converted)


def _submissions(files: list[Path], dataset, input_format: str | None) -> list[Submission]:
    """One submission per file, except a run's several files (`formats.grouping`): one submission per model."""
    names = labels(files)
    label_of = dict(zip(files, names))
    from ctxrobust.evaluation.formats import grouping

    forms = {path: input_format for path in files} if input_format else None
    subs = []
    for found in grouping.group(files, getattr(dataset, "name", dataset), forms):
        paths = found.paths
        if len(paths) == 1:
            subs.append(Submission(paths[0], label_of[paths[0]]))
            continue
        label = f"{label_of[paths[0]]} (+{len(paths) - 1} file(s) of its run)"
        subs.append(Submission(paths[0], label, input_format=found.files[0].form, group=found))
    return subs


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _origin_problem(origin, message: str) -> dict:
    if isinstance(origin, int) and not isinstance(origin, bool):
        return {"line": origin, "message": message, "kind": "row"}
    if origin is None:
        return {"line": None, "message": message, "kind": "file"}
    return {"line": None, "message": f"{plain(origin, 120)}: {message}", "kind": "row"}


def _format_of(sub: Submission, given: str | None) -> str | None:
    """The file's format (given, else detected), or None with the file refused in one line: not a regular
    file, unreadable, or in another encoding or compressed (a zip is an Inspect log, not refused here)."""
    try:
        with open_regular(sub.path) as handle:
            head = handle.read(SNIFF)
    except PredictionsError as exc:
        sub.refuse(str(exc).removeprefix(f"{sub.shown}: "))
        return None
    problem = None if head.startswith((b"PK\x03\x04", b"PAR1")) else encoding_problem(head)
    if problem:
        sub.refuse(problem)
        return None
    if given:
        return given
    from ctxrobust.evaluation.formats.convert import detect

    try:
        return detect(sub.path)
    except (CtxRobustError, OSError, ValueError, RecursionError):
        return "native"  # the reader judges the file, with its own line


def _bracketed(name: str) -> bool:
    return any(mark in name for mark in BRACKETS)


def name_models(subs: list[Submission], names: list[list[str]]) -> dict[str, int]:
    """Each submission's reported model names (sub.models), unique across submissions by construction;
    returns reported name -> submission index. A name in one file only and without brackets is kept; any
    other is "<name> [<label>]"; should two of those still read alike (labels with brackets in them), each
    gets " #<n>", n the submission's number."""
    holders: dict[str, int] = {}
    for found in names:
        for name in found:
            holders[name] = holders.get(name, 0) + 1
    owner: dict[str, list[tuple[int, str]]] = {}
    for k, found in enumerate(names):
        for name in found:
            reported = name if holders[name] == 1 and not _bracketed(name) else f"{name} [{subs[k].label}]"
            owner.setdefault(reported, []).append((k, name))
    result: dict[str, int] = {}
    for reported, pairs in owner.items():
        for k, name in pairs:
            final = reported if len(pairs) == 1 else f"{reported} #{k + 1}"
            subs[k].models[name] = final
            result[final] = k
    return result


def _log_renames(subs: list[Submission], log: Callable[[str], None]) -> None:
    by_name: dict[str, list[Submission]] = {}
    for sub in subs:
        for name, reported in sub.models.items():
            if name != reported:
                by_name.setdefault(name, []).append(sub)
    lines = []
    for name in sorted(by_name):
        holders = by_name[name]
        if len(holders) == 1 and _bracketed(name):
            lines.append(
                f"model name {plain(repr(name))} (in {holders[0].label}) has brackets, so it could pass for another file's model: "
                f"reported as {plain(repr(holders[0].models[name]))}"
            )
            continue
        shown = [s.label for s in holders[:MAX_NAMED]] + ([f"and {len(holders) - MAX_NAMED} more"] if len(holders) > MAX_NAMED else [])
        kept = ", ".join(plain(repr(s.models[name])) for s in holders[:MAX_NAMED]) + (", ..." if len(holders) > MAX_NAMED else "")
        lines.append(f"model name {plain(repr(name))} is in {len(holders)} submissions ({', '.join(shown)}): kept apart as {kept}")
    for line in lines[:MAX_LOGGED]:
        log(line)
    if len(lines) > MAX_LOGGED:
        log(f"... and {len(lines) - MAX_LOGGED} more model name(s) kept apart by file; see 'submissions' in the report")


# -- the stream given to the scorer ------------------------------------------------------------------------


STREAM = "<submissions>"  # the label of the stream in the scorer's messages, replaced by the files' names


@dataclass
class Stream(Rows):
    """The kept submissions as one source of rows for the scorer, read from the files as it is iterated
    (nothing is written): each line's model is the name reported for it. Per line of the stream: its
    submission and its own line number (a native file) or row index (a runner's file); per submission,
    the lines given."""

    subs: list = field(default_factory=list)
    keep: list[int] = field(default_factory=list)
    label: str = STREAM
    sub: array.array = field(default_factory=lambda: array.array("i"))
    own: array.array = field(default_factory=lambda: array.array("q"))
    written: dict[int, int] = field(default_factory=dict)
    sha256: str = ""

    def raw(self):
        self.sub, self.own, self.written = array.array("i"), array.array("q"), {}
        digest, number = hashlib.sha256(), 0
        for k in self.keep:
            sub = self.subs[k]
            encoded = {name: json.dumps(reported).encode("ascii") for name, reported in sub.models.items()}
            lines = _converted_lines(sub, encoded) if sub.converted is not None else _native_lines(sub, encoded)
            count = 0
            for own, line in lines:
                digest.update(line)
                self.sub.append(k)
                self.own.append(own)
                count += 1
                number += 1
                yield number, line
            self.written[k] = count
        self.sha256 = digest.hexdigest()


def _read_stream(subs: list[Submission], keep: list[int]) -> Stream:
    """The stream of the kept submissions; its files are read when the scorer reads it."""
    return Stream(subs=subs, keep=keep)


def _lines_given(sub: Submission) -> int:
    """The rows of a submission the stream gives the scorer (those whose model this layer established)."""
    return (len(sub.converted.rows) if sub.converted is not None else sub.rows) - len(sub.withheld)


def _native_lines(sub: Submission, encoded: dict[str, bytes]):
    """(line number, line for the stream) of a native file's lines the scorer is given, read again; a file
    changed since it was first read is refused (its hash), and a line whose model is not the one found
    then is left out."""
    try:
        handle = open_regular(sub.path)
    except PredictionsError as exc:
        sub.refuse(str(exc).removeprefix(f"{sub.shown}: "))
        return
    with handle:
        digest = Hashed(handle)
        for number, raw in file_lines(digest, rows_module.MAX_LINE):
            if number in sub.withheld or raw is None:
                continue
            span = _model_span(raw)
            name = encoded.get(span[2]) if span is not None else None
            if name is None:
                sub.refuse("the file changed while it was being scored; score it again")
                continue
            start, end, _ = span
            line = raw[:start] + name + raw[end:]
            yield number, line if line.endswith(b"\n") else line + b"\n"
    if digest.digest.hexdigest() != sub.sha256:
        sub.refuse("the file changed while it was being scored; score it again")


def _converted_lines(sub: Submission, encoded: dict[str, bytes]):
    for index, row in enumerate(sub.converted.rows):
        if index in sub.withheld:
            continue
        name = encoded[row["model"]]
        rest = {key: value for key, value in row.items() if key != "model"}
        body = json.dumps(rest, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        yield index, b'{"model":' + name + (b"," + body[1:] if body != b"{}" else b"}") + b"\n"


# -- scoring and placing the scorer's problems ---------------------------------------------------------------


def _own_line(sub: Submission, own: int) -> int | None:
    """The line number a problem of the stream is placed at in its submission (None: a runner's record
    named by a sample id)."""
    if sub.converted is None:
        return own
    origin = sub.converted.origins[own]
    return origin if isinstance(origin, int) and not isinstance(origin, bool) else None


def _attribute(
    problems: list[Problem], subs: list[Submission], stream: Stream, owner: dict[str, int]
) -> tuple[list[Problem], dict[int, set]]:
    """Move the scorer's problems to the submissions they come from, by their line (a line of the stream)
    or their model; returns the problems of no one file, and per submission the stream lines the scorer
    refused."""
    general: list[Problem] = []
    rejected: dict[int, set] = {}
    for problem in problems:
        line, message = problem.line, problem.message
        if line is None and problem.at:  # one line about rows of several files: said in each file of its own rows
            by_sub: dict[int, list[int]] = {}
            for at in problem.at:
                if isinstance(at, int) and 1 <= at <= len(stream.sub):
                    by_sub.setdefault(stream.sub[at - 1], []).append(at)
            for k, lines in by_sub.items():
                rejected.setdefault(k, set()).update(lines)
                subs[k].problems.append({"line": None, "message": foreign_message(len(lines)), "kind": problem.kind})
            if by_sub:
                continue
        if isinstance(line, int) and 1 <= line <= len(stream.sub):
            k = stream.sub[line - 1]
            sub = subs[k]
            rejected.setdefault(k, set()).add(line)
            same_as = problem.same_as
            twin = {}
            if isinstance(same_as, int):  # a duplicate: the row with its key, as its submission numbers it
                message = f"duplicate row (same key as {_first_row(same_as, subs, stream, k)})"
                twin = {"same_as": _first_at(same_as, subs, stream, k)}
            own = _own_line(sub, stream.own[line - 1])
            if own is None:
                origin = sub.converted.origins[stream.own[line - 1]]
                sub.problems.append({"line": None, "message": f"{plain(origin, 120)}: {message}", "kind": problem.kind, **twin})
            else:
                sub.problems.append({"line": own, "message": message, "kind": problem.kind, **twin})
            continue
        k = owner.get(problem.model)  # a problem about one model: the submission it is of (the scorer says which)
        if k is None:
            general.append(problem)
        else:
            subs[k].problems.append({"line": None, "message": message, "kind": problem.kind, "model": problem.model})
    return general, rejected


def _first_row(line: int, subs: list[Submission], stream: Stream, k: int) -> str:
    """The row at `line` of the stream, named in submission k (a duplicate's twin is of the same submission: its
    models are its own): "line N" of its file, or its record ("sample <id>", "<file> line N")."""
    if 1 <= line <= len(stream.sub) and stream.sub[line - 1] == k:
        own = _own_line(subs[k], stream.own[line - 1])
        if own is not None:
            return f"line {own}"
        return plain(subs[k].converted.origins[stream.own[line - 1]], 120)
    return "another row"


def _first_at(line: int, subs: list[Submission], stream: Stream, k: int) -> int | str | None:
    """Where the row at `line` of the stream is in submission k: its line number, or its record's origin."""
    if 1 <= line <= len(stream.sub) and stream.sub[line - 1] == k:
        own = _own_line(subs[k], stream.own[line - 1])
        return own if own is not None else plain(subs[k].converted.origins[stream.own[line - 1]], 120)
    return None


def _quiet_score(scorer: Callable, release, stream: Stream, options, vouched) -> Scored:
    """Score the stream; its problems and notices come back as data (they name the stream, not the files)."""
    with vouched_model_names(vouched):
        return rows_scorer(scorer)(release, stream, options)


def _scorer_notes(scored: Scored) -> list[str]:
    """The scorer's notes and warnings, naming the submissions instead of the stream (the rows scored and
    the problems not listed are said per file)."""
    return [plain(f"submissions: {n.message}") for n in scored.notices if n.kind not in ("scored", "more")]


def _named(subs: list[Submission]) -> str:
    shown = [s.label for s in subs[:MAX_NAMED]]
    more = f" and {len(subs) - MAX_NAMED} more" if len(subs) > MAX_NAMED else ""
    return ", ".join(shown) + more


def score_submissions(
    release,
    dataset,
    paths: list[Path],
    options,
    strict: bool,
    log: Callable[[str], None],
    input_format: str | None = None,
    typed: list[Problem] | None = None,
) -> dict:
    """The dataset's report over every accepted submission, with `submissions`, `leaderboard` and, where the
    dataset has them, `differences` added. `options` is the dataset's ScoreOptions (its `strict` is ignored:
    `strict` here applies to each file). `paths`: files or folders; a runner's file (OpenAI Batch, vLLM,
    lm-eval, Inspect; `input_format`, else detected) is converted in memory. `typed`, if given, receives
    every problem typed: each submission's (under its label) and those of no one file (under "submissions")."""
    scorer = dataset.load("scorer")
    if "strict" in type(options).model_fields:
        options = options.model_copy(update={"strict": False})
    files = expand(paths)
    subs = _submissions(files, dataset, input_format)
    names: list[list[str]] = []
    aliases: dict[str, str] | None = None  # read once, when the first runner file needs it
    for sub in subs:
        if sub.group is not None:
            aliases = _item_aliases(dataset, options) if aliases is None else aliases
            found = _survey_group(sub, dataset, aliases, log)
            if sub.status == "scored" and not sub.rows:
                sub.refuse("no prediction rows (the files are empty)")
            names.append(found if sub.status == "scored" else [])
            continue
        form = _format_of(sub, input_format)
        sub.input_format = form or input_format or "native"
        if form is None:
            found = []
        elif form == "native":
            found = _survey_native(sub)
        else:
            aliases = _item_aliases(dataset, options) if aliases is None else aliases
            found = _survey_converted(sub, dataset, aliases, form, log)
        if sub.status == "scored" and not sub.rows:
            sub.refuse("no prediction rows (the file is empty)")
        names.append(found if sub.status == "scored" else [])
    owner = name_models(subs, names)
    _log_renames(subs, log)
    vouched = frozenset(owner)
    report, scored, general, stream = None, None, [], None
    for _ in range(len(subs) + 1):  # a refusal is found in the first pass; the second scores without it
        keep = [k for k, s in enumerate(subs) if s.status == "scored"]
        for k in keep:
            subs[k].problems = []
        stream = _read_stream(subs, keep) if keep else Stream()
        for k in keep:
            if subs[k].status == "scored" and not _lines_given(subs[k]):  # every row a problem found here
                subs[k].refuse(f"none of its {subs[k].rows} row(s) is a valid prediction")
                subs[k].problems = sorted(subs[k].own, key=_order)
        keep = [k for k in keep if subs[k].status == "scored"]
        if not keep:
            break
        stream.keep = keep
        rejected: dict[int, set] = {}
        try:
            scored = _quiet_score(scorer, release, stream, options, vouched)
            report, problems = scored.report, scored.problems
        except PredictionsError as exc:
            if not hasattr(exc, "problems"):
                raise PredictionsError(_about_submissions(str(exc), STREAM, [subs[k] for k in keep])) from None
            report, problems = None, exc.problems  # no valid row in any file: each is refused below
        except CtxRobustError as exc:
            raise PredictionsError(_about_submissions(str(exc), STREAM, [subs[k] for k in keep])) from None
        general, rejected = _attribute(problems, subs, stream, owner)
        refused = False
        for k in keep:
            sub = subs[k]
            sub.problems = sorted(sub.own + sub.problems, key=_order)
            if sub.status != "scored":
                pass  # refused while the stream was read (the file changed since it was first read)
            elif stream.written.get(k, 0) - len(rejected.get(k, ())) <= 0:
                sub.refuse(f"none of its {sub.rows} row(s) is a valid prediction")
            elif strict and sub.problems:
                sub.refuse(f"{len(sub.problems)} problem(s) and --strict")
            refused |= sub.status == "refused"
        if not refused and report is not None:
            break
        if report is not None and _left_out(scorer, report, subs, keep, rejected):
            stream.keep = [k for k in keep if subs[k].status == "scored"]
            break
    for sub in subs:
        if sub.status == "refused" and not sub.problems:
            sub.problems = sorted(sub.own, key=_order)
    _log_problems(subs, log)
    for problem in general:
        log(f"submissions: {plain(problem.message, None)}")
    if report is None or not any(s.status == "scored" for s in subs):
        raise PredictionsError(
            f"none of the {len(subs)} submission(s) can be scored: "
            + "; ".join(f"{s.label}: {s.reason}" for s in subs[:MAX_NAMED])
            + (f"; and {len(subs) - MAX_NAMED} more" if len(subs) > MAX_NAMED else "")
        )
    for line in _scorer_notes(scored):
        log(line)
    if typed is not None:
        typed += [problem for s in subs for problem in s.found()]
        typed += [replace(p, file="submissions") for p in general]
    spec = dataset.load("leaderboard") if dataset.leaderboard else {}
    differences = _differences(spec, release, stream, options, report, vouched, log)
    scored = [s for s in subs if s.status == "scored"]
    block = report["predictions"]
    report["predictions"] = {
        "path": f"{len(scored)} submission(s): " + _named(scored),
        "sha256": stream.sha256,
        "rows": sum(s.rows for s in scored),
        "excluded": block["excluded"] + sum(len(s.withheld) + s.dropped for s in scored),
        "problems": [
            {"line": None, "message": f"{s.label}" + (f" line {p['line']}" if p["line"] is not None else "") + f": {p['message']}"}
            for s in subs
            for p in s.problems
        ]
        + [{"line": None, "message": p.message} for p in general],
    }
    report["submissions"] = [s.as_dict() for s in subs]
    report["leaderboard"] = leaderboard(report, spec, subs)
    if differences is not None:
        report["differences"] = differences
        prefix = differences.get("metric_prefix", "difference.")
        report.setdefault("units", {}).update(
            {
                name: DIFFERENCE
                for pair in differences["by_pair"].values()
                for figures in pair.values()
                for name in figures
                if name.startswith(prefix)
            }
        )
        report["units"] = dict(sorted(report["units"].items()))
    return report


def _left_out(scorer: Callable, report: dict, subs: list[Submission], keep: list[int], rejected: dict[int, set]) -> bool:
    """Leave the submissions refused in this pass out of `report` without scoring the others again, where the
    scorer's figures are per model (its module's `without_models`); False where it cannot (score again)."""
    drop = importlib.import_module(scorer.__module__).__dict__.get("without_models")
    if drop is None or not any(subs[k].status == "scored" for k in keep):
        return False
    refused = [k for k in keep if subs[k].status != "scored"]
    drop(report, {reported for k in refused for reported in subs[k].models.values()})
    block = report["predictions"]
    block["excluded"] -= sum(len(rejected.get(k, ())) for k in refused)  # the refused files' rows are not in the report
    return True


def _order(problem: dict) -> tuple:
    """Problems of a line by line number, then those of the file."""
    return (problem["line"] is None, problem["line"] or 0)


def _about_submissions(message: str, stream_path: str, kept: list[Submission]) -> str:
    named = f"the submissions ({_named(kept)})"
    return message.replace(plain(stream_path), named).replace(str(stream_path), named)


def _log_problems(subs: list[Submission], log: Callable[[str], None]) -> None:
    logged = 0
    for sub in subs:
        for problem in sub.problems[:MAX_LOGGED]:
            if logged >= MAX_LOGGED_TOTAL:
                break
            where = f"{sub.shown}:{problem['line']}" if problem["line"] is not None else sub.shown
            log(f"{where}: {plain(problem['message'], None)}")
            logged += 1
        if sub.status == "refused":
            log(f"{sub.shown}: refused: {plain(sub.reason, None)}; the other submissions are scored without it")
    total = sum(len(s.problems) for s in subs)
    if total > logged:
        log(f"... {total - logged} more problem(s) not listed here; every one is under 'submissions' in the report")


def _differences(spec: dict, release, stream: Stream, options, report: dict, vouched, log: Callable[[str], None]) -> dict | None:
    """The dataset's paired differences over the stream scored, for up to MAX_PAIRED_MODELS models."""
    if not spec.get("differences"):
        return None
    models = len(report.get("models", {}))
    if models > MAX_PAIRED_MODELS:
        note = (
            f"paired differences not computed: {models} models make {models * (models - 1) // 2:,} pairs; "
            f"they are computed for up to {MAX_PAIRED_MODELS} models (score fewer submissions together to get them)"
        )
        log(note)
        return {"by_pair": {}, "skipped": note}
    module, _, attribute = spec["differences"].partition(":")
    function = getattr(importlib.import_module(module), attribute)
    with vouched_model_names(vouched):
        takes_report = "report" in inspect.signature(function).parameters
        return function(release, stream, options, report=report) if takes_report else function(release, stream, options)


def _sections(report: dict) -> list[tuple[int, str, list[tuple]]]:
    """(heading level, heading, blocks) of the submissions part of a report; a block is ("table", headers,
    rows), ("text", str) or ("list", [str]). Values are raw here; each rendering escapes them."""
    headers, rows, note = leaderboard_table(report)
    parts = [(2, "Leaderboard", [("table", headers, rows), ("text", note)])]
    differences = report.get("differences")
    if differences and differences.get("by_pair"):
        table = []
        for a, pairs in sorted(differences["by_pair"].items()):
            for b, figures in sorted(pairs.items()):
                for name, figure in sorted(figures.items()):
                    table.append([f"{a} − {b}", name.removeprefix(differences.get("metric_prefix", "")), fmt_metric(figure)])
        parts.append(
            (
                2,
                "Differences between models",
                [
                    ("table", ["Pair (A − B)", "Metric", "Difference ×100 [95% CI]"], table),
                    ("text", f"Paired: {differences['resampled']}."),
                ],
            )
        )
    elif differences and differences.get("skipped"):
        parts.append((2, "Differences between models", [("text", differences["skipped"][:1].upper() + differences["skipped"][1:] + ".")]))
    table, problems, hidden = [], [], 0
    for sub in report["submissions"]:
        renamed = [f"{a} → {b}" for a, b in sub["models"].items() if a != b]
        table.append(
            [
                sub["label"],
                sub["status"] + (f" ({sub['reason']})" if sub["reason"] else ""),
                sub["rows"],
                len(sub["problems"]),
                ", ".join(sub["models"].values()),
                "; ".join(renamed) or "none",
            ]
        )
        for p in sub["problems"][:MAX_SHOWN_PER_FILE]:
            if len(problems) >= MAX_SHOWN_TOTAL:
                break
            problems.append(f"{sub['label']}" + (f" line {p['line']}" if p["line"] is not None else "") + f": {p['message']}")
        hidden += len(sub["problems"])
    hidden -= len(problems)
    parts.append(
        (
            2,
            "Submissions",
            [("table", ["File", "Status", "Rows", "Problems", "Models", "Renamed (name in several files, or with brackets)"], table)],
        )
    )
    if problems:
        blocks = [("list", problems)]
        if hidden:
            blocks.append(("text", f"... and {hidden} more problem(s); every one is under 'submissions' in the JSON report."))
        parts.append((3, "Problems by file", blocks))
    return parts


def submissions_markdown(report: dict) -> str:
    """The leaderboard, the paired differences and each submission's status and problems, as Markdown sections."""
    out = []
    for level, heading, blocks in _sections(report):
        text = "#" * level + " " + heading + "\n\n"
        for block in blocks:
            if block[0] == "table":
                text += markdown_table(block[1], block[2])
            elif block[0] == "list":
                text += "\n".join(f"- {md_text(item, None)}" for item in block[1]) + "\n"
            else:
                text += ("\n" if text.endswith("|\n") else "") + md_text(block[1], None) + "\n"
        out.append(text)
    return "\n".join(out)


def submissions_html(report: dict) -> str:
    """The same sections as HTML, every value escaped."""
    out = []
    for level, heading, blocks in _sections(report):
        out.append(f"<h{level}>{html.escape(heading)}</h{level}>")
        for block in blocks:
            if block[0] == "table":
                out.append(html_table(block[1], [[plain(c, None) for c in row] for row in block[2]]))
            elif block[0] == "list":
                out.append("<ul>" + "".join(f"<li>{html.escape(plain(item, None))}</li>" for item in block[1]) + "</ul>")
            else:
                out.append(f"<p>{html.escape(plain(block[1], None))}</p>")
    return "".join(out)


def with_submissions(text: str, report: dict, form: str) -> str:
    """A dataset's Markdown or HTML report with the submissions sections added."""
    if "submissions" not in report:
        return text
    if form == "md":
        return text.rstrip("\n") + "\n\n" + submissions_markdown(report)
    block = submissions_html(report)
    return re.sub(r"</body>", lambda _: block + "</body>", text, count=1) if "</body>" in text else text + block
