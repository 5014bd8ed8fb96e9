"""Answer and token normalisation shared by the MisleadQA builder and its validators.

MisleadQA compares answers "after normalizing aliases, formats, and units"
(paper Section 3.3, Appendix A.1): case, punctuation, articles, number and
currency formats, and written-out dates. Context overlap is measured on
"normalized token sets without stop words" (Appendix A.1, "Context
comparability").
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from rapidfuzz import fuzz

ARTICLES = frozenset({"a", "an", "the"})

# A compact English stop-word list (function words only), written for this project.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t
    """.split()
)

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

# Tokens: numbers keep inner separators ("4.25", "1,000"), words keep inner apostrophes.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+(?:'[^\W_]+)*", re.UNICODE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CURRENCY_WORDS = frozenset({"usd", "us$", "dollar", "dollars"})
_LIST_SEPARATOR = re.compile(r", | and | & | / |; ")  # between the answers of a list answer
NEAR_DUPLICATE_RATIO = 90.0  # rapidfuzz ratio (0-100) at or above which two text answers are one answer


def _fold(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch)).replace("’", "'")
    return text.lower()


def canonical_number(token: str) -> str:
    """'1,000' -> '1000', '4.250' -> '4.25', '12.00' -> '12'; other tokens unchanged."""
    if not _NUMBER.fullmatch(token):
        return token
    plain = token
    if "," in plain:
        groups = plain.split(",")
        # thousands separators: 1,000 / 12,345,678 (a decimal comma is not used in the sources)
        if all(len(g) == 3 for g in groups[1:]) and "." not in groups[0]:
            plain = "".join(groups)
        else:
            return token
    try:
        value = Decimal(plain)
    except InvalidOperation:
        return token
    if value == value.to_integral_value():
        return str(value.quantize(Decimal(1)))
    return format(value.normalize(), "f")


@lru_cache(maxsize=1 << 18)
def _token_tuple(text: str) -> tuple[str, ...]:
    out = []
    for token in _TOKEN.findall(_fold(text)):
        token = canonical_number(token.strip("'"))
        if token and token not in ARTICLES:
            out.append(token)
    return tuple(out)


def tokens(text: str) -> list[str]:
    """Lower-cased, accent-folded word and number tokens; numbers in canonical form; no articles."""
    return list(_token_tuple(text))


def content_tokens(text: str) -> set[str]:
    """The token set without stop words (Appendix A.1, context comparability)."""
    return {t for t in _token_tuple(text) if t not in STOP_WORDS}


def _iso_date(toks: list[str]) -> str | None:
    """'december 14 2020' / '14 december 2020' / '2020 jun 05' / 'december 2020' -> ISO form, else None."""
    if len(toks) == 3 and toks[0] in MONTHS and toks[1].isdigit() and len(toks[2]) == 4 and toks[2].isdigit():
        return f"{toks[2]}-{MONTHS[toks[0]]:02d}-{int(toks[1]):02d}"
    if len(toks) == 3 and toks[1] in MONTHS and toks[0].isdigit() and len(toks[2]) == 4 and toks[2].isdigit():
        return f"{toks[2]}-{MONTHS[toks[1]]:02d}-{int(toks[0]):02d}"
    if len(toks) == 3 and toks[1] in MONTHS and len(toks[0]) == 4 and toks[0].isdigit() and toks[2].isdigit():
        return f"{toks[0]}-{MONTHS[toks[1]]:02d}-{int(toks[2]):02d}"
    if len(toks) == 2 and toks[0] in MONTHS and len(toks[1]) == 4 and toks[1].isdigit():
        return f"{toks[1]}-{MONTHS[toks[0]]:02d}"
    return None


@lru_cache(maxsize=1 << 18)
def answer_key(text: str) -> str:
    """The form two answers must differ in to count as distinct options (Section 3.3)."""
    text = re.sub(r"\bUS\$", "$", text, flags=re.IGNORECASE)
    toks = [t for t in _token_tuple(text) if t not in _CURRENCY_WORDS]
    iso = _iso_date(toks)
    if iso is not None:
        return iso
    return " ".join(toks)


def is_numeric_key(key: str) -> bool:
    return bool(re.fullmatch(r"[\d.\- ]+", key))


def answer_parts(text: str) -> frozenset[str]:
    """The answer keys of the answers a list answer names ('Argentina, Germany and Spain'); any other
    answer, a date ('May 3, 2010') or a number included, is its own single part."""
    key = answer_key(text)
    parts = [answer_key(part) for part in _LIST_SEPARATOR.split(text) if part.strip()]
    if is_numeric_key(key) or len(parts) < 2 or any(not part or is_numeric_key(part) for part in parts):
        return frozenset({key})
    return frozenset(parts)


def _list_entries(text: str) -> dict[str, str]:
    """answer key -> the entry as written, for each answer a list answer names (a single answer: itself)."""
    parts = answer_parts(text)
    if len(parts) == 1:
        return {next(iter(parts)): text.strip()}
    written: dict[str, str] = {}
    for part in _LIST_SEPARATOR.split(text):
        if part.strip():
            written.setdefault(answer_key(part), part.strip())
    return written


def answer_clash(a: str, b: str) -> str | None:
    """Why two answers count as one answer (see `same_answer`), as a phrase completing "A and B ...";
    None when they are distinct."""
    ka, kb = answer_key(a), answer_key(b)
    if ka == kb:
        return f"are the same answer after normalisation (both {ka!r})"
    if not ka or not kb or is_numeric_key(ka) or is_numeric_key(kb):
        return None
    if any(ch.isdigit() for ch in ka + kb) and re.sub(r"\D", "", ka) != re.sub(r"\D", "", kb):
        return None  # "Super Bowl LII 2018" vs "... 2019": the numbers differ, so the answers do
    entries_a, entries_b = _list_entries(a), _list_entries(b)
    shared = [key for key in entries_a if key in entries_b]
    if shared and (len(entries_a) > 1 or len(entries_b) > 1):
        if len(shared) == len(entries_a) == len(entries_b):
            return "list the same entries in another order or form"
        names = ", ".join(repr(entries_a[key]) for key in shared)
        return f"share the entr{'y' if len(shared) == 1 else 'ies'} {names}"
    words_a, words_b = set(ka.split()), set(kb.split())
    if words_a <= words_b or words_b <= words_a:
        inner, outer = (a, b) if words_a <= words_b else (b, a)
        return f"are one answer: every word of {inner.strip()!r} is also in {outer.strip()!r}"
    similarity = fuzz.ratio(ka, kb)
    if similarity >= NEAR_DUPLICATE_RATIO:
        return f"are near-duplicates (similarity {similarity:.1f} of 100; {NEAR_DUPLICATE_RATIO:.0f} or more counts as one answer)"
    return None


def same_answer(a: str, b: str) -> bool:
    """Equal after normalisation; for text that is not a number or date, also near-duplicates (rapidfuzz),
    one answer containing the other's words ('Toronto Raptors', 'Toronto Raptors (NBA)') and list answers
    naming a common answer ('Argentina, Germany, Spain', 'Argentina, Netherlands, Germany')."""
    return answer_clash(a, b) is not None


def mentions(haystack: str, needle: str) -> bool:
    """True when the needle's tokens occur contiguously in the haystack's tokens."""
    want = tuple(t for t in _token_tuple(needle) if t not in _CURRENCY_WORDS)
    if not want:
        return False
    have = _token_tuple(haystack)
    n = len(want)
    return any(have[i : i + n] == want for i in range(len(have) - n + 1))


def word_count(text: str) -> int:
    return len(text.split())


# --- entities, not strings (Appendix A.1 "Fact pairs": distinct after normalising aliases, formats and units) ---

ABBREVIATIONS = {
    "la": "los angeles",
    "ny": "new york",
    "nyc": "new york city",
    "us": "united states",
    "usa": "united states",
    "uk": "united kingdom",
    "st": "saint",
    "mt": "mount",
    "ft": "fort",
    "dr": "doctor",
    "jr": "junior",
    "sr": "senior",
    "utd": "united",
    "intl": "international",
    "nz": "new zealand",
    "uae": "united arab emirates",
    "dc": "district of columbia",
}
# words many distinct entities share: a shared one says nothing about two answers naming one entity
GENERIC_WORDS = frozenset(
    {
        "united",
        "states",
        "state",
        "kingdom",
        "republic",
        "new",
        "north",
        "south",
        "east",
        "west",
        "northern",
        "southern",
        "eastern",
        "western",
        "city",
        "county",
        "national",
        "university",
        "college",
        "saint",
        "team",
        "club",
        "fort",
        "mount",
        "great",
        "royal",
        "american",
        "international",
        "island",
        "islands",
        "federal",
        "central",
        "football",
        "league",
        "party",
        "democratic",
        "people",
        "peoples",
        "empire",
        "world",
        "cup",
        "series",
        "award",
        "awards",
        "house",
        "church",
        "river",
        "lake",
        "park",
        "bowl",
        "super",
        "king",
        "queen",
        "prince",
        "first",
        "second",
        "third",
        "year",
        "years",
        "day",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    }
)
STEM = 5  # two words with the same first five letters ('allies' / 'allied') count as one stem


def entity_key(text: str) -> str:
    """The answer's tokens with abbreviations expanded ('LA Lakers' -> 'los angeles lakers'), Unicode
    spaces and accents folded, articles dropped."""
    out = []
    for token in _token_tuple(unicodedata.normalize("NFKC", text)):
        out.extend(ABBREVIATIONS.get(token, token).split())
    return " ".join(out)


def _stems(key: str) -> set[str]:
    return {w[:STEM] for w in key.split() if len(w) >= 4 and w not in GENERIC_WORDS and w not in STOP_WORDS and not w.isdigit()}


@lru_cache(maxsize=1 << 16)
def entity_clash(a: str, b: str) -> str | None:
    """Why two answers name one entity, as a phrase completing "A and B ..."; None when they are distinct.
    Beyond `answer_clash`: abbreviations ('LA Lakers' / 'Los Angeles Lakers'), a shared word stem that
    is not generic ('Allies' / 'Allied', 'The Metric System' / 'SI metric units')."""
    clash = answer_clash(a, b)
    if clash is not None:
        return clash
    ka, kb = entity_key(a), entity_key(b)
    if not ka or not kb or is_numeric_key(ka) or is_numeric_key(kb):
        return None
    if any(ch.isdigit() for ch in ka + kb) and re.sub(r"\D", "", ka) != re.sub(r"\D", "", kb):
        return None
    if ka == kb:
        return f"name one entity once abbreviations are expanded ({ka!r})"
    wa, wb = set(ka.split()), set(kb.split())
    if wa <= wb or wb <= wa:
        return f"name one entity once abbreviations are expanded ({ka!r} / {kb!r})"
    shared = sorted(_stems(ka) & _stems(kb))
    if shared:
        return f"share the word stem {shared[0]!r}, so may name one entity"
    return None


_UNIT_WORDS = re.compile(r"[a-z%$£€]+")


@lru_cache(maxsize=1 << 16)
def unit_of(text: str) -> str | None:
    """The unit of a numeric answer ('10 grams or less' -> 'gram', '$5.15' -> '$', '21' -> ''); None for
    an answer without a number."""
    folded = unicodedata.normalize("NFKC", text).lower()
    if not re.search(r"\d", folded) or _iso_date(list(_token_tuple(text))) is not None or re.fullmatch(r"\s*\d{4}\s*", folded):
        return None
    rest = re.sub(r"\d+(?:[.,]\d+)*", " ", folded)
    words = [
        w.rstrip("s") if len(w) > 3 else w
        for w in _UNIT_WORDS.findall(rest)
        if w not in STOP_WORDS and w not in ("or", "less", "more", "than", "about", "approximately", "over", "under")
    ]
    return words[0] if words else ""
