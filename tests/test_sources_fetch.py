"""Upstream fetchers against a local HTTP server: plain HTTPS, the FRED API (as fredapi calls it), the Hub."""
from __future__ import annotations

import datetime as dt
import hashlib
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import quoteattr

import pytest

from ctxrobust.sources.fetch import (
    fetch_fred,
    fetch_hf,
    fetch_https,
    format_fred_value,
    fred_csv_reproducible,
    render_fred_csv,
)
from ctxrobust.sources.lock import Snapshot
from ctxrobust.errors import SourceError
from ctxrobust.sources.store import SnapshotStore
from test_sources_store import snapshot

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
    '{"question": "Ada has 3 pens and buys 4 more. How many pens does she have?", "answer": "7", "n_steps": 1}\n'
    '{"question": "A box holds 6 eggs. How many eggs are in 5 boxes?", "answer": "30", "n_steps": 1}\n'
).encode("utf-8")


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


# --- FRED -------------------------------------------------------------------------


def _fred_xml(observations: list[tuple[str, str]]) -> bytes:
    rows = "".join(
        f'  <observation realtime_start="2024-06-03" realtime_end="2024-06-03" date={quoteattr(d)} value={quoteattr(v)}/>\n'
        for d, v in observations
    )
    return (
        '<?xml version="1.0" encoding="utf-8" ?>\n'
        '<observations realtime_start="2024-06-03" realtime_end="2024-06-03" observation_start="1600-01-01" '
        'observation_end="9999-12-31" units="lin" output_type="1" file_type="xml" order_by="observation_date" '
        f'sort_order="asc" count="{len(observations)}" offset="0" limit="100000">\n{rows}</observations>\n'
    ).encode("utf-8")


def _serve_fred(server: LocalServer, series: dict[str, list[tuple[str, str]]], key: str = "test-key") -> None:
    """Answer /fred/series/observations the way the FRED API does for fredapi's XML requests."""

    def observations(query: dict) -> tuple[int, dict, bytes]:
        if query.get("api_key") != [key]:
            body = b'<?xml version="1.0" encoding="utf-8" ?>\n<error code="400" message="Bad Request.  The value for variable api_key is not registered."/>\n'
            return 400, {"Content-Type": "text/xml; charset=UTF-8"}, body
        series_id = query.get("series_id", [""])[0]
        if series_id not in series:
            body = b'<?xml version="1.0" encoding="utf-8" ?>\n<error code="400" message="Bad Request.  The series does not exist."/>\n'
            return 400, {"Content-Type": "text/xml; charset=UTF-8"}, body
        return 200, {"Content-Type": "text/xml; charset=UTF-8"}, _fred_xml(series[series_id])

    server.routes["/fred/series/observations"] = observations


WAGES = [("1968-01-01", "1.15"), ("1969-01-01", "1.30"), ("1970-01-01", "1.30"), ("1971-01-01", "."),
         ("1990-01-01", "3.35"), ("2009-01-01", "7.25"), ("2024-01-01", "12.00")]
WAGES_CSV = (
    "DATE,STTMINWGZZ\n1968-01-01,1.15\n1969-01-01,1.3\n1970-01-01,1.3\n1971-01-01,.\n"
    "1990-01-01,3.35\n2009-01-01,7.25\n2024-01-01,12\n"
)


def test_fred_values_are_written_in_their_shortest_form():
    assert [format_fred_value(v) for v in (12.0, 12.5, 7.25, 1.6, 0.1, math.nan)] == ["12", "12.5", "7.25", "1.6", "0.1", "."]
    rows = [(dt.date(2024, 1, 1), 12.0), (dt.date(1968, 1, 1), 1.15)]
    assert render_fred_csv("STTMINWGZZ", rows) == "DATE,STTMINWGZZ\n1968-01-01,1.15\n2024-01-01,12\n"


def test_fred_csv_reproducibility_check(tmp_path):
    cases = {
        "shortest.csv": ("DATE,STTMINWGZZ\n1968-01-01,1\n2024-01-01,12.5\n", True),
        "padded.csv": ("DATE,STTMINWGZZ\n1968-01-01,1.00\n2024-01-01,12.50\n", False),
        "us-dates.csv": ("DATE,STTMINWGZZ\n1/1/68,1\n", False),
        "crlf.csv": ("DATE,STTMINWGZZ\r\n1968-01-01,1\r\n", False),
        "no-final-newline.csv": ("DATE,STTMINWGZZ\n1968-01-01,1", False),
    }
    for name, (text, expected) in cases.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        assert fred_csv_reproducible(tmp_path / name) is expected, name


def test_fetch_fred_calls_the_api_like_fredapi_and_writes_the_mirror_format(server, tmp_path):
    _serve_fred(server, {"STTMINWGZZ": WAGES})
    fetch_fred("STTMINWGZZ", tmp_path / "zz.csv", api_key="test-key", root_url=f"{server.url}/fred")
    assert (tmp_path / "zz.csv").read_bytes() == WAGES_CSV.encode("utf-8")
    method, path, _ = server.requests[-1]
    query = parse_qs(urlsplit(path).query)
    assert method == "GET" and urlsplit(path).path == "/fred/series/observations"
    assert query["series_id"] == ["STTMINWGZZ"] and query["api_key"] == ["test-key"]


def test_fred_through_the_store_with_the_key_from_the_environment(server, tmp_path, monkeypatch):
    import fredapi

    _serve_fred(server, {"STTMINWGZZ": WAGES})
    monkeypatch.setattr(fredapi.Fred, "root_url", f"{server.url}/fred")
    monkeypatch.setenv("FRED_API_KEY", "test-key")
    snap = snapshot("fred/STTMINWGZZ.csv", WAGES_CSV.encode("utf-8"), {"kind": "fred", "series_id": "STTMINWGZZ"})
    store = _store(tmp_path, snap)
    assert store.fill() == [("fred/STTMINWGZZ.csv", "upstream")]
    assert store.path(snap.name).read_text(encoding="utf-8") == WAGES_CSV


def test_fred_without_an_api_key_says_so(tmp_path, monkeypatch):
    monkeypatch.delenv("FRED_API_KEY", raising=False)
    with pytest.raises(SourceError, match=r"FRED series STTMINWGZZ: FRED_API_KEY is not set"):
        fetch_fred("STTMINWGZZ", tmp_path / "zz.csv")
    snap = snapshot("fred/STTMINWGZZ.csv", WAGES_CSV.encode("utf-8"), {"kind": "fred", "series_id": "STTMINWGZZ"})
    with pytest.raises(SourceError) as caught:
        _store(tmp_path, snap).path(snap.name)
    message = str(caught.value)
    assert "\n" not in message
    assert "FRED_API_KEY is not set" in message and "set SOURCES_MIRROR=DIR" in message
    assert f"missing (expected sha256 {snap.sha256})" in message


def test_fred_api_errors_are_reported_with_the_series(server, tmp_path):
    _serve_fred(server, {"STTMINWGZZ": WAGES})
    with pytest.raises(SourceError, match=r"FRED series STTMINWGQQ: download failed \(Bad Request\. The series does not exist\.\)"):
        fetch_fred("STTMINWGQQ", tmp_path / "qq.csv", api_key="test-key", root_url=f"{server.url}/fred")
    with pytest.raises(SourceError, match=r"api_key is not registered"):
        fetch_fred("STTMINWGZZ", tmp_path / "zz.csv", api_key="wrong", root_url=f"{server.url}/fred")


def _as_fred_api_values(csv_text: str) -> list[tuple[str, str]]:
    """The observations of a mirror CSV as the FRED API would send them (ISO dates, two decimals)."""
    rows = []
    for line in csv_text.splitlines()[1:]:
        date_text, value = line.split(",")
        if "/" in date_text:
            month, day, year = (int(p) for p in date_text.split("/"))
            date_text = dt.date(1900 + year if year >= 50 else 2000 + year, month, day).isoformat()
        rows.append((date_text, f"{float(value):.2f}"))
    return rows


def test_a_fresh_fred_download_reproduces_pinned_mirror_files_when_their_format_allows(server, store, tmp_path, monkeypatch):
    """Serve real mirror values through a fake FRED API and fetch them against the real lock."""
    import fredapi

    federal = store.path("fred/STTMINWGAL.csv").read_text(encoding="utf-8")  # holds STTMINWGFG
    alaska = store.path("fred/STTMINWGAK.csv").read_text(encoding="utf-8")  # M/D/YY dates, CRLF
    _serve_fred(server, {"STTMINWGFG": _as_fred_api_values(federal), "STTMINWGAK": _as_fred_api_values(alaska)})
    monkeypatch.setattr(fredapi.Fred, "root_url", f"{server.url}/fred")
    monkeypatch.setenv("FRED_API_KEY", "test-key")
    upstream_only = SnapshotStore(cache_dir=tmp_path / "cache", mirror=None, allow_upstream=True)

    assert upstream_only.fill(["fred/STTMINWGAL.csv"]) == [("fred/STTMINWGAL.csv", "upstream")]
    with pytest.raises(SourceError) as caught:
        upstream_only.path("fred/STTMINWGAK.csv")
    assert "upstream data changed since it was pinned, use a mirror" in str(caught.value)
    notes = {name: snap.note or "" for name, snap in upstream_only.lock.items()}
    assert "re-fetching cannot reproduce" in notes["fred/STTMINWGAK.csv"]
    assert "re-fetching cannot reproduce" not in notes["fred/STTMINWGAL.csv"]


def test_lock_notes_match_which_mirror_files_a_download_can_reproduce(store):
    for name, snap in store.lock.items():
        if snap.upstream.kind == "fred":
            reproducible = fred_csv_reproducible(store.path(name))
            assert ("re-fetching cannot reproduce" not in (snap.note or "")) is reproducible, name


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
