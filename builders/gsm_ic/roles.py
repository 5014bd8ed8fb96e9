"""The people of a problem, and the {role} slot: overlapping roles and non-overlapping names [§3.1] [app. A].

A person is a capitalised word of the question (Latin-1 letters: "Méliès"), not in the
lexicon's not_names, that is
- a title plus a name: "Mr. Smith", "Aunt Sally" (gender from the title); or
- a first name of the lexicon (gender from the lexicon), or of the US Census
  first-name lists (lexicon.census_names: "Charles") never written in lower case
  in the problem; an ambiguous name ("Mark", "Bill") only with the evidence below; or
- a word the lexicon does not know (gender unknown), used like a person in the
  question or its worked solution (followed by "'s" and a lower-case word or digit,
  "Teairra's shirts"; by a verb of person_verbs or one ending in -ed, "Grover
  bought"; by ", who"; or after an auxiliary, "does Bret spend"), never written in
  lower case in the problem, not ending in "ing", and either used so at least twice
  or in a problem that uses he/she or the word's possessive;
and is never used like a place or a thing anywhere in the problem: right after a
determiner, quantifier or number ("the Ferris wheel", "3 Oreos"; a solution line
that ends in a number does not count for the name opening the next line), after a
place preposition without a possessive ("in Salem"), before ", which has/is"
("Greenville, which has"), or inside a run of capitalised words ("Cape Town").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxrobust.builders.gsm_ic.insertion import sentence_starts
from ctxrobust.builders.gsm_ic.lexicon import Lexicon

# a capitalised word ("Jewel", "McKenzie", "Méliès", "Soo-ah", "Jean-Luc"): Latin-1 letters count, so accented
# names are read whole, and a hyphenated name is one name (never cut to "Soo")
_UPPER, _LOWER = "A-ZÀ-ÖØ-Þ", "a-zß-öø-ÿ"
_NAME = rf"[{_UPPER}][{_LOWER}]+(?:[{_UPPER}][{_LOWER}]+)?(?:-[{_UPPER}{_LOWER}][{_LOWER}]+)?"
_CAPITAL = re.compile(rf"\b{_NAME}\b(?!-)")
_DETERMINERS = {
    "the",
    "a",
    "an",
    "these",
    "those",
    "his",
    "her",
    "their",
    "its",
    "my",
    "our",
    "your",
    "each",
    "every",
    "any",
    "some",
    "many",
    "few",
    "several",
    "more",
    "fewer",
    "less",
    "both",
    "all",
}
_PLACE_PREPOSITIONS = {"in", "at", "near", "across", "around", "throughout", "visit", "visits", "visited", "visiting", "via"}
_PREV_WORD = re.compile(r"([A-Za-z]+)\.?\s+$")  # the word just before, across spaces (and a title's period) only
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")
_POSSESSIVE = re.compile(r"(?:'s|’s|')\s+[a-z0-9]")
_WHO = re.compile(r",\s+who\b")
_WHICH = re.compile(r",\s+which\s+(?:has|had|is|was)\b")  # "Greenville, which has": a place
_INVERTING = {"does", "did", "do", "will", "would", "can", "could", "should", "must", "has", "had", "is", "was", "may", "might"}
_SINGULAR_PRONOUN = re.compile(r"\b(?:he|she|him|his|her)\b", re.IGNORECASE)
_TITLE_NAME = re.compile(rf"\.?\s+({_NAME})\b(?!-)")
_OPENERS = "\"'“‘("


@dataclass(frozen=True)
class Person:
    name: str  # as written: "Jeanne", "Mr. Smith"
    gender: str | None  # "f", "m" or unknown
    first: int  # offset of the first mention in the question


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int
    initial: bool


def _tokens(text: str) -> list[_Token]:
    starts = set(sentence_starts(text))
    out = []
    for match in _CAPITAL.finditer(text):
        begin = match.start()
        while begin > 0 and text[begin - 1] in _OPENERS:
            begin -= 1
        line_start = not text[text.rfind("\n", 0, begin) + 1 : begin].strip()  # solutions: one step per line
        out.append(_Token(match.group(), match.start(), match.end(), begin in starts or line_start))
    return out


def _prev_word(text: str, offset: int) -> str:
    match = _PREV_WORD.search(text[:offset])
    return match.group(1).lower() if match else ""


def _in_capital_run(text: str, tokens: list[_Token], index: int, stop: frozenset[str]) -> bool:
    """True when the token touches another capitalised word (not a stop word) across one space ("Cape Town")."""
    token = tokens[index]
    for other in (tokens[index - 1] if index else None, tokens[index + 1] if index + 1 < len(tokens) else None):
        if other is None or other.text.lower() in stop:
            continue
        gap = text[other.end : token.start] if other.start < token.start else text[token.end : other.start]
        if gap == " ":
            return True
    return False


@dataclass
class _Evidence:
    person: int = 0  # uses like a person (subject of a verb, possessive, ...)
    thing: bool = False


def _collect(text: str, lexicon: Lexicon, evidence: dict[str, _Evidence]) -> None:
    tokens = _tokens(text)
    verbs = lexicon.verbs
    for index, token in enumerate(tokens):
        word = token.text
        if word.lower() in lexicon.stop or word in lexicon.titles:
            continue
        found = evidence.setdefault(word, _Evidence())
        prev = _prev_word(text, token.start)
        possessive = bool(_POSSESSIVE.match(text, token.end))
        if _in_capital_run(text, tokens, index, lexicon.stop) and _prev_word(text, token.start) not in lexicon.titles_lower:
            found.thing = True
            continue
        if (prev in _DETERMINERS or re.search(r"\d\s+$", text[: token.start])) and not token.initial:
            found.thing = True
            continue
        if (prev in _PLACE_PREPOSITIONS and not token.initial and not possessive) or _WHICH.match(text, token.end):
            found.thing = True
            continue
        nxt = _NEXT_WORD.match(text, token.end)
        following = nxt.group(1) if nxt else ""
        if (
            possessive
            or following in verbs
            or (following.islower() and following.endswith("ed"))
            or (prev in _INVERTING and following.islower())
            or _WHO.match(text, token.end)
        ):
            found.person += 1


def find_people(question: str, solution: str, lexicon: Lexicon) -> list[Person]:
    """The people named in the question, in order of first mention."""
    evidence: dict[str, _Evidence] = {}
    _collect(question, lexicon, evidence)
    _collect(solution, lexicon, evidence)
    problem = question + "\n" + solution
    lowered = set(re.findall(r"\b[a-z]+\b", problem))  # words also written in lower case
    people: dict[str, Person] = {}
    skip_until = -1
    for token in _tokens(question):
        if token.start < skip_until:
            continue
        word = token.text
        if word in lexicon.titles:
            match = _TITLE_NAME.match(question, token.end)
            if match and match.group(1).lower() not in lexicon.stop:
                name, skip_until = question[token.start : match.end()], match.end()
                people.setdefault(name, Person(name, lexicon.titles[word], token.start))
            continue
        if word.lower() in lexicon.stop:
            continue
        seen = evidence.get(word, _Evidence())
        if seen.thing:
            continue
        if word in lexicon.own_names:
            accepted = True
        elif word in lexicon.known_names:  # a census name: never also written in lower case in the problem
            accepted = word.lower() not in lowered
        elif word in lexicon.ambiguous:
            accepted = seen.person
        else:  # a word the lexicon does not know: also needs a he/she pronoun or its possessive in the problem
            accepted = (
                seen.person > 0
                and not word.endswith("ing")
                and word.lower() not in lowered
                and (
                    seen.person > 1
                    or bool(_SINGULAR_PRONOUN.search(problem) or re.search(re.escape(word) + r"(?:'s|’s|')(?![A-Za-z])", problem))
                )
            )
        if accepted:
            people.setdefault(word, Person(word, lexicon.gender_of(word), token.start))
    # a bare name that is also part of a titled name ("Smith" in "Mr. Smith") is the same person
    titled = [p for p in people.values() if " " in p.name]
    return sorted(
        (p for p in people.values() if not any(t.name.endswith(" " + p.name) for t in titled)),
        key=lambda p: p.first,
    )


def overlapping_roles(people: list[Person], relations: list[str], excluded: list[str]) -> list[str]:
    """Roles derived from the problem's people: "Jewel's neighbor" [app. A]; never a relation in `excluded`
    (those the problem already names: irrelevance.relations_in_problem)."""
    return sorted(f"{person.name}'s {relation}" for person in people for relation in relations if relation not in excluded)


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]+", text)}


def nonoverlapping_names(question: str, solution: str, names: list[str]) -> list[str]:
    """Names that occur nowhere in the problem or its solution (case-insensitive, whole word)."""
    words = _words(question + " " + solution)
    return sorted(n for n in names if n.lower() not in words)


def role_label(role: str, people: list[str], question: str, solution: str) -> str | None:
    """[§3.1] [app. A] overlapped: "<person>'s <relation>" for a person of the problem named in its question;
    nonoverlapped: a bare name that occurs nowhere in the problem or its solution; None: neither."""
    owner, possessive, _ = role.partition("'s ")
    if possessive:
        named = re.search(r"(?<![A-Za-z])" + re.escape(owner) + r"(?![A-Za-z])", question)
        return "overlapped" if owner in people and named else None
    return None if _words(role) & _words(question + " " + solution) else "nonoverlapped"
