"""GSM-IC final answers: pull the final number out of a model's free text and put numbers in one canonical form.

A response is scored by its final answer (paper Section 3.2: the answer must equal the standard
solution's). The paper's exemplar ends "The answer is 12." (Appendix C), so that phrase is looked for
first; "\\boxed{..}" and "#### .." (the GSM8K solution format) are also understood; otherwise the last
number in the text is taken. A response with no number has no answer: it is scored as wrong.

Numbers compare exactly after normalisation: "$1,250.00", "1250" and "1,250." are the same answer;
"1/2" and "0.5" are the same answer. The canonical form is a reduced fraction written "p" or "p/q".
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

# One number as people write it: optional sign, optional currency sign, digits with optional thousands
# commas and decimals, optional "/ denominator"; the sign must not follow a letter or digit ("5-3" is not -3).
_NUMBER = re.compile(
    r"(?P<sign>(?<![\w)\]])[-−–]\s?)?"
    r"[$£€]?\s?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?/\s?(?P<den>\d+)(?![\d.,]\d))?"
)
_ANSWER_IS = re.compile(r"answer\s+is\s*:?|answer\s*:", re.IGNORECASE)  # also "Final answer:"
_HASHES = re.compile(r"####")
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_NOISE = re.compile(r"\\[,!;: ]|\\\$|\\text\s*\{[^{}]*\}|\\(?:left|right)|\\%")

CACHE_SIZE = 1 << 16
MAX_DIGITS = 300  # a number written with more digits is no answer to a grade-school problem: the row's answer is invalid


class _TooLong(ValueError):
    """A number with more than MAX_DIGITS digits (Python would refuse to convert one of over 4,300)."""


def canonical(value: int | Fraction) -> str:
    """A number's one written form: "1250", "-3", "5/2"."""
    if isinstance(value, int):
        return str(value)
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _value(match: re.Match) -> int | Fraction | None:
    sign, text, den = match.group("sign", "num", "den")
    if len(text) > MAX_DIGITS + MAX_DIGITS // 3 or (den is not None and len(den) > MAX_DIGITS):
        raise _TooLong(text)
    if "," in text:
        text = text.replace(",", "")
    number: int | Fraction = Fraction(text) if "." in text else int(text)
    if den is not None:
        if int(den) == 0:
            return None
        number = Fraction(number, int(den))
    return -number if sign else number


def _first_number(text: str) -> int | Fraction | None:
    match = _NUMBER.search(text)
    while match is not None:
        value = _value(match)
        if value is not None:
            return value
        match = _NUMBER.search(text, match.end())
    return None


def _last_number(text: str) -> int | Fraction | None:
    value = None
    for match in _NUMBER.finditer(text):
        found = _value(match)
        if found is not None:
            value = found
    return value


def _after_last(marker: re.Pattern, text: str, word: str) -> str | None:
    """The rest of the line after the last occurrence of `marker` (which starts with `word`), or None."""
    lowered = text.lower()
    if len(lowered) != len(text):  # rare letters whose lower case is longer: offsets differ, scan instead
        matches = list(marker.finditer(text))
        return text[matches[-1].end() :].split("\n", 1)[0] if matches else None
    start = lowered.rfind(word)
    while start >= 0:
        found = marker.match(text, start)
        if found:
            return text[found.end() :].split("\n", 1)[0]
        start = lowered.rfind(word, 0, start)
    return None


def _boxed(text: str) -> Fraction | None:
    found = _BOXED.findall(text)
    if not found:
        return None
    inner = _LATEX_FRAC.sub(r"\1/\2", found[-1])
    return _first_number(_LATEX_NOISE.sub("", inner))


def response_answer(response: str) -> str | None:
    """The final answer of a model's response. Text from a line starting "Q:" on is the model writing the
    next problem of the few-shot format (Appendix C), not part of its answer."""
    cut = response.find("\nQ:")
    return extract_answer(response if cut < 0 else response[:cut])


@lru_cache(maxsize=CACHE_SIZE)
def extract_answer(text: str) -> str | None:
    """The final answer of a free-text response in canonical form, or None when it gives no number.

    Order: the last \\boxed{..}; the first number after the last "answer is" / "answer:"; the first
    number after the last "####"; else the last number anywhere in the text. A text holding a number of
    more than MAX_DIGITS digits where one is looked for has no answer (it is scored as invalid).
    """
    try:
        return _extract(text)
    except _TooLong:
        return None


def _extract(text: str) -> str | None:
    value = _boxed(text) if "boxed" in text else None
    if value is None:
        for marker, word in ((_ANSWER_IS, "answer"), (_HASHES, "####")):
            rest = _after_last(marker, text, word)
            if rest is not None:
                value = _first_number(rest)
                if value is not None:
                    break
    if value is None:
        value = _last_number(text)
    return None if value is None else canonical(value)


def answer_value(answer: str | int | float | None) -> str | None:
    """A submitted final answer (the `answer` field) in canonical form, or None when it is no number."""
    if answer is None or isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        return canonical(answer) if answer.bit_length() <= MAX_DIGITS * 10 // 3 else None
    if isinstance(answer, float):
        if not math.isfinite(answer):
            return None
        return canonical(Fraction(repr(answer)))
    return extract_answer(answer)


def gold_value(answer: str) -> str | None:
    """A release's answer string ("1250", "12.5", "-3") in canonical form; None if it is not one number."""
    text = str(answer).strip().rstrip(".")
    match = _NUMBER.fullmatch(text)
    if match is None:
        return None
    try:
        value = _value(match)
    except _TooLong:
        return None
    return None if value is None else canonical(value)
