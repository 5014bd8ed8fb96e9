"""Benchmark: a folder of 10,000 one-row submission files scored together, against the same rows in one file.

A synthetic GSM-IC release (40 base problems, 10 variants each) and 10,000 submission files of one row
each, every file naming its model "m" (as submitters do): scored together, each model is reported as
"m [<file>]". The comparison file holds the same 10,000 rows in one file under those reported names, so
both runs score the same models on the same rows and must give the same figures (checked). Each run is
`ctxrobust score ... -o report.json` in a child process; printed: wall time and the child's peak resident
memory (its own ru_maxrss, from wait4), and the ratios of the two wall and cpu times (cpu is the steadier
figure on a shared machine). Target: the folder within 3x
of the one file (the submissions layer reads each file twice, writes one stream and scores it once).

    .venv/bin/python bench/score_submissions.py [--files 10000] [--replicates 1000] [--seed 0] [--out bench/out/submissions] [--quick]

--quick (or BENCH_QUICK=1) uses 300 files and 100 replicates, in a few seconds: it checks that the bench
still runs, not the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxrobust.build import write_sums  # noqa: E402
from ctxrobust.canonical import dumps, dumps_pretty, write_jsonl  # noqa: E402

N_BASE, VARIANTS_PER_BASE = 40, 10
LABELS = {
    "sentence_label": ("in_topic", "off_topic"),
    "role_label": ("overlapped", "nonoverlapped"),
    "number_label": ("in_range", "out_range"),
}


def write_release(folder: Path, rng: np.random.Generator) -> dict[str, str]:
    """A small GSM-IC release (with SHA256SUMS, which `score` requires); returns item id -> gold answer."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    bases = [(f"b{k:03d}", str(int(rng.integers(2, 2000))), 2 if k % 3 else 3) for k in range(N_BASE)]
    write_jsonl(
        folder / "base.jsonl",
        [{"id": b, "question": f"Problem {b}. How many?", "answer": a, "n_steps": s, "solution": f"... {a}"} for b, a, s in bases],
    )
    rows, gold = [], {b: a for b, a, _ in bases}
    for b, a, s in bases:
        for v in range(VARIANTS_PER_BASE):
            vid = f"{b}-v{v:02d}"
            gold[vid] = a
            rows.append(
                {
                    "id": vid,
                    "base_id": b,
                    "original_question": f"Problem {b}. How many?",
                    "new_question": f"Problem {b}. Sentence {v}. How many?",
                    "answer": a,
                    "n_steps": s,
                    "role": "Ada",
                    "number": v,
                    "sentence_template": "{role} has {number} pens.",
                    **{column: values[int(rng.integers(0, 2))] for column, values in LABELS.items()},
                    "topic": "pens",
                    "sentence": f"Sentence {v}.",
                    "insert_offset": 0,
                    "edits": [],
                }
            )
    write_jsonl(folder / "variants.jsonl", rows)
    (folder / "manifest.json").write_text(
        dumps_pretty({"dataset": "gsm-ic", "version": "bench", "config": {"seed": 0}, "files": []}), encoding="utf-8"
    )
    write_sums(folder)
    return gold


def write_submissions(out: Path, files: int, gold: dict[str, str], rng: np.random.Generator) -> tuple[Path, Path]:
    """`files` one-row files in a folder, and the same rows in one file under the names they are reported by."""
    folder, single = out / "submissions", out / "one-file.jsonl"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    ids = sorted(gold)
    picks, right = rng.integers(0, len(ids), files), rng.random(files) < 0.7
    with open(single, "w", encoding="utf-8", newline="\n") as together:
        for k in range(files):
            name = f"s{k:05d}.jsonl"
            item = ids[int(picks[k])]
            answer = gold[item] if right[k] else str(int(gold[item]) + 1)
            row = {"model": "m", "id": item, "response": f"Adding it up gives {answer} things. The answer is {answer}."}
            (folder / name).write_text(dumps(row) + "\n", encoding="utf-8")
            together.write(dumps({**row, "model": f"m [{name}]"}) + "\n")
    return folder, single


def timed(command: list[str]) -> tuple[float, float, float, int, str]:
    """(wall seconds, cpu seconds, peak resident MiB of this child alone (wait4), exit code, stderr)."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = child.stderr.read().decode("utf-8", "replace")
    child.stderr.close()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return time.perf_counter() - started, cpu, usage.ru_maxrss / 1024, child.returncode, err  # ru_maxrss in KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench/out/submissions")
    parser.add_argument("--quick", action="store_true", help="300 files and 100 replicates (also BENCH_QUICK=1)")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("BENCH_QUICK") == "1"
    files, replicates = (300, 100) if quick else (args.files, args.replicates)
    out = Path(args.out)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    gold = write_release(out / "release", rng)
    folder, single = write_submissions(out, files, gold, rng)
    print(
        f"generated a release ({N_BASE} base problems, {N_BASE * VARIANTS_PER_BASE} variants) and {files:,} one-row submission "
        f"files (and the same rows in one file) in {time.perf_counter() - started:.1f} s"
    )
    base = [sys.executable, "-m", "ctxrobust.cli", "score", str(out / "release")]
    flags = ["--replicates", str(replicates)]
    one_wall, one_cpu, one_peak, code, err = timed([*base, str(single), *flags, "-o", str(out / "one-file.json")])
    if code != 0:
        print(err, file=sys.stderr)
        return code
    print(f"one file of {files:,} rows: wall {one_wall:.1f} s (cpu {one_cpu:.1f} s), peak memory {one_peak:.0f} MiB")
    many_wall, many_cpu, many_peak, code, err = timed([*base, str(folder), *flags, "-o", str(out / "submissions.json")])
    if code != 0:
        print(err, file=sys.stderr)
        return code
    print(f"{files:,} submission files of one row: wall {many_wall:.1f} s (cpu {many_cpu:.1f} s), peak memory {many_peak:.0f} MiB")
    one = json.loads((out / "one-file.json").read_text(encoding="utf-8"))
    many = json.loads((out / "submissions.json").read_text(encoding="utf-8"))
    same = one["models"] == many["models"]
    scored = sum(s["status"] == "scored" for s in many["submissions"])
    print(
        f"ratio {many_wall / one_wall:.2f}x wall, {many_cpu / one_cpu:.2f}x cpu (target: within 3x); {scored:,} of {files:,} submissions scored; "
        f"figures {'identical' if same else 'DIFFER'} to the one file's ({len(many['models']):,} models)"
    )
    return 0 if same and scored == files else 1


if __name__ == "__main__":
    sys.exit(main())
