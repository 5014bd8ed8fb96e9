"""Scope normalisation and overlap (paper Section 3.1, Appendix A.1 "Questions and contexts").

Scopes are compared after normalising years, jurisdictions and entity
identifiers, and an alternative scope must not cover the target scope (a
time span that includes the target date, a region that contains the target
place). Two scopes that are equal or overlap cannot form a fact pair.
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache

from ctxrobust.builders.misleadqa import gazetteer
from ctxrobust.builders.misleadqa.normalise import MONTHS, tokens

_LOWER_WORDS = frozenset({"and", "of", "the", "upon", "on", "de", "del", "da", "la"})  # inside a place name


@lru_cache(maxsize=1 << 16)
def time_interval(text: str) -> tuple[dt.date, dt.date] | None:
    """'1986' -> the whole year; 'September 29, 2008' -> that day; ISO dates; 'May 2010' -> the month."""
    text = text.strip()
    if re.fullmatch(r"\d{4}", text):
        year = int(text)
        return dt.date(year, 1, 1), dt.date(year, 12, 31)
    match = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text)
    if match:
        day = dt.date(int(match[1]), int(match[2]), int(match[3]))
        return day, day
    toks = tokens(text)
    try:
        if len(toks) == 3 and toks[0] in MONTHS and toks[1].isdigit() and re.fullmatch(r"\d{4}", toks[2]):
            day = dt.date(int(toks[2]), MONTHS[toks[0]], int(toks[1]))
            return day, day
        if len(toks) == 3 and toks[1] in MONTHS and toks[0].isdigit() and re.fullmatch(r"\d{4}", toks[2]):
            day = dt.date(int(toks[2]), MONTHS[toks[1]], int(toks[0]))
            return day, day
        if len(toks) == 2 and toks[0] in MONTHS and re.fullmatch(r"\d{4}", toks[1]):
            year, month = int(toks[1]), MONTHS[toks[0]]
            last = dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)
            return dt.date(year, month, 1), last
    except ValueError:
        return None
    return None


def times_overlap(a: str, b: str) -> bool | None:
    """True when the two time scopes share a day; None when either cannot be read."""
    ia, ib = time_interval(a), time_interval(b)
    if ia is None or ib is None:
        return None
    return ia[0] <= ib[1] and ib[0] <= ia[1]


def _gazetteer() -> dict:
    return gazetteer.extra()


def canonical_location(text: str, peers: tuple[str, ...] = ()) -> str:
    """The canonical name of the place (gazetteer.resolve), else the folded name with aliases resolved
    ('the US' -> 'united states', 'va' -> 'virginia')."""
    place = gazetteer.resolve(text, list(peers))
    return place.key if place is not None else gazetteer.alias(gazetteer.fold(text))


def is_place(text: str) -> bool:
    """A place the gazetteer packages know (countries, first-level subdivisions, cities of 100,000 or
    more), a historical state or region, or a city written with its US state ('albany ny')."""
    return bool(gazetteer.lookup(text))


def display_location(text: str) -> str:
    """How a context names a place inside a sentence: the source's spelling with each word capitalised
    ('saudi arabia' -> 'Saudi Arabia', 'charlotte nc' -> 'Charlotte NC', 'us' -> 'US'), and 'the' where
    English names the place with it ('the United States', 'the UK')."""
    gaz = _gazetteer()
    words = " ".join(text.split()).split(" ")
    if words[0].lower() == "the":
        words = words[1:]
    shown = []
    last = len(words) - 1
    for position, word in enumerate(words):
        folded = word.lower()
        state_after_city = position == last > 0 and folded in gaz["us_state_abbreviations"]  # 'NC' in 'Charlotte NC'
        alone = (
            last == 0 and len(folded) <= 3 and (folded in gaz["aliases"] or folded in gaz["us_state_abbreviations"])
        )  # 'US', 'VA', not 'IRAN'
        if state_after_city or alone:
            shown.append(word.upper())
        elif folded in _LOWER_WORDS and position > 0:
            shown.append(folded)
        elif word.isupper() and len(word) > 3:  # 'IRAN' as the source shouts it
            shown.append(word.title())
        else:
            shown.append(word[:1].upper() + word[1:])
    name = " ".join(shown)
    return f"the {name}" if " ".join(tokens(text)) in gaz["definite_article"] else name


def regions_containing(place: str) -> set[str]:
    """Every region the place lies within, following parents transitively (the larger place a name
    names, gazetteer.resolve; every reading of a name that stays ambiguous: 'georgia' lies within
    the United States)."""
    resolved = gazetteer.resolve(place, [])
    found: set[str] = set()
    for candidate in (resolved,) if resolved is not None else gazetteer.lookup(place):
        found |= gazetteer.containing(candidate)
    return found


def locations_overlap(a: str, b: str) -> bool:
    """Same place after normalisation, one within the other, or one name a part of the other."""
    ca, cb = canonical_location(a), canonical_location(b)
    if ca == cb:
        return True
    if ca in regions_containing(b) or cb in regions_containing(a):
        return True
    ta, tb = set(ca.split()), set(cb.split())
    return ta < tb or tb < ta  # 'washington' / 'washington state', 'charlotte' / 'charlotte nc'


def canonical_entity(text: str) -> str:
    return " ".join(tokens(text))


def canonical_condition(text: str) -> str:
    return " ".join(tokens(text))


@lru_cache(maxsize=1 << 16)
def scopes_overlap(dimension: str, a: str, b: str) -> bool:
    """Whether two values of one scope dimension are the same scope or overlap; unreadable times count as overlapping."""
    if dimension == "time":
        result = times_overlap(a, b)
        return True if result is None else result
    if dimension == "location":
        return locations_overlap(a, b)
    if dimension == "entity":
        return canonical_entity(a) == canonical_entity(b)
    if dimension == "condition":
        return canonical_condition(a) == canonical_condition(b)
    raise ValueError(f"unknown scope dimension {dimension!r}")
