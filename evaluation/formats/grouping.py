"""Runners' files grouped into submissions, one per model run: the files one run writes are scored as one.

- OpenAI Batch / `vllm run-batch` files: the parts of one job (`name-001.jsonl`, `name-002.jsonl`, ... or
  `name-001_output.jsonl`, ...) whose models agree are one group; output files whose models agree and whose
  answered request ids do not overlap are one group (a job's output, failed lines and all, and the output of its
  retry); an error file (no line names a model) joins the output file(s) of its job: a group holding a file
  whose request ids it does not overlap (its job's output; a retry's output in the same group may answer its
  ids), the one in its folder with the nearest name where several do.
- lm-eval `--log_samples` files: the sample files (one per task) whose `results_<date>.json` names one model are
  one group; those beside no results file naming a model, one group per folder.
- Inspect logs: one group per model their headers name.

An lm-eval `results_<date>.json` given with the samples of its run (a run folder given whole) is the run's
record, not a submission: a companion of its group. Any other file (the native rows, a table, a file that cannot
be read) is a group of its own, which its reader judges. A file given twice (by a relative and an absolute path,
or through a link) is read once.

A request id in two files of one group is counted once: from the first file that holds an answer to it (a failed
request of a vLLM output, a Batch error file or an `inspect eval-retry` log is replaced by the retry's answer),
else from the first file. `Group.records` leaves the other rows out and says so in one line per pair of files.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator

from pydantic import BaseModel, ConfigDict

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.report import plain

BATCH = ("openai-batch", "vllm-batch")
MAX_LABELLED = 3  # file names in a group's label
MAX_EXAMPLES = 3  # request ids shown in a line about repeated ids
SHOWN_ID = 40  # characters of each shown
_PART = re.compile(r"(?P<head>.+?)-(?P<n>\d{3,})(?P<tail>(?:[._-]\D.*)?)")
_ROLE = re.compile(r"(?:^|(?<=[._-]))(?:outputs?|errors?|results?|responses?|out|err)(?=[._-]|$)")


class RunnerFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: Path
    form: str  # convert.FORMATS


class Group(BaseModel):
    """The files of one submission: one model's run. `model` is the model its files name (None when unknown: the
    rows keep what each record names, or the reader's default); `label` names the group in messages."""

    model_config = ConfigDict(frozen=True)

    model: str | None
    files: tuple[RunnerFile, ...]
    label: str
    dataset: str
    notes: tuple[tuple[Path, str], ...] = ()  # (file, a line about how it was grouped)
    companions: tuple[Path, ...] = ()  # files of the run given with it that hold no responses (lm-eval results_<date>.json)

    @property
    def paths(self) -> list[Path]:
        return [f.path for f in self.files]

    def records(self, prediction: Callable, aliases: dict[str, str], known: Callable | None = None) -> Iterator[tuple]:
        """(path, origin, row, problem) of every record of the group's files, as `convert.records` gives them (its
        rules for row and problem: a failed request is a row with a problem), the group's model naming the rows
        whose record names none. A request id is counted once: from the first file answering it, else from the
        first file holding it; every other row of it is left out (path, origin, None, None), with one line about
        each file saying how many and which file holds them. A failed row is held back until the files are read
        (an answer in a later file replaces it), so failed rows come after the answers. Raises PredictionsError
        for a file that cannot be read as a whole, before any of its records."""
        from ctxrobust.evaluation.formats.convert import _records

        several = len(self.files) > 1
        answered: dict[int, int] = {}  # request id (its hash) -> the file that answers it first
        failed: dict[int, tuple] = {}  # request id -> (file, origin, row, problem) of the first failed row held back
        left: dict[tuple[int, int], list] = {}  # (file left out of, file counted from) -> [count, examples]

        def leave(index: int, first: int, custom_id: str) -> None:
            held = left.setdefault((index, first), [0, []])
            held[0] += 1
            if len(held[1]) < MAX_EXAMPLES:
                held[1].append(plain(repr(custom_id), SHOWN_ID))

        for index, item in enumerate(self.files):
            for path, note in self.notes:
                if path == item.path:
                    yield item.path, None, None, note
            for origin, custom_id, row, problem in _records(item.path, item.form, prediction, aliases, self.dataset, self.model, known):
                if row is None or custom_id is None or not several:  # a file's own repeats: the scorer's
                    yield item.path, origin, row, problem
                    continue
                key = _id_key(custom_id)
                if key in answered:
                    leave(index, answered[key], custom_id)
                    yield item.path, origin, None, None
                elif problem is None:  # an answer: it replaces a failed row held back
                    answered[key] = index
                    if key in failed:
                        where, was, _, _ = failed.pop(key)
                        leave(where, index, custom_id)
                        yield self.files[where].path, was, None, None
                    yield item.path, origin, row, problem
                elif key in failed:
                    leave(index, failed[key][0], custom_id)
                    yield item.path, origin, None, None
                else:
                    failed[key] = (index, origin, row, problem)
            if index == len(self.files) - 1:
                for where, origin, row, problem in failed.values():
                    yield self.files[where].path, origin, row, problem
        for (index, first), (count, examples) in sorted(left.items()):
            more = ", ..." if count > len(examples) else ""
            yield (
                self.files[index].path,
                None,
                None,
                f"{count} request id(s) of this file are also in {plain(self.files[first].path)} of the same submission "
                f"(e.g. {', '.join(examples)}{more}): each is counted once, from the first file answering it (else the "
                "first holding it), here that one; these rows are left out",
            )


def group(paths: list[Path], dataset: str, forms: dict[Path, str] | None = None) -> list[Group]:
    """The submissions `paths` make for `dataset`, in the order of their first file. `forms` gives a file's format
    (else it is detected). Never raises for one file: a file that cannot be read is a group of its own."""
    from ctxrobust.evaluation.formats.convert import detect

    dataset = getattr(dataset, "name", dataset)  # a registry entry stands for its name
    given = {Path(path): form for path, form in (forms or {}).items()}
    files = []
    once: dict[tuple, Path] = {}  # the file's identity -> the path it was first given as
    again: dict[Path, list[Path]] = {}
    for path in map(Path, paths):
        first = once.setdefault(_identity(path), path)
        if first is not path:
            again.setdefault(first, []).append(path)
            continue
        form = given.get(path)
        if form is None:
            try:
                form = detect(path)
            except (CtxRobustError, OSError, ValueError, RecursionError):
                form = "native"
        files.append(RunnerFile(path=path, form=form))
    order = {f.path: k for k, f in enumerate(files)}
    lm_units = _keyed_units([f for f in files if f.form == "lm-eval"], _lm_eval_key)
    companions = _results_files(files, lm_units, given)
    files = [f for f in files if f.path not in companions]
    units: list[_Unit] = []
    units += _batch_units([f for f in files if f.form in BATCH])
    units += lm_units
    units += _keyed_units([f for f in files if f.form == "inspect"], _inspect_key)
    units += [_Unit([f]) for f in files if f.form not in BATCH and f.form not in ("lm-eval", "inspect")]
    for unit in units:
        for f in unit.files:
            if f.path in again:
                shown = ", ".join(plain(p) for p in again[f.path][:MAX_LABELLED])
                unit.notes.append((f.path, f"given again as {shown}: the same file, read once"))
    out = []
    for unit in sorted(units, key=lambda u: min(order[f.path] for f in u.files)):
        members = tuple(sorted(unit.files, key=lambda f: order[f.path]))
        extra = tuple(sorted((p for p, u in companions.items() if u is unit), key=lambda p: order[p]))
        out.append(
            Group(model=unit.model, files=members, label=_label(members), dataset=dataset, notes=tuple(unit.notes), companions=extra)
        )
    return out


def _identity(path: Path) -> tuple:
    """What makes two paths one file: its device and inode, else its resolved path (a file that cannot be
    stat'ed is judged by its reader)."""
    try:
        found = os.stat(path)
        return ("inode", found.st_dev, found.st_ino)
    except OSError:
        return ("path", os.path.realpath(path))


def _results_files(files: list[RunnerFile], lm_units: list[_Unit], given: dict[Path, str]) -> dict[Path, _Unit]:
    """lm-eval `results_<date>.json` files given with the samples of their run (a run folder given whole): the
    run's record, read for its model name, not a submission. A file whose format was given is taken as given."""
    from ctxrobust.evaluation.formats import lm_eval

    by_run: dict[tuple, _Unit] = {}
    by_folder: dict[str, _Unit] = {}
    for unit in lm_units:
        for item in unit.files:
            folder = os.path.abspath(item.path.parent)
            by_run.setdefault((folder, lm_eval.run_of(item.path)), unit)
            by_folder.setdefault(folder, unit)
    found = {}
    for item in files:
        name = item.path.name
        if item.path in given or not (name.startswith("results_") and name.endswith(".json")):
            continue
        folder = os.path.abspath(item.path.parent)
        unit = by_run.get((folder, name[len("results_") : -len(".json")])) or by_folder.get(folder)
        if unit is not None:
            found[item.path] = unit
    return found


class _Unit:
    """Files being grouped: their request ids (Batch files) and the models their records name."""

    def __init__(self, files: list[RunnerFile], ids: set | None = None, models: Counter | None = None, model: str | None = None):
        self.files = list(files)
        self.ids = ids if ids is not None else set()
        self.parts = [self.ids] if ids else []  # each Batch file's own request ids
        self.answered: set = set()  # request ids answered (a line naming a model; a failed line names none)
        self.models = models if models is not None else Counter()
        self.fixed = model  # a model named by the run (lm-eval results, Inspect header), not counted from lines
        self.notes: list[tuple[Path, str]] = []

    @property
    def model(self) -> str | None:
        if self.fixed is not None:
            return self.fixed
        return min(self.models, key=lambda m: (-self.models[m], m)) if self.models else None

    def take(self, other: _Unit) -> None:
        self.files += other.files
        self.parts += other.parts
        self.ids = self.ids | other.ids
        self.answered = self.answered | other.answered
        self.models += other.models
        self.notes += other.notes


def _id_key(custom_id: str) -> int:
    """A request id as 64 bits of its hash: what comparing files holds of it (a set of millions stays small)."""
    return int.from_bytes(hashlib.blake2b(custom_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def _scan_batch(item: RunnerFile) -> _Unit | None:
    """A Batch file's request ids and models; None for a file that cannot be read as one (its reader says why)."""
    from ctxrobust.evaluation.formats import openai_batch
    from ctxrobust.evaluation.formats.convert import _text_file

    try:
        _text_file(item.path)
        ids, answered, models = set(), set(), Counter()
        for custom_id, model in openai_batch.line_models(item.path):
            key = _id_key(custom_id) if isinstance(custom_id, str) else None
            if key is not None:
                ids.add(key)
            if model:
                models[model] += 1
                if key is not None:
                    answered.add(key)
    except (CtxRobustError, OSError):
        return None
    if not ids:
        return None
    unit = _Unit([item], ids, models)
    unit.answered = answered
    return unit


def _batch_units(files: list[RunnerFile]) -> list[_Unit]:
    alone, scanned = [], []
    for item in files:
        unit = _scan_batch(item)
        (alone if unit is None else scanned).append(unit or _Unit([item]))
    # the parts of one job, by name: models that agree (an error part names none)
    parts: dict[tuple, list[_Unit]] = {}
    units: list[_Unit] = []
    for unit in scanned:
        match = _PART.fullmatch(unit.files[0].path.name)
        if match is None:
            units.append(unit)
        else:
            parts.setdefault((os.path.abspath(unit.files[0].path.parent), match["head"], match["tail"]), []).append(unit)
    for members in parts.values():
        named = {u.model for u in members if u.model is not None}
        if len(named) <= 1:
            first = members[0]
            for other in members[1:]:
                first.take(other)
            units.append(first)
            continue
        of_model: dict[str, _Unit] = {}
        for unit in members:
            if unit.model is None or unit.model not in of_model:
                units.append(unit)
                if unit.model is not None:
                    of_model[unit.model] = unit
            else:
                of_model[unit.model].take(unit)
    # output files of one model whose answered request ids do not overlap (a failed line answered by a retry)
    named_units: list[_Unit] = []
    by_model: dict[str, list[_Unit]] = {}
    for unit in units:
        if unit.model is None:
            continue
        same = by_model.setdefault(unit.model, [])
        into = next((u for u in same if u.answered.isdisjoint(unit.answered)), None)
        if into is None:
            named_units.append(unit)
            same.append(unit)
        else:
            into.take(unit)
    # an error file (no model) joins the output file(s) of its job
    kept = list(named_units)
    for unit in units:
        if unit.model is not None:
            continue
        candidates = [u for u in named_units if _job_of(unit, u)]
        if len(candidates) > 1:
            scores = [_affinity(unit, u) for u in candidates]
            best = max(scores)
            if scores.count(best) == 1:
                candidates = [candidates[scores.index(best)]]
            else:
                names = ", ".join(plain(c.files[0].path.name) for c, s in zip(candidates, scores) if s == best)
                unit.notes.append(
                    (
                        unit.files[0].path,
                        f"its request ids overlap none of those of {names}: which job's error file it is cannot be told, "
                        "so it is a submission of its own (give it with its own output file only)",
                    )
                )
                candidates = []
        if len(candidates) == 1:
            candidates[0].take(unit)
        else:
            kept.append(unit)
    return kept + alone


def _job_of(error: _Unit, output: _Unit) -> bool:
    """Whether an error file may be of a group's job: its request ids overlap none of those of one file of the
    group (the job's output; another file of the group, a retry's output, may answer them)."""
    return any(part.isdisjoint(error.ids) for part in output.parts) or not output.parts


def _affinity(error: _Unit, output: _Unit) -> tuple[int, int]:
    """How near an error file is to an output file: the same folder, then the longest common start of their names
    once words like output and error are taken out."""
    path = error.files[0].path
    same = any(os.path.abspath(f.path.parent) == os.path.abspath(path.parent) for f in output.files)
    mine = _ROLE.sub("", path.name.lower())
    prefix = max(len(os.path.commonprefix([mine, _ROLE.sub("", f.path.name.lower())])) for f in output.files)
    return int(same), prefix


def _keyed_units(files: list[RunnerFile], key: Callable[[RunnerFile], tuple]) -> list[_Unit]:
    units: dict[tuple, _Unit] = {}
    out = []
    for item in files:
        kind, value, model = key(item)
        if kind is None:
            out.append(_Unit([item]))
        elif (kind, value) in units:
            units[(kind, value)].take(_Unit([item]))
        else:
            units[(kind, value)] = _Unit([item], model=model)
            out.append(units[(kind, value)])
    return out


def _lm_eval_key(item: RunnerFile) -> tuple:
    """lm-eval samples: by the model their results file names, else by folder."""
    from ctxrobust.evaluation.formats import lm_eval
    from ctxrobust.evaluation.formats.convert import _text_file

    try:
        _text_file(item.path)
        model = lm_eval.model_name(item.path)
    except (CtxRobustError, OSError):
        return None, None, None  # the file, or a results file beside it, cannot be read: its reader says so
    if model is not None:
        return "model", model, model
    return "folder", os.path.abspath(item.path.parent), None


def _inspect_key(item: RunnerFile) -> tuple:
    from ctxrobust.evaluation.formats import inspect_log

    model = inspect_log.header_model(item.path)
    return ("model", model, model) if model is not None else (None, None, None)


def _label(files: tuple[RunnerFile, ...]) -> str:
    names = [plain(f.path.name) for f in files]
    if len(names) <= MAX_LABELLED:
        return " + ".join(names)
    return f"{names[0]} + {len(names) - 1} more files"
