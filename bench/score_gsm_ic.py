"""Benchmark: score a 1,000,000-row GSM-IC predictions file against a synthetic release of the paper's size.

The release has 100 base problems (60 with 2 steps, 40 with 3-7) and 58,052 variants (34,220 on 2-step
problems, 23,832 on the others, as in the paper's data files), plus a 4,000-variant GSM-IC-4K. The
predictions: greedy models covering every base problem and variant, then one self-consistency model on
GSM-IC-4K with 16-17 samples per id, up to exactly --rows rows; free-text responses in the paper's
format, some `answer` rows, some responses without a number. Synthetic and seeded.

Scoring runs in a child process (`ctxrobust score ... -o report.json`); printed: wall time and the
child's peak resident memory (ru_maxrss). Targets: under 20 s and under 1 GB on 2 cores.

    .venv/bin/python bench/score_gsm_ic.py [--rows 1000000] [--seed 0] [--out bench/out/gsm-ic] [--quick]

--quick (or BENCH_QUICK=1) scores 20,000 rows against a release a tenth of the size, in a few seconds:
it checks that the bench still runs, not the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ctxrobust.build import write_sums
from ctxrobust.canonical import dumps, dumps_pretty, write_jsonl

N_BASE_2STEP, N_BASE_MULTI = 60, 40
N_VARIANTS_2STEP, N_VARIANTS_MULTI = 34_220, 23_832
N_SUBSET = 4_000
SC_MODEL = "sc-model"
SC_SAMPLES = 16


def write_release(
    folder: Path, rng: np.random.Generator, scale: int = 1
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]], list[str]]:
    """Returns (base id, answer) pairs, (variant id, base id, answer) triples and the GSM-IC-4K ids.
    `scale` divides every size (the quick mode's smaller release)."""
    two, multi = N_BASE_2STEP // scale, N_BASE_MULTI // scale
    v_two, v_multi, n_subset = N_VARIANTS_2STEP // scale, N_VARIANTS_MULTI // scale, N_SUBSET // scale
    if folder.exists():
        shutil.rmtree(folder)  # a release folder is written whole, its SHA256SUMS last
    folder.mkdir(parents=True)
    steps = [2] * two + [int(s) for s in rng.choice([3, 4, 5, 6, 7], size=multi, p=[0.37, 0.31, 0.22, 0.07, 0.03])]
    bases = [(f"base-{k:03d}", str(int(rng.integers(2, 2000))), steps[k]) for k in range(len(steps))]
    write_jsonl(
        folder / "base.jsonl",
        [
            {"id": b, "question": f"Problem {b} has {a} things. How many things?", "answer": a, "n_steps": s, "solution": f"... {a}"}
            for b, a, s in bases
        ],
    )
    owners = np.r_[rng.integers(0, two, v_two), rng.integers(two, two + multi, v_multi)]
    topic = rng.choice(["in_topic", "off_topic"], owners.size)
    role = rng.choice(["overlapped", "nonoverlapped"], owners.size)
    number = rng.choice(["in_range", "out_range"], owners.size)
    variants, rows = [], []
    for k, owner in enumerate(owners):
        b, a, s = bases[owner]
        vid = f"{b}-v{k:05d}"
        variants.append((vid, b, a))
        rows.append(
            {
                "id": vid,
                "base_id": b,
                "original_question": f"Problem {b}.",
                "new_question": f"Problem {b}. Sentence {k}.",
                "answer": a,
                "n_steps": s,
                "role": "Ada",
                "number": int(k % 97),
                "sentence_template": "{role} has {number} pens.",
                "role_label": str(role[k]),
                "number_label": str(number[k]),
                "sentence_label": str(topic[k]),
                "topic": "pens",
                "sentence": f"Sentence {k}.",
                "insert_offset": 0,
                "edits": [],
            }
        )
    write_jsonl(folder / "variants.jsonl", rows)
    subset = sorted(variants[i][0] for i in rng.choice(len(variants), n_subset, replace=False))
    base_of = {v: b for v, b, _ in variants}
    write_jsonl(folder / "gsm-ic-4k.jsonl", [{"id": v, "base_id": base_of[v]} for v in subset])
    (folder / "manifest.json").write_text(
        dumps_pretty({"dataset": "gsm-ic", "version": "bench", "config": {"seed": 0}, "files": []}), encoding="utf-8"
    )
    write_sums(folder)  # `score` reads only a release whose files match their SHA256SUMS
    return [(b, a) for b, a, _ in bases], variants, subset


def _row(model: str, item: str, gold: str, right: bool, form: float, noise: int, sample: int | None) -> str:
    value = gold if right else str(int(gold) + 1 + noise % 7)
    row: dict = {"model": model, "id": item}
    if form < 0.1:
        row["answer"] = int(value)
    elif form < 0.12:
        row["response"] = f"I am not sure how to solve this one ({noise})."
    else:
        row["response"] = (
            f"First, {noise % 50} + {noise % 13} = {noise % 50 + noise % 13} things. Then the rest gives "
            f"{value} things in total. The answer is {int(value):,}."
        )
    if sample is not None:
        row["sample"] = sample
    return dumps(row)


def write_predictions(path: Path, rows: int, rng: np.random.Generator, bases, variants, subset) -> dict:
    gold = dict(bases) | {v: a for v, _, a in variants}
    full = [b for b, _ in bases] + [v for v, _, _ in variants]
    small = [b for b, _ in bases] + subset
    n_greedy = (rows - SC_SAMPLES * len(small)) // len(full)  # the rest: about SC_SAMPLES samples per GSM-IC-4K id
    sc_rows = rows - n_greedy * len(full)
    written = 0
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        for m in range(n_greedy):
            p_right = 0.5 + 0.4 * m / max(n_greedy - 1, 1)
            right, form, noise = rng.random(len(full)) < p_right, rng.random(len(full)), rng.integers(0, 10**6, len(full))
            handle.write(
                "\n".join(_row(f"model-{m:02d}", item, gold[item], right[i], form[i], int(noise[i]), None) for i, item in enumerate(full))
            )
            handle.write("\n")
            written += len(full)
        per_id = np.full(len(small), sc_rows // len(small))
        per_id[: sc_rows % len(small)] += 1
        for i, item in enumerate(small):
            k = int(per_id[i])
            right, form, noise = rng.random(k) < 0.6, rng.random(k), rng.integers(0, 10**6, k)
            handle.write("\n".join(_row(SC_MODEL, item, gold[item], right[s], form[s], int(noise[s]), s) for s in range(k)))
            handle.write("\n")
            written += k
    return {"rows": written, "greedy_models": n_greedy, "sc_samples_per_id": f"{per_id.min()}-{per_id.max()}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="bench/out/gsm-ic")
    parser.add_argument("--quick", action="store_true", help="a tenth-size release and 20,000 rows (also BENCH_QUICK=1)")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("BENCH_QUICK") == "1"
    rows = 20_000 if quick else args.rows
    out = Path(args.out)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    bases, variants, subset = write_release(out / "release", rng, scale=10 if quick else 1)
    predictions = out / "predictions.jsonl"
    shape = write_predictions(predictions, rows, rng, bases, variants, subset)
    print(
        f"generated release ({len(bases)} base problems, {len(variants)} variants, {len(subset)} in GSM-IC-4K) and "
        f"{shape['rows']:,} prediction rows ({shape['greedy_models']} greedy models, SC model {shape['sc_samples_per_id']} samples/id, "
        f"{predictions.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - started:.1f} s"
    )

    report = out / "report.json"
    command = [sys.executable, "-m", "ctxrobust.cli", "score", str(out / "release"), str(predictions), "-o", str(report)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # ru_maxrss in KiB on Linux
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        return done.returncode
    scored = json.loads(report.read_text(encoding="utf-8"))
    metrics = scored["models"][SC_MODEL]["metrics"]
    print(
        f"scored {scored['predictions']['rows']:,} rows, {len(scored['models'])} models, {scored['parameters']['replicates']:,} bootstrap replicates: "
        f"wall {wall:.1f} s (cpu {cpu:.1f} s), peak memory {peak:.0f} MiB (targets: < 20 s, < 1024 MiB)"
    )
    print(
        f"check: {SC_MODEL} 4k.micro {metrics['4k.micro']['estimate']:.3f} ci {metrics['4k.micro']['ci']}, "
        f"4k.macro {metrics['4k.macro']['estimate']:.3f}; excluded rows {scored['predictions']['excluded']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
