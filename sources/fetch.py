"""Upstream fetchers: write one snapshot's bytes to a path the store chose.

Each fetcher only downloads; the store verifies the sha256 against the lock
and renames the file into the cache. Failures raise `SourceError` with one
line naming the snapshot and what to do.

- FRED: fredapi, `$FRED_API_KEY`, the observations endpoint at the lock's
  ALFRED vintage (realtime_start = realtime_end = vintage), written in the
  canonical CSV form of sources/fred_csv.py (ISO dates, values at cents).
  `FRED_API_ROOT` replaces https://api.stlouisfed.org/fred (e.g. a stand-in).
- HTTPS: streamed with requests (timeout) into the target file.
- Hugging Face Hub: `huggingface_hub.hf_hub_download` (HF_ENDPOINT honoured).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import socket
import tempfile
import threading
from decimal import Decimal
from pathlib import Path

from ctxrobust.errors import CtxRobustError, SourceError
from ctxrobust.sources import fred_csv
from ctxrobust.sources.lock import FredUpstream, HfUpstream, HttpsUpstream, Snapshot

HTTP_TIMEOUT = (10, 60)  # seconds: connect, read
FRED_TIMEOUT = 60.0  # seconds, per socket operation of one FRED request
FRED_ROOT_ENV = "FRED_API_ROOT"
FRED_KEY_HELP = "https://fred.stlouisfed.org/docs/api/api_key.html"
_TIMEOUT_LOCK = threading.Lock()


# --- FRED ----------------------------------------------------------------------


@contextlib.contextmanager
def _socket_timeout(seconds: float):
    """fredapi opens its URLs without a timeout: bound every socket it opens meanwhile."""
    with _TIMEOUT_LOCK:
        before = socket.getdefaulttimeout()
        socket.setdefaulttimeout(seconds)
        try:
            yield
        finally:
            socket.setdefaulttimeout(before)


def fred_observations(
    series_id: str, vintage: dt.date, *, api_key: str, root_url: str | None = None, timeout: float = FRED_TIMEOUT
) -> list[tuple[dt.date, Decimal | None]]:
    """The observations of `series_id` as FRED published them on `vintage` (ALFRED).

    fredapi's `get_series_all_releases` with realtime_start = realtime_end = vintage asks the
    observations endpoint for exactly that day's vintage: one row per observation date, none
    of the revisions published later. (`get_series_as_of_date` would fetch every release and
    keep all those up to the date, several rows per observation.)
    """
    from fredapi import Fred

    fred = Fred(api_key=api_key)
    fred.root_url = (root_url or os.environ.get(FRED_ROOT_ENV) or Fred.root_url).rstrip("/")
    day = vintage.isoformat()
    try:
        with _socket_timeout(timeout):
            releases = fred.get_series_all_releases(series_id, realtime_start=day, realtime_end=day)
    except Exception as exc:  # fredapi raises ValueError (API errors), URLError, timeouts, XML parse errors
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SourceError(f"FRED series {series_id} at vintage {day}: download failed ({reason})") from None
    rows: dict[dt.date, Decimal | None] = {}
    for record in releases.to_dict("records"):
        date = record["date"].date()
        if date in rows:
            raise SourceError(f"FRED series {series_id} at vintage {day}: FRED answered two values for {date}; expected one vintage")
        rows[date] = _fred_value(record["value"])
    if not rows:
        raise SourceError(
            f"FRED series {series_id} at vintage {day}: FRED returned no observations (the series has no vintage that early?)"
        )
    return sorted(rows.items())


def _fred_value(value) -> Decimal | None:
    import pandas as pd

    # FRED's "." arrives as NaN, or as NaT when fredapi's DataFrame transpose took the row for dates
    if value is None or pd.isna(value):
        return None
    return Decimal(repr(float(value)))  # the shortest decimal that reads back as fredapi's float


def fetch_fred(
    series_id: str, vintage: dt.date, dest: Path, *, api_key: str | None = None, root_url: str | None = None, timeout: float = FRED_TIMEOUT
) -> None:
    """Download a FRED series at an ALFRED vintage and write it to `dest` in the canonical CSV form."""
    api_key = api_key or os.environ.get("FRED_API_KEY") or None
    if not api_key:
        raise SourceError(
            f"FRED series {series_id}: FRED_API_KEY is not set; get a free key at {FRED_KEY_HELP} "
            "and export FRED_API_KEY=..., or set SOURCES_MIRROR=DIR"
        )
    observations = fred_observations(series_id, vintage, api_key=api_key, root_url=root_url, timeout=timeout)
    try:
        data = fred_csv.render(series_id, observations, f"FRED series {series_id}")
    except CtxRobustError as exc:
        raise SourceError(str(exc)) from None
    with open(dest, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


# --- HTTPS ---------------------------------------------------------------------


def fetch_https(url: str, dest: Path, *, timeout: tuple[float, float] = HTTP_TIMEOUT) -> None:
    """Stream `url` into `dest` (bytes exactly as served; no decompression of gzip'd files)."""
    import requests

    try:
        with requests.get(url, stream=True, timeout=timeout, headers={"Accept-Encoding": "identity"}) as response:
            if response.status_code != 200:
                raise SourceError(f"{url}: HTTP {response.status_code} {response.reason}")
            with open(dest, "wb") as handle:
                for block in response.iter_content(chunk_size=1 << 16):
                    handle.write(block)
    except requests.RequestException as exc:
        raise SourceError(f"{url}: download failed ({type(exc).__name__}: {_root_reason(exc)})") from None


# --- Hugging Face Hub -----------------------------------------------------------


def fetch_hf(repo_id: str, filename: str, revision: str, dest: Path, *, repo_type: str = "dataset") -> None:
    """Download one Hub file at `revision` (HF_ENDPOINT, read now, selects the Hub) into `dest`."""
    from huggingface_hub import hf_hub_download

    endpoint = os.environ.get("HF_ENDPOINT") or None
    where = f"{repo_type} {repo_id}@{revision}:{filename}"
    dest = Path(dest)
    workdir = Path(tempfile.mkdtemp(prefix=".hf-", dir=dest.parent))
    try:
        local = hf_hub_download(
            repo_id,
            filename,
            repo_type=repo_type,
            revision=revision,
            local_dir=workdir / "files",
            cache_dir=workdir / "hub-cache",
            endpoint=endpoint,
        )
        os.replace(local, dest)
    except Exception as exc:  # huggingface_hub raises its own HTTP / offline / not-found errors
        raise SourceError(f"Hugging Face {where}: download failed ({_root_reason(exc)})") from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _root_reason(exc: BaseException) -> str:
    """The first line of the innermost cause (e.g. the HTTP status behind a generic 'not found locally')."""
    chain = [exc]
    while (cause := chain[-1].__cause__ or chain[-1].__context__) is not None and cause not in chain:
        chain.append(cause)
    for error in reversed(chain):
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        if first:
            return first[:300]
    return type(exc).__name__


# --- Dispatch -------------------------------------------------------------------


def fetch(snapshot: Snapshot, dest: Path) -> None:
    """Write `snapshot`'s upstream bytes to `dest`; the caller verifies them."""
    upstream = snapshot.upstream
    if isinstance(upstream, FredUpstream):
        fetch_fred(upstream.series_id, upstream.vintage, dest)
    elif isinstance(upstream, HttpsUpstream):
        fetch_https(upstream.url, dest)
    elif isinstance(upstream, HfUpstream):
        fetch_hf(upstream.repo_id, upstream.filename, upstream.revision, dest, repo_type=upstream.repo_type)
    else:  # pragma: no cover - the lock model admits only the kinds above
        raise SourceError(f"{snapshot.name}: unknown upstream kind")


def upstream_remedy(snapshot: Snapshot) -> str:
    """What a user can do so the upstream fetch of this snapshot can work."""
    upstream = snapshot.upstream
    if isinstance(upstream, FredUpstream):
        return "set FRED_API_KEY and allow network access to api.stlouisfed.org"
    if isinstance(upstream, HttpsUpstream):
        host = upstream.url.split("/")[2]
        return f"allow network access to {host}"
    return "allow network access to the Hugging Face Hub (or set HF_ENDPOINT)"
