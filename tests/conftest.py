"""Shared fixtures: the source mirror and a verified source store with a per-session cache."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def mirror_path() -> Path:
    """SOURCES_MIRROR, else ../shared/sources beside the checkout."""
    configured = os.environ.get("SOURCES_MIRROR")
    path = Path(configured) if configured else REPO.parent / "shared" / "sources"
    return path.resolve()


MIRROR = mirror_path()  # read once, before any test changes the environment


@pytest.fixture(autouse=True)
def isolated_environment(monkeypatch):
    """Tests name their mirror and cache explicitly; the caller's settings must not leak into them."""
    for name in ("SOURCES_MIRROR", "CTXROBUST_CACHE", "FRED_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def pytest_sessionstart(session):
    """The suite reads real source snapshots: without a mirror, say so once instead of failing test by test."""
    if not (MIRROR / "SHA256SUMS").exists():
        pytest.exit(f"no source mirror at {MIRROR}: set SOURCES_MIRROR to a folder laid out like fred/, situatedqa/, gsm_ic/, gsm8k/", returncode=2)


@pytest.fixture(scope="session")
def mirror() -> Path:
    return MIRROR


@pytest.fixture(scope="session")
def store(mirror, tmp_path_factory):
    """A SnapshotStore reading the mirror into a cache private to this test session."""
    from ctxrobust.sources.store import SnapshotStore

    return SnapshotStore(cache_dir=tmp_path_factory.mktemp("source-cache"), mirror=mirror, allow_upstream=False)
