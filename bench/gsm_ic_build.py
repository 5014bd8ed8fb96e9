"""Benchmark: wall time of a full default GSM-IC build (58,052 variants) and of `validate` over it.

Target: build + validate under 30 s on a 2-core machine.

    SOURCES_MIRROR=/path/to/mirror .venv/bin/python bench/gsm_ic_build.py [--repeat N] [--quick]

--quick (or BENCH_QUICK=1) builds 5 base problems and 80 variants once: it checks that the bench
still runs, not the figure.

--base-file PATH builds from a GSM8K-format file of one's own problems with the default settings
instead (e.g. tests/fixtures/gsm_ic_user_problems.jsonl); quick mode then takes its first 40 lines
and 8,000 variants.

Prints the end-to-end times of the two commands as a user runs them (fresh processes,
imports included; wall and CPU time, the latter unaffected by other work on the machine),
a per-stage breakdown of the build and of each check measured in one process, and the
release's shape (pool exclusions, base problems, variants, factor cells, GSM-IC-4K).
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
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def timed_command(args: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command's process): CPU time does not grow when other work shares the machine."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-m", "ctxrobust.cli", *args], check=True, cwd=REPO, capture_output=True, env=env)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


QUICK = {"n_two_step": 3, "n_more_steps": 2, "n_variants": 80, "eval_size": 20}


def end_to_end(repeat: int, cache: Path, settings: dict) -> None:
    env = {**os.environ, "CTXROBUST_CACHE": str(cache)}
    builds, validates = [], []
    given = [arg for key, value in settings.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
    for _ in range(repeat):
        out = Path(tempfile.mkdtemp(prefix="gsmic-bench-"))
        try:
            builds.append(timed_command(["build", "gsm-ic", "--version", "bench", "--out", str(out), *given], env))
            validates.append(timed_command(["validate", str(out / "gsm-ic" / "bench")], env))
        finally:
            shutil.rmtree(out)
    (build_wall, build_cpu), (validate_wall, validate_cpu) = min(builds), min(validates)
    print(
        f"ctxrobust build gsm-ic (default)  best {build_wall:6.2f} s wall, {build_cpu:6.2f} s CPU  runs {', '.join(f'{w:.2f}' for w, _ in builds)}"
    )
    print(
        f"validate                          best {validate_wall:6.2f} s wall, {validate_cpu:6.2f} s CPU  runs {', '.join(f'{w:.2f}' for w, _ in validates)}"
    )
    total = build_wall + validate_wall
    print(
        f"build + validate                       {total:6.2f} s wall, {build_cpu + validate_cpu:6.2f} s CPU  (target < 30 s: {'met' if total < 30 else 'NOT met'})"
    )


def stages(cache: Path, settings: dict) -> None:
    from ctxrobust.build import build_release
    from ctxrobust.builders.gsm_ic import GsmIcConfig
    from ctxrobust.builders.gsm_ic.builder import build_from_pool
    from ctxrobust.release import Release
    from ctxrobust.sources import gsm8k
    from ctxrobust.sources.store import SnapshotStore
    from ctxrobust.validators.checks import checks_for

    store = SnapshotStore(cache_dir=cache)
    started = time.perf_counter()
    pool = gsm8k.read_user_file(Path(settings["base_file"])) if settings.get("base_file") else gsm8k.load(store)
    loaded = time.perf_counter()
    output = build_from_pool(pool, GsmIcConfig(**settings))
    built = time.perf_counter()
    print("stages (one process):")
    print(f"  read + join GSM8K snapshots                {loaded - started:6.3f} s")
    print(f"  analyse pool, select, make {len(output.files[1].rows)} variants {built - loaded:6.3f} s")
    out = Path(tempfile.mkdtemp(prefix="gsmic-bench-"))
    try:
        started = time.perf_counter()
        path = build_release("gsm-ic", "bench", settings, out, store).path
        print(f"  build_release (build, files, checks, freeze) {time.perf_counter() - started:6.3f} s")
        release = Release(path, store=store)
        started = time.perf_counter()
        for name in ("base.jsonl", "variants.jsonl", "gsm-ic-4k.jsonl"):
            release.rows(name)
        print(f"  read the release rows                      {time.perf_counter() - started:6.3f} s")
        for name, fn in checks_for("gsm-ic").items():
            started = time.perf_counter()
            failures = sum(1 for _ in fn(release))
            print(f"  check {name:20s} {failures:3d} failure(s) {time.perf_counter() - started:6.3f} s")
        figures(release)
    finally:
        shutil.rmtree(out)


def figures(release) -> None:
    """The release's shape against the paper's: variants, base problems, factor cells, GSM-IC-4K."""
    notes, variants = release.manifest["build_notes"], release.rows("variants.jsonl")
    steps = notes["base_by_steps"]
    two = steps.get("2", 0)
    print("release:")
    print(
        f"  pool: {notes['pool']['problems']} problems, {notes['pool']['joined']} joined with a solution, {notes['pool']['usable']} usable;"
        f" excluded by reason {notes['pool']['excluded_by_reason']}"
    )
    print(
        f"  base problems {notes['base_problems']} ({two} two-step, {notes['base_problems'] - two} more), variants {len(variants)}"
        f" (paper: 100 (60 + 40), 58,052)"
    )
    if notes["pool"].get("excluded"):
        print(f"  excluded problems, first: {notes['pool']['excluded'][0]}")
    for cell, count in notes["cells"].items():
        print(f"  cell {cell:35s} {count:6d} ({100 * count / len(variants):.1f}%, at least 5% required)")
    four_k = notes["gsm_ic_4k"]
    print(f"  GSM-IC-4K: {four_k['size']} variants covering {four_k['bases_covered']} base problems (seed {four_k['seed']})")
    # the further figures the README quotes
    per_base = Counter(row["base_id"] for row in variants)
    per_base_4k = Counter(row["base_id"] for row in release.rows("gsm-ic-4k.jsonl"))
    two_step = sum(1 for row in variants if row["n_steps"] == 2)
    edited = {row["base_id"] for row in variants if row["edits"]}
    longer = {k: v for k, v in sorted(steps.items(), key=lambda kv: int(kv[0])) if k != "2"}
    print(
        f"  variants per base problem {min(per_base.values())}-{max(per_base.values())}; two-step {two_step:,}, longer {len(variants) - two_step:,}"
        f" (paper's files: 34,220 and 23,832)"
    )
    print(f"  longer base problems by steps {longer}; base problems with a pronoun edit {len(edited)}")
    print(f"  GSM-IC-4K variants per base problem {min(per_base_4k.values())}-{max(per_base_4k.values())}")
    print(f"  template mix, in- vs out-of-range, largest total variation per base problem {notes['template_mix_tv_max']} (at most 0.05)")
    print(f"  out-of-range numbers by where they lie {notes['out_range_spread']}; topics from {notes['base_by_topic_source']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a small build, once (also BENCH_QUICK=1)")
    parser.add_argument("--base-file", type=Path, help="a GSM8K-format JSONL of one's own problems, built with the default settings")
    args = parser.parse_args()
    quick = args.quick or os.environ.get("BENCH_QUICK") == "1"
    settings = QUICK if quick else {}
    if args.base_file:
        base_file = args.base_file.resolve()
        if quick:
            first = Path(tempfile.mkdtemp(prefix="gsmic-user-")) / base_file.name
            first.write_text("".join(base_file.read_text(encoding="utf-8").splitlines(keepends=True)[:40]), encoding="utf-8")
            base_file = first
        settings = {"base_file": str(base_file)} | ({"n_variants": 8000, "eval_size": 400} if quick else {})
    if not os.environ.get("SOURCES_MIRROR") and not os.environ.get("CTXROBUST_CACHE"):
        sys.exit("error: set SOURCES_MIRROR to the source mirror (or CTXROBUST_CACHE to a filled cache)")
    own_cache = not os.environ.get("CTXROBUST_CACHE")
    cache = Path(tempfile.mkdtemp(prefix="gsmic-cache-") if own_cache else os.environ["CTXROBUST_CACHE"])
    try:
        end_to_end(1 if quick else args.repeat, cache, settings)
        stages(cache, settings)
    finally:
        if own_cache:
            shutil.rmtree(cache)


if __name__ == "__main__":
    main()
