"""MisleadQA rebuilt from the FRED API at the lock's ALFRED vintages is byte-identical to the build from the mirror.

The stand-in (tests/fred_server.py) serves each pinned series with a history: a wrong first value
corrected before the vintage, and a revision and a new observation published after it. Only the
observations as of the vintage may reach the build.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from fred_server import FredStandIn, Row, Serving, revise, vintaged

from ctxrobust.build import build_release
from ctxrobust.errors import SourceError
from ctxrobust.sources import fred_csv
from ctxrobust.sources.store import SnapshotStore

DAY = dt.timedelta(days=1)


def _history(observations: list[tuple[dt.date, object]], vintage: dt.date) -> list[Row]:
    values = [(date, "." if value is None else fred_csv.cents(value)) for date, value in observations]
    first, true_value = values[0]
    rows = vintaged([(first, "0.01"), *values[1:]], vintage - 400 * DAY)
    rows = revise(rows, first, true_value, vintage - 30 * DAY)  # a correction published before the vintage
    last = values[-1][0]
    rows = revise(rows, last, "99.99", vintage + DAY)  # a revision published after it
    rows.append(Row(last.replace(year=last.year + 1), "77.77", vintage + 2 * DAY))  # a new observation after it
    return rows


@pytest.fixture
def fred_api(store, monkeypatch):
    """A stand-in FRED serving every pinned series (values taken from the store at test time)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    series = {}
    for name, snap in store.lock.items():
        if snap.upstream.kind == "fred" and snap.upstream.series_id not in series:
            found, observations = fred_csv.parse(store.path(name).read_text(encoding="utf-8"), name)
            series[found] = _history(observations, snap.upstream.vintage)
    serving = Serving(FredStandIn(series))
    monkeypatch.setenv("FRED_API_KEY", "test-key")
    monkeypatch.setenv("FRED_API_ROOT", serving.root)
    yield serving
    serving.close()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_misleadqa_build_from_the_fred_api_is_byte_identical_to_the_mirror_build(store, mirror, fred_api, tmp_path):
    fred_names = [n for n, s in store.lock.items() if s.upstream.kind == "fred"]
    others = tmp_path / "mirror-without-fred"
    for name in store.lock:
        if name not in fred_names:
            (others / name).parent.mkdir(parents=True, exist_ok=True)
            (others / name).symlink_to(mirror / name)
    from_api = SnapshotStore(cache_dir=tmp_path / "api-cache", mirror=others, allow_upstream=True)
    assert {how for _, how in from_api.fill(fred_names)} == {"upstream"}
    asked = {(q["series_id"], q["realtime_start"], q["realtime_end"]) for q in fred_api.stand_in.requests}
    assert asked == {(s.upstream.series_id, str(s.upstream.vintage), str(s.upstream.vintage)) for s in map(store.snapshot, fred_names)}

    a = build_release("misleadqa", "0.0.1-test", {}, tmp_path / "from-mirror", store)
    b = build_release("misleadqa", "0.0.1-test", {}, tmp_path / "from-api", from_api)
    mirror_files, api_files = _files(a.path), _files(b.path)
    assert sorted(mirror_files) == sorted(api_files) and "main.jsonl" in mirror_files
    assert [n for n in mirror_files if mirror_files[n] != api_files[n]] == []


def test_an_api_answer_that_differs_at_the_vintage_is_refused(store, fred_api, tmp_path):
    """A revision published on or before the pinned vintage (not in the pinned snapshot) changes the bytes: refused."""
    name = "fred/STTMINWGNE.csv"
    vintage = store.snapshot(name).upstream.vintage
    rows = fred_api.stand_in.series["STTMINWGNE"]
    last = max(r.date for r in rows if r.realtime_start <= vintage)
    fred_api.stand_in.series["STTMINWGNE"] = revise(rows, last, "55.55", vintage)
    upstream_only = SnapshotStore(cache_dir=tmp_path / "cache", mirror=None, allow_upstream=True)
    with pytest.raises(SourceError) as caught:
        upstream_only.path(name)
    assert f"{name}: expected sha256 {store.snapshot(name).sha256}, actual" in str(caught.value)
    assert not (tmp_path / "cache" / name).exists()
