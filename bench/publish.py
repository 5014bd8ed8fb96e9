"""Publishing figures: staging time and size, `datasets` and mlcroissant load times, push and no-op re-push.

    python bench/publish.py [RELEASE_DIR ...]

Without arguments it uses every release under releases/ (building the default pseudowords,
gsm-ic and misleadqa releases into a temporary folder if there are none; gsm-ic and
misleadqa need SOURCES_MIRROR). Pushes go to the local Hub stand-in of the test suite
(tests/hub_server.py) on 127.0.0.1, so the figures measure the client side only.

--quick (or BENCH_QUICK=1) builds small releases instead (gsm-ic and misleadqa only with
SOURCES_MIRROR): it checks that the bench still runs, not the figures.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import datasets  # noqa: E402
import huggingface_hub.constants  # noqa: E402
import mlcroissant as mlc  # noqa: E402
from hub_server import HubServer  # noqa: E402

from ctxrobust.build import build_release  # noqa: E402
from ctxrobust.errors import CtxRobustError  # noqa: E402
from ctxrobust.publish.card import read_manifest  # noqa: E402
from ctxrobust.publish.hub import push_release, stage  # noqa: E402
from ctxrobust.release import Release, find_releases  # noqa: E402

TOKEN = "bench-token"


QUICK = {
    "pseudowords": {"vocabulary_size": 2000, "lengths": [10, 40], "contexts_per_length": 3, "kinds": ["CHA", "TOK"]},
    "gsm-ic": {"n_two_step": 3, "n_more_steps": 2, "n_variants": 80, "eval_size": 20},
    "misleadqa": {
        "fred_time_n": 8,
        "fred_location_n": 8,
        "situatedqa_time_n": 8,
        "situatedqa_location_n": 8,
        "audit_sizes": {"fred/time": 2, "fred/location": 2, "situatedqa/time": 2, "situatedqa/location": 2, "ambigdocs/entity": 1},
    },
}


def releases(args: list[str], scratch: Path, quick: bool) -> list[Path]:
    if args:
        return [Path(a) for a in args]
    found = find_releases(ROOT / "releases") if (ROOT / "releases").exists() and not quick else []
    if found:
        return found
    from ctxrobust.sources.store import SnapshotStore

    store = SnapshotStore(cache_dir=scratch / "cache")
    built = []
    names = ("pseudowords", "gsm-ic", "misleadqa") if not quick or os.environ.get("SOURCES_MIRROR") else ("pseudowords",)
    for dataset in names:
        started = time.perf_counter()
        built.append(build_release(dataset, "1.0.0", QUICK[dataset] if quick else {}, scratch / "releases", store).path)
        print(f"built {dataset} 1.0.0 ({'quick' if quick else 'defaults'}) in {time.perf_counter() - started:.1f}s")
    return built


def timed(fn):
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # what the push command prints is not a figure
        value = fn()
    return value, time.perf_counter() - started


def load_rows(folder: Path, config: str, cache: Path) -> int:
    """Rows `datasets` loads for a configuration (every declared one has rows: an empty file is not declared)."""
    return datasets.load_dataset(str(folder), config, split="test", cache_dir=str(cache)).num_rows


def measure(path: Path, scratch: Path, server: HubServer) -> list[str]:
    release = Release(path)
    manifest = read_manifest(release.manifest, path / "manifest.json")
    name = f"{manifest.dataset} {manifest.version}"
    folder = scratch / "stage" / f"{manifest.dataset}-{manifest.version}"
    try:
        _, t_stage = timed(lambda: stage(release, f"bench/{manifest.dataset}", folder))
    except CtxRobustError as exc:
        return [f"{name}: not staged: {exc}"]
    size = sum(p.stat().st_size for p in folder.iterdir())
    lines = [f"{name}: staged {len(list(folder.iterdir()))} files, {size / 1e6:.2f} MB in {t_stage:.2f}s"]
    for entry in manifest.published:
        if not entry.rows:
            lines.append(f"  {entry.config}: empty in this build, carried as files, not a configuration")
            continue
        count, t_load = timed(lambda entry=entry: load_rows(folder, entry.config, scratch / "cache" / entry.config))
        assert count == entry.rows
        lines.append(
            f"  datasets.load_dataset {entry.config}: {entry.rows} rows in {t_load:.2f}s (first load, {entry.rows / t_load:,.0f} rows/s)"
        )
    croissant, t_parse = timed(lambda: mlc.Dataset(jsonld=str(folder / "croissant.json")))
    lines.append(f"  mlcroissant: croissant.json validated in {t_parse:.2f}s")
    for entry in manifest.published:
        count, t_iter = timed(lambda entry=entry: sum(1 for _ in croissant.records(entry.config)))
        assert count == entry.rows
        lines.append(f"  mlcroissant records {entry.config}: {count} in {t_iter:.2f}s ({count / t_iter:,.0f} records/s)")
    repo = f"bench/{manifest.dataset}"
    before = len(server.hub.commit_payloads)
    _, t_push = timed(lambda: push_release(path, repo, None))
    payload = sum(len(line.get("value", {}).get("content", "")) for batch in server.hub.commit_payloads[before:] for line in batch)
    _, t_again = timed(lambda: push_release(path, repo, None))
    lines.append(
        f"  push to local hub: {t_push:.2f}s (one commit, {payload / 1e6:.2f} MB base64); same content again: {t_again:.2f}s (no-op)"
    )
    return lines


def main(argv: list[str]) -> int:
    quick = "--quick" in argv or os.environ.get("BENCH_QUICK") == "1"
    argv = [a for a in argv if a != "--quick"]
    logging.getLogger("absl").setLevel(logging.ERROR)
    datasets.disable_progress_bars()
    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp, HubServer(TOKEN) as server:
        scratch = Path(tmp)
        os.environ["HF_ENDPOINT"] = server.url
        os.environ["HF_TOKEN"] = TOKEN
        huggingface_hub.constants.ENDPOINT = server.url
        report = []
        for path in releases(argv, scratch, quick):
            report += measure(path, scratch, server)
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
