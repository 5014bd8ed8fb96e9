"""The lock and the snapshot store: cache -> mirror -> upstream, every file verified against the lock."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import pytest

from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError, SourceError
from ctxrobust.sources import fred_csv
from ctxrobust.sources.lock import DEFAULT_LOCK_PATH, Snapshot, dump_lock, load_lock, read_lock
from ctxrobust.sources.regenerate_lock import regenerate
from ctxrobust.sources.store import SnapshotStore

FEDERAL_FILES = {"AL", "LA", "MS", "SC", "TN"}


def snapshot(name: str, content: bytes, upstream: dict | None = None) -> Snapshot:
    """A lock entry pinning `content` (test_sources_fetch uses it too)."""
    return Snapshot(
        name=name,
        sha256=hashlib.sha256(content).hexdigest(),
        bytes=len(content),
        licence="test",
        retrieved="2024-01-01",
        upstream=upstream or {"kind": "https", "url": "https://example.invalid/" + name},
    )


def _mirror_names(mirror: Path) -> dict[str, str]:
    sums = {}
    for line in (mirror / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = line.split(maxsplit=1)
        sums[name.removeprefix("./")] = digest
    return sums


# --- the committed lock ---------------------------------------------------------


def test_lock_pins_every_mirror_file_with_its_hash(real_mirror):
    """Every mirror file is pinned as it is written (raw_sha256 for FRED); FRED's sha256 is its canonical form's."""
    mirror = real_mirror
    lock = load_lock()
    assert {name: s.raw_sha256 or s.sha256 for name, s in lock.items()} == _mirror_names(mirror)
    assert len(lock) == 69
    for name, snap in lock.items():
        assert (snap.raw_bytes if snap.canonical_form else snap.bytes) == (mirror / name).stat().st_size, name
        if snap.canonical_form:
            data = fred_csv.canonical((mirror / name).read_bytes(), snap.upstream.series_id, name)
            assert (hashlib.sha256(data).hexdigest(), len(data)) == (snap.sha256, snap.bytes), name
        else:
            assert snap.raw_sha256 is None and snap.raw_bytes is None, name


def test_lock_groups_licences_and_upstreams(mirror):
    lock = load_lock()
    fred = {n: s for n, s in lock.items() if n.startswith("fred/")}
    assert len(fred) == 51
    assert sorted(n for n in lock if n.startswith("situatedqa/")) == [
        "situatedqa/geo.dev.jsonl",
        "situatedqa/geo.test.jsonl",
        "situatedqa/geo.train.jsonl",
        "situatedqa/temp.dev.jsonl",
        "situatedqa/temp.test.jsonl",
        "situatedqa/temp.train.jsonl",
    ]
    assert sorted(n for n in lock if n.startswith("situatedqa_raw/")) == [
        f"situatedqa_raw/{kind}.{split}.jsonl" for kind in ("geo", "temp") for split in ("dev", "test", "train")
    ]
    assert lock["situatedqa_raw/temp.test.jsonl"].upstream.url.endswith("/data/raw_data/temp.test.jsonl")
    assert lock["ramdocs/RAMDocs_test.jsonl"].licence.startswith("MIT")
    assert "innovation64/CondAmbigQA" in lock["condambigqa/mcaqa.json"].upstream.url
    assert {"gsm_ic/gsm8k_validation.jsonl", "gsm8k/train.jsonl", "gsm8k/LICENSE"} <= set(lock)
    assert {snap.upstream.vintage for snap in fred.values()} == {dt.date(2026, 11, 29)}
    assert sum(snap.raw_sha256 != snap.sha256 for snap in fred.values()) == 49  # 2 mirror files are already canonical
    for name, snap in fred.items():
        assert snap.upstream.kind == "fred"
        assert "public domain" in snap.licence.lower() and "Department of Labor" in snap.licence
        header = (mirror / name).read_text(encoding="utf-8").splitlines()[0]
        assert header == f"DATE,{snap.upstream.series_id}", name
        state = name.removeprefix("fred/STTMINWG").removesuffix(".csv")
        expected = "STTMINWGFG" if state in FEDERAL_FILES else f"STTMINWG{state}"
        assert snap.upstream.series_id == expected, name
    for name in ("gsm8k/train.jsonl", "gsm8k/LICENSE"):
        assert lock[name].licence.startswith("MIT")
        assert lock[name].upstream.url.startswith("https://raw.githubusercontent.com/openai/grade-school-math/")
    assert lock["situatedqa/geo.dev.jsonl"].licence.startswith("Not stated: SituatedQA")
    assert lock["situatedqa/geo.dev.jsonl"].upstream.url.endswith("/data/qa_data/geo.dev.jsonl")
    assert "mikejqzhang/SituatedQA" in lock["situatedqa/geo.dev.jsonl"].upstream.url
    assert "google-research-datasets/GSM-IC" in lock["gsm_ic/gsm8k_validation.jsonl"].upstream.url


def test_lock_file_is_canonical_and_regenerates_byte_for_byte(real_mirror):
    mirror = real_mirror
    committed = DEFAULT_LOCK_PATH.read_text(encoding="utf-8")
    lock = read_lock()
    assert dump_lock(lock) == committed
    assert [s.name for s in lock.snapshots] == sorted(s.name for s in lock.snapshots)
    assert dump_lock(regenerate(mirror, load_lock())) == committed


def test_regenerate_refuses_a_mirror_that_disagrees_with_its_sha256sums(tmp_path):
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "LICENSE").write_text("MIT License\n", encoding="utf-8")
    (tmp_path / "SHA256SUMS").write_text(f"{'0' * 64}  ./gsm8k/LICENSE\n", encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"gsm8k/LICENSE: sha256 [0-9a-f]{64} differs from SHA256SUMS"):
        regenerate(tmp_path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", r"lock\.json:1: lock file is not valid JSON"),
        (json.dumps({"snapshots": [{"name": "a", "sha256": "xyz"}]}), r"invalid lock entry at snapshots\.0\."),
        (json.dumps({"snapshots": [], "extra": 1}), r"invalid lock entry at extra"),
    ],
)
def test_a_broken_lock_is_one_clear_error(tmp_path, text, message):
    path = tmp_path / "lock.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CtxRobustError, match=message):
        load_lock(path)


def test_lock_entries_must_be_sorted_and_unique(tmp_path):
    b, a = snapshot("b.txt", b"b"), snapshot("a.txt", b"a")
    for entries, message in (([b, a], "sorted by name"), ([a, a], "repeated: a.txt")):
        path = tmp_path / "lock.json"
        path.write_text(json.dumps({"snapshots": [s.model_dump(mode="json") for s in entries]}), encoding="utf-8")
        with pytest.raises(CtxRobustError, match=message):
            load_lock(path)


def test_snapshot_names_must_stay_inside_the_cache():
    for bad in ("/etc/passwd", "../x.csv", "fred/../../x", "a\\b"):
        with pytest.raises(ValueError):
            snapshot(bad, b"x")


# --- filling the cache from the real mirror ------------------------------------


def test_fill_from_the_mirror_then_from_the_cache(mirror, tmp_path):
    store = SnapshotStore(cache_dir=tmp_path / "cache", mirror=mirror, allow_upstream=False)
    seen = []
    first = store.fill(report=lambda name, how: seen.append((name, how)))
    assert [name for name, _ in first] == sorted(store.lock)
    assert {how for _, how in first} == {"mirror"}
    assert seen == first
    for name, snap in store.lock.items():
        assert sha256_file(tmp_path / "cache" / name) == snap.sha256
    assert not list((tmp_path / "cache").rglob("*.part")), "no temporary files left behind"

    again = SnapshotStore(cache_dir=tmp_path / "cache", mirror=None, allow_upstream=False).fill()
    assert {how for _, how in again} == {"cache"}


def test_path_and_require_return_verified_cache_files(mirror, tmp_path):
    store = SnapshotStore(cache_dir=tmp_path, mirror=mirror, allow_upstream=False)
    path = store.path("gsm_ic/gsm8k_validation.jsonl")
    assert path == tmp_path / "gsm_ic" / "gsm8k_validation.jsonl"
    assert sha256_file(path) == store.snapshot("gsm_ic/gsm8k_validation.jsonl").sha256
    paths = store.require(["fred/STTMINWGNE.csv", "situatedqa/geo.dev.jsonl"])
    assert sorted(paths) == ["fred/STTMINWGNE.csv", "situatedqa/geo.dev.jsonl"]
    assert all(p.is_file() and tmp_path in p.parents for p in paths.values())


def test_environment_chooses_cache_and_mirror(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("CTXROBUST_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setenv("SOURCES_MIRROR", str(mirror))
    store = SnapshotStore(allow_upstream=False)
    assert store.cache_dir == tmp_path / "env-cache" and store.mirror == mirror
    assert store.fill(["gsm8k/LICENSE"]) == [("gsm8k/LICENSE", "mirror")]
    assert (tmp_path / "env-cache" / "gsm8k" / "LICENSE").is_file()


def test_a_corrupted_cached_file_is_detected_and_obtained_again(mirror, tmp_path):
    name = "fred/STTMINWGNE.csv"
    store = SnapshotStore(cache_dir=tmp_path, mirror=mirror, allow_upstream=False)
    cached = store.path(name)
    good = cached.read_bytes()
    corrupted = good.replace(b"12.0", b"13.0")  # same size, different bytes
    assert corrupted != good and len(corrupted) == len(good)
    cached.write_bytes(corrupted)

    # The same store notices the change (it does not trust its earlier check) ...
    assert sha256_file(store.path(name)) == store.snapshot(name).sha256
    assert cached.read_bytes() == good

    # ... and so does a fresh one, reporting where the good copy came from.
    cached.write_bytes(b"DATE,STTMINWGNE\n")
    fresh = SnapshotStore(cache_dir=tmp_path, mirror=mirror, allow_upstream=False)
    assert fresh.fill([name]) == [(name, "mirror")]
    assert cached.read_bytes() == good


def test_a_corrupted_cached_file_with_nowhere_to_refill_is_discarded(tmp_path):
    snap = snapshot("gsm8k/LICENSE", b"the pinned text\n")
    (tmp_path / "gsm8k").mkdir()
    (tmp_path / "gsm8k" / "LICENSE").write_bytes(b"tampered text\n")
    store = SnapshotStore(cache_dir=tmp_path, mirror=None, allow_upstream=False, lock={snap.name: snap})
    with pytest.raises(SourceError) as caught:
        store.path(snap.name)
    message = str(caught.value)
    actual = hashlib.sha256(b"tampered text\n").hexdigest()
    assert f"expected sha256 {snap.sha256}, actual {actual} (cached copy)" in message
    assert not (tmp_path / "gsm8k" / "LICENSE").exists(), "an unverified file must not stay in the cache"


def test_missing_file_without_mirror_or_upstream_is_one_line_with_the_expected_hash(tmp_path, monkeypatch):
    monkeypatch.delenv("SOURCES_MIRROR", raising=False)
    store = SnapshotStore(cache_dir=tmp_path, allow_upstream=False)
    snap = store.snapshot("fred/STTMINWGNE.csv")
    with pytest.raises(SourceError) as caught:
        store.path("fred/STTMINWGNE.csv")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"fred/STTMINWGNE.csv: missing (expected sha256 {snap.sha256})")
    assert "set SOURCES_MIRROR=DIR" in message and "FRED_API_KEY" in message
    assert isinstance(caught.value, CtxRobustError)


def test_a_mismatching_mirror_file_names_expected_and_actual(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "situatedqa").mkdir(parents=True)
    served = b'{"question": "q", "id": 1}\n'
    (mirror / "situatedqa" / "geo.dev.jsonl").write_bytes(served)
    snap = snapshot("situatedqa/geo.dev.jsonl", b'{"question": "pinned", "id": 1}\n')
    store = SnapshotStore(cache_dir=tmp_path / "cache", mirror=mirror, allow_upstream=False, lock={snap.name: snap})
    with pytest.raises(SourceError) as caught:
        store.path(snap.name)
    message = str(caught.value)
    actual = hashlib.sha256(served).hexdigest()
    assert "\n" not in message
    assert f"situatedqa/geo.dev.jsonl: expected sha256 {snap.sha256}, actual {actual} (mirror copy)" in message
    assert str(mirror / "situatedqa" / "geo.dev.jsonl") in message
    cache = tmp_path / "cache"
    assert not (cache / snap.name).exists() and not list(cache.rglob("*.part"))


def test_several_unavailable_snapshots_are_named_in_one_error(tmp_path):
    lock = {s.name: s for s in (snapshot("a/one.txt", b"1"), snapshot("b/two.txt", b"2"), snapshot("c/three.txt", b"3"))}
    mirror = tmp_path / "mirror"
    (mirror / "a").mkdir(parents=True)
    (mirror / "a" / "one.txt").write_bytes(b"1")
    store = SnapshotStore(cache_dir=tmp_path / "cache", mirror=mirror, allow_upstream=False, lock=lock)
    with pytest.raises(SourceError) as caught:
        store.require(["c/three.txt", "a/one.txt", "b/two.txt"])
    message = str(caught.value)
    assert "\n" not in message and len(message) < 200
    assert message == (
        "2 source file(s) missing or mismatching (first: b/two.txt, missing); "
        "to fix: set SOURCES_MIRROR=DIR to a source mirror, or allow downloads from example.invalid"
    )
    assert [line.split(":")[0] for line in caught.value.details] == ["b/two.txt", "c/three.txt"]
    assert all("expected sha256" in line and "tried cache" in line for line in caught.value.details)
    # fill caches what it can before reporting the rest
    with pytest.raises(SourceError, match="2 source file"):
        store.fill()
    assert (tmp_path / "cache" / "a" / "one.txt").read_bytes() == b"1"


def test_unknown_names_are_refused(tmp_path):
    store = SnapshotStore(cache_dir=tmp_path, mirror=None, allow_upstream=False)
    with pytest.raises(SourceError, match=r"fred/NOPE\.csv: not pinned in sources/lock\.json"):
        store.path("fred/NOPE.csv")


def test_store_accepts_a_lock_path(tmp_path):
    snap = snapshot("x/y.txt", b"y")
    path = tmp_path / "lock.json"
    path.write_text(json.dumps({"snapshots": [snap.model_dump(mode="json")]}), encoding="utf-8")
    store = SnapshotStore(cache_dir=tmp_path / "c", mirror=None, allow_upstream=False, lock=path)
    assert store.names() == ["x/y.txt"] and store.snapshot("x/y.txt") == snap
    assert os.fspath(store.cache_dir).endswith("c")


def test_an_unwritable_cache_is_reported_not_raised_as_a_traceback(mirror, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x", encoding="utf-8")
    store = SnapshotStore(cache_dir=blocker / "cache", mirror=mirror, allow_upstream=False)
    with pytest.raises(SourceError) as caught:
        store.path("gsm8k/LICENSE")
    message = str(caught.value)
    assert "\n" not in message
    assert f"cache {blocker / 'cache'}: not writable" in message and "CTXROBUST_CACHE=DIR" in message


def test_a_mirror_that_is_not_a_folder_and_a_blocked_cache_path_are_named(mirror, tmp_path):
    missing = tmp_path / "no-mirror"
    with pytest.raises(SourceError, match=rf"mirror {missing}: no such folder"):
        SnapshotStore(cache_dir=tmp_path / "cache", mirror=missing, allow_upstream=False).path("gsm8k/LICENSE")
    (tmp_path / "cache" / "gsm8k" / "LICENSE").mkdir(parents=True)  # a folder where the file belongs
    with pytest.raises(SourceError) as caught:
        SnapshotStore(cache_dir=tmp_path / "cache", mirror=mirror, allow_upstream=False).path("gsm8k/LICENSE")
    message = str(caught.value)
    assert "\n" not in message and f"cache {tmp_path / 'cache' / 'gsm8k' / 'LICENSE'}: could not be written" in message
    assert not list((tmp_path / "cache").rglob("*.part"))
