"""The command line: build, release, sources, validate, prompts, score, push.

Dataset names and the per-dataset flags of `prompts` and `score` come from the registry: each field
of a dataset's PromptOptions / ScoreOptions model is one flag, refused for datasets without it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
import typing
from pathlib import Path

from pydantic import BaseModel

import ctxrobust
from ctxrobust import registry
from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError, SourceError, ValidationFailed
from ctxrobust.options import flag, parse_options
from ctxrobust.output import atomic_open, check_output, write_bytes, write_text


def _store(args=None):
    from ctxrobust.sources.store import SnapshotStore

    mirror = getattr(args, "mirror", None) if args is not None else None
    return SnapshotStore(mirror=Path(mirror) if mirror else None)


def _report_error(dataset: str, exc: CtxRobustError, store, verbose: bool) -> None:
    """One error line per dataset; for unavailable sources the full list follows (-v) or goes to a file it names."""
    from ctxrobust.sources.store import SnapshotsUnavailable

    if not isinstance(exc, SnapshotsUnavailable):
        print(f"error: {dataset}: {exc}", file=sys.stderr)
        return
    if verbose:
        print(f"error: {dataset}: {exc}", file=sys.stderr)
        for line in exc.details:
            print(f"  {line}", file=sys.stderr)
        return
    report = store.write_report(dataset, exc)
    where = f"full list in {report}" if report is not None else "rerun with -v for the full list"
    print(f"error: {dataset}: {exc}; {where}", file=sys.stderr)


def _progress(args, quiet: bool = False):
    """The command's progress reporter on standard error: silent off a terminal, under -q, or when `quiet`."""
    from ctxrobust.progress import Progress

    return Progress(sys.stderr, quiet=quiet or bool(getattr(args, "quiet", False)))


def _overrides(args) -> dict:
    overrides = {}
    for pair in args.set or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CtxRobustError(f"--set {pair!r}: expected KEY=VALUE (VALUE as JSON, or a plain string)")
        try:
            overrides[key] = json.loads(value)
        except ValueError:
            overrides[key] = value
    if args.seed is not None:
        overrides["seed"] = args.seed
    return overrides


def cmd_build(args) -> int:
    from ctxrobust.build import build_release

    started = time.perf_counter()
    store = _store(args)
    try:
        result = build_release(args.dataset, args.version, _overrides(args), Path(args.out), store, _progress(args))
    except ValidationFailed as exc:
        _print_failures(exc.failures, args.dataset, args.version)
        raise
    except SourceError as exc:
        _report_error(args.dataset, exc, store, args.verbose)
        return 2
    store.clear_report(args.dataset)
    _report_removed(result)
    rows = ", ".join(f"{f['name']} {f['rows']}" for f in result.manifest["files"])
    print(f"{result.status} {result.path} ({rows}) in {time.perf_counter() - started:.1f}s")
    return 0


def cmd_release(args) -> int:
    """Build several datasets; a dataset whose build fails does not stop the others."""
    from ctxrobust.build import build_release, check_out_root, check_version

    check_version(args.version)
    check_out_root(Path(args.out))
    names = registry.names() if not args.datasets else [n for chunk in args.datasets for n in chunk.replace(",", " ").split()]
    store, failed, progress = _store(args), [], _progress(args)
    for name in names:
        started = time.perf_counter()
        try:
            result = build_release(name, args.version, {}, Path(args.out), store, progress)
        except ValidationFailed as exc:
            _print_failures(exc.failures, name, args.version)
            print(f"error: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        except CtxRobustError as exc:
            _report_error(name, exc, store, args.verbose)
            failed.append(name)
            continue
        store.clear_report(name)
        _report_removed(result)
        print(f"{result.status} {result.path} in {time.perf_counter() - started:.1f}s")
    if failed:
        print(f"{len(failed)} of {len(names)} dataset(s) not built: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _report_removed(result) -> None:
    for path in result.removed:
        print(f"removed {path}: the temporary folder of an interrupted build", file=sys.stderr)


def cmd_sources(args) -> int:
    store = _store(args)
    try:
        store.fill(args.names or None, report=lambda name, how: print(f"{how:10s} {name}", flush=True))
    except SourceError as exc:
        _report_error("sources", exc, store, args.verbose)
        return 2
    store.clear_report("sources")
    return 0


def _print_failures(failures, dataset: str, version: str) -> None:
    from ctxrobust.release_files import printable

    for f in failures:
        print(printable(f"FAIL {dataset} {version} {f.file or '-'} {f.item or '-'} {f.check}: {f.message}"))


def _check_release(folder: Path, store, progress=None) -> tuple[str, str, list, int]:
    """(dataset, version, failures, checks run) of one release folder; whatever is wrong with it is its
    own failure, so the run goes on to the next release. `progress` shows the checks as they run."""
    from ctxrobust.release import Release
    from ctxrobust.release_files import shown
    from ctxrobust.validators.checks import Failure, run_checks

    dataset, version = folder.parent.name, folder.name  # the folder, which a `location` failure compares with the manifest
    if not dataset.isprintable() or not version.isprintable():
        dataset, version = shown(dataset), shown(version)
    try:
        release = Release(folder, store=store)
        if release.dataset not in registry.names():
            raise CtxRobustError(
                f"{folder / 'manifest.json'}: unknown dataset {shown(release.dataset)}; this ctxrobust knows {', '.join(registry.names())}"
            )
        if folder.parent.name not in registry.names():  # a downloaded folder, under any name: named by its manifest
            dataset, version = (str(v) if str(v).isprintable() else shown(v) for v in (release.dataset, release.version))
        results = run_checks(release, progress=progress, label=f"validating {dataset} {version}")
    except (CtxRobustError, OSError) as exc:
        message = str(exc) if isinstance(exc, CtxRobustError) else f"{exc.filename or folder}: cannot be read ({exc.strerror})"
        return dataset, version, [Failure("manifest.json", None, message, "load")], 0
    except (ValueError, RecursionError) as exc:  # a hostile release no check foresaw: its own failure, the others still judged
        message = f"{folder}: cannot be validated ({type(exc).__name__}: {shown(str(exc))})"
        return dataset, version, [Failure("manifest.json", None, message, "load")], 0
    return dataset, version, [f for found in results.values() for f in found], len(results)


def cmd_validate(args) -> int:
    from ctxrobust.release import find_folders_without_manifest, find_interrupted_builds, find_releases

    root = _release_path(args.path)
    if not root.exists():
        raise CtxRobustError(f"{root}: no such folder; give a release folder or a folder of releases (e.g. releases/)")
    folders, partial = find_releases(root), find_folders_without_manifest(root)
    if not folders and not partial:
        raise CtxRobustError(f"{root}: no release found (no <dataset>/<version>/manifest.json below it)")
    for leftover in find_interrupted_builds(root):
        print(
            f"WARN {leftover}: the temporary folder of an interrupted build; the next build of {leftover.parent.name} removes it, or remove it yourself"
        )
    for folder in partial:
        print(
            f"FAIL {folder.parent.name} {folder.name} manifest.json - load: {folder} holds no manifest.json; the release is incomplete, rebuild it"
        )
    store, progress = _store(args), _progress(args)
    total_failures = len(partial)
    for folder in folders:
        dataset, version, failures, checks = _check_release(folder, store, progress)
        _print_failures(failures, dataset, version)
        total_failures += len(failures)
        state = "ok" if not failures else f"{len(failures)} failure(s)"
        print(f"{dataset} {version}: {checks} checks, {state}")
    print(f"validated {len(folders) + len(partial)} release(s): {'all passed' if not total_failures else f'{total_failures} failure(s)'}")
    return 0 if not total_failures else 1


OPTION_PARTS = {"prompts": "prompt_options", "score": "score_options"}
RELEASE_HELP = "a release folder, or hf://datasets/ORG/NAME@vX.Y.Z (downloaded from the Hub)"
MIRROR_HELP = "a source mirror folder laid out like fred/, situatedqa/, gsm_ic/, gsm8k/ (default: $SOURCES_MIRROR)"


def _option_fields(command: str) -> dict[str, list[tuple[str, typing.Any]]]:
    """Every option field of `command` over the registered datasets: name -> [(dataset, FieldInfo)]."""
    fields: dict[str, list[tuple[str, typing.Any]]] = {}
    for dataset in registry.datasets():
        model = dataset.load(OPTION_PARTS[command])
        for name, info in model.model_fields.items():
            fields.setdefault(name, []).append((dataset.name, info))
    return fields


def _literal_values(annotation: typing.Any) -> list | None:
    """The values a Literal annotation allows (inside Optional[...] too), else None."""
    if typing.get_origin(annotation) is typing.Literal:
        return list(typing.get_args(annotation))
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Literal:
            return list(typing.get_args(arg))
    return None


def _field_help(info) -> str:
    """A field's description with what it lacks of its values, its default and whether it is required:
    "(one of a, b)", "(default: X)", "(required)"; a description that already names them stays as it is."""
    import re

    text, notes = info.description or "", []
    values = _literal_values(info.annotation)
    if values and not all(re.search(rf"(?<![\w-]){re.escape(str(v))}(?![\w-])", text) for v in values):
        notes.append(f"one of {', '.join(map(str, values))}")
    if info.is_required():
        notes.append("required")
    elif info.default is not None and info.default is not False and "default" not in text:
        default = info.default
        notes.append(f"default: {', '.join(map(str, default)) if isinstance(default, (list, tuple)) else default}")
    return f"{text} ({'; '.join(notes)})" if notes else text


def _option_help(owners: list[tuple[str, typing.Any]]) -> str:
    """One flag's help over the datasets that take it: each text once, after the datasets it holds for
    ("gsm-ic, misleadqa: refuse ..."), not once per dataset."""
    texts: dict[str, list[str]] = {}
    for dataset, info in owners:
        texts.setdefault(_field_help(info), []).append(dataset)
    return "; ".join(f"{', '.join(datasets)}: {text}" for text, datasets in texts.items())


def _add_option_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """One flag per options field; its type from the annotation, its help from each dataset's description
    (with its default and values), each text once."""
    for name, owners in sorted(_option_fields(command).items()):
        info = owners[0][1]
        annotation = info.annotation
        args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
        kind = args[0]
        helps = _option_help(owners)
        if kind is bool:
            parser.add_argument(flag(name), dest=name, action="store_true", default=None, help=helps)
            continue
        nargs, element = None, kind
        if typing.get_origin(kind) is list:
            nargs, element = "+", typing.get_args(kind)[0]
        converter = element if element in (int, float) else str
        choices = list(typing.get_args(element)) if typing.get_origin(element) is typing.Literal else None
        if choices and len(owners) > 1:
            choices = None  # datasets differ: each model checks its own values
        shown = _literal_values(annotation) if len(owners) == 1 else None  # the values, shown (the model checks them)
        parser.add_argument(
            flag(name),
            dest=name,
            type=converter,
            nargs=nargs,
            default=None,
            help=helps,
            metavar=("{" + ",".join(map(str, shown)) + "}" if shown else name.upper()) if not choices else None,
            choices=choices,
        )


def _options(args, dataset: registry.Dataset, command: str) -> BaseModel:
    """The dataset's options model from the flags given; a flag that does not apply to it is refused."""
    given = {name: getattr(args, name) for name in _option_fields(command) if getattr(args, name, None) is not None}
    return parse_options(dataset.load(OPTION_PARTS[command]), given, f"{dataset.name} {command}")


def _frozen_release(path: Path):
    """A release whose files still match their SHA256SUMS: prompts and scores are never made from a changed one."""
    from ctxrobust.release import Release
    from ctxrobust.validators.integrity import frozen_problems

    release = Release(path)
    changed = frozen_problems(release)
    if changed:
        first = changed[0]
        raise CtxRobustError(f"{path}: {first.file}: {first.message}; run `validate {path}` and use an intact release")
    return release


def _input_paths(options: BaseModel) -> list[Path]:
    """The files an options model names as inputs (e.g. --benchmark), each a regular file if it is there
    (a FIFO or device would hang or never end); an output may not be one of them."""
    inputs = []
    for name, value in options:
        if not isinstance(value, Path) or name in OUTPUT_OPTIONS:
            continue
        if os.path.lexists(value) and not value.is_dir() and not value.is_file():
            raise CtxRobustError(f"{flag(name)} {value}: is not a regular file (a FIFO or device cannot be read as one); give the file")
        inputs.append(value)
    return inputs


OUTPUT_OPTIONS = ("export",)  # options fields that name a file the command writes


FORMATS_BY_SUFFIX = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
TIDY_FORMATS = ("csv", "parquet")  # one row per figure, for any dataset (ctxrobust.evaluation.tidy)


def _release_path(text: str) -> Path:
    """A release folder as given, or one named hf://datasets/ORG/NAME@vX.Y.Z, downloaded from the Hub."""
    from ctxrobust.publish.download import release_path

    return release_path(text)


# --- model runs, request formats and runners' files -------------------------------------------------
SAMPLING_FLAGS = ("temperature", "top_p", "max_tokens", "samples", "baseline_samples")


# the sampling plans' defaults as the help states them (each dataset's prompts.PLAN; a test keeps them equal):
# reading the plans here would import every dataset's prompt code on every command
PLAN_DEFAULTS = {
    "temperature": "0 for gsm-ic and misleadqa, 1 for pseudowords",
    "samples": "1 for gsm-ic and misleadqa, 2 for pseudowords",
    "baseline_samples": "20 for pseudowords",
}


def _add_sampling_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="the model name sent in each request (openai-batch bodies, run)")
    p.add_argument("--temperature", type=float, help=f"sampling temperature (default: the paper's, {PLAN_DEFAULTS['temperature']})")
    p.add_argument("--top-p", dest="top_p", type=float, help="nucleus sampling (default: not sent)")
    p.add_argument("--max-tokens", dest="max_tokens", type=int, help="longest answer in tokens (default: not sent)")
    p.add_argument("--samples", type=int, help=f"responses per condition (default: the paper's, {PLAN_DEFAULTS['samples']})")
    p.add_argument(
        "--baseline-samples",
        dest="baseline_samples",
        type=int,
        help=f"responses without context, for datasets with a no-context condition (default: the paper's, {PLAN_DEFAULTS['baseline_samples']})",
    )


def _requests(args, release, dataset):
    """(module, options, plan, requests) of the release: the dataset's sampling plan with the flags given."""
    from ctxrobust.evaluation.run.requests import SamplingPlan

    options = _options(args, dataset, "prompts")
    _input_paths(options)  # an input that is a FIFO or device is refused before anything opens it
    module = dataset.load("prompts")
    given = {name: getattr(args, name) for name in SAMPLING_FLAGS if getattr(args, name, None) is not None}
    plan = parse_options(SamplingPlan, {**module.PLAN.model_dump(), **given}, f"{dataset.name} sampling plan")
    return module, options, plan, module.requests(release, options, plan)


def _batch_prompts(args, plan_requests, target: Path | None, inputs=()) -> int:
    from ctxrobust.evaluation.formats.openai_batch import write_input

    if target is None or not args.model:
        raise CtxRobustError(
            "--format openai-batch needs -o FILE (parts are split at 50,000 lines or 200 MB) and --model NAME (the body's model)"
        )
    with _progress(args).stage("writing requests"):
        parts = write_input(plan_requests, args.model, target, inputs=inputs)
    for path, lines in parts:
        print(f"wrote {lines} request(s) to {path}", file=sys.stderr)
    return 0


def cmd_run(args) -> int:
    import math

    from ctxrobust.evaluation.run.cache import refuse_link
    from ctxrobust.evaluation.run.client import RetryPolicy, check_api_key, endpoint
    from ctxrobust.evaluation.run.runner import NO_KEY, default_cache, lock_path, record_path, run

    if not args.model:
        raise CtxRobustError("run needs --model NAME, the model the endpoint serves")
    if (
        args.concurrency < 1
        or args.retries < 0
        or not math.isfinite(args.timeout)
        or args.timeout <= 0
        or not math.isfinite(args.retry_base)
        or args.retry_base < 0
    ):
        raise CtxRobustError("--concurrency must be at least 1, --retries and --retry-base at least 0, and --timeout positive")
    endpoint(args.base_url)  # the endpoint and the key are checked before anything is read, opened or sent
    check_api_key(os.environ.get(args.api_key_env) or NO_KEY, args.api_key_env)
    release = _frozen_release(_release_path(args.release))
    dataset = registry.get(release.dataset)
    module, options, plan, requests = _requests(args, release, dataset)
    inputs = _input_paths(options)
    target = check_output(args.output, "-o", inputs)
    cache = Path(args.cache) if args.cache else default_cache(target)
    refuse_link(cache, "--cache")  # the cache is appended to in place: never through a link, given or default
    refuse_link(lock_path(target), "-o")
    cache = check_output(cache, "--cache", [*inputs, target])
    for beside in (record_path(target), lock_path(target)):
        check_output(beside, "-o", [*inputs, target, cache])
    record = run(
        list(requests),
        module.prediction,
        dataset=dataset.name,
        release=str(release.path),
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        output=target,
        cache_path=cache,
        concurrency=args.concurrency,
        policy=RetryPolicy(retries=args.retries, base=args.retry_base, timeout=args.timeout),
        options=json.loads(options.model_dump_json()),
        plan=plan,
        quiet=bool(args.quiet),
    )
    counts = record["counts"]
    print(
        f"wrote {counts['requests']} prediction(s) to {target} and the run record {record_path(target)} "
        f"({counts['cached']} cached, {counts['answered']} answered, {counts['failed']} failed)",
        file=sys.stderr,
    )
    if counts["failed"]:
        print(
            f"error: {counts['failed']} request(s) failed after retries (listed in the run record); they are written as invalid "
            "answers; rerun the same command to retry only them",
            file=sys.stderr,
        )
        return 1
    return 0


def _converted(dataset: registry.Dataset, path: Path, options, form: str):
    """A runner's file (OpenAI Batch, vLLM, lm-eval, Inspect) as the dataset's native rows, said once."""
    from ctxrobust.evaluation.formats.convert import convert

    module = dataset.load("prompts")
    aliases = module.item_aliases(options) if hasattr(module, "item_aliases") else {}
    converted = convert(path, form, module.prediction, aliases)
    print(f"{path}: read as {form} ({len(converted.rows)} response(s), {converted.failed} failed request(s))", file=sys.stderr)
    return converted


def _converted_score(release, dataset, predictions: Path, options, form: str, progress) -> dict:
    """Score a runner's file: its rows converted to the dataset's native rows, scored, and the report
    made to speak of the file given."""
    from ctxrobust.canonical import sha256_file
    from ctxrobust.evaluation.formats.convert import relabel, write_native

    with progress.stage(f"reading {predictions.name} as {form}"):
        converted = _converted(dataset, predictions, options, form)
    with tempfile.TemporaryDirectory(prefix="ctxrobust-") as folder:
        native = (
            Path(folder) / f"{predictions.name}.as-native-rows.jsonl"
        )  # named in the scorer's messages; the report names the file given
        write_native(converted, native)
        with progress.stage(f"scoring {predictions.name} (reading predictions, bootstrap)"):
            report = dataset.load("scorer")(release, native, options)
    return relabel(report, predictions, form, converted, sha256_file(predictions))


def cmd_prompts(args) -> int:
    release = _frozen_release(_release_path(args.release))
    dataset = registry.get(release.dataset)
    _, options, _, plan_requests = _requests(args, release, dataset)
    target = check_output(args.output, "-o", _input_paths(options)) if args.output else None
    if args.format == "openai-batch":
        return _batch_prompts(args, plan_requests, target, _input_paths(options))
    from ctxrobust.evaluation.run.requests import chat_line, check_unique

    requests = (chat_line(r, args.model) for r in check_unique(plan_requests))
    if target is None:
        # on a terminal the lines themselves show: no progress line among them
        count = _write_requests(requests, sys.stdout, _progress(args, quiet=_stdout_is_terminal()))
        print(f"wrote {count} request(s)", file=sys.stderr)
        return 0
    with atomic_open(target) as out:  # a failed run leaves the old file and no partial one
        count = _write_requests(requests, out, _progress(args))
    print(f"wrote {count} request(s) to {target}", file=sys.stderr)
    return 0


def _write_requests(requests, out, progress) -> int:
    """Write chat request lines to `out`, counted on the progress line; how many were written."""
    count = 0
    with progress.stage("writing requests") as stage:
        for request in requests:
            out.write(dumps(request) + "\n")
            count += 1
            stage.advance()
    return count


def cmd_screen(args) -> int:
    release = _frozen_release(Path(args.release))
    dataset = registry.get(release.dataset)
    if dataset.screen is None:
        raise CtxRobustError(f"{release.path}: dataset {release.dataset} has no screening stage; `screen` is for misleadqa releases")
    judgments = [Path(p) for p in args.judgments]
    summary = dataset.load("screen")(release, judgments, check_output(args.output, "-o", judgments))
    for problem in summary["problems"]:
        print(f"warning: {problem}", file=sys.stderr)
    sys.stdout.write(dumps({k: v for k, v in summary.items() if k != "problems"}) + "\n")
    print(
        f"flagged {summary['flagged']} of {summary['candidates']} candidate(s); {summary['unparseable']} unparseable answer(s); "
        f"wrote {', '.join(summary['files'])}",
        file=sys.stderr,
    )
    return 0


def cmd_score(args) -> int:
    release = _frozen_release(_release_path(args.release))
    dataset = registry.get(release.dataset)
    named = [Path(p) for p in args.predictions]
    for text, path in zip(args.predictions, named):
        if text == "-":
            raise CtxRobustError("-: standard input cannot be scored; write the predictions to a JSON Lines file and give its path")
        if not os.path.lexists(path):
            raise CtxRobustError(f"{path}: no such predictions file")
        if not path.is_dir() and not path.is_file():
            raise CtxRobustError(
                f"{path}: is not a regular file (a FIFO, device or standard input cannot be scored); give the predictions JSON Lines file"
            )
    several = len(named) > 1 or named[0].is_dir()
    from ctxrobust.evaluation import submissions

    predictions = submissions.expand(named) if several else named
    if args.leaderboard:
        if not several:
            raise CtxRobustError("--leaderboard ranks several submissions: give several predictions files or a folder of them")
        if Path(args.leaderboard).suffix.lower() not in (".md", ".csv"):
            raise CtxRobustError(f"--leaderboard {args.leaderboard}: name a .md or .csv file")
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
    from ctxrobust.evaluation.formats.convert import detect

    progress = _progress(args)
    if not several:
        predictions = named[0]
        input_format = args.input_format or detect(predictions)
        if input_format == "native":
            with progress.stage(f"scoring {predictions.name} (reading predictions, bootstrap)"):
                report = dataset.load("scorer")(release, predictions, options)
            report.get("predictions", {})["input_format"] = "native"
        else:
            report = _converted_score(release, dataset, predictions, options, input_format, progress)
        return _finish_report(report, form, dataset, target, summary)
    strict = bool(getattr(options, "strict", False))
    with progress.stage(f"scoring {len(predictions)} submission(s) (reading predictions, bootstrap)"):
        report = submissions.score_submissions(
            release, dataset, predictions, options, strict, lambda line: print(line, file=sys.stderr), input_format=args.input_format
        )
    if args.leaderboard:
        board = (
            submissions.leaderboard_csv(report) if args.leaderboard.lower().endswith(".csv") else submissions.leaderboard_markdown(report)
        )
        write_text(leaderboard, board)
        print(f"wrote {leaderboard}", file=sys.stderr)
    return _finish_report(report, form, dataset, target, summary)


def _stdout_is_terminal() -> bool:
    """Whether standard output is a terminal (a person reads it), not a pipe or a file."""
    from ctxrobust.progress import is_terminal

    return is_terminal(sys.stdout)


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


def cmd_push(args) -> int:
    from ctxrobust.publish.hub import push_release

    return push_release(Path(args.release), args.repo, dry_run=Path(args.dry_run) if args.dry_run else None)


class BuildHelp(argparse.Action):
    """`build DATASET --help`: the usual help, then the dataset's settings (from its builder's Config)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from ctxrobust.settings_help import describe_settings

        parser.print_help()
        names = [namespace.dataset] if getattr(namespace, "dataset", None) else registry.names()
        for name in names:
            print(f"\nsettings of {name} (--set KEY=VALUE; VALUE as JSON, or a plain string):")
            print(describe_settings(registry.get(name).config_cls))
        parser.exit()


def _add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line on standard error (it shows only on a terminal)")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="ctxrobust",
        description="Build, validate, publish and score context-robustness datasets.",
        epilog="`ctxrobust COMMAND --help` shows a command's options, with their choices and defaults.",
    )
    top.add_argument(
        "--version", action="version", version=f"ctxrobust {ctxrobust.__version__}", help="print the ctxrobust version and exit"
    )
    sub = top.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="build one dataset release", add_help=False)
    p.add_argument(
        "-h", "--help", action=BuildHelp, help="show this help and the settings of DATASET (of every dataset without one), then exit"
    )
    p.add_argument("dataset", choices=registry.names(), help="the dataset to build")
    p.add_argument("--version", required=True, help="the release version; names the folder and the Hub tag (e.g. 1.0.0)")
    p.add_argument("--seed", type=int, help="the build seed, recorded in the manifest (default: the builder's, 0)")
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a build setting (VALUE as JSON, or a plain string); `ctxrobust build DATASET --help` lists the settings",
    )
    p.add_argument("--out", default="releases", help="the releases folder (default: %(default)s)")
    p.add_argument("--mirror", help=MIRROR_HELP)
    p.add_argument("-v", "--verbose", action="store_true", help="list every missing or mismatching source file")
    _add_quiet(p)
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("release", help="build several datasets at one version (default: all)")
    p.add_argument("--version", required=True, help="the release version (e.g. 1.0.0)")
    p.add_argument("--datasets", nargs="+", help=f"dataset names, space or comma separated (default: all of {', '.join(registry.names())})")
    p.add_argument("--out", default="releases", help="the releases folder (default: %(default)s)")
    p.add_argument("--mirror", help=MIRROR_HELP)
    p.add_argument("-v", "--verbose", action="store_true", help="list every missing or mismatching source file")
    _add_quiet(p)
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("sources", help="fill the source cache, verifying every sha256 against the lock")
    p.add_argument("names", nargs="*", help="snapshot names (default: all in the lock)")
    p.add_argument("--mirror", help=MIRROR_HELP)
    p.add_argument("-v", "--verbose", action="store_true", help="list every missing or mismatching source file")
    p.set_defaults(func=cmd_sources)

    p = sub.add_parser("validate", help="check every release under PATH")
    p.add_argument("path", help="a release folder, a folder of releases (e.g. releases/), or hf://datasets/ORG/NAME@vX.Y.Z")
    p.add_argument("--mirror", help=MIRROR_HELP)
    _add_quiet(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("prompts", help="write the exact model inputs of a release as JSONL")
    p.add_argument("release", help=RELEASE_HELP)
    _add_option_flags(p, "prompts")
    p.add_argument("-o", "--output", help="the JSONL file to write (default: standard output)")
    p.add_argument(
        "--format",
        choices=["chat", "openai-batch"],
        default="chat",
        help="chat: one request per line {id, dataset, item, condition, sample, messages, sampling, meta}; "
        "openai-batch: OpenAI Batch input lines (default: %(default)s)",
    )
    _add_sampling_flags(p)
    _add_quiet(p)
    p.set_defaults(func=cmd_prompts)

    p = sub.add_parser("run", help="send a release's requests to an OpenAI-compatible endpoint and write predictions")
    p.add_argument("release", help=RELEASE_HELP)
    p.add_argument("--base-url", required=True, help="the endpoint, e.g. http://localhost:8000/v1 (vLLM, SGLang, llama.cpp, OpenAI)")
    _add_option_flags(p, "prompts")
    _add_sampling_flags(p)
    p.add_argument("-o", "--output", required=True, help="the predictions JSONL to write; the run record goes beside it (.run.json)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="the environment variable holding the API key (default: %(default)s)")
    p.add_argument("--concurrency", type=int, default=8, help="requests in flight at once (default: %(default)s)")
    p.add_argument(
        "--retries", type=int, default=6, help="retries of a request after 429, 5xx, timeouts or malformed bodies (default: %(default)s)"
    )
    p.add_argument(
        "--retry-base",
        dest="retry_base",
        type=float,
        default=1.0,
        help="seconds before the first retry, doubling after (default: %(default)g)",
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one answer (default: %(default)g)")
    p.add_argument("--cache", help="the resumable cache file (default: beside -o, .cache.jsonl)")
    _add_quiet(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("score", help="score predictions files (one, several, or a folder of submissions) against a release")
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
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("screen", help="flag candidates from screening models' judgments (MisleadQA App. B.1)")
    p.add_argument("release", help="a release folder")
    p.add_argument("judgments", nargs="+", help="one judgments JSONL file per screening model (answers to `prompts --prompt screen`)")
    p.add_argument("-o", "--output", required=True, help="the review sheet (.jsonl); its .csv and .table9.md are written beside it")
    p.set_defaults(func=cmd_screen)

    p = sub.add_parser("push", help="upload a release to the Hugging Face Hub")
    p.add_argument("release", help="a release folder")
    p.add_argument("--repo", required=True, help="the Hub dataset repository, ORG/NAME (created if absent)")
    p.add_argument("--dry-run", dest="dry_run", metavar="DIR", help="write the folder that would be uploaded, upload nothing")
    p.set_defaults(func=cmd_push)
    return top


class _Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that every temporary file and folder is removed on the way out."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def _run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        previous = None
    try:
        return _dispatch(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _dispatch(args) -> int:
    try:
        return args.func(args)
    except _Terminated:
        print("error: interrupted by SIGTERM; no output was left half-written (earlier files are as they were)", file=sys.stderr)
        return 143
    except CtxRobustError as exc:
        from ctxrobust.release_files import printable

        print(printable(f"error: {exc}"), file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except KeyboardInterrupt:
        print("error: interrupted by SIGINT; no output was left half-written (earlier files are as they were)", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file or folder the user named cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if os.environ.get("CTXROBUST_DEBUG"):
            raise
        print(f"error: internal error ({type(exc).__name__}: {exc}); rerun with CTXROBUST_DEBUG=1 for details", file=sys.stderr)
        return 3


def main(argv: list[str] | None = None) -> int:
    return _run(sys.argv[1:] if argv is None else argv)


def validate_main(argv: list[str] | None = None) -> int:
    return _run(["validate", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
