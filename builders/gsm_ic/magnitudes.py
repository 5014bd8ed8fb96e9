"""Magnitude classes: what an inserted number counts, and the numbers a reader believes for it.

Each template's number belongs to a class (an identifier, a favourite's audience, a factory's output, a
shop's week, a business's year, a town, a distance on an odometer, an elevation, ...). One place decides it:
the first phrase rule below its text matches (an identifier's class for a template marked so); a template no
rule matches is in the class "count", bounded by its own min and max alone. A template's `magnitude` in
templates.json or reviewed.json declares that class and must agree with the rules (lexicon.Template refuses
one that does not). The numbers a template takes lie
in its own bounds intersected with its class's (`bounds`), for in-range and out-of-range draws alike [§3.1]:
a cell the intersection cannot fill takes another template, never a number outside it. The validator
replays the class of every variant from these same rules (check `magnitude_plausible`).

Holder floors: a count held by an organisation or a place, or by a long span, has the floor of what holds it,
whatever the template's own min (a per-problem template's low min would otherwise let the in-range draw
[l/10, 10r] land on a handful). Each floor is the least a reader believes of the smallest such holder:

| class            | floor | why                                                                   |
|------------------|-------|-----------------------------------------------------------------------|
| professional     | 1,000 | a doctor or dentist sees a few patients a day; "over the years" is    |
|                  |       | many hundreds of days, and a dentist's list runs to thousands         |
| chain_period     | 1,000 | a chain is several shops; one shop's 10 to 100 a day or week, times   |
|                  |       | several shops                                                         |
| business_year    |   200 | one shop's year of a thing it trades: a few a week (a tailor's        |
|                  |       | zippers) at the least                                                 |
| shop_week        |    10 | one shop's day, week or month: a small café's lemonades a day         |
| business_total   | 1,000 | what a shop has served, sold or made since it opened: years of trade  |
| library_members  |   500 | a village library's members                                           |
| bank_customers   | 1,000 | the smallest bank branch's customers                                  |
| farm_planting    |   500 | a farm's, vineyard's or orchard's plants, vines or bulbs, or its      |
|                  |       | season's crop; fewer is a home garden                                 |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Magnitude:
    name: str
    low: int
    high: int | None  # None: no upper bound
    what: str


CLASSES: dict[str, Magnitude] = {
    m.name: m
    for m in (
        Magnitude("identifier", 2, 999_999, "a card, ticket, permit, lot, parcel, serial or house number: plain digits, at most six"),
        Magnitude("audience", 1_000, 5_000_000_000, "the audience of a favourite video, song, band, podcast, channel or magazine"),
        Magnitude("crowd", 500, 3_000_000, "a stadium's seats or fans, a marathon's spectators or runners"),
        Magnitude("factory", 1_000, 100_000_000, "what a factory makes or has made"),
        Magnitude("institution_year", 1_000, 10_000_000, "a library's, hospital's or school's count over a year"),
        Magnitude("professional", 1_000, 10_000_000, "the patients a doctor, dentist or clinic has seen over the years"),
        Magnitude("chain_period", 1_000, 100_000_000, "what a chain of shops makes, sells or serves in a day, week, month or year"),
        Magnitude("business_year", 200, 100_000_000, "a shop's, farm's or business's count over a year"),
        Magnitude("shop_week", 10, 100_000, "a shop's, café's, stand's or bakery's count over a day, a week or a month"),
        Magnitude("business_total", 1_000, 100_000_000, "what a shop or business has served, sold or made since it opened"),
        Magnitude("library_members", 500, 1_000_000, "a library's members"),
        Magnitude("bank_customers", 1_000, 10_000_000, "a bank's or bank branch's customers"),
        Magnitude("farm_planting", 500, 100_000_000, "the plants, vines or bulbs a farm, vineyard or orchard grows or planted in a season"),
        Magnitude("odometer", 100, 500_000, "the miles a car, truck or van has been driven"),
        Magnitude("elevation", 2, 11_000, "a village's or town's height above sea level, in feet"),
        Magnitude("city", 10_000, 40_000_000, "a city's people"),
        Magnitude("town", 100, 10_000_000, "a town's or village's residents, houses or homes"),
        Magnitude("parking", 10, 3_000, "a parking lot's spaces"),
        Magnitude("contacts", 20, 2_000, "a phone's contacts"),
        Magnitude("count", 2, None, "any other count: the template's own min and max"),
    )
}

_YEAR = r"\b(a|per|each|this|last) year\b"
_DAY_OR_WEEK = r"\b(a|per|each|last|this) (day|week|month)\b"
_BUSINESS = r"(store|shop|boutique|bakery|restaurant|theater|farm|company|chain|center|nursery|agency|café|diner|deli|bar|stand)"
# what holds a cumulative count ("has served", "has sold", "since opening day"): a shop, business or service
_HOLDER = r"(" + _BUSINESS[1:-1] + r"|service|studio|salon|parlor|hall|truck|clinic|club)"
_PROFESSIONAL = r"\b(doctor|pediatrician|dentist|clinic|vet|veterinarian|optometrist)"

# (class, pattern over the template text); the first rule that matches decides
PHRASE_RULES: list[tuple[str, re.Pattern[str]]] = [
    (name, re.compile(pattern))
    for name, pattern in (
        ("identifier", r"\b(number|ID|lot|No\.)( is)? \{number\}"),
        ("audience", r"favorite (video|band|podcast|song|channel)\b|magazine .*subscribers"),
        ("crowd", r"spectators|\bstadium\b|\bmarathon\b|\bcarnival\b.*\bvisitors\b"),
        ("factory", r"\bfactory\b"),
        ("institution_year", r"\b(library|hospital)\b.*" + _YEAR),
        (
            "professional",
            _PROFESSIONAL
            + r"\b.*\bover the years\b|"
            + _PROFESSIONAL
            + r" (has|have) (seen|examined|measured|treated)? ?\{number\} (patients|children)",
        ),
        ("chain_period", r"\bchain\b.*(" + _YEAR + "|" + _DAY_OR_WEEK + ")"),
        ("business_year", r"'s [\w ]*" + _BUSINESS + r"\b.*" + _YEAR + r"|^The [\w ]*" + _BUSINESS + r"\b.*" + _YEAR),
        ("shop_week", r"'s [\w ]*" + _BUSINESS + r"\b.*" + _DAY_OR_WEEK + r"|^The pharmacy\b.*" + _DAY_OR_WEEK),
        ("business_total", r"(^The |'s )[\w ]*" + _HOLDER + r"\b[\w'{} ]* (has|have) \w+ \{number\}|\bsince opening\b"),
        ("library_members", r"\blibrary\b[\w ]* has \{number\} members"),
        ("bank_customers", r"\bbank\b[\w ]* has \{number\} customers"),
        (
            "farm_planting",
            r"\b(farm|vineyard|orchard|nursery)\b[\w ]* (planted|grows|grew|has) \{number\} (?!rows\b)[\w ]*\b(plants|bulbs|tulips|grapevines|vines|seedlings)\b"
            r"|\b(farm|vineyard|orchard)\b.*\b(this|last) (spring|summer|fall|autumn|season)\b",
        ),
        ("odometer", r"\b(car|truck|van|motorcycle)\b (has been driven|has) \{number\} miles|odometer"),
        ("elevation", r"above sea level"),
        ("city", r"city of \{number\} people"),
        ("town", r"\b(hometown|town|village) (has|of) \{number\} (residents|people|houses|homes)"),
        ("parking", r"parking (lot|garage)\b.*spaces"),
        ("contacts", r"\bcontacts\b"),
    )
]


@lru_cache(maxsize=4096)
def class_of(text: str, identifier: bool = False) -> Magnitude:
    """The magnitude class of a template: an identifier's, else the first phrase rule's, else "count"."""
    if identifier:
        return CLASSES["identifier"]
    for name, pattern in PHRASE_RULES:
        if pattern.search(text):
            return CLASSES[name]
    return CLASSES["count"]


def bounds(template) -> tuple[int, int | None]:
    """The numbers a template may take: its own [min, max] intersected with its class's."""
    magnitude = class_of(template.text, template.identifier)
    low = max(template.min, magnitude.low)
    highs = [h for h in (template.max, magnitude.high) if h is not None]
    return low, min(highs) if highs else None


def is_identifier(template) -> bool:
    """An identifier is written as plain digits: a template marked so, or one whose class is "identifier"."""
    return template.identifier or class_of(template.text).name == "identifier"
