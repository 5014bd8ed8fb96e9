"""Benchmark: wall time of a full default pseudowords build and of `validate` over it.

Target: the default bank (10,000-word vocabulary; CHA and TOK, 10 contexts at each of
10, 100, 1,000 and 10,000 tokens) built and validated in under 10 s on a 2-core machine.

    .venv/bin/python bench/pseudowords_build.py [--repeat N] [--quick]

--quick (or BENCH_QUICK=1) builds a 2,000-word bank at 10 and 40 tokens once: it checks that the
bench still runs, not the figure.

Prints the end-to-end times of the two commands as a user runs them (fresh processes,
imports included; wall time, and the CPU time of the process, which a loaded machine
inflates less), then a per-stage breakdown measured in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def timed_command(args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one command in a fresh process."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ctxrobust.cli", *args], check=True, cwd=REPO, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime


QUICK = {"vocabulary_size": 2000, "lengths": [10, 40], "contexts_per_length": 3, "kinds": ["CHA", "TOK"]}


def shape(release: Path) -> None:
    """The figures the README quotes: vocabulary size and Zipf ceiling, CHA length in characters (Section 3)."""
    from ctxrobust.canonical import read_jsonl

    vocabulary = read_jsonl(release / "vocabulary.jsonl")
    contexts = read_jsonl(release / "contexts.jsonl")
    longest = max(row["target_tokens"] for row in contexts)
    cha = [row["n_chars"] for row in contexts if row["kind"] == "CHA" and row["target_tokens"] == longest]
    mean = sum(cha) / len(cha)
    print(f"vocabulary: {len(vocabulary):,} words, highest Zipf {max(row['zipf'] for row in vocabulary):.2f} (threshold 1.5)")
    versus = f"paper 21,129.9; {100 * (mean / 21129.9 - 1):+.2f}%" if longest == 10_000 else "paper, at 10,000 tokens: 21,129.9"
    print(f"CHA at {longest:,} tokens: mean {mean:,.1f} characters over {len(cha)} contexts ({versus})")


def end_to_end(repeat: int, settings: dict) -> None:
    builds, validates = [], []
    given = [arg for key, value in settings.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    for _ in range(repeat):
        out = Path(tempfile.mkdtemp(prefix="pw-bench-"))
        try:
            builds.append(timed_command(["build", "pseudowords", "--version", "bench", "--out", str(out), *given]))
            validates.append(timed_command(["validate", str(out / "pseudowords" / "bench")]))
            if len(builds) == 1:
                shape(out / "pseudowords" / "bench")
        finally:
            shutil.rmtree(out)
    label = "ctxrobust build pseudowords (quick)" if settings else "ctxrobust build pseudowords (default)"
    for name, runs in ((label, builds), ("validate", validates)):
        wall, cpu = min(runs)
        print(f"{name:38s} best {wall:6.2f} s (cpu {cpu:5.2f} s)  runs {', '.join(f'{t:.2f}' for t, _ in runs)}")
    total = min(builds)[0] + min(validates)[0]
    print(f"{'build + validate':38s}      {total:6.2f} s  (target < 10 s: {'met' if total < 10 else 'NOT met'})")


def stages(size: int = 10_000, lengths: tuple[int, ...] = (10, 100, 1000, 10_000), m: int = 10) -> None:
    import numpy as np

    started = time.perf_counter()
    from ctxrobust.builders.pseudowords import contexts, tokenizer, vocabulary

    tok = tokenizer.load()
    marks = [("import + load o200k tokenizer", time.perf_counter())]
    vocab = vocabulary.build_vocabulary(np.random.default_rng([0, 0]), size, 3, 8, 1.5)
    marks.append((f"vocabulary ({vocab.drawn} candidates, wordfreq)", time.perf_counter()))
    words = vocab.words
    first, rest = contexts.word_costs(words, tok)
    seen: set[str] = set()
    contexts.bank("CHA", lengths, m, 0, lambda r, n: contexts.cha_text(words, first, rest, n, r), tok, seen)
    marks.append((f"CHA bank ({len(lengths) * m} contexts, word costs included)", time.perf_counter()))
    pool = tok.round_trip_pool()
    marks.append((f"TOK round-trip pool ({len(pool)} tokens)", time.perf_counter()))
    rows = contexts.bank("TOK", lengths, m, 0, lambda r, n: contexts.tok_text(tok, pool, n, r), tok, seen)
    marks.append((f"TOK bank ({len(rows)} contexts)", time.perf_counter()))
    for row in rows:
        tok.count(row["text"])
    marks.append((f"re-count {len(rows)} TOK contexts", time.perf_counter()))
    previous = started
    print("stages (one process):")
    for name, mark in marks:
        print(f"  {name:45s} {mark - previous:6.3f} s")
        previous = mark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a small bank, built once (also BENCH_QUICK=1)")
    args = parser.parse_args()
    if args.quick or os.environ.get("BENCH_QUICK") == "1":
        end_to_end(1, QUICK)
        stages(QUICK["vocabulary_size"], tuple(QUICK["lengths"]), QUICK["contexts_per_length"])
        return
    end_to_end(args.repeat, {})
    stages()


if __name__ == "__main__":
    main()
