"""The snapshot store: every pinned source file, obtained and verified before use.

A file is taken from the first place that has it with the sha256 the lock
pins: the cache, else the mirror (`SOURCES_MIRROR`), else upstream. FRED
files are pinned in a canonical CSV form (fred_csv.py): a mirror's file and an
API answer are both converted to it before hashing, and the mirror file's own
sha256 is kept in `raw_sha256`. A cached
file that no longer matches is discarded and obtained again, never trusted.
Files enter the cache atomically (temporary file in the same directory, then
rename), so a reader never sees a partial or unverified file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError, SourceError
from ctxrobust.sources.lock import Snapshot, load_lock

CACHE_ENV = "CTXROBUST_CACHE"
MIRROR_ENV = "SOURCES_MIRROR"
DEFAULT_CACHE_DIR = Path(__file__).resolve().parent / "cache"
MIRROR_REMEDY = "set SOURCES_MIRROR=DIR to a mirror laid out like fred/, situatedqa/, gsm_ic/, gsm8k/"

CACHE, MIRROR, UPSTREAM = "cache", "mirror", "upstream"
REPORTS = "missing"  # cache folder of full lists of unavailable snapshots, one file per dataset


@dataclass
class _Failure:
    """Why one snapshot could not be obtained: what each place had."""

    snapshot: Snapshot
    tried: list[str] = field(default_factory=list)  # one phrase per place
    wrong: tuple[str, str] | None = None  # (actual sha256, where) of the first mismatching copy
    upstream_fix: str | None = None  # what would let the upstream fetch work

    def short(self) -> str:
        if self.wrong is None:
            return "missing"
        actual, where = self.wrong
        return f"{where} copy sha256 {actual[:12]}..., expected {self.snapshot.sha256[:12]}..."

    def line(self, fixes: list[str] | None = None) -> str:
        snap = self.snapshot
        if self.wrong is None:
            head = f"{snap.name}: missing (expected sha256 {snap.sha256})"
        else:
            actual, where = self.wrong
            head = f"{snap.name}: expected sha256 {snap.sha256}, actual {actual} ({where} copy)"
        fixes = fixes if fixes is not None else [self.upstream_fix] if self.upstream_fix else []
        return f"{head}; tried {'; '.join(self.tried)}. To fix: {' or '.join([MIRROR_REMEDY, *fixes])}"


class SnapshotsUnavailable(SourceError):
    """Pinned snapshots that could not be obtained.

    The message is one short line: how many files are missing or mismatching, the first one, and
    the remedy. `details` holds the full line for every file (what each place had, what to do).
    """

    def __init__(self, summary: str, details: list[str]):
        super().__init__(summary)
        self.details = details


def _download_hint(failures: list[_Failure]) -> str:
    """Where downloads would have to be allowed, in a few words."""
    places = []
    for f in failures:
        upstream = f.snapshot.upstream
        if upstream.kind == "fred":
            place = "FRED (FRED_API_KEY)"
        elif upstream.kind == "https":
            place = upstream.url.split("/")[2]
        else:
            place = "the Hugging Face Hub"
        if place not in places:
            places.append(place)
    return ", ".join(places)


def _error(failures: list[_Failure]) -> SnapshotsUnavailable:
    """For a set of snapshots: a count, the first, and the remedy on one line; every file in full in `details`."""
    fixes = sorted({f.upstream_fix for f in failures if f.upstream_fix})
    details = [f.line(fixes) for f in failures]
    first = failures[0]
    summary = (
        f"{len(failures)} source file(s) missing or mismatching (first: {first.snapshot.name}, {first.short()}); "
        f"to fix: set SOURCES_MIRROR=DIR to a source mirror, or allow downloads from {_download_hint(failures)}"
    )
    return SnapshotsUnavailable(summary, details)


def _sha256_copy(source: Path, target: Path) -> str:
    """Copy `source` to `target` (already created, empty) and return the sha256 of the bytes copied."""
    digest = hashlib.sha256()
    with open(source, "rb") as src, open(target, "wb") as dst:
        for block in iter(lambda: src.read(1 << 20), b""):
            digest.update(block)
            dst.write(block)
        dst.flush()
        os.fsync(dst.fileno())
    return digest.hexdigest()


class SnapshotStore:
    """Pinned source files by lock name: `path(name)`, `require(names)`, `fill()`."""

    def __init__(
        self,
        cache_dir: Path | str | None = None,
        mirror: Path | str | None = None,
        allow_upstream: bool = True,
        lock: Mapping[str, Snapshot] | Path | str | None = None,
    ):
        if lock is None or isinstance(lock, (str, Path)):
            self.lock: dict[str, Snapshot] = load_lock(lock)
        else:
            self.lock = dict(sorted(lock.items()))
        env_cache = os.environ.get(CACHE_ENV) or None
        self.cache_dir = Path(cache_dir or env_cache or DEFAULT_CACHE_DIR)
        env_mirror = os.environ.get(MIRROR_ENV) or None
        chosen_mirror = mirror if mirror is not None else env_mirror
        self.mirror = Path(chosen_mirror) if chosen_mirror else None
        self.allow_upstream = allow_upstream
        self._verified: dict[str, tuple[int, int, int]] = {}
        # name -> sha256 of the file it was made from, for files converted to a canonical form (FRED)
        self.raw_sha256: dict[str, str] = {}

    # --- lookups ---------------------------------------------------------------

    def names(self) -> list[str]:
        return list(self.lock)

    def snapshot(self, name: str) -> Snapshot:
        """The lock entry for `name`."""
        try:
            return self.lock[name]
        except KeyError:
            raise SourceError(
                f"{name}: not pinned in sources/lock.json; add it (python -m ctxrobust.sources.regenerate_lock --regenerate-from DIR) "
                "or use one of the pinned names"
            ) from None

    def path(self, name: str) -> Path:
        """The verified cached file for `name`, obtained first if needed."""
        found = self._obtain(self.snapshot(name))
        if isinstance(found, _Failure):
            line = found.line()
            raise SnapshotsUnavailable(line, [line])
        return found[0]

    def require(self, names: Iterable[str]) -> dict[str, Path]:
        """Every named file, verified; or one SourceError naming all that are unavailable."""
        paths, failures = {}, []
        for name in sorted(set(names)):
            found = self._obtain(self.snapshot(name))
            if isinstance(found, _Failure):
                failures.append(found)
            else:
                paths[name] = found[0]
        if failures:
            raise _error(failures)
        return paths

    def fill(self, names: Iterable[str] | None = None, report: Callable[[str, str], None] | None = None) -> list[tuple[str, str]]:
        """Obtain and verify every named snapshot (all by default): [(name, "cache"|"mirror"|"upstream")].

        `report(name, how)` is called as each one is ready. Snapshots that cannot be
        obtained are collected and raised together at the end, after the others are cached.
        """
        wanted = self.names() if names is None else sorted(set(names))
        done, failures = [], []
        for name in wanted:
            found = self._obtain(self.snapshot(name))
            if isinstance(found, _Failure):
                failures.append(found)
                continue
            done.append((name, found[1]))
            if report is not None:
                report(name, found[1])
        if failures:
            raise _error(failures)
        return done

    def write_report(self, label: str, error: SnapshotsUnavailable) -> Path | None:
        """Write `error`'s full list (one line per file) to <cache>/missing/<label>.txt, atomically; None if the cache is not writable."""
        target = self.cache_dir / REPORTS / f"{label}.txt"
        text = "".join(f"{line}\n" for line in [str(error), *error.details])
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, target)
        except OSError:
            return None
        return target

    def clear_report(self, label: str) -> None:
        """Remove a full list written by an earlier run once the sources are complete."""
        try:
            (self.cache_dir / REPORTS / f"{label}.txt").unlink(missing_ok=True)
        except OSError:
            pass

    # --- obtaining -------------------------------------------------------------

    def _obtain(self, snap: Snapshot) -> tuple[Path, str] | _Failure:
        failure = _Failure(snap)
        target = self.cache_dir / snap.name
        if self._cache_ok(snap, target, failure):
            return target, CACHE
        if self._from_mirror(snap, target, failure):
            return target, MIRROR
        if self._from_upstream(snap, target, failure):
            return target, UPSTREAM
        return failure

    def _remember(self, name: str, target: Path) -> None:
        stat = target.stat()
        self._verified[name] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)

    def _cache_ok(self, snap: Snapshot, target: Path, failure: _Failure) -> bool:
        if not target.is_file():
            failure.tried.append(f"cache {self.cache_dir}: not there")
            return False
        stat = target.stat()
        if self._verified.get(snap.name) == (stat.st_size, stat.st_mtime_ns, stat.st_ino):
            return True
        actual = sha256_file(target)
        if actual == snap.sha256:
            self._remember(snap.name, target)
            return True
        # A cached file that no longer matches is discarded, never used.
        self._verified.pop(snap.name, None)
        try:
            target.unlink()
            failure.tried.append(f"cache: had sha256 {actual}, discarded")
        except OSError as exc:
            failure.tried.append(f"cache: had sha256 {actual}, could not discard it ({exc.strerror or exc})")
        failure.wrong = failure.wrong or (actual, "cached")
        return False

    def _new_temp(self, target: Path, failure: _Failure) -> Path | None:
        """An empty temporary file beside `target`, or None (noted in `failure`) if the cache is not writable."""
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        except OSError as exc:
            failure.tried.append(f"cache {self.cache_dir}: not writable ({exc.strerror or exc}); set {CACHE_ENV}=DIR")
            return None
        os.close(handle)
        return Path(name)

    def _install(self, snap: Snapshot, temp: Path, target: Path, where: str, failure: _Failure, actual: str, mismatch: str) -> bool:
        """Rename a verified temporary file into the cache; otherwise remove it and note why in `failure`."""
        if actual != snap.sha256:
            temp.unlink(missing_ok=True)
            failure.wrong = failure.wrong or (actual, where)
            failure.tried.append(mismatch)
            return False
        try:
            os.replace(temp, target)
        except OSError as exc:  # e.g. a folder where the file belongs
            temp.unlink(missing_ok=True)
            failure.tried.append(f"cache {target}: could not be written ({exc.strerror or exc}); remove it or set {CACHE_ENV}=DIR")
            return False
        self._remember(snap.name, target)
        return True

    def _from_mirror(self, snap: Snapshot, target: Path, failure: _Failure) -> bool:
        if self.mirror is None:
            failure.tried.append(f"mirror: {MIRROR_ENV} not set")
            return False
        source = self.mirror / snap.name
        if not source.is_file():
            failure.tried.append(f"mirror {self.mirror}: {'not there' if self.mirror.is_dir() else 'no such folder'}")
            return False
        temp = self._new_temp(target, failure)
        if temp is None:
            return False
        try:
            if snap.canonical_form:
                actual, raw = self._canonical_copy(snap, source, temp)
            else:
                actual = raw = _sha256_copy(source, temp)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            failure.tried.append(f"mirror {source}: unreadable ({exc.strerror or exc})")
            return False
        except CtxRobustError as exc:
            temp.unlink(missing_ok=True)
            failure.tried.append(f"mirror {source}: not a FRED series CSV ({exc})")
            failure.wrong = failure.wrong or (sha256_file(source), "mirror")
            return False
        if snap.canonical_form:
            mismatch = f"mirror {source}: canonical form sha256 {actual} (file sha256 {raw}), different observations from the pinned ones"
        else:
            mismatch = f"mirror {source}: sha256 {actual} (a different file from the pinned one)"
        if not self._install(snap, temp, target, "mirror", failure, actual, mismatch):
            return False
        self.raw_sha256[snap.name] = raw
        return True

    @staticmethod
    def _canonical_copy(snap: Snapshot, source: Path, temp: Path) -> tuple[str, str]:
        """Write the canonical FRED form of a mirror's file to `temp`: (its sha256, the mirror file's sha256)."""
        from ctxrobust.sources import fred_csv

        raw = source.read_bytes()
        data = fred_csv.canonical(raw, snap.upstream.series_id, str(source))
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        return hashlib.sha256(data).hexdigest(), hashlib.sha256(raw).hexdigest()

    def _from_upstream(self, snap: Snapshot, target: Path, failure: _Failure) -> bool:
        from ctxrobust.sources.fetch import fetch, upstream_remedy

        failure.upstream_fix = upstream_remedy(snap)
        if not self.allow_upstream:
            failure.tried.append("upstream: not allowed (offline)")
            return False
        temp = self._new_temp(target, failure)
        if temp is None:
            return False
        try:
            fetch(snap, temp)
        except SourceError as exc:
            temp.unlink(missing_ok=True)
            failure.tried.append(f"upstream: {exc}")
            return False
        except OSError as exc:
            temp.unlink(missing_ok=True)
            failure.tried.append(f"upstream: could not write {temp} ({exc.strerror or exc})")
            return False
        actual = sha256_file(temp)
        mismatch = f"upstream: fetched bytes have sha256 {actual}; upstream data changed since it was pinned, use a mirror"
        return self._install(snap, temp, target, "upstream", failure, actual, mismatch)
