"""Shared fixtures: the third-party source snapshots, and a verified source store with a per-session cache.

Most tests use project-written fixtures. Tests that need the pinned third-party snapshots (those that
use the `mirror`, `real_mirror` or `store` fixture, or carry `@pytest.mark.sources`) are marked
`sources` and run when the snapshots are at hand:
- `SOURCES_MIRROR=DIR`: a mirror laid out like fred/, situatedqa/, gsm_ic/, gsm8k/; or else
- a filled source cache (`CTXROBUST_CACHE`, default sources/cache; `ctxrobust sources` fills it).
Otherwise they are skipped, and one line at the end says how many and how to run them.
With `CTXROBUST_REQUIRE_SOURCES=1` (CI) a source test that is skipped, for any reason, fails the run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# the tests mirror the code's folders (core/, sources/, builders/, validators/, evaluation/, publish/); a test
# module may reuse another's release helpers, so every folder of them is importable by module name
for _folder in ("core", "sources", "builders", "validators", "evaluation", "publish"):
    if str(REPO / "tests" / _folder) not in sys.path:
        sys.path.append(str(REPO / "tests" / _folder))
SOURCE_FIXTURES = {"mirror", "real_mirror", "store"}
REQUIRE_ENV = "CTXROBUST_REQUIRE_SOURCES"
ENABLE_HINT = "set SOURCES_MIRROR=DIR to a source mirror, or fill the cache with `ctxrobust sources` (docs/sources.md: Testing)"


def _missing(folder: Path, names) -> list[str]:
    return [name for name in names if not (folder / name).is_file()]


def find_sources() -> tuple[Path | None, str, str]:
    """(folder holding every pinned snapshot, "mirror" | "cache", why not) -- read once, before any test changes the environment."""
    from ctxrobust.sources.lock import load_lock
    from ctxrobust.sources.store import CACHE_ENV, DEFAULT_CACHE_DIR, MIRROR_ENV

    names = list(load_lock())
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        mirror = Path(configured).resolve()
        missing = _missing(mirror, names)
        if not missing:
            return mirror, "mirror", ""
        return None, "", f"{MIRROR_ENV}={configured} lacks {len(missing)} of {len(names)} pinned files (first: {missing[0]})"
    cache = Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR).resolve()
    if cache.is_dir() and not _missing(cache, names):
        return cache, "cache", ""
    return None, "", f"no third-party source snapshots ({MIRROR_ENV} not set, cache {cache} not filled)"


SOURCES, SOURCES_KIND, UNAVAILABLE = find_sources()


def require_sources() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0")


REQUIRE = require_sources()


def pytest_configure(config):
    config.addinivalue_line("markers", "sources: needs the pinned third-party source snapshots (a mirror or a filled cache)")
    config.stash[_SKIPPED] = 0


_SKIPPED = pytest.StashKey[int]()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SOURCE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.sources)


def _skip_without_sources() -> None:
    if REQUIRE:
        pytest.fail(f"{REQUIRE_ENV}=1 but {UNAVAILABLE}; {ENABLE_HINT}", pytrace=False)
    pytest.skip(f"{UNAVAILABLE}; {ENABLE_HINT}")


def pytest_runtest_setup(item):
    if SOURCES is None and item.get_closest_marker("sources") is not None:
        _skip_without_sources()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    reason = report.longrepr[2] if report.skipped and isinstance(report.longrepr, tuple) else str(report.longrepr)
    if report.skipped and (item.get_closest_marker("sources") is not None or ENABLE_HINT in reason):
        if REQUIRE:
            report.outcome = "failed"
            report.longrepr = f"a source test was skipped under {REQUIRE_ENV}=1: {reason}"
        else:
            item.config.stash[_SKIPPED] += 1
    return report


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = config.stash.get(_SKIPPED, 0)
    if skipped:
        terminalreporter.write_line(f"{skipped} source test(s) skipped: {UNAVAILABLE or 'skipped by the tests themselves'}; {ENABLE_HINT}")


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch):
    """Tests name their mirror and cache explicitly; the caller's settings must not leak into them."""
    for name in ("SOURCES_MIRROR", "CTXROBUST_CACHE", "FRED_API_KEY", "FRED_API_ROOT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def mirror() -> Path:
    """A folder holding every pinned snapshot: the mirror, or a filled cache (FRED files in their canonical form)."""
    if SOURCES is None:  # reached only through request.getfixturevalue: the test was not marked at collection
        _skip_without_sources()
    return SOURCES


@pytest.fixture(scope="session")
def real_mirror() -> Path:
    """The mirror itself, as its maintainers lay it out (raw FRED files, SHA256SUMS)."""
    if SOURCES_KIND != "mirror":
        pytest.skip("needs the mirror itself, not a cache; set SOURCES_MIRROR=DIR")
    return SOURCES


@pytest.fixture(scope="session")
def store(mirror, tmp_path_factory):
    """A SnapshotStore reading the mirror into a cache private to this test session."""
    from ctxrobust.sources.store import SnapshotStore

    return SnapshotStore(cache_dir=tmp_path_factory.mktemp("source-cache"), mirror=mirror, allow_upstream=False)
