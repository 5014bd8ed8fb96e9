"""A local stand-in of the FRED observations endpoint with ALFRED vintages, answering as fredapi expects.

Each observation row holds a value over a real-time period [realtime_start, realtime_end]: the
days on which FRED published that value for that date. A request names a real-time period
(`realtime_start`, `realtime_end`, both today when absent) and gets every row whose period
overlaps it, with the period clipped to the request's, as XML (fredapi asks for no file_type).
Errors are FRED's: HTTP 400 with `<error code=... message=.../>` for a bad key, an unknown
series, a malformed date or a period that ends before it starts. Runs on 127.0.0.1 only.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import quoteattr

EARLIEST, LATEST = dt.date(1776, 7, 4), dt.date(9999, 12, 31)
XML = {"Content-Type": "text/xml; charset=UTF-8"}


@dataclass(frozen=True)
class Row:
    date: dt.date
    value: str  # as FRED writes it: "7.25", "."
    realtime_start: dt.date
    realtime_end: dt.date = LATEST


def _error(code: int, message: str) -> tuple[int, dict, bytes]:
    body = f'<?xml version="1.0" encoding="utf-8" ?>\n<error code="{code}" message={quoteattr(message)}/>\n'
    return code, XML, body.encode("utf-8")


@dataclass
class FredStandIn:
    """series id -> rows; `requests` records every query; `delay` seconds before answering (timeouts)."""

    series: dict[str, list[Row]] = field(default_factory=dict)
    key: str = "test-key"
    today: dt.date = dt.date(2026, 12, 1)
    delay: float = 0.0
    broken: bool = False  # answer HTTP 500 with an HTML page, as a failing proxy would
    requests: list[dict] = field(default_factory=list)

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict, bytes]:
        self.requests.append({"path": path, **{k: v[-1] for k, v in query.items()}})
        if self.delay:
            time.sleep(self.delay)
        if self.broken:
            return 500, {"Content-Type": "text/html"}, b"<html><body>Internal Server Error</body></html>"
        if path != "/fred/series/observations":
            return _error(404, "Not Found.")
        if query.get("api_key", [""])[-1] != self.key:
            return _error(
                400,
                "Bad Request.  The value for variable api_key is not registered.  Read https://fred.stlouisfed.org/docs/api/api_key.html for more information.",
            )
        period = []
        for name, default in (("realtime_start", self.today), ("realtime_end", self.today)):
            text = query.get(name, [default.isoformat()])[-1]  # fredapi may repeat a parameter: the last one counts
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                return _error(400, f"Bad Request.  Variable {name} is not a date in YYYY-MM-DD format.")
            period.append(dt.date.fromisoformat(text))
        start, end = period
        if start > end:
            return _error(400, "Bad Request.  The value for variable realtime_start is after the value for variable realtime_end.")
        series_id = query.get("series_id", [""])[-1]
        if series_id not in self.series:
            return _error(400, "Bad Request.  The series does not exist.")
        rows = [r for r in self.series[series_id] if r.realtime_start <= end and r.realtime_end >= start]
        rows.sort(key=lambda r: (r.date, r.realtime_start))
        lines = "".join(
            f'  <observation realtime_start="{max(r.realtime_start, start)}" realtime_end="{min(r.realtime_end, end)}" '
            f'date="{r.date}" value={quoteattr(r.value)}/>\n'
            for r in rows
        )
        body = (
            '<?xml version="1.0" encoding="utf-8" ?>\n'
            f'<observations realtime_start="{start}" realtime_end="{end}" observation_start="1600-01-01" '
            'observation_end="9999-12-31" units="lin" output_type="1" file_type="xml" order_by="observation_date" '
            f'sort_order="asc" count="{len(rows)}" offset="0" limit="100000">\n{lines}</observations>\n'
        )
        return 200, XML, body.encode("utf-8")


class Serving:
    """Runs a FredStandIn on 127.0.0.1 until `close()`; `root` is the URL to give fredapi."""

    def __init__(self, stand_in: FredStandIn):
        self.stand_in = stand_in

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                parts = urlsplit(self.path)
                status, headers, body = stand_in.answer(parts.path, parse_qs(parts.query, keep_blank_values=True))
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}/fred"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


def vintaged(observations: list[tuple[dt.date, str]], published: dt.date) -> list[Row]:
    """Rows published on `published` and never revised."""
    return [Row(date, value, published) for date, value in observations]


def revise(rows: list[Row], date: dt.date, value: str, on: dt.date) -> list[Row]:
    """`rows` with the value for `date` replaced from `on` (the old row ends the day before)."""
    out = []
    for row in rows:
        if row.date == date and row.realtime_start < on <= row.realtime_end:
            out.append(Row(row.date, row.value, row.realtime_start, on - dt.timedelta(days=1)))
            out.append(Row(row.date, value, on, row.realtime_end))
        else:
            out.append(row)
    return out
