"""Scoring speed for pseudowords predictions (The Illusion of Robustness, Section 3 design).

8 models x 500 questions x (20 baseline + 10 contexts x 2) trials = 160,000 rows, synthetic and
seeded, against a synthetic release with 10 context ids; scored with the paper's parameters
(1,000 null experiments, 1,000 bootstrap replicates, 200 splits), with the per-example export.
Prints the wall and CPU time of scoring (reading, every statistic, the export; writing the file is
not timed), of rendering, and the peak resident memory. The requirement is under 10 s on 2 cores.

    .venv/bin/python bench/score_pseudowords.py [--models 8] [--questions 500] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxrobust.canonical import dumps, write_jsonl  # noqa: E402
from ctxrobust.release import Release  # noqa: E402
from ctxrobust.evaluation.pseudowords import render, scorer as pseudowords  # noqa: E402

CONTEXTS = [f"CHA-010000-{j:03d}" for j in range(10)]


def write_release(folder: Path) -> Release:
    rows = [{"id": c, "kind": "CHA", "target_tokens": 10000, "n_tokens": 10000, "n_chars": 5, "tokenizer": "o200k_base", "text": "zorp"} for c in CONTEXTS]
    write_jsonl(folder / "contexts.jsonl", rows)
    manifest = {"dataset": "pseudowords", "version": "0.0.0-bench", "config": {"seed": 0}, "files": []}
    (folder / "manifest.json").write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")
    return Release(folder)


def write_predictions(path: Path, models: int, questions: int, seed: int) -> int:
    """Baseline accuracy spread over [0, 1]; each model shifts the log-odds of a random 10% of
    questions up or down by 2 under context, the rest by small noise."""
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
            base = rng.random((questions, 20)) < p0[:, None]
            ctx = rng.random((questions, 10, 2)) < pc[:, None, None]
            for q in range(questions):
                qid = f"q{q:04d}"
                for t in range(20):
                    handle.write(dumps({"model": model, "id": qid, "context": None, "trial": t, "correct": int(base[q, t])}) + "\n")
                for j, c in enumerate(CONTEXTS):
                    for t in range(2):
                        handle.write(dumps({"model": model, "id": qid, "context": c, "trial": t, "correct": int(ctx[q, j, t])}) + "\n")
                        count += 1
                count += 20
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", help="write the release, predictions and reports into this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        release = write_release(folder)
        predictions = folder / "predictions.jsonl"
        rows = write_predictions(predictions, args.models, args.questions, args.seed)
        start, cpu = time.perf_counter(), time.process_time()
        report = pseudowords.score(release, predictions, {"seed": 0, "export": str(folder / "changes.parquet")})
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
    summary = report["summary"]["metrics"]  # mean over the units of one context group and input kind
    if not summary:
        print(f"summary: {report['summary']['note']}")
        return 1
    print(f"rows: {rows} ({args.models} models x {args.questions} questions x (20 baseline + 10 contexts x 2) trials)")
    print(f"parameters: {report['parameters']}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    print(f"score (read + all statistics + export): {scored:.2f} s wall, {scored_cpu:.2f} s CPU")
    print(f"render markdown + html (2 figures): {rendered:.2f} s")
    print(f"peak memory: {peak:.0f} MiB")
    print(f"summary: mean over {len(report['summary']['units'])} models, {report['summary']['context_group']}, {render.INPUT_LABEL[report['summary']['input']]}")
    print(f"mean INS {summary['INS']['estimate']:.4f}, INS.adjusted {summary['INS.adjusted']['estimate']:.4f}, "
          f"WTD {summary['WTD']['estimate']:.4f}, WTD.adjusted {summary['WTD.adjusted']['estimate']:.4f}, "
          f"WTD.split_sample {summary['WTD.split_sample']['estimate']:.4f}, tail_share {summary['tail_share']['estimate']:.3f}, "
          f"mean Pearson r {report['pairs']['by_group']['CHA 10000 / correct']['metrics']['pearson.mean']['estimate']:.3f} "
          f"({len(report['pairs']['by_group']['CHA 10000 / correct']['units'])} models, CHA 10000, binary trials)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
