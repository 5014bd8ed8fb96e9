"""Numbers as people write them in word problems, and the paper's number rule.

Reading rules (documented in README "GSM-IC"):
- digits with thousands separators are one number: "482,653" -> 482653;
- decimals, also without a leading zero: "$.50" -> 0.5; currency signs are dropped;
- "80%" -> 80 (the number as written, not 0.8);
- fractions "3/4" -> 3/4, mixed numbers "2 1/2" -> 5/2;
- clock times "6:10" -> 6 and 10 (hour, and the minutes when not zero);
- ordinals "5th", "21st" -> 5, 21;
- a scale word after a number multiplies it: "$1.2 million" -> 1200000, "3 dozen" -> 36;
- cardinal words "four", "twenty-five", "a dozen", "three hundred" are numbers;
  fraction words "one-third", "two fifths" are fractions (1/3, 2/5); "half",
  "twice" and ordinal words ("first") are not numbers;
- signs are not read: every number is its magnitude.
Values are exact fractions.Fraction, so 1/10 <= a/b <= 10 is decided exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

SCALES = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
UNITS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
DENOMINATORS = {
    "half": 2,
    "halve": 2,
    "third": 3,
    "quarter": 4,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}

_SCALE_WORD = r"dozen|hundred|thousand|million|billion"
_DIGITS = r"(?:\d{1,3}(?:,\d{3}(?!\d))+|\d+)(?:\.\d+)?|\.\d+"
_UNIT_WORDS = "|".join(sorted(UNITS, key=len, reverse=True))
_DIGIT_WORDS = "|".join(k for k in UNITS if UNITS[k] < 10)
_PATTERN = re.compile(
    # clock time: 6:10
    r"(?P<time>(?<![\d.:])(?P<hour>\d{1,2}):(?P<minute>\d{2})(?![\d:]))"
    # mixed number: 2 1/2
    r"|(?P<mixed>(?<![\d.,/])(?P<whole>\d+)\s+(?P<mnum>\d+)/(?P<mden>\d+)(?![\d/]))"
    # fraction: 3/4
    r"|(?P<frac>(?<![\d.,/])(?P<num>\d+)/(?P<den>\d+)(?![\d/]))"
    # digits, optional ordinal suffix, optional scale word: 1,000 / $.50 / 21st / 1.2 million
    r"|(?P<digits>(?<!\d)(?:" + _DIGITS + r"))(?:(?P<ordinal>st|nd|rd|th)(?![a-z]))?"
    r"(?:\s+(?P<scale>" + _SCALE_WORD + r")\b)?"
    # a dozen
    r"|(?P<dozen>\b(?:a\s+|one\s+)?dozen\b)"
    # a hundred / a thousand
    r"|(?P<ascale>\ba\s+(?P<ascaleword>hundred|thousand|million)\b)"
    # fraction words: one-third, two fifths
    r"|(?P<wfrac>\b(?P<fnum>" + _UNIT_WORDS + r")[-\s](?P<fden>" + "|".join(DENOMINATORS) + r")s?\b)"
    # cardinal words: four, twenty-five, three hundred
    r"|(?P<words>\b(?:(?P<tens>" + "|".join(TENS) + r")(?:-(?P<tunit>" + _DIGIT_WORDS + r"))?|(?P<unit>" + _UNIT_WORDS + r"))\b"
    r"(?:\s+(?P<wscale>" + _SCALE_WORD + r")\b)?)",
    re.IGNORECASE,
)
_ANNOTATION = re.compile(r"<<[^>]*>>")


@dataclass(frozen=True)
class NumberMention:
    start: int
    end: int
    text: str
    value: Fraction
    kind: str  # digits | percent | ordinal | fraction | time | word


def _digits_value(text: str) -> Fraction:
    return Fraction(text.replace(",", ""))


def find_numbers(text: str) -> list[NumberMention]:
    """Every number mention in `text`, in order of position."""
    found: list[NumberMention] = []
    for match in _PATTERN.finditer(text):
        start, end, span = match.start(), match.end(), match.group()
        if match.group("time"):
            found.append(NumberMention(start, match.start("minute") - 1, match.group("hour"), Fraction(int(match.group("hour"))), "time"))
            if int(match.group("minute")):
                found.append(NumberMention(match.start("minute"), end, match.group("minute"), Fraction(int(match.group("minute"))), "time"))
        elif match.group("mixed"):
            whole, num, den = int(match.group("whole")), int(match.group("mnum")), int(match.group("mden"))
            if 0 < num < den:  # a proper fraction after a whole number: one mixed number
                found.append(NumberMention(start, end, span, whole + Fraction(num, den), "fraction"))
            else:
                found.append(NumberMention(start, match.end("whole"), match.group("whole"), Fraction(whole), "digits"))
                if den:
                    found.append(NumberMention(match.start("mnum"), end, text[match.start("mnum") : end], Fraction(num, den), "fraction"))
        elif match.group("frac"):
            den = int(match.group("den"))
            if den:
                found.append(NumberMention(start, end, span, Fraction(int(match.group("num")), den), "fraction"))
        elif match.group("digits"):
            value = _digits_value(match.group("digits"))
            if match.group("scale"):
                value *= SCALES[match.group("scale").lower()]
            kind = (
                "ordinal"
                if match.group("ordinal")
                else "percent"
                if text[match.end("digits") : match.end("digits") + 1] == "%"
                else "digits"
            )
            found.append(NumberMention(start, end, span, value, kind))
        elif match.group("dozen"):
            found.append(NumberMention(start, end, span, Fraction(12), "word"))
        elif match.group("ascale"):
            found.append(NumberMention(start, end, span, Fraction(SCALES[match.group("ascaleword").lower()]), "word"))
        elif match.group("wfrac"):
            value = Fraction(UNITS[match.group("fnum").lower()], DENOMINATORS[match.group("fden").lower()])
            found.append(NumberMention(start, end, span, value, "fraction"))
        elif match.group("words"):
            if match.group("tens"):
                value = Fraction(TENS[match.group("tens").lower()] + (UNITS[match.group("tunit").lower()] if match.group("tunit") else 0))
            else:
                value = Fraction(UNITS[match.group("unit").lower()])
            if match.group("wscale"):
                value *= SCALES[match.group("wscale").lower()]
            found.append(NumberMention(start, end, span, value, "word"))
    return found


def solution_text(solution: str) -> str:
    """A GSM8K worked solution without its <<a*b=c>> calculator annotations."""
    return _ANNOTATION.sub("", solution)


def numbers_in(text: str) -> set[Fraction]:
    return {mention.value for mention in find_numbers(text)}


def _fraction_parts(text: str) -> set[Fraction]:
    """Both numbers of every "a/b" written in `text` ("60/2" -> 60 and 2) [issue rule: both count]."""
    return {Fraction(int(n)) for a, b in re.findall(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d])", text) for n in (a, b)}


def problem_numbers(question: str, solution: str) -> set[Fraction]:
    """Every number of the problem and its worked solution (calculator annotations included), with both
    numbers of each a/b of the solution, as well as its value [§3.1]."""
    annotations = " ".join(a.replace("=", " = ") for a in _ANNOTATION.findall(solution))
    worked = solution_text(solution)
    return (
        numbers_in(question)
        | numbers_in(worked)
        | numbers_in(annotations.replace("<<", " ").replace(">>", " "))
        | _fraction_parts(worked)
        | _fraction_parts(annotations)
    )


def known_numbers(question: str, solution: str) -> list[Fraction]:
    """The numbers b of the problem and its solution (positive, sorted) [§3.1]."""
    return sorted(v for v in problem_numbers(question, solution) if v > 0)


def parse_answer(answer: str) -> Fraction:
    """A final answer string such as "2,500", "-3" or "7.5"."""
    return Fraction(answer.strip().replace(",", "").replace("$", ""))


def is_in_range(number: Fraction | int, known: list[Fraction]) -> bool:
    """§3.1: a is in range iff some known b has 1/10 <= a/b <= 10.

    Exactly, with a = an/ad and b = bn/bd (all positive): b/10 <= a <= 10b, i.e.
    bn*ad <= 10*an*bd and an*bd <= 10*bn*ad.
    """
    a = Fraction(number)
    an, ad = a.numerator, a.denominator
    return any(b.numerator * ad <= 10 * an * b.denominator and an * b.denominator <= 10 * b.numerator * ad for b in known if b > 0)


def number_label(number: Fraction | int, known: list[Fraction]) -> str:
    return "in_range" if is_in_range(number, known) else "out_range"


def _in_range_intervals(known: list[Fraction]) -> list[tuple[int, int]]:
    """Integer intervals [lo, hi] (lo >= 2) covered by some [b/10, 10b], merged and sorted."""
    spans = []
    for b in known:
        lo, hi = max(2, _ceil(b / 10)), int(b * 10)
        if lo <= hi:
            spans.append((lo, hi))
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


OUT_RANGE_DECADES = 2  # out-of-range numbers above the range reach 10**OUT_RANGE_DECADES times its top (10r)


def candidate_intervals(known: list[Fraction], label: str) -> list[tuple[int, int]]:
    """Integer intervals (>= 2) from which numbers of the given label are drawn.

    in_range: for each b, [ceil(b/10), b] and [b, 10b] as separate intervals, so that
    draws spread over both sides of every known number.
    out_range: outside the whole range [l/10, 10r] (l, r: the smallest and largest known
    number), never in a gap between in-range intervals: below it, [2, ceil(l/10) - 1],
    and above it, (10r, 10r * 10**OUT_RANGE_DECADES].
    """
    if label == "in_range":
        out = []
        for b in known:
            lo, mid, hi = max(2, _ceil(b / 10)), int(b), int(b * 10)
            for a, z in ((lo, mid), (max(lo, mid), hi)):
                if a <= z:
                    out.append((a, z))
        return sorted(set(out))
    if not known:
        return []
    low_top, high_bottom = _ceil(min(known) / 10) - 1, int(max(known) * 10) + 1
    spans = [(2, low_top)] if low_top >= 2 else []
    spans.append((max(2, high_bottom), max(2, high_bottom) * 10**OUT_RANGE_DECADES))
    return spans


def readable(value: int, lo: int, hi: int) -> int:
    """`value` rounded to 2 (else 3) significant digits if that stays in [lo, hi], as counts are written ("4,227" -> 4200)."""
    return int(_readable_all(np.array([value]), np.array([lo]), np.array([hi]))[0])


def clip(intervals: list[tuple[int, int]], low: int, high: int | None) -> list[tuple[int, int]]:
    """The parts of `intervals` inside [low, high] (high None: no upper bound)."""
    out = [(max(lo, low), hi if high is None else min(hi, high)) for lo, hi in intervals]
    return [(lo, hi) for lo, hi in out if lo <= hi]


def _readable_all(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """`readable` over arrays: each value rounded to 2, else 3 significant digits where that stays in its [lo, hi]."""
    out = values.copy()
    done = np.zeros(len(values), dtype=bool)
    length = np.floor(np.log10(np.maximum(values, 1))).astype(np.int64) + 1
    for digits in (2, 3):
        scale = 10 ** np.maximum(0, length - digits)
        rounded = (values + scale // 2) // scale * scale
        ok = ~done & (rounded >= lo) & (rounded <= hi)
        out[ok], done = rounded[ok], done | ok
    return out


def _inside(value: int, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Whether a whole number lies in one of the merged in-range intervals [starts[i], ends[i]]."""
    slot = int(np.searchsorted(starts, value, side="right")) - 1
    return slot >= 0 and value <= int(ends[slot])


class NumberDraw:
    """The number rule of one problem, prepared once for many draws: the candidate intervals of each label,
    the merged in-range intervals (an integer's label by one search) and the forbidden whole numbers."""

    def __init__(self, known: list[Fraction], forbidden: set[Fraction]):
        self.intervals = {label: candidate_intervals(known, label) for label in ("in_range", "out_range")}
        inside = _in_range_intervals(known)
        self.starts = np.array([lo for lo, _ in inside] or [0], dtype=np.int64)
        self.ends = np.array([hi for _, hi in inside] or [-1], dtype=np.int64)
        self.banned_set = {int(f) for f in forbidden if f.denominator == 1}

    def draw(self, label: str, count: int, rng: np.random.Generator, low: int = 2, high: int | None = None) -> list[int]:
        """Up to `count` distinct integers in [low, high] with the given label, not forbidden, sorted [§3.1].

        in_range: an interval uniformly, then an integer uniformly inside it; out_range: an integer
        log-uniformly over the spans outside the range (weighted by their width in magnitudes). Both
        intersected with [low, high] (the magnitudes a template's sentence reads with) and made readable
        (2 or 3 significant digits when that keeps the interval). Candidates come in seeded batches; the
        first `count` distinct ones that pass, in the order drawn, are kept.
        """
        intervals = clip(self.intervals[label], max(2, low), high)
        if not intervals or count < 1:
            return []
        los = np.array([lo for lo, _ in intervals], dtype=np.int64)
        his = np.array([hi for _, hi in intervals], dtype=np.int64)
        if int((his - los + 1).sum()) <= 4 * count:  # few whole numbers to choose from: all of them, then a seeded choice
            every = [v for lo, hi in intervals for v in range(lo, hi + 1) if v not in self.banned_set]
            every = sorted({v for v in every if (label == "in_range") == _inside(v, self.starts, self.ends)})
            if len(every) <= count:
                return every
            return sorted(every[i] for i in rng.choice(len(every), size=count, replace=False).tolist())
        if label == "out_range":
            cumulative = np.cumsum(np.log(his + 1.0) - np.log(los))
        chosen: set[int] = set()
        for _ in range(4):
            before = len(chosen)
            size = 8 * count
            if label == "in_range":
                which = rng.integers(len(intervals), size=size)
                values = los[which] + (rng.random(size) * (his[which] - los[which] + 1)).astype(np.int64)
            else:
                which = np.minimum(np.searchsorted(cumulative, rng.random(size) * cumulative[-1], side="right"), len(intervals) - 1)
                drawn = np.exp(rng.uniform(np.log(los[which]), np.log(his[which] + 1.0))).astype(np.int64)
                values = np.clip(drawn, los[which], his[which])
            values = _readable_all(values, los[which], his[which])
            slot = np.searchsorted(self.starts, values, side="right") - 1
            in_range = (slot >= 0) & (values <= self.ends[np.maximum(slot, 0)])
            for value in values[in_range == (label == "in_range")].tolist():
                if value not in chosen and value not in self.banned_set:
                    chosen.add(value)
                    if len(chosen) == count:
                        return sorted(chosen)
            if len(chosen) == before:  # a whole batch gave nothing new: the bounds hold no more
                break
        return sorted(chosen)


def number_style(question: str, solution: str) -> dict:
    """How the problem writes numbers: thousands separators ("1,500") and a "$" sign for money."""
    text = question + "\n" + solution_text(solution)
    return {
        "separators": bool(re.search(r"\d,\d{3}(?!\d)", text)),
        "dollar_sign": "$" in question,
    }


def format_number(value: int, style: dict, identifier: bool = False) -> str:
    """A whole number as the problem would write it: separators from 10,000 on always, from 1,000 on when
    the problem uses them; an identifier (employee ID, card or serial number) as plain digits."""
    if identifier:
        return str(value)
    if value >= 10000 or (value >= 1000 and style.get("separators")):
        return f"{value:,}"
    return str(value)


def format_money(value: int, style: dict) -> str:
    text = format_number(value, style)
    return f"${text}" if style.get("dollar_sign") else f"{text} dollars"
