"""Grading free-text responses against the benchmark's `answer`, so a run's output scores without a
hand-written grader (the paper grades with a model judge, Section 2; these rules are this project's
and are recorded in the report).

- multiple choice (the record has `options`): the response's final letter, read as the letter after
  the last "answer" ("Answer: B", "the answer is (B)", "**Final answer:** B"), else a response that is
  only a letter ("B", "(B)", "B."), else the last "(B)" in the text; correct if it equals `answer`
  (a letter, or the text of one option).
- short answer: the final answer, read as the text after the last "answer" marker, else the last
  non-empty line; correct if it equals `answer` after normalisation (case, punctuation, articles,
  spacing), or if both hold a number and the last number of the final answer equals it.
Anything unreadable is graded 0, as a wrong answer.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Optional

from ctxrobust.evaluation.pseudowords.prompts import LETTERS, BenchmarkRecord

RULES = {
    "multiple_choice": "the letter after the last 'answer' marker, else a response that is only a letter, else the last parenthesised letter; equal to `answer` (a letter, or one option's text)",
    "short_answer": "the text after the last 'answer' marker (else the last non-empty line), equal to `answer` after normalising case, punctuation, articles and spaces, or holding the same final number",
    "unreadable": "graded 0 (wrong)",
}

_MARKER = re.compile(r"answer\s*(?:is|:|=|-)?\s*[:*\s]*", re.IGNORECASE)
_LETTER_AFTER = re.compile(r"answer\W{0,12}?(?:is\W{0,6})?[\(\[]?([A-Z])[\)\]]?(?![A-Za-z])", re.IGNORECASE)
_ONLY_LETTER = re.compile(r"^\W*([A-Z])\W*$")
_PAREN = re.compile(r"\(([A-Z])\)")
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def letters_of(record: BenchmarkRecord) -> list[str]:
    if isinstance(record.options, dict):
        return sorted(record.options)
    return list(LETTERS[: len(record.options or [])])


def chosen_letter(response: str, letters: list[str]) -> Optional[str]:
    """The multiple-choice letter a response ends on, or None."""
    found = [m.group(1).upper() for m in _LETTER_AFTER.finditer(response)]
    found = [f for f in found if f in letters]
    if found:
        return found[-1]
    only = _ONLY_LETTER.match(response.strip())
    if only and only.group(1) in letters:
        return only.group(1)
    parens = [m.group(1) for m in _PAREN.finditer(response) if m.group(1) in letters]
    return parens[-1] if parens else None


def final_answer(response: str) -> str:
    """Text after the last answer marker, else the last non-empty line."""
    marks = list(_MARKER.finditer(response))
    if marks:
        tail = response[marks[-1].end() :].strip()
        if tail:
            return tail.splitlines()[0]
    lines = [line for line in response.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith("P") or ch in "*`$" else ch for ch in text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def number(text: str, last: bool = True) -> Optional[float]:
    found = _NUMBER.findall(text)
    if not found:
        return None
    try:
        return float((found[-1] if last else found[0]).replace(",", ""))
    except ValueError:
        return None


@dataclass(frozen=True)
class Grade:
    correct: int
    rule: str  # "multiple_choice", "short_answer" or "unreadable"


def grade(response: str, record: BenchmarkRecord) -> Grade:
    answer = str(record.answer).strip()
    if record.options is not None:
        letters = letters_of(record)
        gold = answer.upper() if answer.upper() in letters else None
        if gold is None:  # the answer given as the text of an option
            texts = record.options.items() if isinstance(record.options, dict) else zip(letters, record.options)
            gold = next((letter for letter, text in texts if normalise(text) == normalise(answer)), None)
        letter = chosen_letter(response, letters)
        if letter is None:
            return Grade(0, "unreadable")
        return Grade(int(letter == gold), "multiple_choice")
    said = final_answer(response)
    if not said:
        return Grade(0, "unreadable")
    if normalise(said) == normalise(answer) or normalise(response) == normalise(answer):
        return Grade(1, "short_answer")
    gold_number = number(answer) if _NUMBER.fullmatch(answer.replace(" ", "")) else None
    said_number = number(said)
    if gold_number is not None and said_number is not None and math.isclose(gold_number, said_number, rel_tol=1e-9, abs_tol=1e-9):
        return Grade(1, "short_answer")
    return Grade(0, "short_answer")
