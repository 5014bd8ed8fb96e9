"""Answer type and precision, so that options are "similar to the gold answer in type and precision"
(paper Section 3.3 "Answer options", Appendix A.1 "Distractors").

`precision(text)` is the form an answer is given in, read from its text: year ('1998'), decade
('1990s'), season ('2012-13'), year range ('1918 to 1920'), day ('May 20, 2012', '2020 Jun 05'),
month ('May 2010'), day of year ('July 4'), number ('23', '7.64%'), quantity with its unit
('130 minutes' -> 'quantity:minutes'), or text.
`kind(text)` refines text into place (the gazetteer knows it), list (several answers in one:
'Ernesto Zedillo, Vicente Fox'), team (a sports team's name, or an acronym such as 'LSU'), numbered
text ('2002 Winter Olympics') and name (anything else).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from ctxrobust.builders.misleadqa.normalise import MONTHS, answer_key, answer_parts, is_numeric_key, tokens
from ctxrobust.builders.misleadqa.scopes import is_place

_LEXICON = Path(__file__).with_name("answer_types.json")
_SEASON = re.compile(r"\d{4}\s*[-–—]\s*\d{2}")
_YEAR_RANGE = re.compile(r"\d{4}\s*(?:[-–—]|to)\s*\d{4}")
_DECADE = re.compile(r"\d{3}0s")
_ACRONYM = re.compile(r"[A-Z]{2,5}")
_GARBLED = re.compile("Ã.|Â|â€")  # UTF-8 read as Windows-1252 ('MÃ¼ller', '30Â March')


@lru_cache(maxsize=1)
def _team_words() -> frozenset[str]:
    return frozenset(json.loads(_LEXICON.read_text(encoding="utf-8"))["team_words"])


def is_garbled(text: str) -> bool:
    """Text whose UTF-8 bytes were once decoded as Windows-1252: not fit to show as an option or in a context."""
    return bool(_GARBLED.search(text))


def precision(text: str) -> str:
    stripped = text.strip()
    if _SEASON.fullmatch(stripped):
        return "season"
    if _YEAR_RANGE.fullmatch(stripped):
        return "year range"
    if _DECADE.fullmatch(stripped):
        return "decade"
    key = answer_key(text)
    if re.fullmatch(r"\d{4}", key) and "," not in stripped:  # '1,541' is a count, not a year
        return "year"
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", key):
        return "day"
    if re.fullmatch(r"\d{4}-\d{2}", key):
        return "month"
    words = key.split()
    if len(words) == 2 and words[0] in MONTHS and words[1].isdigit():
        return "day of year"
    if len(words) == 1 and is_numeric_key(key):
        return "number"
    unit = " ".join(words[1:])
    if len(words) >= 2 and is_numeric_key(words[0]) and not any(ch.isdigit() for ch in unit) and unit in stripped:
        return "quantity:" + unit  # '130 minutes', '$12.3 billion'; not '2002 Winter Olympics'
    return "text"


def kind(text: str) -> str:
    found = precision(text)
    if found != "text":
        return found
    if is_place(text) or ("," in text and is_place(text.rsplit(",", 1)[1])):
        return "place"
    if len(answer_parts(text)) > 1:
        return "list"
    words = tokens(text)
    if (words and words[-1] in _team_words()) or _ACRONYM.fullmatch(text.strip()):
        return "team"
    if any(ch.isdigit() for ch in text):
        return "numbered text"
    return "name"
