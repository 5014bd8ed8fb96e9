"""FRED state minimum-wage series (STTMINWG<XX>) -> typed facts.

A snapshot file is `DATE,<SERIES_ID>` CSV, one observation per row, value in
US dollars per hour; the store hands out the canonical form (fred_csv.py: ISO
dates, values at cents), and the adapter also reads a mirror's file as written.
It reads what the file holds, not what its name says:
- the header names the series; a file whose header names the federal series
  STTMINWGFG (states without a minimum-wage law) holds no state fact;
- dates are ISO (1968-01-01) or M/D/YY (1/1/68); two-digit years are resolved
  so that the series runs forward in time, starting in the 1900s;
- a series is annual (every date January 1) or monthly (every date the first
  of a month); a monthly series' January observations are its values on
  January 1;
- values are exact decimals whatever their written precision (12, 12.0, 12.00);
  FRED's "." (no observation) is kept as a missing row, never a value.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.facts import Fact, Provenance, Scope
from ctxrobust.sources.fred_csv import parse_date

SERIES_PREFIX = "STTMINWG"
FEDERAL_SERIES = "STTMINWGFG"
ATTRIBUTE = "basic state minimum wage (US dollars per hour)"

JURISDICTIONS = {
    "AK": "Alaska",
    "AL": "Alabama",
    "AR": "Arkansas",
    "AZ": "Arizona",
    "CA": "California",
    "CO": "Colorado",
    "CT": "Connecticut",
    "DC": "the District of Columbia",
    "DE": "Delaware",
    "FL": "Florida",
    "GA": "Georgia",
    "HI": "Hawaii",
    "IA": "Iowa",
    "ID": "Idaho",
    "IL": "Illinois",
    "IN": "Indiana",
    "KS": "Kansas",
    "KY": "Kentucky",
    "LA": "Louisiana",
    "MA": "Massachusetts",
    "MD": "Maryland",
    "ME": "Maine",
    "MI": "Michigan",
    "MN": "Minnesota",
    "MO": "Missouri",
    "MS": "Mississippi",
    "MT": "Montana",
    "NC": "North Carolina",
    "ND": "North Dakota",
    "NE": "Nebraska",
    "NH": "New Hampshire",
    "NJ": "New Jersey",
    "NM": "New Mexico",
    "NV": "Nevada",
    "NY": "New York",
    "OH": "Ohio",
    "OK": "Oklahoma",
    "OR": "Oregon",
    "PA": "Pennsylvania",
    "RI": "Rhode Island",
    "SC": "South Carolina",
    "SD": "South Dakota",
    "TN": "Tennessee",
    "TX": "Texas",
    "UT": "Utah",
    "VA": "Virginia",
    "VT": "Vermont",
    "WA": "Washington",
    "WI": "Wisconsin",
    "WV": "West Virginia",
    "WY": "Wyoming",
}

_SERIES = re.compile(r"STTMINWG([A-Z]{2})(M?)")


class Observation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    date: dt.date
    value: Decimal | None  # None: FRED's "." (no observation)
    raw: str  # the value as written
    line: int


class FredSeries(BaseModel):
    """One snapshot file, as read."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    snapshot: str  # lock name, e.g. "fred/STTMINWGNE.csv"
    sha256: str
    file_series: str  # the series the file name says, e.g. "STTMINWGAL"
    series_id: str  # the series the header names, e.g. "STTMINWGFG"
    code: str  # jurisdiction code from the file name, e.g. "AL"
    jurisdiction: str  # e.g. "Alabama"
    frequency: Literal["annual", "monthly"]
    observations: tuple[Observation, ...]

    @property
    def is_federal(self) -> bool:
        return self.series_id == FEDERAL_SERIES

    @property
    def holds_own_series(self) -> bool:
        """True when the file holds the state's own series (header == file name, not federal)."""
        return not self.is_federal and self.series_id == self.file_series

    def january_values(self) -> dict[dt.date, Observation]:
        """Observations dated January 1 that carry a value: the value on that date."""
        return {o.date: o for o in self.observations if o.date.month == 1 and o.date.day == 1 and o.value is not None}


def canonical_decimal(value: Decimal) -> str:
    """Shortest exact text: 12.00 -> '12', 4.250 -> '4.25', 12.006 -> '12.006'."""
    text = format(value.normalize(), "f")
    return text


def _frequency(dates: list[dt.date], where: str) -> Literal["annual", "monthly"]:
    if not dates:
        raise CtxRobustError(f"{where}: the series has no observations; re-fetch the snapshot")
    if all(d.month == 1 and d.day == 1 for d in dates) and len({d.year for d in dates}) == len(dates):
        return "annual"
    if all(d.day == 1 for d in dates):
        return "monthly"
    raise CtxRobustError(f"{where}: observation dates are neither yearly (January 1) nor monthly (first of the month)")


def read_series(path: Path, snapshot: str, sha256: str) -> FredSeries:
    """Read one STTMINWG<XX>.csv snapshot file."""
    file_series = Path(snapshot).stem
    file_match = _SERIES.fullmatch(file_series)
    if file_match is None:
        raise CtxRobustError(f"{snapshot}: file name is not STTMINWG<XX>.csv; only state minimum-wage series are read")
    code = file_match[1]
    if code not in JURISDICTIONS:
        raise CtxRobustError(f"{snapshot}: {code!r} is not a US state or DC code")
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    if not rows or len(rows[0]) != 2 or rows[0][0].strip().upper() not in ("DATE", "OBSERVATION_DATE"):
        raise CtxRobustError(f"{snapshot}:1: expected a 'DATE,<SERIES_ID>' header")
    series_id = rows[0][1].strip()
    if not re.fullmatch(r"[A-Z0-9]+", series_id):
        raise CtxRobustError(f"{snapshot}:1: header names no series id ({series_id!r})")
    observations: list[Observation] = []
    previous: dt.date | None = None
    for number, row in enumerate(rows[1:], start=2):
        where = f"{snapshot}:{number}"
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 2:
            raise CtxRobustError(f"{where}: expected 'date,value', found {len(row)} fields")
        date = parse_date(row[0].strip(), previous, where)
        if previous is not None and date <= previous:
            raise CtxRobustError(f"{where}: date {date} does not follow {previous}; the series must run forward in time")
        raw = row[1].strip()
        if raw == ".":
            value = None
        else:
            try:
                value = Decimal(raw)
            except InvalidOperation:
                raise CtxRobustError(f"{where}: value {raw!r} is not a number") from None
            if not value.is_finite() or value < 0:
                raise CtxRobustError(f"{where}: value {raw!r} is not a wage")
        observations.append(Observation(date=date, value=value, raw=raw, line=number))
        previous = date
    frequency = _frequency([o.date for o in observations], snapshot)
    return FredSeries(
        snapshot=snapshot,
        sha256=sha256,
        file_series=file_series,
        series_id=series_id,
        code=code,
        jurisdiction=JURISDICTIONS[code],
        frequency=frequency,
        observations=tuple(observations),
    )


def january_facts(series: FredSeries) -> list[Fact]:
    """The state's basic minimum wage on January 1 of each year; none for a federal-series file."""
    if not series.holds_own_series:
        return []
    facts = []
    for date, obs in sorted(series.january_values().items()):
        facts.append(
            Fact(
                subject=series.jurisdiction,
                attribute=ATTRIBUTE,
                scope=Scope(location=series.jurisdiction, time=date.isoformat()),
                value=canonical_decimal(obs.value),
                provenance=Provenance(
                    snapshot=series.snapshot,
                    sha256=series.sha256,
                    line=obs.line,
                    series_id=series.series_id,
                    date=date.isoformat(),
                    field=series.series_id,
                    value=obs.raw,
                ),
            )
        )
    return facts


def observation_on(series: FredSeries, date: str) -> Observation | None:
    """The observation dated `date` (ISO), or None."""
    wanted = dt.date.fromisoformat(date)
    for obs in series.observations:
        if obs.date == wanted:
            return obs
    return None
