"""Where the irrelevant sentence goes, pronoun rewording, and replaying a recorded insertion.

The sentence goes immediately before the question sentence [tab. 1]; where the
question then refers to its person only by a pronoun, the pronoun is replaced by
the person's name and the replacement recorded as an edit [app. A].
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# a sentence ends at . ! ? (optionally followed by closing quotes/brackets) and whitespace
_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+\S)")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "mt", "no", "vs", "etc", "approx", "e.g", "i.e"}
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz.")

PRONOUNS = {"he": "m", "him": "m", "his": "m", "she": "f", "her": "f"}
_PRONOUN = re.compile(r"\b(he|him|his|she|her)\b", re.IGNORECASE)
# "her" is an object pronoun (not a possessive) when the next word is one of these, a number or punctuation
_AFTER_OBJECT_HER = {
    "a",
    "about",
    "after",
    "again",
    "all",
    "altogether",
    "an",
    "and",
    "any",
    "as",
    "at",
    "back",
    "before",
    "but",
    "by",
    "each",
    "enough",
    "every",
    "for",
    "from",
    "if",
    "in",
    "into",
    "less",
    "more",
    "now",
    "of",
    "off",
    "on",
    "or",
    "out",
    "over",
    "per",
    "so",
    "some",
    "than",
    "that",
    "the",
    "then",
    "these",
    "this",
    "those",
    "to",
    "together",
    "total",
    "until",
    "up",
    "when",
    "while",
    "with",
    "within",
    "without",
}


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    old: str
    new: str

    def as_row(self) -> dict:
        return {"start": self.start, "end": self.end, "old": self.old, "new": self.new}


def _word_before(text: str, end: int) -> str:
    """The run of ASCII letters and dots that ends at `end` (read backwards, so each sentence costs its own length)."""
    start = end
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    return text[start:end]


def sentence_starts(text: str) -> list[int]:
    """Character offsets where sentences begin (the first is the first non-space character)."""
    first = len(text) - len(text.lstrip())
    starts = [first] if text.strip() else []
    for match in _END.finditer(text):
        if match.group().startswith(".") and _word_before(text, match.start()).lower().rstrip(".") in _ABBREVIATIONS:
            continue
        nxt = match.end()
        while nxt < len(text) and text[nxt].isspace():
            nxt += 1
        if nxt < len(text) and (text[nxt].isupper() or text[nxt].isdigit() or text[nxt] in "$\"'“‘("):
            starts.append(nxt)
    return starts


def question_sentence_start(text: str) -> int:
    """Start of the question sentence: the last sentence holding a '?', else the last sentence."""
    starts = sentence_starts(text)
    if not starts:
        return 0
    bounds = list(zip(starts, starts[1:] + [len(text)]))
    with_mark = [start for start, end in bounds if "?" in text[start:end]]
    return with_mark[-1] if with_mark else starts[-1]


def apply_edits(text: str, edits: list[dict]) -> str:
    """Apply {start, end, old, new} edits (non-overlapping, offsets in `text`); raises ValueError if one does not fit."""
    out, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e["start"], e["end"])):
        start, end = edit["start"], edit["end"]
        if start < cursor or end < start or end > len(text):
            raise ValueError(f"edit [{start}, {end}) overlaps another or lies outside the text")
        if text[start:end] != edit["old"]:
            raise ValueError(f"edit [{start}, {end}) expects {edit['old']!r} but the text has {text[start:end]!r}")
        out.append(text[cursor:start])
        out.append(edit["new"])
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def insert_sentence(edited: str, offset: int, sentence: str) -> str:
    """The sentence and one space go at `offset` of the edited original."""
    return edited[:offset] + sentence + " " + edited[offset:]


def pronoun_replacement(text: str, match: re.Match, name: str) -> str:
    """The name, in the grammatical form of the pronoun it replaces."""
    word = match.group(1).lower()
    if word == "his":
        return possessive(name)
    if word == "her":
        rest = text[match.end() :].lstrip()
        nxt = re.match(r"[A-Za-z]+", rest)
        if nxt and nxt.group().lower() not in _AFTER_OBJECT_HER:
            return possessive(name)
    return name


def possessive(name: str) -> str:
    return f"{name}'s"


def sentence_end(text: str, start: int) -> int:
    """End of the sentence that begins at `start` (the next sentence start, or the end of the text)."""
    later = [s for s in sentence_starts(text) if s > start]
    return later[0] if later else len(text)


class Unresolved(ValueError):
    """The question's pronoun cannot be tied to one person of the problem."""


class KeptPronoun(ValueError):
    """The question's pronoun fits one named person but also someone the problem names only by a relation or
    a common noun ("her mom"): it is not reworded, and the inserted role must not be of its gender."""


# people a problem may name without a name: a pronoun of their gender could refer to them [app. A]
UNNAMED_REFERENTS = {
    "f": (
        "mom mother mum mommy mama grandma grandmother granny sister daughter granddaughter wife aunt niece girl girls "
        "woman lady girlfriend queen stepmother"
    ).split(),
    "m": (
        "dad father daddy papa grandpa grandfather brother son grandson husband uncle nephew boy boys man gentleman "
        "boyfriend king stepfather"
    ).split(),
}


def unnamed_referent(text: str, gender: str) -> str | None:
    """The first word of `text` naming someone of `gender` without a name ("her mom"), if any."""
    match = re.search(r"(?<![A-Za-z])(" + "|".join(UNNAMED_REFERENTS[gender]) + r")(?![A-Za-z])", text, re.IGNORECASE)
    return match.group(1) if match else None


def pronoun_edits(question: str, people: list) -> list[Edit]:
    """[app. A] If the question sentence's first reference to a person is he/she/him/his/her,
    replace that pronoun by the person's name (one edit); otherwise no edit.

    The person: the only one named before the question sentence whose gender (from the
    lexicon or a title; unknown counts as compatible) fits the pronoun. Otherwise Unresolved.
    A name replaces the pronoun only when that antecedent is unambiguous: if the problem also
    names someone of the pronoun's gender only by a relation or common noun ("her mom"),
    KeptPronoun (no edit; the role must not be of that gender).
    """
    start = question_sentence_start(question)
    end = sentence_end(question, start)
    pronoun = _PRONOUN.search(question, start, end)
    if pronoun is None:
        return []
    for person in people:
        named = re.compile(r"(?<![A-Za-z])" + re.escape(person.name) + r"(?![A-Za-z])").search(question, start, end)
        if named and named.start() < pronoun.start():
            return []  # the question names its person before any pronoun
    gender = PRONOUNS[pronoun.group(1).lower()]
    before = [p for p in people if p.first < start]
    fitting = [p for p in before if p.gender in (None, gender)]
    if len(fitting) != 1:
        who = ", ".join(p.name for p in before) or "nobody"
        raise Unresolved(f"cannot tell whom {pronoun.group(1)!r} in the question refers to (named before it: {who})")
    other = unnamed_referent(question[:start], gender)
    if other is not None:
        raise KeptPronoun(
            f"{pronoun.group(1)!r} in the question could be {fitting[0].name} or the problem's {other!r}: kept, "
            f"and no role of that gender is inserted"
        )
    replacement = pronoun_replacement(question, pronoun, fitting[0].name)
    return [Edit(pronoun.start(1), pronoun.end(1), pronoun.group(1), replacement)]
