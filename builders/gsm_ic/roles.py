"""The people of a problem, and the {role} slot: overlapping roles and non-overlapping names [§3.1] [app. A].

A person is a capitalised word of the question that names someone: a title plus a
name ("Mr. Smith"), a first name of the project's lexicon, or a capitalised word
that also occurs away from the start of a sentence (in the question or its worked
solution), is not in the lexicon's not_names list, and does not follow a
determiner or "in"/"at" (which mark places and things: "the Ferris wheel").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from builders.gsm_ic.insertion import sentence_starts
from builders.gsm_ic.lexicon import Lexicon

_CAPITAL = re.compile(r"\b[A-Z][a-z]+\b")
_NOT_BEFORE_PERSON = {"the", "a", "an", "this", "that", "these", "those", "his", "her", "their", "its", "my", "our", "your", "in", "at", "on"}
_PREV_WORD = re.compile(r"([A-Za-z]+)[^A-Za-z]*$")
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
        lead = match.start()
        while lead > 0 and text[lead - 1] in _OPENERS:
            lead -= 1
        out.append(_Token(match.group(), match.start(), match.end(), lead in starts or lead == 0))
    return out


def _prev_word(text: str, offset: int) -> str:
    match = _PREV_WORD.search(text[:offset])
    return match.group(1).lower() if match else ""


def _title_person(text: str, token: _Token, lexicon: Lexicon) -> tuple[str, int] | None:
    """'Mr. Smith' / 'Aunt Sally': the full name and its end offset, when `token` is a title before a name."""
    if token.text not in lexicon.titles:
        return None
    match = re.compile(r"\.?\s+([A-Z][a-z]+)\b").match(text, token.end)
    if not match or match.group(1).lower() in lexicon.stop:
        return None
    return text[token.start:match.end()], match.end()


def _mentions_away_from_start(text: str, lexicon: Lexicon) -> set[str]:
    """Capitalised words used somewhere other than at a sentence start, not after a determiner."""
    seen = set()
    for token in _tokens(text):
        if token.initial or token.text.lower() in lexicon.stop:
            continue
        if _prev_word(text, token.start) in _NOT_BEFORE_PERSON:
            continue
        seen.add(token.text)
    return seen


def find_people(question: str, solution: str, lexicon: Lexicon) -> list[Person]:
    """The people named in the question, in order of first mention."""
    evidence = _mentions_away_from_start(question, lexicon) | _mentions_away_from_start(solution, lexicon)
    tokens = _tokens(question)
    people: dict[str, Person] = {}
    skip_until = -1
    for index, token in enumerate(tokens):
        if token.start < skip_until:
            continue
        titled = _title_person(question, token, lexicon)
        if titled:
            name, skip_until = titled
            people.setdefault(name, Person(name, lexicon.titles[token.text], token.start))
            continue
        word = token.text
        if word.lower() in lexicon.stop or _prev_word(question, token.start) in _NOT_BEFORE_PERSON:
            continue
        nxt = tokens[index + 1] if index + 1 < len(tokens) else None
        if nxt and re.fullmatch(r" ", question[token.end:nxt.start]) and nxt.text.lower() not in lexicon.stop:
            continue  # part of a multi-word proper noun ("Cape Town"), not a person
        prev = tokens[index - 1] if index > 0 else None
        if prev and re.fullmatch(r" ", question[prev.end:token.start]) and prev.text.lower() not in lexicon.stop and not prev.initial:
            continue
        known = word in lexicon.known_names
        possessive = question.startswith("'s", token.end)
        if known or (word in evidence) or (possessive and word not in lexicon.ambiguous and False):
            people.setdefault(word, Person(word, lexicon.gender_of(word), token.start))
        elif word in lexicon.ambiguous and word in evidence:
            people.setdefault(word, Person(word, lexicon.gender_of(word), token.start))
    return sorted(people.values(), key=lambda p: p.first)


def overlapping_roles(people: list[Person], lexicon: Lexicon) -> list[str]:
    """Roles derived from the problem's people: "Jewel's neighbor" [app. A]."""
    return sorted(f"{person.name}'s {relation}" for person in people for relation in lexicon.relations)


def nonoverlapping_names(question: str, solution: str, lexicon: Lexicon) -> list[str]:
    """Names that occur nowhere in the problem or its solution (case-insensitive, whole word)."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", question + " " + solution)}
    return sorted(n for n in lexicon.insertable_names if n.lower() not in words)


def role_owner(role: str) -> str:
    """The person a role is derived from ("Jewel" for "Jewel's neighbor"), or the bare name."""
    owner, sep, _ = role.partition("'s ")
    return owner if sep else role


def role_label(role: str, question: str) -> str:
    """overlapped iff the role names a person of the problem: its owner occurs in the question [§3.1]."""
    owner = role_owner(role)
    return "overlapped" if re.search(r"(?<![A-Za-z])" + re.escape(owner) + r"(?![A-Za-z])", question) else "nonoverlapped"
