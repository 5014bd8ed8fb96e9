"""Upstream fetchers against local HTTP servers: plain HTTPS, the FRED API at ALFRED vintages (as fredapi calls it), the Hub."""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import pytest
from fred_server import FredStandIn, Row, Serving, revise, vintaged
from test_sources_store import snapshot

from ctxrobust.errors import CtxRobustError, SourceError
from ctxrobust.sources import fred_csv
from ctxrobust.sources.fetch import fetch_fred, fetch_hf, fetch_https
from ctxrobust.sources.lock import Snapshot
from ctxrobust.sources.store import SnapshotStore

Route = Callable[[dict], tuple[int, dict, bytes]]


class LocalServer:
    """A 127.0.0.1 HTTP server answering GET/HEAD from a path -> route table, recording every request."""

    def __init__(self):
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, str, dict]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, with_body: bool):
                parts = urlsplit(self.path)
                server.requests.append((self.command, self.path, dict(self.headers)))
                route = server.routes.get(parts.path)
                if route is None:
                    status, headers, body = 404, {"Content-Type": "text/plain"}, b"not found"
                else:
                    status, headers, body = route(parse_qs(parts.query))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def do_GET(self):
                self._answer(True)

            def do_HEAD(self):
                self._answer(False)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def serve(self, path: str, body: bytes, status: int = 200, headers: dict | None = None) -> None:
        self.routes[path] = lambda query: (status, dict(headers or {}), body)


@pytest.fixture
def server(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    local = LocalServer()
    local.thread.start()
    yield local
    local.httpd.shutdown()
    local.httpd.server_close()


def _store(tmp_path: Path, *snapshots: Snapshot) -> SnapshotStore:
    return SnapshotStore(cache_dir=tmp_path / "cache", mirror=None, allow_upstream=True, lock={s.name: s for s in snapshots})


# --- plain HTTPS ------------------------------------------------------------------

POOL = (
    b'{"question": "Ada has 3 pens and buys 4 more. How many pens does she have?", "answer": "7", "n_steps": 1}\n'
    b'{"question": "A box holds 6 eggs. How many eggs are in 5 boxes?", "answer": "30", "n_steps": 1}\n'
)


def test_https_upstream_fills_the_cache_with_verified_bytes(server, tmp_path):
    server.serve("/org/repo/abc123/pool.jsonl", POOL)
    snap = snapshot("pool/pool.jsonl", POOL, {"kind": "https", "url": f"{server.url}/org/repo/abc123/pool.jsonl"})
    store = _store(tmp_path, snap)
    assert store.fill() == [("pool/pool.jsonl", "upstream")]
    assert (tmp_path / "cache" / "pool" / "pool.jsonl").read_bytes() == POOL
    assert store.fill() == [("pool/pool.jsonl", "cache")]
    assert [r[0] for r in server.requests] == ["GET"], "a verified cached file is not fetched again"
    assert not list((tmp_path / "cache").rglob("*.part"))


def test_fetch_https_streams_to_the_given_path(server, tmp_path):
    big = bytes(range(256)) * 4096  # 1 MiB, several chunks
    server.serve("/big.bin", big)
    fetch_https(f"{server.url}/big.bin", tmp_path / "big.bin")
    assert (tmp_path / "big.bin").read_bytes() == big


def test_changed_upstream_bytes_are_refused_with_both_hashes(server, tmp_path):
    changed = POOL.replace(b'"7"', b'"8"')
    server.serve("/pool.jsonl", changed)
    snap = snapshot("pool/pool.jsonl", POOL, {"kind": "https", "url": f"{server.url}/pool.jsonl"})
    with pytest.raises(SourceError) as caught:
        _store(tmp_path, snap).path(snap.name)
    message = str(caught.value)
    actual = hashlib.sha256(changed).hexdigest()
    assert "\n" not in message
    assert f"pool/pool.jsonl: expected sha256 {snap.sha256}, actual {actual} (upstream copy)" in message
    assert "upstream data changed since it was pinned, use a mirror" in message
    assert not (tmp_path / "cache" / "pool" / "pool.jsonl").exists()
    assert not list((tmp_path / "cache").rglob("*.part"))


def test_http_errors_and_unreachable_hosts_name_the_url(server, tmp_path):
    snap = snapshot("pool/pool.jsonl", POOL, {"kind": "https", "url": f"{server.url}/gone.jsonl"})
    with pytest.raises(SourceError) as caught:
        _store(tmp_path, snap).path(snap.name)
    assert f"{server.url}/gone.jsonl: HTTP 404" in str(caught.value)
    assert "allow network access to 127.0.0.1" in str(caught.value)

    closed = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = closed.server_address[1]
    closed.server_close()
    with pytest.raises(SourceError, match=rf"http://127\.0\.0\.1:{port}/x: download failed \(ConnectionError"):
        fetch_https(f"http://127.0.0.1:{port}/x", tmp_path / "x")


# --- FRED (ALFRED vintages; the stand-in is tests/fred_server.py) ------------------------

VINTAGE = dt.date(2024, 6, 3)
D = dt.date.fromisoformat
WAGES = [
    (D("1968-01-01"), "1.15"),
    (D("1969-01-01"), "1.30"),
    (D("1970-01-01"), "1.30"),
    (D("1971-01-01"), "."),
    (D("1990-01-01"), "3.35"),
    (D("2009-01-01"), "7.25"),
    (D("2024-01-01"), "12.00"),
]
WAGES_CSV = (
    "DATE,STTMINWGZZ\n1968-01-01,1.15\n1969-01-01,1.30\n1970-01-01,1.30\n1971-01-01,.\n1990-01-01,3.35\n2009-01-01,7.25\n2024-01-01,12.00\n"
)


def _history() -> list[Row]:
    """WAGES as published on 2020-02-01 (through 2009), 2024 added on 2024-02-01, 1990 corrected before the vintage,
    2024 revised and 2025 added after it."""
    rows = vintaged([w for w in WAGES if w[0].year < 2024], D("2020-02-01"))
    rows = revise(rows, D("1990-01-01"), "3.35", D("2021-05-01"))
    rows = [
        Row(r.date, "3.30" if r.date.year == 1990 and r.realtime_start < D("2021-05-01") else r.value, r.realtime_start, r.realtime_end)
        for r in rows
    ]
    rows.append(Row(D("2024-01-01"), "12.00", D("2024-02-01")))
    rows = revise(rows, D("2024-01-01"), "12.50", VINTAGE + dt.timedelta(days=1))
    rows.append(Row(D("2025-01-01"), "13.00", D("2025-02-01")))
    return rows


@pytest.fixture
def fred_api(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    serving = Serving(FredStandIn({"STTMINWGZZ": _history()}))
    yield serving
    serving.close()


def _fred_snapshot(content: bytes, series_id: str = "STTMINWGZZ", vintage: dt.date = VINTAGE) -> Snapshot:
    return snapshot(f"fred/{series_id}.csv", content, {"kind": "fred", "series_id": series_id, "vintage": vintage.isoformat()})


def test_the_canonical_form_has_iso_dates_values_at_cents_and_the_series_header():
    raw = "DATE,STTMINWGZZ\r\n1/1/68,1.15\r\n1/1/69,1.3\r\n1/1/70,1.30\r\n1/1/71,.\r\n1/1/90,3.35\r\n1/1/09,7.25\r\n1/1/24,12\r\n"
    assert fred_csv.canonical(raw.encode(), "STTMINWGZZ", "zz.csv") == WAGES_CSV.encode()
    assert fred_csv.canonical(WAGES_CSV.encode(), "STTMINWGZZ", "zz.csv") == WAGES_CSV.encode(), "the form is a fixed point"
    assert [fred_csv.cents(Decimal(v)) for v in ("12", "12.0", "2.1", "12.006", "12.0060", "0")] == [
        "12.00",
        "12.00",
        "2.10",
        "12.006",
        "12.006",
        "0.00",
    ]
    with pytest.raises(CtxRobustError, match=r"zz.csv:1: header names series STTMINWGFG, the lock pins STTMINWGZZ"):
        fred_csv.canonical(b"DATE,STTMINWGFG\n1968-01-01,1.15\n", "STTMINWGZZ", "zz.csv")
    with pytest.raises(CtxRobustError, match=r"zz.csv:3: date 1968-01-01 does not follow 1969-01-01"):
        fred_csv.canonical(b"DATE,STTMINWGZZ\n1969-01-01,1\n1968-01-01,1\n", "STTMINWGZZ", "zz.csv")
    with pytest.raises(CtxRobustError, match=r"zz.csv:2: value 'n/a' is not a number"):
        fred_csv.canonical(b"DATE,STTMINWGZZ\n1969-01-01,n/a\n", "STTMINWGZZ", "zz.csv")


def test_fetch_fred_asks_for_the_vintage_like_fredapi_and_writes_the_canonical_form(fred_api, tmp_path):
    fetch_fred("STTMINWGZZ", VINTAGE, tmp_path / "zz.csv", api_key="test-key", root_url=fred_api.root)
    assert (tmp_path / "zz.csv").read_bytes() == WAGES_CSV.encode("utf-8")
    (query,) = fred_api.stand_in.requests
    assert query == {
        "path": "/fred/series/observations",
        "series_id": "STTMINWGZZ",
        "api_key": "test-key",
        "realtime_start": "2024-06-03",
        "realtime_end": "2024-06-03",
    }


def test_revisions_after_the_vintage_change_a_later_vintage_only(fred_api, tmp_path):
    later = VINTAGE + dt.timedelta(days=400)
    fetch_fred("STTMINWGZZ", later, tmp_path / "later.csv", api_key="test-key", root_url=fred_api.root)
    text = (tmp_path / "later.csv").read_text(encoding="utf-8")
    assert "2024-01-01,12.50\n2025-01-01,13.00\n" in text and "1990-01-01,3.35" in text
    early = D("2021-01-01")
    fetch_fred("STTMINWGZZ", early, tmp_path / "early.csv", api_key="test-key", root_url=fred_api.root)
    text = (tmp_path / "early.csv").read_text(encoding="utf-8")
    assert "1990-01-01,3.30" in text and "2024-01-01" not in text, "a correction published after 2021-01-01 is not in its vintage"


def test_fred_through_the_store_at_the_pinned_vintage(fred_api, tmp_path, monkeypatch):
    monkeypatch.setenv("FRED_API_KEY", "test-key")
    monkeypatch.setenv("FRED_API_ROOT", fred_api.root)
    snap = _fred_snapshot(WAGES_CSV.encode("utf-8"))
    store = _store(tmp_path, snap)
    assert store.fill() == [("fred/STTMINWGZZ.csv", "upstream")]
    assert store.path(snap.name).read_text(encoding="utf-8") == WAGES_CSV
    # the same observations pinned at a vintage after the revision no longer match: refused, with both hashes
    moved = _fred_snapshot(WAGES_CSV.encode("utf-8"), vintage=VINTAGE + dt.timedelta(days=400))
    with pytest.raises(SourceError) as caught:
        _store(tmp_path / "other", moved).path(moved.name)
    assert f"fred/STTMINWGZZ.csv: expected sha256 {moved.sha256}, actual" in str(caught.value)
    assert not list((tmp_path / "other").rglob("*.part"))


def test_a_mirror_file_in_another_written_form_is_converted_and_its_own_hash_kept(tmp_path):
    written = b"DATE,STTMINWGZZ\n1/1/68,1.15\n1/1/69,1.3\n1/1/70,1.3\n1/1/71,.\n1/1/90,3.35\n1/1/09,7.25\n1/1/24,12.0\n"
    (tmp_path / "mirror" / "fred").mkdir(parents=True)
    (tmp_path / "mirror" / "fred" / "STTMINWGZZ.csv").write_bytes(written)
    snap = _fred_snapshot(WAGES_CSV.encode("utf-8"))
    store = SnapshotStore(cache_dir=tmp_path / "cache", mirror=tmp_path / "mirror", allow_upstream=False, lock={snap.name: snap})
    assert store.fill() == [(snap.name, "mirror")]
    assert store.path(snap.name).read_bytes() == WAGES_CSV.encode("utf-8")
    assert store.raw_sha256[snap.name] == hashlib.sha256(written).hexdigest()
    # different observations, or a file that is no FRED CSV, are refused and named
    (tmp_path / "mirror" / "fred" / "STTMINWGZZ.csv").write_bytes(written.replace(b"7.25", b"7.26"))
    with pytest.raises(SourceError, match=r"canonical form sha256 [0-9a-f]{64} \(file sha256 [0-9a-f]{64}\), different observations"):
        SnapshotStore(cache_dir=tmp_path / "cache2", mirror=tmp_path / "mirror", allow_upstream=False, lock={snap.name: snap}).path(
            snap.name
        )
    (tmp_path / "mirror" / "fred" / "STTMINWGZZ.csv").write_bytes(b"<html>moved</html>\n")
    with pytest.raises(SourceError, match=r"STTMINWGZZ.csv: not a FRED series CSV \(.*expected a 'DATE,<SERIES_ID>' header\)"):
        SnapshotStore(cache_dir=tmp_path / "cache3", mirror=tmp_path / "mirror", allow_upstream=False, lock={snap.name: snap}).path(
            snap.name
        )


def test_fred_without_an_api_key_says_so(tmp_path, monkeypatch):
    monkeypatch.delenv("FRED_API_KEY", raising=False)
    with pytest.raises(SourceError, match=r"FRED series STTMINWGZZ: FRED_API_KEY is not set"):
        fetch_fred("STTMINWGZZ", VINTAGE, tmp_path / "zz.csv")
    snap = _fred_snapshot(WAGES_CSV.encode("utf-8"))
    with pytest.raises(SourceError) as caught:
        _store(tmp_path, snap).path(snap.name)
    message = str(caught.value)
    assert "\n" not in message
    assert "FRED_API_KEY is not set" in message and "set SOURCES_MIRROR=DIR" in message
    assert f"missing (expected sha256 {snap.sha256})" in message


def test_fred_api_errors_are_reported_with_the_series_and_vintage(fred_api, tmp_path):
    def fails(series_id, vintage, key="test-key", timeout=60.0):
        with pytest.raises(SourceError) as caught:
            fetch_fred(series_id, vintage, tmp_path / "x.csv", api_key=key, root_url=fred_api.root, timeout=timeout)
        assert "\n" not in str(caught.value)
        return str(caught.value)

    assert (
        fails("STTMINWGQQ", VINTAGE)
        == "FRED series STTMINWGQQ at vintage 2024-06-03: download failed (Bad Request. The series does not exist.)"
    )
    assert "api_key is not registered" in fails("STTMINWGZZ", VINTAGE, key="wrong")
    assert "FRED returned no observations" in fails("STTMINWGZZ", D("2019-01-01")), "before the first publication"
    fred_api.stand_in.broken = True
    assert fails("STTMINWGZZ", VINTAGE).startswith("FRED series STTMINWGZZ at vintage 2024-06-03: download failed (")
    fred_api.stand_in.broken, fred_api.stand_in.delay = False, 2.0
    started = time.monotonic()
    assert "timed out" in fails("STTMINWGZZ", VINTAGE, timeout=0.3)
    assert time.monotonic() - started < 2.0
    assert not (tmp_path / "x.csv").exists()


def test_the_stand_in_answers_realtime_periods_like_alfred(fred_api):
    stand_in = fred_api.stand_in
    period = lambda start, end: stand_in.answer(
        "/fred/series/observations",
        {"series_id": ["STTMINWGZZ"], "api_key": ["test-key"], "realtime_start": [start], "realtime_end": [end]},
    )
    status, _, body = period("2024-06-03", "2024-06-02")
    assert status == 400 and b"realtime_start is after the value for variable realtime_end" in body
    status, _, body = period("2020-01-01", "9999-12-31")  # every release: 1990 twice, 2024 twice
    assert status == 200 and body.count(b'date="1990-01-01"') == 2 and body.count(b'date="2024-01-01"') == 2
    status, _, body = period("06/03/2024", "2024-06-03")
    assert status == 400 and b"not a date" in body


def test_fredapi_all_releases_over_a_period_keeps_each_revision(fred_api):
    """The stand-in is what fredapi parses: all releases for a period, and one row per date for one day."""
    from fredapi import Fred

    fred = Fred(api_key="test-key")
    fred.root_url = fred_api.root
    everything = fred.get_series_all_releases("STTMINWGZZ")
    dates = [d.date() for d in everything["date"]]
    assert sorted(v for d, v in zip(dates, everything["value"]) if d == D("2024-01-01")) == [12.0, 12.5]
    one_day = fred.get_series_all_releases("STTMINWGZZ", realtime_start="2024-06-03", realtime_end="2024-06-03")
    assert len(one_day) == len(WAGES) and one_day["date"].is_unique


# --- Hugging Face Hub ---------------------------------------------------------------

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _serve_hub_file(server: LocalServer, repo_id: str, revision: str, filename: str, body: bytes) -> None:
    """Answer HEAD and GET on the resolve URL with the headers hf_hub_download relies on."""
    headers = {
        "X-Repo-Commit": COMMIT,
        "ETag": f'"{hashlib.sha1(body).hexdigest()}"',
        "Content-Type": "application/octet-stream",
        "Accept-Ranges": "bytes",
    }
    server.serve(f"/datasets/{repo_id}/resolve/{revision}/{filename}", body, headers=headers)


def test_hf_fetcher_downloads_through_hf_endpoint(server, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    _serve_hub_file(server, "ctx-org/pool", COMMIT, "data/pool.jsonl", POOL)
    dest_dir = tmp_path / "out"
    dest_dir.mkdir()
    fetch_hf("ctx-org/pool", "data/pool.jsonl", COMMIT, dest_dir / "pool.jsonl")
    assert (dest_dir / "pool.jsonl").read_bytes() == POOL
    assert [p.name for p in dest_dir.iterdir()] == ["pool.jsonl"], "the download's work folder is removed"
    methods = [(method, urlsplit(path).path) for method, path, _ in server.requests]
    assert ("HEAD", f"/datasets/ctx-org/pool/resolve/{COMMIT}/data/pool.jsonl") in methods
    assert ("GET", f"/datasets/ctx-org/pool/resolve/{COMMIT}/data/pool.jsonl") in methods


def test_hf_through_the_store_and_a_missing_hub_file(server, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    _serve_hub_file(server, "ctx-org/pool", COMMIT, "pool.jsonl", POOL)
    good = snapshot("hub/pool.jsonl", POOL, {"kind": "hf", "repo_id": "ctx-org/pool", "filename": "pool.jsonl", "revision": COMMIT})
    gone = snapshot("hub/gone.jsonl", POOL, {"kind": "hf", "repo_id": "ctx-org/pool", "filename": "gone.jsonl", "revision": COMMIT})
    store = _store(tmp_path, good, gone)
    assert store.fill(["hub/pool.jsonl"]) == [("hub/pool.jsonl", "upstream")]
    assert store.path("hub/pool.jsonl").read_bytes() == POOL
    with pytest.raises(SourceError) as caught:
        store.path("hub/gone.jsonl")
    message = str(caught.value)
    assert "\n" not in message
    assert f"Hugging Face dataset ctx-org/pool@{COMMIT}:gone.jsonl: download failed (Client error '404 Not Found'" in message
    assert not list((tmp_path / "cache").rglob("*.part")) and not list((tmp_path / "cache").rglob(".hf-*"))
