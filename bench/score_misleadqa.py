"""Benchmark: score 6 models x 959 items x 8 conditions (46,032 rows) with the full 10,000-replicate bootstrap.

The release and the predictions are synthetic and seeded: 959 main items in the paper's five source-scope
groups (Table 1), 489 source clusters (FRED time and location sharing 44 jurisdiction clusters) and 132
dependency groups (all FRED items in one). Prints the wall time of each stage; the target is under 5 s
on a 2-core machine.

    .venv/bin/python bench/score_misleadqa.py [--replicates N] [--keep DIR] [--quick]

--quick (or BENCH_QUICK=1) uses 200 replicates: it checks that the bench still runs, not the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxrobust.build import write_sums  # noqa: E402
from ctxrobust.canonical import dumps, dumps_pretty, write_jsonl  # noqa: E402
from ctxrobust.evaluation.misleadqa.responses import CONDITIONS  # noqa: E402
from ctxrobust.evaluation.misleadqa.scorer import score  # noqa: E402
from ctxrobust.release import Release  # noqa: E402

# (source, scope, items, clusters) as in the paper's Table 1
GROUPS = (
    ("fred", "time", 200, 43),
    ("fred", "location", 200, 44),
    ("situatedqa", "time", 183, 137),
    ("situatedqa", "location", 184, 116),
    ("ambigdocs", "entity", 192, 192),
)
MODELS = ("model-a", "model-b", "model-c", "model-d", "model-e", "model-f")


def synthetic_items(rng: np.random.Generator) -> list[dict]:
    items = []
    sqa_groups = rng.permutation(np.concatenate([np.arange(131), rng.integers(0, 131, size=253 + 192 - 131)]))  # 131 groups outside FRED
    sqa_next = 0
    for source, scope, n, n_clusters in GROUPS:
        for k in range(n):
            if source == "fred":
                cluster = f"J{k % n_clusters:02d}"  # jurisdictions, shared by time and location items
                dependency = "fred"
            else:
                local = k % n_clusters
                cluster = f"{scope[0]}{local:03d}"
                dependency = f"g{sqa_groups[sqa_next + local]:03d}"
            gold, lure = rng.choice(4, size=2, replace=False)
            letters = "ABCD"
            items.append(
                {
                    "id": f"{source}-{scope}-{k:03d}",
                    "split": "main",
                    "source": source,
                    "scope_dimension": scope,
                    "cluster_id": cluster,
                    "dependency_group_id": dependency,
                    "question": f"What was the value for item {k} of {source} {scope}?",
                    "options": {"A": f"a{k}", "B": f"b{k}", "C": f"c{k}", "D": f"d{k}", "E": "Insufficient information"},
                    "gold": letters[gold],
                    "lure": letters[lure],
                    "target_scope": {"t": k},
                    "alt_scope": {"t": k + 1},
                    "contexts": {
                        c: {"text": f"{c} context {k}.", "scope": {}, "value": "", "true": c != "F", "in_scope": c != "S"} for c in "GSF"
                    },
                    "f_edits": [],
                    "provenance": {},
                }
            )
        if source != "fred":
            sqa_next += n_clusters
    return items


def synthetic_predictions(items: list[dict], rng: np.random.Generator, path: Path) -> int:
    """Each model: knows an item with some probability; contexts pull towards gold or lure."""
    letter = np.array(list("ABCDE"))
    gold = np.array(["ABCD".index(i["gold"]) for i in items])
    lure = np.array(["ABCD".index(i["lure"]) for i in items])
    n = len(items)
    p_lure = {"none": 0.2, "G": 0.01, "S": 0.3, "F": 0.75, "G+S": 0.005, "S+G": 0.015, "G+F": 0.04, "F+G": 0.38}
    rows = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for model in MODELS:
            knows = rng.random(n) < rng.uniform(0.4, 0.6)
            for cond in CONDITIONS:
                u = rng.random(n)
                correct = knows if cond == "none" else (rng.random(n) < (0.97 if "G" in cond else 0.9)) & (knows | ("G" in cond))
                choice = np.where(u < p_lure[cond], lure, np.where(correct, gold, rng.integers(0, 5, n)))
                for i in range(n):
                    out.write(dumps({"model": model, "id": items[i]["id"], "condition": cond, "response": str(letter[choice[i]])}) + "\n")
                    rows += 1
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=10_000)
    parser.add_argument("--keep", help="write the synthetic release and predictions here instead of a temporary folder")
    parser.add_argument("--quick", action="store_true", help="200 replicates (also BENCH_QUICK=1)")
    args = parser.parse_args()
    if args.quick or os.environ.get("BENCH_QUICK") == "1":
        args.replicates = 200
    rng = np.random.default_rng(20260101)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        release_dir = folder / "misleadqa" / "bench"
        release_dir.mkdir(parents=True, exist_ok=True)
        items = synthetic_items(rng)
        write_jsonl(release_dir / "main.jsonl", items)
        (release_dir / "manifest.json").write_text(
            dumps_pretty({"dataset": "misleadqa", "version": "bench", "config": {"seed": 0}, "files": []}), encoding="utf-8"
        )
        write_sums(release_dir)  # `score` reads only a release whose files match their SHA256SUMS
        predictions = folder / "predictions.jsonl"
        rows = synthetic_predictions(items, rng, predictions)
        clusters = len({(i["source"], i["cluster_id"]) for i in items})
        groups = len({i["dependency_group_id"] for i in items})
        print(f"synthetic release: {len(items)} items, {clusters} source clusters, {groups} dependency groups; predictions: {rows} rows")

        started = time.perf_counter()
        report = score(Release(release_dir), predictions, {"replicates": args.replicates})
        elapsed = time.perf_counter() - started
        again = score(Release(release_dir), predictions, {"replicates": args.replicates})
        same = json.dumps(report, sort_keys=True) == json.dumps(again, sort_keys=True)
        s = report["summary"]["metrics"]
        print(
            f"score: {len(MODELS)} models x {len(items)} items x {len(CONDITIONS)} conditions, {args.replicates} replicates: {elapsed:.2f} s wall"
            f" (target < 5 s); rerun identical: {same}"
        )
        print(
            f"  mean LR.S {s['LR.S']['estimate']:.4f} CI {s['LR.S']['ci']}, delta.LR {s['delta.LR']['estimate']:.4f} CI {s['delta.LR']['ci']}"
        )

        started = time.perf_counter()  # the whole command a user types, interpreter start-up and JSON writing included
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "ctxrobust.cli",
                "score",
                str(release_dir),
                str(predictions),
                "--replicates",
                str(args.replicates),
                "-o",
                str(folder / "report.json"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - started
        print(
            f"ctxrobust score (CLI, JSON report): {elapsed:.2f} s wall, exit {done.returncode}, "
            f"peak memory {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB"
        )
        if done.returncode:
            sys.exit(done.stderr)
        print(f"peak memory (this process, two in-process scores): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
