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


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = MIRROR
    if not (path / "SHA256SUMS").exists():
        pytest.fail(f"no source mirror at {path}: set SOURCES_MIRROR to a folder laid out like fred/, situatedqa/, gsm_ic/, gsm8k/")
    return path


@pytest.fixture(scope="session")
def store(mirror, tmp_path_factory):
    """A SnapshotStore reading the mirror into a cache private to this test session."""
    from sources.store import SnapshotStore

    return SnapshotStore(cache_dir=tmp_path_factory.mktemp("source-cache"), mirror=mirror, allow_upstream=False)
