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

from builders.misleadqa.candidate import Candidate, Distractor, Spec, templates
from builders.misleadqa.distractors import Pool, choose, item_rng
from builders.misleadqa.substitution import substitute
from sources.facts import Fact
from sources.fred import FredSeries, january_facts

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


def registered_forms(gold: str, lure: str) -> list[tuple[str, str]]:
    """Every format of the gold rate G may use, each with the lure in the same format."""
    g, l = usd(gold), usd(lure)
    return [(g, l), (g[1:], l[1:])]


class FredFacts:
    """January-1 facts of every jurisdiction holding its own state series."""

    def __init__(self, series: list[FredSeries], first_year: int, last_year: int):
        self.by_code: dict[str, dict[str, Fact]] = {}
        self.name: dict[str, str] = {}
        for s in sorted(series, key=lambda s: s.code):
            facts = january_facts(s)
            if facts:
                self.by_code[s.code] = {f.scope.time: f for f in facts}
                self.name[s.code] = s.jurisdiction
        self.first_year, self.last_year = first_year, last_year

    def in_window(self, code: str) -> list[str]:
        return sorted(d for d in self.by_code[code] if self.first_year <= int(d[:4]) <= self.last_year)


def _candidate(ff: FredFacts, seed: int, cid: str, dimension: str, gold: Fact, lure: Fact, pool: list[Distractor]) -> Candidate:
    t = templates()["fred"]
    code = next(c for c, name in ff.name.items() if name == gold.subject)
    question = t["question"].format(jurisdiction=gold.subject, date=spoken_date(gold.scope.time))
    g_text = t["context"].format(date=spoken_date(gold.scope.time), jurisdiction=gold.subject, value=usd(gold.value))
    s_text = t["context"].format(date=spoken_date(lure.scope.time), jurisdiction=lure.subject, value=usd(lure.value))
    registered = registered_forms(gold.value, lure.value)
    f_text, _ = substitute(g_text, registered)
    distractors = choose(Pool(pool, []), [usd(gold.value), usd(lure.value)], [question, g_text, s_text, f_text], item_rng(seed, cid, "distractors"))
    return Candidate(
        id=cid,
        source="fred",
        scope_dimension=dimension,
        split="main",
        cluster_id=f"fred-{code}",
        question=question,
        target_scope=gold.scope,
        alt_scope=lure.scope,
        gold=usd(gold.value),
        lure=usd(lure.value),
        g_text=g_text,
        s_text=s_text,
        registered=registered,
        provenance_g=gold.provenance,
        provenance_s=lure.provenance,
        distractors=distractors,
        construction={"G": "template", "S": "template"},
    )


def _distinct_values(facts: list[Fact], cluster_of) -> list[Distractor]:
    """One distractor per distinct value (its earliest fact), in date/jurisdiction order."""
    seen: dict[Decimal, Distractor] = {}
    for fact in facts:
        value = Decimal(fact.value)
        if value not in seen:
            seen[value] = Distractor(text=usd(fact.value), provenance=fact.provenance, cluster_id=cluster_of(fact))
    return list(seen.values())


def time_specs(ff: FredFacts, seed: int, max_gap_years: int) -> list[Spec]:
    specs = []
    for code, facts in ff.by_code.items():
        window = ff.in_window(code)
        for target in window:
            for alt in window:
                if alt == target or abs(int(alt[:4]) - int(target[:4])) > max_gap_years:
                    continue
                gold, lure = facts[target], facts[alt]
                if Decimal(gold.value) == Decimal(lure.value):
                    continue  # not a fact pair: the values must differ

                def make(gold=gold, lure=lure, code=code, target=target, alt=alt, facts=facts):
                    others = [f for d, f in sorted(facts.items()) if d not in (target, alt)]
                    pool = _distinct_values(others, lambda f: f"fred-{code}")
                    return _candidate(ff, seed, f"fred-time-{code}-{target}-{alt}", "time", gold, lure, pool)

                specs.append(Spec(
                    id=f"fred-time-{code}-{target}-{alt}", source="fred", scope_dimension="time",
                    cluster_id=f"fred-{code}", target_key=f"fred:{code}@{target}", alt_key=f"fred:{code}@{alt}", make=make,
                ))
    return specs


def location_specs(ff: FredFacts, seed: int) -> list[Spec]:
    specs = []
    dates = sorted({d for code in ff.by_code for d in ff.in_window(code)})
    for date in dates:
        present = [code for code in ff.by_code if date in ff.by_code[code]]
        for code in present:
            for other in present:
                if other == code:
                    continue
                gold, lure = ff.by_code[code][date], ff.by_code[other][date]
                if Decimal(gold.value) == Decimal(lure.value):
                    continue

                def make(gold=gold, lure=lure, code=code, other=other, date=date, present=present):
                    others = [ff.by_code[c][date] for c in present if c not in (code, other)]
                    pool = _distinct_values(others, lambda f: f"fred-{_code_of(ff, f)}")
                    return _candidate(ff, seed, f"fred-location-{code}-{other}-{date}", "location", gold, lure, pool)

                specs.append(Spec(
                    id=f"fred-location-{code}-{other}-{date}", source="fred", scope_dimension="location",
                    cluster_id=f"fred-{code}", target_key=f"fred:{code}@{date}", alt_key=f"fred:{other}@{date}", make=make,
                ))
    return specs


def _code_of(ff: FredFacts, fact: Fact) -> str:
    return next(c for c, name in ff.name.items() if name == fact.subject)
