"""The canonical CSV form of a FRED series: the bytes the lock pins for every FRED snapshot.

A FRED snapshot reaches the store either as a mirror's file (written however its downloader
wrote it: ISO or M/D/YY dates, values as `12`, `12.0` or `12.00`) or as the FRED API's answer
at the lock's ALFRED vintage. Both are converted to one form before hashing:

    DATE,<SERIES_ID>        the series the observations belong to (the header, not the file name)
    1968-01-01,2.10         ISO date, value at cents; FRED's "." where there is no observation
    ...                     one row per observation, dates increasing, LF line ends, final LF

so the same observations give the same bytes whichever way they came. A value with a fraction
of a cent (Nevada's 12.006) keeps all its digits: the form is never lossy.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from decimal import Decimal, InvalidOperation
from typing import Iterable

from ctxrobust.errors import CtxRobustError

MISSING = "."
HEADER_DATE = "DATE"
CENTS = Decimal("0.01")

_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_MDY = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})")
_SERIES_ID = re.compile(r"[A-Z0-9]+")


def parse_date(text: str, previous: dt.date | None, where: str) -> dt.date:
    """An ISO (1968-01-01) or M/D/YY (1/1/68) date; two-digit years keep the series moving forward from the 1900s."""
    try:
        return _read_date(text, previous, where)
    except ValueError as exc:
        raise CtxRobustError(f"{where}: date {text!r} is not a calendar date ({exc})") from None


def _read_date(text: str, previous: dt.date | None, where: str) -> dt.date:
    match = _ISO.fullmatch(text)
    if match:
        return dt.date(int(match[1]), int(match[2]), int(match[3]))
    match = _MDY.fullmatch(text)
    if match is None:
        raise CtxRobustError(f"{where}: date {text!r} is neither YYYY-MM-DD nor M/D/YY; the snapshot is not a FRED series CSV")
    month, day, year = int(match[1]), int(match[2]), match[3]
    if len(year) == 4:
        return dt.date(int(year), month, day)
    # two-digit year: the first century (from 1900) that keeps the series moving forward
    century = 1900 if previous is None else (previous.year // 100) * 100
    candidate = dt.date(century + int(year), month, day)
    if previous is not None and candidate <= previous:
        candidate = dt.date(century + 100 + int(year), month, day)
    return candidate


def parse(text: str, where: str) -> tuple[str, list[tuple[dt.date, Decimal | None]]]:
    """(series id from the header, [(date, value or None for ".")]) of a FRED series CSV in any of the written forms."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or len(rows[0]) != 2 or rows[0][0].strip().upper() not in ("DATE", "OBSERVATION_DATE"):
        raise CtxRobustError(f"{where}:1: expected a 'DATE,<SERIES_ID>' header")
    series_id = rows[0][1].strip()
    if not _SERIES_ID.fullmatch(series_id):
        raise CtxRobustError(f"{where}:1: header names no series id ({series_id!r})")
    observations: list[tuple[dt.date, Decimal | None]] = []
    previous: dt.date | None = None
    for number, row in enumerate(rows[1:], start=2):
        at = f"{where}:{number}"
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise CtxRobustError(f"{at}: expected 'date,value', found {len(row)} fields")
        date = parse_date(row[0].strip(), previous, at)
        if previous is not None and date <= previous:
            raise CtxRobustError(f"{at}: date {date} does not follow {previous}; the series must run forward in time")
        observations.append((date, _value(row[1].strip(), at)))
        previous = date
    return series_id, observations


def _value(raw: str, where: str) -> Decimal | None:
    if raw == MISSING:
        return None
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise CtxRobustError(f"{where}: value {raw!r} is not a number") from None
    if not value.is_finite():
        raise CtxRobustError(f"{where}: value {raw!r} is not a number")
    return value


def cents(value: Decimal) -> str:
    """`value` written at cents (12 -> '12.00', 2.1 -> '2.10'); a fraction of a cent keeps its digits (12.006), never rounded."""
    fixed = value.quantize(CENTS)
    if fixed == value:
        return format(fixed, "f")
    return format(value.normalize(), "f")


def render(series_id: str, observations: Iterable[tuple[dt.date, Decimal | None]], where: str) -> bytes:
    """The canonical bytes of a series (observations in any order; a date given twice is refused)."""
    if not _SERIES_ID.fullmatch(series_id):
        raise CtxRobustError(f"{where}: {series_id!r} is not a FRED series id")
    rows = sorted(observations, key=lambda row: row[0])
    lines = [f"{HEADER_DATE},{series_id}"]
    for index, (date, value) in enumerate(rows):
        if index and rows[index - 1][0] == date:
            raise CtxRobustError(f"{where}: two observations dated {date}")
        lines.append(f"{date.isoformat()},{MISSING if value is None else cents(value)}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def canonical(raw: bytes, series_id: str, where: str) -> bytes:
    """The canonical form of a FRED CSV file, checked to hold `series_id` (the lock's series)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CtxRobustError(f"{where}: not UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start})") from None
    found, observations = parse(text, where)
    if found != series_id:
        raise CtxRobustError(f"{where}:1: header names series {found}, the lock pins {series_id}")
    if not observations:
        raise CtxRobustError(f"{where}: the series has no observations")
    return render(series_id, observations, where)
