"""Scoring speed and memory for pseudowords predictions (The Illusion of Robustness, Section 3 design).

Default: 8 models x 500 questions x (20 baseline + 10 contexts x 2) trials = 160,000 rows; `--scale
paper`: 20 models x 12,500 questions x 40 trials = 10,000,000 rows. Synthetic and seeded, against a
synthetic release with 10 context ids; scored with the paper's parameters (1,000 null experiments,
1,000 bootstrap replicates, 200 splits), with the per-example export. Prints rows per second, the
wall time of reading (rows reduced to per-cell counts) and of the statistics, the CPU time of the
scoring process and its workers, rendering, and the peak memory of the scoring process and its
workers together (summed Pss) beside each one's peak resident set. Requirement at the
paper scale: under 90 s and under 1.5 GB on 2 cores. `--check` compares every figure at the default
size with bench/data/score_pseudowords_default_figures.json (written by the earlier row-holding
scorer), except the figures whose definition has changed since; the noise floor's figures, whose null
experiments are now drawn by question type (the same distribution, other draws), within Monte Carlo error.

    .venv/bin/python bench/score_pseudowords.py [--scale paper] [--models 8] [--questions 500] [--check] [--keep DIR] [--quick]

--quick (or BENCH_QUICK=1) scores 3 models x 60 questions: it checks that the bench still runs, not the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxrobust.build import write_sums  # noqa: E402
from ctxrobust.canonical import write_jsonl  # noqa: E402
from ctxrobust.evaluation.pseudowords import render  # noqa: E402
from ctxrobust.evaluation.pseudowords import scorer as pseudowords  # noqa: E402
from ctxrobust.release import Release  # noqa: E402

CONTEXTS = [f"CHA-010000-{j:03d}" for j in range(10)]


def write_release(folder: Path) -> Release:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"id": c, "kind": "CHA", "target_tokens": 10000, "n_tokens": 10000, "n_chars": 5, "tokenizer": "o200k_base", "text": "zorp"}
        for c in CONTEXTS
    ]
    write_jsonl(folder / "contexts.jsonl", rows)
    manifest = {"dataset": "pseudowords", "version": "0.0.0-bench", "config": {"seed": 0}, "files": []}
    (folder / "manifest.json").write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")
    write_sums(folder)
    return Release(folder)


def write_predictions(path: Path, models: int, questions: int, seed: int) -> int:
    """Baseline accuracy spread over [0, 1]; each model shifts the log-odds of a random 10% of
    questions up or down by 2 under context, the rest by small noise. Rows are canonical JSON
    (the bytes ctxrobust.canonical.dumps writes), built from templates."""
    rng = np.random.default_rng(seed)
    base_logit = rng.normal(1.0, 2.0, size=questions)
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for mi in range(models):
            model = f"model-{mi}"
            shift = rng.normal(0.0, 0.3, size=questions)
            hit = rng.random(questions) < 0.1
            shift[hit] += rng.choice([-2.0, 2.0], size=hit.sum())
            p0 = 1 / (1 + np.exp(-base_logit))
            pc = 1 / (1 + np.exp(-(base_logit + shift)))
            base = (rng.random((questions, 20)) < p0[:, None]).astype(int).tolist()
            ctx = (rng.random((questions, 10, 2)) < pc[:, None, None]).astype(int).tolist()
            for q in range(questions):
                qid = f"q{q:04d}"
                head = '{"context":'
                tail = f',"id":"{qid}","model":"{model}","trial":'
                lines = [f'{head}null,"correct":{base[q][t]}{tail}{t}}}\n' for t in range(20)]
                lines += [f'{head}"{c}","correct":{ctx[q][j][t]}{tail}{t}}}\n' for j, c in enumerate(CONTEXTS) for t in range(2)]
                handle.write("".join(lines))
                count += len(lines)
    return count


class MemorySampler:
    """Peak of the summed proportional set size (Pss: shared pages divided among the processes sharing
    them, so forked workers are not counted twice) of this process and its children, every 0.1 s."""

    def __init__(self) -> None:
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _pss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
                return next((int(line.split()[1]) for line in handle if line.startswith("Pss:")), 0)
        except OSError:
            return 0

    @staticmethod
    def _children(pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
                return [int(c) for c in handle.read().split()]
        except OSError:
            return []

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.1):
            self.peak_kib = max(self.peak_kib, self._pss(me) + sum(self._pss(c) for c in self._children(me)))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def figures(report: dict) -> dict:
    out = {k: report[k] for k in ("models", "summary", "pairs", "context_pairs")}
    out["predictions"] = {k: v for k, v in report["predictions"].items() if k != "path"}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=["default", "paper"], default="default")
    parser.add_argument("--models", type=int)
    parser.add_argument("--questions", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--split-intervals",
        choices=["all-splits", "per-split"],
        default="all-splits",
        help="intervals of the split-sample correlates (all-splits: Appendix B, the default of `score`)",
    )
    parser.add_argument("--check", action="store_true", help="compare the figures with the recorded ones (default size only)")
    parser.add_argument("--keep", help="write the release, predictions and reports into this folder")
    parser.add_argument("--quick", action="store_true", help="3 models x 60 questions (also BENCH_QUICK=1)")
    args = parser.parse_args()
    models = args.models or (20 if args.scale == "paper" else 8)
    questions = args.questions or (12_500 if args.scale == "paper" else 500)
    if args.quick or os.environ.get("BENCH_QUICK") == "1":
        models, questions = 3, 60
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        release = write_release(folder / "release")
        predictions = folder / "predictions.jsonl"
        start = time.perf_counter()
        rows = write_predictions(predictions, models, questions, args.seed)
        written = time.perf_counter() - start
        timings: dict = {}
        start, cpu = time.perf_counter(), time.process_time()
        with MemorySampler() as memory:
            report = pseudowords.score(
                release,
                predictions,
                {"seed": 0, "export": str(folder / "changes.parquet"), "split_intervals": args.split_intervals},
                timings,
            )
        scored, scored_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        markdown = render.render_markdown(report)
        page = render.render_html(report)
        rendered = time.perf_counter() - start
        if args.keep:
            (folder / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            (folder / "report.md").write_text(markdown, encoding="utf-8")
            (folder / "report.html").write_text(page, encoding="utf-8")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = workers.ru_maxrss / 1024  # the largest worker
    workers_cpu = workers.ru_utime + workers.ru_stime
    summary = report["summary"]["metrics"]  # mean over the units of one context group and input kind
    if not summary:
        print(f"summary: {report['summary']['note']}")
        return 1
    print(
        f"rows: {rows:,} ({models} models x {questions} questions x (20 baseline + 10 contexts x 2) trials); written in {written:.1f} s (not timed)"
    )
    print(f"parameters: {report['parameters']}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    print(
        f"score (read + all statistics + export): {scored:.2f} s wall, {scored_cpu:.2f} s CPU in the main process; {rows / scored:,.0f} rows/s"
    )
    print(
        f"  reading (rows to per-cell counts, units): {timings['read']:.2f} s ({rows / timings['read']:,.0f} rows/s); statistics: {timings['statistics']:.2f} s"
    )
    total_cpu = scored_cpu + workers_cpu
    print(
        f"  CPU: {scored_cpu:.1f} s main process + {workers_cpu:.1f} s worker processes = {total_cpu:.1f} s "
        f"({total_cpu / 2:.1f} s per core on 2 cores: the wall time on an otherwise idle machine, about)"
    )
    print(f"render markdown + html (2 figures): {rendered:.2f} s")
    print(
        f"peak memory: {memory.peak_kib / 1024:.0f} MiB scoring process and its workers together (summed Pss, sampled every 0.1 s); "
        f"peak RSS {peak:.0f} MiB scoring process, {children:.0f} MiB largest worker process (RSS counts the pages a worker shares with the scoring process)"
    )
    print(
        f"summary: mean over {len(report['summary']['units'])} models, {report['summary']['context_group']}, {render.INPUT_LABEL[report['summary']['input']]}"
    )
    block = report["pairs"]["by_group"]["CHA 10000 / correct"]
    print(
        f"mean INS {summary['INS']['estimate']:.4f}, INS.adjusted {summary['INS.adjusted']['estimate']:.4f}, "
        f"WTD {summary['WTD']['estimate']:.4f}, WTD.adjusted {summary['WTD.adjusted']['estimate']:.4f}, "
        f"WTD.split_sample {summary['WTD.split_sample']['estimate']:.4f}, tail_share {summary['tail_share']['estimate']:.3f}, "
        f"mean Pearson r {block['metrics']['pearson.mean']['estimate']:.3f} ({len(block['units'])} models, CHA 10000, binary trials)"
    )
    if args.check:
        if (models, questions, args.seed) != (8, 500, 0):
            print("--check: the recorded figures are for the default size (8 models, 500 questions, seed 0)")
            return 1
        tests = Path(__file__).resolve().parent.parent / "tests"
        sys.path[:0] = [str(tests), str(tests / "evaluation")]  # tests/paths.py and the streaming tests
        from test_eval_pseudowords_streaming import REDEFINED, REDRAWN, differences, redrawn_differences  # noqa: E402

        recorded = json.loads(
            (Path(__file__).resolve().parent / "data" / "score_pseudowords_default_figures.json").read_text(encoding="utf-8")
        )
        found = differences(recorded, figures(report), skip=REDEFINED + tuple(REDRAWN))
        redrawn = redrawn_differences(recorded, figures(report), "default", skip=REDEFINED)
        print(
            f"check against the recorded figures: {'equal' if not found else f'{len(found)} differences'} (redefined, not compared: {', '.join(REDEFINED) or 'none'})"
        )
        tolerances = ", ".join(f"{k} {v['default']}" for k, v in REDRAWN.items())
        state = "all" if not redrawn else f"{len(redrawn)} beyond it"
        print(f"  drawn anew (the noise floor's null experiments, by question type), within Monte Carlo error: {state} ({tolerances})")
        found += redrawn
        for line in found[:20]:
            print(f"  {line}")
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
