"""`ctxrobust score`: score one predictions file, several, or a folder of submissions against a release.

A shell over the Python API (`ctxrobust.api.score_result`): the flags are checked and the outputs named before
any work, the report is written in the format asked; the scoring itself is the library's."""

from __future__ import annotations

import argparse
import json
import os
import sys
import typing
from pathlib import Path

from ctxrobust.commands.common import (
    OUTPUT_OPTIONS,
    RELEASE_HELP,
    _add_option_flags,
    _add_quiet,
    _frozen_release,
    _input_paths,
    _options,
    _progress,
    _release_path,
    _stdout_is_terminal,
)
from ctxrobust.errors import CtxRobustError
from ctxrobust.options import flag
from ctxrobust.output import check_output, write_bytes, write_text

if typing.TYPE_CHECKING:
    from ctxrobust import registry

HELP = "score predictions files (one, several, or a folder of submissions) against a release"
FORMATS_BY_SUFFIX = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
TIDY_FORMATS = ("csv", "parquet")  # one row per figure, for any dataset (ctxrobust.evaluation.tidy)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", help=RELEASE_HELP)
    p.add_argument(
        "predictions",
        nargs="+",
        metavar="PREDICTIONS",
        help="a predictions file (JSON Lines, or CSV or Parquet with the same columns); several files or a folder of them are scored together as submissions "
        "(the same bootstrap draws for all, differences between models, a leaderboard; --strict refuses each broken file alone)",
    )
    p.add_argument("--leaderboard", metavar="FILE", help="with several submissions: also write the leaderboard as FILE (.md or .csv)")
    p.add_argument(
        "--rank-by",
        metavar="FIGURE",
        help="with several submissions: rank the leaderboard on this declared figure (docs/metrics.md; default: the dataset's headline)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="the report file to write (default: standard output; at a terminal without --format, a short summary there "
        "and the full JSON report in <predictions>.report.json)",
    )
    p.add_argument(
        "--format",
        choices=["json", "md", "html", "csv", "parquet"],
        help="json (every figure named), md, html, or csv / parquet (one tidy row per figure); default: from the -o file's suffix, else json",
    )
    _add_option_flags(p, "score")
    p.add_argument(
        "--input-format",
        dest="input_format",
        choices=["native", "openai-batch", "vllm-batch", "lm-eval", "inspect", "csv", "parquet"],
        help="the predictions file's format (default: detected and named in the report)",
    )
    _add_quiet(p)


def run(args) -> int:
    from ctxrobust import registry
    from ctxrobust.api import check_path

    release = _frozen_release(_release_path(args.release))
    dataset = registry.get(release.dataset)
    named = [Path(p) for p in args.predictions]
    for text, path in zip(args.predictions, named):
        if text == "-":
            raise CtxRobustError("-: standard input cannot be scored; write the predictions to a JSON Lines file and give its path")
        check_path(path, folder=True)
    several = len(named) > 1 or named[0].is_dir()
    from ctxrobust.evaluation.submissions import expand

    predictions = expand(named) if several else named
    if args.leaderboard:
        if not several:
            raise CtxRobustError("--leaderboard ranks several submissions: give several predictions files or a folder of them")
        if Path(args.leaderboard).suffix.lower() not in (".md", ".csv"):
            raise CtxRobustError(f"--leaderboard {args.leaderboard}: name a .md or .csv file")
    if args.rank_by is not None:
        if not several:
            raise CtxRobustError("--rank-by ranks several submissions: give several predictions files or a folder of them")
        from ctxrobust.evaluation import metrics

        metrics.lookup(dataset.name, args.rank_by)  # an undeclared figure is refused before any work
    options = _options(args, dataset, "score")
    inputs = [*predictions, *_input_paths(options)]
    target = check_output(args.output, "-o", inputs) if args.output else None
    summary = not args.output and args.format is None and _stdout_is_terminal()
    if summary:  # a person at a terminal: a short table, the full report in a file
        target = _report_file(named[0], several, inputs)
    leaderboard = check_output(args.leaderboard, "--leaderboard", [*inputs, target]) if args.leaderboard else None
    for name in OUTPUT_OPTIONS:
        extra = getattr(options, name, None)
        if extra is not None:
            check_output(extra, flag(name), [*inputs, target, leaderboard])
    form = args.format
    if form is None:
        form = FORMATS_BY_SUFFIX.get(Path(args.output).suffix.lower(), "json") if args.output else "json"
    if form not in ("json", *TIDY_FORMATS) and form not in dataset.renderers:
        raise CtxRobustError(
            f"--format {form}: {dataset.name} reports render as json, csv, parquet or {', '.join(sorted(dataset.renderers))}"
        )
    if form == "parquet" and not args.output:
        raise CtxRobustError("--format parquet writes a binary file: give it with -o REPORT.parquet")
    from ctxrobust.api import score_result

    progress = _progress(args)
    what = f"{len(predictions)} submission(s)" if several else named[0].name
    with progress.stage(f"scoring {what} (reading predictions, bootstrap)"):  # problems and notices printed as found
        scored = score_result(release, dataset, predictions if several else named[0], options, args.input_format, _to_stderr, several)
    report = scored.report
    if args.rank_by is not None:
        from ctxrobust.evaluation.leaderboard import rerank

        report["leaderboard"] = rerank(report, dataset.load("leaderboard") if dataset.leaderboard else {}, args.rank_by)
    if args.leaderboard:
        from ctxrobust.evaluation.leaderboard import leaderboard_csv, leaderboard_markdown

        board = leaderboard_csv(report) if args.leaderboard.lower().endswith(".csv") else leaderboard_markdown(report)
        write_text(leaderboard, board)
        print(f"wrote {leaderboard}", file=sys.stderr)
    return _finish_report(report, form, dataset, target, summary)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


REPORT_NAMES = 99  # report-2 ... report-99: how far the next free name is looked for


def _report_file(predictions: Path, several: bool, inputs: list) -> Path:
    """Where `score` at a terminal writes the full JSON report: `<predictions stem>.report.json` in the
    current folder (`submissions.report.json` for several submissions); an existing file is never
    overwritten: the next free `.report-N.json` is taken."""
    stem = "submissions" if several else predictions.stem
    for n in range(1, REPORT_NAMES + 1):
        path = Path(f"{stem}.report.json" if n == 1 else f"{stem}.report-{n}.json")
        if os.path.lexists(path):
            continue
        try:
            return check_output(path, "the full report", inputs)
        except CtxRobustError as exc:
            raise CtxRobustError(f"{exc}; or give -o FILE") from None
    raise CtxRobustError(f"{stem}.report.json to {stem}.report-{REPORT_NAMES}.json all exist here; remove some, or give -o FILE")


def _finish_report(report: dict, form: str, dataset: registry.Dataset, target: Path | None, summary: bool) -> int:
    """The report written as asked, or (`summary`) in full to `target` with a short table on standard output."""
    if not summary:
        return _write_report(report, form, dataset, target)
    from ctxrobust.evaluation.summary import summary_table

    write_text(target, _json_report(report))
    spec = dataset.load("leaderboard") if dataset.leaderboard else {}
    sys.stdout.write(summary_table(report, spec) + f"full report: {target}\n")
    return 0


def _json_report(report: dict) -> str:
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def _write_report(report: dict, form: str, dataset: registry.Dataset, target: Path | None) -> int:
    """The report in `form`, written atomically to `target` (checked before any work) or to standard output."""
    from ctxrobust.evaluation import tidy

    if form == "parquet":
        write_bytes(target, tidy.parquet_bytes(report))
        print(f"wrote {target}", file=sys.stderr)
        return 0
    if form == "json":
        text = _json_report(report)
    elif form == "csv":
        text = tidy.csv_text(report)
    else:
        from ctxrobust.evaluation.submissions import with_submissions

        text = with_submissions(dataset.load("render_" + form)(report), report, form)
    if target is not None:
        write_text(target, text)
        print(f"wrote {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0  # under --strict, a file with any bad row was refused before scoring
