"""FRED candidates (paper Appendix A.1, "Fact pairs" to "Candidate selection"; Table 5).

- time: one jurisdiction, two January-1 dates at most eight years apart, distinct values;
  distractors from other dates of the same jurisdiction (any year of its series);
- location: one date, two jurisdictions, distinct values; distractors from other
  jurisdictions on the target date;
- only jurisdictions whose file holds their own state series; G and S facts from
  the configured years (1990-2024); question, G and S from fixed templates;
- a fact only where its January 1 rate is known from the series (january_rate_known; config
  fred_known_january): the paper leaves out changes within a year (Appendix A.1, "Sources");
- never a fact the project's review excludes (review/fred_facts.jsonl, reviewed_problem).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from decimal import Decimal
from pathlib import Path
from typing import Callable

from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, templates
from ctxrobust.builders.misleadqa.distractors import Pool, with_distractors
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources.facts import Fact
from ctxrobust.sources.fred import FredSeries, january_facts

MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")


def spoken_date(iso: str) -> str:
    day = dt.date.fromisoformat(iso)
    return f"{MONTH_NAMES[day.month - 1]} {day.day}, {day.year}"


def usd(value: str) -> str:
    """'4.25' -> '$4.25', '12' -> '$12.00', '12.006' -> '$12.006' (never rounded)."""
    number = Decimal(value)
    if number == number.quantize(Decimal("0.01")):
        return f"${number.quantize(Decimal('0.01'))}"
    return f"${value}"


def at_cents(value: str) -> bool:
    """A rate in whole cents ('12.00', '4.25'); FRED's '12.006' (Nevada, 2024) is not one (criterion 4: options at one precision)."""
    number = Decimal(value)
    return number == number.quantize(Decimal("0.01"))


def recorded_years(by_code: dict[str, dict[str, Fact]]) -> set[int]:
    """The years the source table records: those in which some jurisdiction's January 1 value differs
    from the year before's. The Department of Labor's table behind FRED's series covers selected
    years (since 1988: 1988, 1991, 1992, 1994, 1996-1998, 2000 on), and FRED repeats the previous
    value for the years between (1989, 1990, 1993, 1995, 1999), so in those no series changes. Give
    the annual series only: a monthly one (Georgia's) is FRED's disaggregation of the annual values,
    and is read through the same years."""
    years: set[int] = set()
    for facts in by_code.values():
        values = {int(date[:4]): Decimal(fact.value) for date, fact in facts.items()}
        years.update(year for year, value in values.items() if year - 1 in values and values[year - 1] != value)
    return years


def january_rate_known(facts: dict[str, Fact], date: str, recorded: set[int]) -> str | None:
    """None when the series shows the rate in force on January 1 of `date`'s year, else why not.

    A recorded year's value is the rate the table gives for that year, which after a change within
    the year is the new rate (Minnesota 2014: $8.00, in force from August 1; $6.15 on January 1); the
    paper's questions leave out changes within a year (A.1). Take the last recorded year before this
    one and the first recorded year from this one on (this year, if it is recorded): when their values
    and this year's are equal, the rate held from a day of the first to a day of the second, which January 1 lies
    between, so it was the rate on January 1 (a minimum wage is not lowered and raised back between
    two equal records). Otherwise the day of the change is not in the series, and the fact is not used."""
    year = int(date[:4])
    values = {int(day[:4]): Decimal(fact.value) for day, fact in facts.items()}
    before = max((y for y in values if y < year and y in recorded), default=None)
    after = min((y for y in values if y >= year and y in recorded), default=None)
    if before is None or after is None:
        side = f"before {year}" if before is None else f"from {year} on"
        return f"the series records no year {side}, so whether the rate changed around January 1, {year} is unknown"
    if values[before] == values[year] == values[after]:
        return None
    if after == year or values[year] != values[before]:
        return (
            f"the {year} record ({usd(facts[date].value)}) differs from {before}'s ({usd(str(values[before]))}): the rate changed "
            f"between the two records, and the series does not say on what day, so the rate on January 1, {year} is not known"
        )
    return (
        f"the source table does not record {year} (FRED repeats {before}'s {usd(str(values[before]))}), and the rate changed before "
        f"{after}'s record ({usd(str(values[after]))}) on a day the series does not give, so the rate on January 1, {year} is not known"
    )


FRED_REVIEW = Path(__file__).with_name("review") / "fred_facts.jsonl"


@functools.cache
def fred_review() -> tuple[dict, ...]:
    """The project's review of FRED facts (review/fred_facts.jsonl, read by the maintainers against
    criterion 1 of Appendix B.1): one row per series and span of years whose values are not the state's
    basic minimum wage, with the reason."""
    rows = []
    for number, line in enumerate(FRED_REVIEW.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            ok = isinstance(row["series_id"], str) and isinstance(row["first_year"], int) and isinstance(row["reason"], str)
            ok = ok and (row["last_year"] is None or isinstance(row["last_year"], int))
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            raise CtxRobustError(f"{FRED_REVIEW}:{number}: expected series_id, first_year, last_year (or null) and reason")
        rows.append(row)
    return tuple(rows)


def reviewed_problem(series_id: str, year: int) -> str | None:
    """The review's reason to leave out `series_id`'s value for `year`, or None."""
    for row in fred_review():
        if row["series_id"] == series_id and row["first_year"] <= year <= (row["last_year"] or year):
            return f"the project's review excludes {series_id} from {row['first_year']}: {row['reason']}"
    return None


def registered_forms(gold: str, lure: str) -> list[tuple[str, str]]:
    """Every format of the gold rate G may use, each with the lure in the same format."""
    g, l = usd(gold), usd(lure)
    return [(g, l), (g[1:], l[1:])]


class FredFacts:
    """January-1 facts of every jurisdiction holding its own state series."""

    def __init__(self, series: list[FredSeries], first_year: int, last_year: int, known_january: bool = True):
        self.by_code: dict[str, dict[str, Fact]] = {}
        self.code: dict[str, str] = {}  # jurisdiction name -> code
        for s in sorted(series, key=lambda s: s.code):
            facts = january_facts(s)
            if facts:
                self.by_code[s.code] = {f.scope.time: f for f in facts}
                self.code[s.jurisdiction] = s.code
        self.first_year, self.last_year = first_year, last_year
        self.known_january = known_january  # facts only where january_rate_known allows
        annual = {s.code for s in series if s.frequency == "annual"}
        self.recorded = recorded_years({code: facts for code, facts in self.by_code.items() if code in annual})

    def in_window(self, code: str) -> list[str]:
        return sorted(d for d in self.by_code[code] if self.first_year <= int(d[:4]) <= self.last_year)

    def cluster(self, fact: Fact) -> str:
        return f"fred-{self.code[fact.subject]}"


def _distinct_values(ff: FredFacts, facts: list[Fact]) -> list[Distractor]:
    """One distractor per distinct value (its earliest fact), in date / jurisdiction order; never a value
    the project's review leaves out (review/fred_facts.jsonl)."""
    seen: dict[Decimal, Distractor] = {}
    for fact in facts:
        if not at_cents(fact.value) or reviewed_problem(fact.provenance.series_id, int(fact.scope.time[:4])):
            continue
        seen.setdefault(Decimal(fact.value), Distractor(text=usd(fact.value), provenance=fact.provenance, cluster_id=ff.cluster(fact)))
    return list(seen.values())


def _spec(ff: FredFacts, seed: int, cid: str, dimension: str, gold: Fact, lure: Fact, others: Callable[[], list[Fact]]) -> Spec:
    """A fact pair (gold at the target scope, lure at the alternative) with the facts its distractors come from."""

    def make(spec: Spec) -> Candidate:
        for role, fact in (("gold", gold), ("lure", lure)):
            if not at_cents(fact.value):
                raise Excluded(
                    "value_not_at_cents",
                    f"the {role} rate {fact.value} ({fact.provenance.snapshot} line {fact.provenance.line}) is not a rate in whole cents",
                )
            unknown = ff.known_january and january_rate_known(ff.by_code[ff.code[fact.subject]], fact.scope.time, ff.recorded)
            if unknown:
                raise Excluded("january_rate_unknown", f"{role} ({fact.subject}, {fact.scope.time}): {unknown}")
            reviewed = reviewed_problem(fact.provenance.series_id, int(fact.scope.time[:4]))
            if reviewed:
                raise Excluded("review_fred_fact", f"{role} ({fact.subject}, {fact.scope.time}): {reviewed}")
        t = templates()["fred"]
        date = spoken_date(gold.scope.time)
        candidate = spec.candidate(
            question=t["question"].format(jurisdiction=gold.subject, date=date),
            target_scope=gold.scope,
            alt_scope=lure.scope,
            gold=usd(gold.value),
            lure=usd(lure.value),
            g_text=t["context"].format(date=date, jurisdiction=gold.subject, value=usd(gold.value)),
            s_text=t["context"].format(date=spoken_date(lure.scope.time), jurisdiction=lure.subject, value=usd(lure.value)),
            registered=registered_forms(gold.value, lure.value),
            provenance_g=gold.provenance,
            provenance_s=lure.provenance,
            construction={"G": "template", "S": "template"},
        )
        return with_distractors(candidate, Pool(_distinct_values(ff, others())), seed)

    return Spec(
        id=cid,
        source="fred",
        scope_dimension=dimension,
        cluster_id=ff.cluster(gold),
        target_key=f"fred:{ff.code[gold.subject]}@{gold.scope.time}",
        alt_key=f"fred:{ff.code[lure.subject]}@{lure.scope.time}",
        make=make,
    )


def time_specs(ff: FredFacts, seed: int, max_gap_years: int) -> list[Spec]:
    """Same jurisdiction, dates at most `max_gap_years` apart, distinct values; distractors from its other dates."""
    specs = []
    for code, facts in ff.by_code.items():
        window = ff.in_window(code)
        for target in window:
            for alt in window:
                gold, lure = facts[target], facts[alt]
                if alt == target or abs(int(alt[:4]) - int(target[:4])) > max_gap_years or Decimal(gold.value) == Decimal(lure.value):
                    continue
                others = lambda facts=facts, pair=(target, alt): [f for d, f in sorted(facts.items()) if d not in pair]
                specs.append(_spec(ff, seed, f"fred-time-{code}-{target}-{alt}", "time", gold, lure, others))
    return specs


def location_specs(ff: FredFacts, seed: int) -> list[Spec]:
    """Same date, two jurisdictions, distinct values; distractors from other jurisdictions on that date."""
    specs = []
    for date in sorted({d for code in ff.by_code for d in ff.in_window(code)}):
        present = [code for code in ff.by_code if date in ff.by_code[code]]
        for code in present:
            for other in present:
                gold, lure = ff.by_code[code][date], ff.by_code[other][date]
                if other == code or Decimal(gold.value) == Decimal(lure.value):
                    continue
                others = lambda date=date, pair=(code, other), present=present: [ff.by_code[c][date] for c in present if c not in pair]
                specs.append(_spec(ff, seed, f"fred-location-{code}-{other}-{date}", "location", gold, lure, others))
    return specs
