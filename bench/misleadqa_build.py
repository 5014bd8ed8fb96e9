"""Benchmark: build the MisleadQA release from the source mirror, then validate it; print wall times.

    SOURCES_MIRROR=../shared/sources python bench/misleadqa_build.py [--ambigdocs FILE] [--condambigqa FILE] [--quick]

--quick (or BENCH_QUICK=1) builds 8 items per source-scope group: it checks that the bench still
runs, not the figure.

Target: build plus validate under 60 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

QUICK = {
    "fred_time_n": 8,
    "fred_location_n": 8,
    "situatedqa_time_n": 8,
    "situatedqa_location_n": 8,
    "ambigdocs_n": 8,
    "condambigqa_n": 8,
    "audit_sizes": {"fred/time": 2, "fred/location": 2, "situatedqa/time": 2, "situatedqa/location": 2, "ramdocs/entity": 1},
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=os.environ.get("SOURCES_MIRROR"), help="source mirror (default: $SOURCES_MIRROR)")
    parser.add_argument("--ambigdocs", help="an AmbigDocs JSON / JSON Lines file to include")
    parser.add_argument("--condambigqa", help="a CondAmbigQA JSON / JSON Lines file to include")
    parser.add_argument("--quick", action="store_true", help="8 items per source-scope group (also BENCH_QUICK=1)")
    args = parser.parse_args()
    if not args.mirror:
        print("error: set SOURCES_MIRROR (or pass --mirror) to a folder laid out like fred/, situatedqa/", file=sys.stderr)
        return 2

    from ctxrobust.build import build_release
    from ctxrobust.release import Release
    from ctxrobust.sources.store import SnapshotStore
    from ctxrobust.validators.checks import run_checks

    overrides = dict(QUICK) if args.quick or os.environ.get("BENCH_QUICK") == "1" else {}
    if args.ambigdocs:
        overrides["ambigdocs_path"] = str(Path(args.ambigdocs).resolve())
    if args.condambigqa:
        overrides["condambigqa_path"] = str(Path(args.condambigqa).resolve())
    with tempfile.TemporaryDirectory(prefix="mqa-bench-") as tmp:
        store = SnapshotStore(cache_dir=Path(tmp) / "cache", mirror=Path(args.mirror), allow_upstream=False)
        started = time.perf_counter()
        store.require([n for n in store.names() if n.startswith(("fred/", "situatedqa", "ramdocs/", "condambigqa/"))])
        fetched = time.perf_counter() - started

        started = time.perf_counter()
        result = build_release("misleadqa", "0.0.0-bench", overrides, Path(tmp) / "releases", store)
        built = time.perf_counter() - started

        started = time.perf_counter()
        results = run_checks(Release(result.path, store=store))
        validated = time.perf_counter() - started
        failures = sum(len(found) for found in results.values())

        rows = ", ".join(f"{f['name']} {f['rows']}" for f in result.manifest["files"])
        notes = result.manifest["build_notes"]
        print(f"sources into an empty cache (verify sha256): {fetched:6.2f} s")
        print(f"build (construct, screen, write, validate, freeze): {built:6.2f} s  [{rows}]")
        print(f"validate (all {len(results)} checks):        {validated:6.2f} s  [{failures} failure(s)]")
        print(f"build + validate:                          {built + validated:6.2f} s  (target < 60 s)")
        for group, counts in notes["groups"].items():
            print(f"  {group:22} {counts['items']:4} items of {counts['requested']:4} requested, {counts['clusters']:4} clusters")
        for split, counts in notes["splits"].items():
            print(
                f"  split {split:16} {counts['items']:4} items, {counts['clusters']:4} clusters, {counts['dependency_groups']:4} dependency groups"
            )
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
