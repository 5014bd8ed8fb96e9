"""FRED candidates (paper Appendix A.1, "Fact pairs" to "Candidate selection"; Table 5).

- time: one jurisdiction, two January-1 dates at most eight years apart, distinct values;
  distractors from other dates of the same jurisdiction (any year of its series);
- location: one date, two jurisdictions, distinct values; distractors from other
  jurisdictions on the target date;
- only jurisdictions whose file holds their own state series; G and S facts from
  the configured years (1990-2024); question, G and S from fixed templates.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Callable

from ctxrobust.builders.misleadqa.candidate import Candidate, Distractor, Excluded, Spec, templates
from ctxrobust.builders.misleadqa.distractors import Pool, with_distractors
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


def registered_forms(gold: str, lure: str) -> list[tuple[str, str]]:
    """Every format of the gold rate G may use, each with the lure in the same format."""
    g, l = usd(gold), usd(lure)
    return [(g, l), (g[1:], l[1:])]


class FredFacts:
    """January-1 facts of every jurisdiction holding its own state series."""

    def __init__(self, series: list[FredSeries], first_year: int, last_year: int):
        self.by_code: dict[str, dict[str, Fact]] = {}
        self.code: dict[str, str] = {}  # jurisdiction name -> code
        for s in sorted(series, key=lambda s: s.code):
            facts = january_facts(s)
            if facts:
                self.by_code[s.code] = {f.scope.time: f for f in facts}
                self.code[s.jurisdiction] = s.code
        self.first_year, self.last_year = first_year, last_year

    def in_window(self, code: str) -> list[str]:
        return sorted(d for d in self.by_code[code] if self.first_year <= int(d[:4]) <= self.last_year)

    def cluster(self, fact: Fact) -> str:
        return f"fred-{self.code[fact.subject]}"


def _distinct_values(ff: FredFacts, facts: list[Fact]) -> list[Distractor]:
    """One distractor per distinct value (its earliest fact), in date / jurisdiction order."""
    seen: dict[Decimal, Distractor] = {}
    for fact in facts:
        if not at_cents(fact.value):
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
