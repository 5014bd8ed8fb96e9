"""Scoring as a library: `load_release(path)` and `score(release, predictions, **options)`.

`predictions` is a list of dicts (native rows), a pandas DataFrame with the same columns, a path (native JSON
Lines, CSV, Parquet or a runner's output file), or a list of paths and folders (several submissions, scored
together as `ctxrobust score` does). The result is a typed `Report`; `.to_dict()` is the JSON report of
`ctxrobust score --format json`. Nothing is printed: the lines the command would print are in `messages`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxrobust.errors import CtxRobustError


class Figure(BaseModel):
    """One figure: its estimate, its interval (None: none) and its denominator; `note` says why a figure is
    null or has no interval."""

    model_config = ConfigDict(extra="allow", frozen=True)

    estimate: Any = None
    ci: list | None = None
    n: Any = None
    note: str | None = None


class ModelResult(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    metrics: dict[str, Figure] = Field(default_factory=dict)


class ProblemItem(BaseModel):
    """A problem of the predictions: the file (or input label), its line ("row N", "sample <id>", or None for
    the input as a whole), its kind and the message."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int | str | None
    kind: Literal["row", "file", "missing", "refused"]
    message: str
    model: str | None = None  # the model a problem about the file is of
    same_as: int | str | None = None  # a duplicate row: where the row with the same key is


class ModelCoverage(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    items_predicted: int
    items_scored: int
    missing: int


class Coverage(BaseModel):
    """Items in the release (None where the release does not hold them: pseudowords' questions), asked for
    (`requests`), and per model the items predicted, scored and missing."""

    model_config = ConfigDict(extra="allow", frozen=True)

    items_in_release: int | None = None
    items_requested: int | None = None
    requests: str | None = None
    missing_counted_as: str = ""
    models: dict[str, ModelCoverage] = Field(default_factory=dict)


class Report(BaseModel):
    """A scored report: `models` -> name -> `metrics` -> figure, the summary figures, every problem found
    and the coverage; `to_dict()` gives the JSON report."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    models: dict[str, ModelResult]
    summary: dict[str, Figure] = Field(default_factory=dict)
    problems: list[ProblemItem] = Field(default_factory=list)
    coverage: Coverage | None = None
    messages: list[str] = Field(default_factory=list)
    data: dict = Field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """The JSON report, as `ctxrobust score --format json` writes it."""
        import copy

        return copy.deepcopy(self.data)

    def figure(self, model: str, metric: str) -> Figure:
        """One figure of one model; an unknown model or figure is one clear error naming those there are."""
        if model not in self.models:
            raise CtxRobustError(f"no model {model!r} in the report; its models: {', '.join(sorted(self.models)) or 'none'}")
        metrics = self.models[model].metrics
        if metric not in metrics:
            raise CtxRobustError(f"no figure {metric!r} for model {model!r}; its figures: {', '.join(sorted(metrics))}")
        return metrics[metric]


def load_release(path: str | os.PathLike, verify: bool = True):
    """The release folder at `path`; with `verify`, one whose files still match their SHA256SUMS (a
    changed file is refused in one line, as `ctxrobust score` does)."""
    from ctxrobust.release import Release

    release = Release(Path(path))
    if verify:
        from ctxrobust.validators.integrity import frozen_problems

        changed = frozen_problems(release)
        if changed:
            first = changed[0]
            raise CtxRobustError(f"{path}: {first.file}: {first.message}; run `validate {path}` and use an intact release")
    return release


def score(release, predictions, **options) -> Report:
    """Score `predictions` against `release` (a Release or a release folder). `options` are the dataset's
    score options by name (`seed=1`, `replicates=200`, `strict=True`, `requests="requests.jsonl"`, ...);
    `input_format` names a runner format when it cannot be detected."""
    from ctxrobust import registry
    from ctxrobust.errors import PredictionsError
    from ctxrobust.options import parse_options
    from ctxrobust.release import Release

    if not isinstance(release, Release):
        release = load_release(release)
    dataset = registry.get(release.dataset)
    input_format = options.pop("input_format", None)
    parsed = parse_options(dataset.load("score_options"), options, f"{dataset.name} score")
    said: list[str] = []
    try:
        scored = score_result(release, dataset, predictions, parsed, input_format, said.append)
    except PredictionsError as exc:
        raise _unprinted(exc) from None
    return as_report(scored.report, said, scored.problems)


def _unprinted(exc) -> CtxRobustError:
    """A scorer's refusal as the API gives it: nothing was printed, so its message points at the error's
    `problems` (typed, one per problem found) instead of lines "listed above"."""
    from ctxrobust.errors import PredictionsError

    text = str(exc).replace("(problems listed above)", "(see the error's problems)")
    text = text.replace("(the problems are listed above)", "(see the error's problems)")
    text = text.replace("problem(s) listed above", "problem(s) (see the error's problems)")
    error = PredictionsError(text)
    found = getattr(exc, "problems", None) or []
    error.problems = [
        ProblemItem(file=p.file, line=p.line, kind=p.kind, message=p.message, model=p.model, same_as=p.same_as) for p in found
    ]
    return error


def score_result(release, dataset, predictions, options, input_format: str | None = None, echo=None, several: bool | None = None):
    """The JSON report of `predictions` (rows, a DataFrame, a path, or paths and folders) under the parsed
    `options`, with the problems and notices the scorer found (`evaluation.rows.Scored`; for several
    submissions, the problems of each under its label); `echo`, if given, gets each line for the person
    running it as it comes. `several`: score the paths as submissions (default: when there are several or a
    folder; the submissions layer lists a folder's files)."""
    from ctxrobust.evaluation.predictions import rows_scorer
    from ctxrobust.evaluation.rows import Rows, Scored

    paths = _paths(predictions)
    if paths is None:
        from ctxrobust.errors import PredictionsError
        from ctxrobust.evaluation.rows import as_rows

        if isinstance(predictions, (list, tuple)) and not predictions:
            raise PredictionsError("no rows given: give a list of prediction rows (dicts), a DataFrame or a path")
        rows = as_rows(predictions, dataset.name)
        if not isinstance(predictions, (list, tuple, Rows)) and not hasattr(predictions, "itertuples"):
            rows.records = list(rows.records)  # read twice where differences are computed
        return rows_scorer(dataset.load("scorer"))(release, rows, options, echo)
    if several is None:
        several = len(paths) > 1 or paths[0].is_dir()
    if not several:
        return score_file(release, dataset, paths[0], options, input_format, echo)
    from ctxrobust.evaluation import submissions

    strict = bool(getattr(options, "strict", False))
    log = echo if echo is not None else (lambda line: None)
    found: list = []
    report = submissions.score_submissions(release, dataset, paths, options, strict, log, input_format=input_format, typed=found)
    return Scored(report, found)


def _paths(predictions) -> list[Path] | None:
    """`predictions` as a list of paths, or None when it is rows (dicts or a DataFrame)."""
    if isinstance(predictions, (str, os.PathLike)):
        return [Path(predictions)]
    if isinstance(predictions, (list, tuple)) and predictions and all(isinstance(p, (str, os.PathLike)) for p in predictions):
        return [Path(p) for p in predictions]
    return None


def score_file(release, dataset, path: Path, options, input_format: str | None = None, echo=None):
    """One predictions file (`evaluation.rows.Scored`): native JSON Lines read in a stream; a runner's file or
    a table read record by record (`evaluation.formats.convert.records`), each row keeping its origin;
    nothing is written. A missing path or one that is not a regular file is refused in one line."""
    from ctxrobust.evaluation.formats.convert import detect
    from ctxrobust.evaluation.predictions import rows_scorer

    check_path(path)
    form = input_format or detect(path)
    if form == "native":
        scored = rows_scorer(dataset.load("scorer"))(release, path, options, echo)
        scored.report.get("predictions", {})["input_format"] = "native"
        return scored
    return _score_converted(release, dataset, path, options, form, echo)


def check_path(path: Path, folder: bool = False) -> None:
    """Refuse, in one line, a predictions path that does not exist or is not a regular file (or, with
    `folder`, a folder of them)."""
    from ctxrobust.evaluation.report import plain
    from ctxrobust.evaluation.rows import NOT_REGULAR

    if not os.path.lexists(path):
        raise CtxRobustError(f"{plain(path)}: no such predictions file")
    if not path.is_file() and not (folder and path.is_dir()):
        raise CtxRobustError(f"{plain(path)}: {NOT_REGULAR}")


def _score_converted(release, dataset, path: Path, options, form: str, echo=None):
    from ctxrobust.canonical import sha256_file
    from ctxrobust.errors import PredictionsError
    from ctxrobust.evaluation.formats.convert import records
    from ctxrobust.evaluation.predictions import MAX_LISTED, Findings, rows_scorer
    from ctxrobust.evaluation.report import path_text, plain
    from ctxrobust.evaluation.rows import RecordRows

    module = dataset.load("prompts")
    aliases = module.item_aliases(options) if hasattr(module, "item_aliases") else {}
    rows, origins, own, lost, failed, refusing = [], [], [], 0, 0, 0
    for origin, row, problem in records(path, form, module.prediction, aliases, dataset.name):
        if row is not None:
            rows.append(row)
            origins.append(origin)
            if problem:
                failed += 1
                own.append(_placed(origin, problem))
        elif problem is not None or origin is not None:
            lost += origin is not None
            if problem is not None:
                own.append(_placed(origin, problem))
                refusing += origin is not None
    shown = plain(path)
    found = Findings(echo)
    found.notice(shown, "note", f"read as {form} ({len(rows)} response(s), {failed} failed request(s))")
    typed = [_typed(shown, problem) for problem in own]
    for k, problem in enumerate(typed):  # printed as the scorer prints its own, before any figure; the first MAX_LISTED
        found.problem(problem, listed=k < MAX_LISTED)
    if len(typed) > MAX_LISTED:
        found.notice(shown, "more", f"... and {len(typed) - MAX_LISTED} more problem(s); every one is in the report")
    if refusing and getattr(options, "strict", False):  # a record that gave no row is a problem of the file
        error = PredictionsError(
            f"{shown}: {len(own)} problem(s) (see the report's problems); --strict refuses to score it "
            "(fix the records, or drop --strict to score the valid ones)"
        )
        error.problems = typed
        raise error
    if not rows:
        error = PredictionsError(f"{shown}: no response in it could be read as a {dataset.name} prediction ({len(own)} problem(s))")
        error.problems = typed
        raise error
    said = f"{shown}: scored "

    def held(line: str) -> None:  # the scorer's count of rows scored is said below, with the records lost
        if echo is not None and not line.startswith(said):
            echo(line)

    scored = rows_scorer(dataset.load("scorer"))(release, RecordRows(rows, label=shown, origins=origins), options, held)
    scored.problems[:0] = typed
    scored.notices[:0] = found.notices
    report = scored.report
    block = report.get("predictions")
    if isinstance(block, dict):
        scorer = [_placed(p.get("line"), p.get("message", ""), p.get("model")) for p in block.get("problems", [])]
        block.update(
            {
                "path": path_text(path),
                "sha256": sha256_file(path),
                "input_format": form,
                "rows": block.get("rows", 0) + lost,
                "excluded": block.get("excluded", 0) + lost,
                "failed_requests": failed,
                "problems": own + scorer,
            }
        )
        if lost:  # the scorer's "N excluded" counts only the rows it was given
            _recount(scored.notices, shown, block)
    if echo is not None:
        for notice in scored.notices:
            if notice.kind == "scored":
                echo(notice.render())
    return scored


def _recount(notices: list, shown: str, block: dict) -> None:
    """The scorer's "scored N valid row(s)" notice, counting the records that gave no row as excluded too."""
    from ctxrobust.evaluation.predictions import scored_line
    from ctxrobust.evaluation.rows import Notice

    line = Notice(shown, "scored", scored_line(block["rows"] - block["excluded"], block["excluded"]))
    for k, notice in enumerate(notices):
        if notice.kind == "scored":
            notices[k] = line
            return
    notices.append(line)


def _typed(file: str, placed: dict):
    """A problem placed for the JSON report ({"line", "message"}) as an `evaluation.rows.Problem` of `file`."""
    from ctxrobust.evaluation.rows import Problem

    return Problem(file, placed["line"], "row" if placed["line"] is not None else "file", placed["message"])


def _placed(origin, message: str, model: str | None = None) -> dict:
    """A problem at its record: a line number as `line`; "sample <id>" or "row N" leads the message."""
    from ctxrobust.evaluation.report import plain

    if isinstance(origin, int) and not isinstance(origin, bool):
        out = {"line": origin, "message": plain(message, 400)}
    else:
        out = {"line": None, "message": plain(f"{origin}: {message}" if origin is not None else message, 400)}
    if model is not None:
        out["model"] = model
    return out


def _figures(metrics: dict) -> dict[str, Figure]:
    return {name: Figure(**value) for name, value in metrics.items() if isinstance(value, dict) and "estimate" in value}


def found_problems(data: dict, found: list) -> list[ProblemItem]:
    """The problems a scorer found (`evaluation.rows.Problem`): of one predictions input, named by the
    report's predictions path; of several submissions, each under its own label."""
    block = data.get("predictions")
    label = str(block.get("path", "predictions")) if isinstance(block, dict) and "submissions" not in data else None
    return [ProblemItem(file=label or p.file, line=p.line, kind=p.kind, message=p.message, model=p.model, same_as=p.same_as) for p in found]


def _coverage(covered: dict) -> Coverage:
    """The report's coverage block, its requests file as a path (the report says it as the flag)."""
    requests = covered.get("requests")
    if isinstance(requests, str):
        covered = {**covered, "requests": requests.removeprefix("--requests ")}
    return Coverage(**covered)


def as_report(data: dict, messages: list[str], found: list) -> Report:
    """A JSON report as a typed Report (the dict itself kept for `to_dict`), with `found`, the problems its
    scorer returned."""
    models = {
        name: ModelResult(metrics=_figures(model.get("metrics", {})), **{k: v for k, v in model.items() if k != "metrics"})
        for name, model in data.get("models", {}).items()
    }
    covered = data.get("coverage")
    return Report(
        dataset=str(data.get("dataset", "")),
        models=models,
        summary=_figures((data.get("summary") or {}).get("metrics", {})),
        problems=found_problems(data, found),
        coverage=_coverage(covered) if isinstance(covered, dict) else None,
        messages=list(messages),
        data=data,
    )
