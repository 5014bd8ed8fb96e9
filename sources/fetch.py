"""Upstream fetchers: write one snapshot's bytes to a path the store chose.

Each fetcher only downloads; the store verifies the sha256 against the lock
and renames the file into the cache. Failures raise `SourceError` with one
line naming the snapshot and what to do.

- FRED: `fredapi.Fred(api_key=$FRED_API_KEY).get_series(series_id)`, written
  as `DATE,<SERIES_ID>` CSV (ISO dates, values in their shortest decimal form,
  `.` for a missing value as FRED marks it, LF line ends).
- HTTPS: streamed with requests (timeout) into the target file.
- Hugging Face Hub: `huggingface_hub.hf_hub_download` (HF_ENDPOINT honoured).
"""
from __future__ import annotations

import datetime as dt
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from ctxrobust.sources.lock import FredUpstream, HfUpstream, HttpsUpstream, Snapshot
from ctxrobust.errors import SourceError

HTTP_TIMEOUT = (10, 60)  # seconds: connect, read
FRED_MISSING = "."
FRED_KEY_HELP = "https://fred.stlouisfed.org/docs/api/api_key.html"


# --- FRED ----------------------------------------------------------------------


def format_fred_value(value: float) -> str:
    """Shortest decimal that reads back as `value`; whole numbers without '.0'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return FRED_MISSING
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def render_fred_csv(series_id: str, observations: Iterable[tuple[dt.date, float]]) -> str:
    """The CSV text of a series: header, then one `YYYY-MM-DD,value` row per observation, by date."""
    rows = sorted((date if isinstance(date, dt.date) else date.date(), value) for date, value in observations)
    lines = [f"DATE,{series_id}"]
    lines += [f"{date.isoformat()},{format_fred_value(value)}" for date, value in rows]
    return "\n".join(lines) + "\n"


def fred_csv_reproducible(path: Path) -> bool:
    """True when a file is byte-for-byte what `render_fred_csv` writes for the values it holds."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
        header, *body = text.splitlines()
        series_id = header.split(",", 1)[1]
        observations = []
        for line in body:
            date_text, value_text = line.split(",")
            value = math.nan if value_text == FRED_MISSING else float(value_text)
            observations.append((dt.date.fromisoformat(date_text), value))
    except (UnicodeDecodeError, ValueError, IndexError):
        return False
    return render_fred_csv(series_id, observations).encode("utf-8") == raw


def fetch_fred(series_id: str, dest: Path, *, api_key: str | None = None, root_url: str | None = None) -> None:
    """Download a FRED series with fredapi and write it to `dest` in the mirror's CSV form."""
    api_key = api_key or os.environ.get("FRED_API_KEY") or None
    if not api_key:
        raise SourceError(
            f"FRED series {series_id}: FRED_API_KEY is not set; get a free key at {FRED_KEY_HELP} "
            "and export FRED_API_KEY=..., or set SOURCES_MIRROR=DIR"
        )
    from fredapi import Fred

    fred = Fred(api_key=api_key)
    if root_url is not None:
        fred.root_url = root_url.rstrip("/")
    try:
        series = fred.get_series(series_id)
    except Exception as exc:  # fredapi raises ValueError, URLError, XML parse errors
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise SourceError(f"FRED series {series_id}: download failed ({reason})") from None
    observations = [(stamp.date(), float(value)) for stamp, value in series.items()]
    if not observations:
        raise SourceError(f"FRED series {series_id}: FRED returned no observations")
    Path(dest).write_text(render_fred_csv(series_id, observations), encoding="utf-8", newline="\n")


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
        raise SourceError(f"{url}: download failed ({type(exc).__name__}: {exc})") from None


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
        fetch_fred(upstream.series_id, dest)
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
