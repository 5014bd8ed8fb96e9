"""SituatedQA questions as English and facts restated in one plain sentence (paper Appendix A.1
"Questions and contexts", A.3 Table 6: "Manmohan Singh served as prime minister of India on
February 10, 2012.").

`clean_question` turns an upstream question (lower case, typos, search-engine junk) into one that
reads as English or raises `Excluded` naming the rule it breaks. `restate` turns a cleaned question
and an answer into a declarative sentence that states the relation and the answer, or raises
`Excluded("no_restatement")` when the question has no form this module can restate faithfully;
the builder adds the scope ("As of February 10, 2012, ..." / "In Chile, ...").
"""

from __future__ import annotations

import re
import unicodedata

from wordfreq import zipf_frequency

from ctxrobust.builders.misleadqa.candidate import Excluded
from ctxrobust.builders.misleadqa.gazetteer import lookup, places

JUNK = frozenset(
    {
        "brainly",
        "quizlet",
        "chegg",
        "wikipedia",
        "wiki",
        "quora",
        "reddit",
        "yahoo",
        "google",
        "tge",
        "teh",
        "hte",
        "thw",
        "wat",
        "whos",
        "wht",
        "waht",
        "yhe",
        "nad",
        "adn",
        "fo",
    }
)
REFERRED = frozenset({"we", "our"})  # SituatedQA location questions use them for the place asked about
FIRST_PERSON = frozenset({"we", "our", "ours", "ourselves", "i", "me", "my", "mine", "myself"})
UNSTATED_TIME = frozenset(
    {
        "last",
        "power",
        "ruling",
        "reigning",
        "current",
        "currently",
        "now",
        "present",
        "presently",
        "today",
        "latest",
        "recent",
        "recently",
        "new",
        "newest",
        "this",
        "next",
        "upcoming",
    }
)
OFFICES = (
    "president",
    "prime minister",
    "governor",
    "mayor",
    "chief minister",
    "head of",
    "leader",
    "speaker",
    "ceo",
    "chancellor",
    "king",
    "queen",
    "minister",
    "senator",
    "rate",
    "population",
    "price",
    "champion",
    "coach",
    "record",
)
ACRONYMS = {
    w: w.upper()
    for w in (
        "nba",
        "oic",
        "nfl",
        "mlb",
        "nhl",
        "nascar",
        "fifa",
        "uefa",
        "ncaa",
        "wwe",
        "ufc",
        "ipl",
        "bbc",
        "cnn",
        "gdp",
        "usa",
        "uk",
        "un",
        "eu",
        "nato",
        "ceo",
        "tv",
        "mvp",
        "afc",
        "nfc",
        "sec",
        "acc",
        "fbi",
        "cia",
        "nasa",
        "who's",
    )
}
ACRONYMS["who's"] = "who's"
MIN_ZIPF = 1.0  # a word rarer than this in English (wordfreq) and not a known name reads as a typo
PAST = {"is": "was", "are": "were", "has": "had", "have": "had", "does": "did", "do": "did"}
IRREGULAR = {
    "win": "won",
    "get": "got",
    "become": "became",
    "come": "came",
    "go": "went",
    "make": "made",
    "take": "took",
    "give": "gave",
    "begin": "began",
    "leave": "left",
    "lose": "lost",
    "hold": "held",
    "lead": "led",
    "run": "ran",
    "write": "wrote",
    "sing": "sang",
    "build": "built",
    "find": "found",
    "break": "broke",
    "meet": "met",
    "send": "sent",
    "spend": "spent",
    "beat": "beat",
    "buy": "bought",
    "sell": "sold",
    "bring": "brought",
    "tell": "told",
    "say": "said",
    "see": "saw",
    "fall": "fell",
    "rise": "rose",
    "grow": "grew",
    "throw": "threw",
    "draw": "drew",
    "fly": "flew",
    "keep": "kept",
    "put": "put",
    "set": "set",
    "hit": "hit",
    "have": "had",
    "do": "did",
    "be": "was",
    "choose": "chose",
    "steal": "stole",
    "wear": "wore",
    "shoot": "shot",
    "sit": "sat",
    "stand": "stood",
    "split": "split",
}
VERBS = frozenset(IRREGULAR) | frozenset(
    {
        "enter",
        "join",
        "start",
        "end",
        "die",
        "open",
        "close",
        "release",
        "invent",
        "host",
        "play",
        "reach",
        "sign",
        "gain",
        "pass",
        "appear",
        "finish",
        "launch",
        "score",
        "qualify",
        "change",
        "move",
        "introduce",
        "adopt",
        "legalize",
        "legalise",
        "ban",
        "abolish",
        "vote",
        "elect",
        "declare",
        "achieve",
        "receive",
        "form",
        "found",
        "create",
        "establish",
        "discover",
        "celebrate",
        "stop",
        "occur",
        "happen",
        "marry",
        "retire",
        "return",
        "visit",
        "perform",
        "record",
        "air",
        "premiere",
        "debut",
        "compete",
        "participate",
        "defeat",
        "claim",
        "earn",
        "travel",
        "arrive",
        "land",
        "use",
        "allow",
        "approve",
        "ratify",
        "grant",
        "attain",
        "cross",
        "sweep",
        "capture",
    }
)
PREPOSITIONS = frozenset({"in", "on", "at", "from", "of", "to", "for", "with", "by", "about", "into"})
PARTICIPLES = ("ed", "en", "wn", "ught", "ilt", "ung", "eld", "ade", "ost")


def _normal(text: str) -> str:
    """NFKC (non-breaking and other Unicode spaces become plain spaces), one space between words."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


_MONTH_NAMES = "January February March April May June July August September October November December".split()
_MONTH = "(" + "|".join(_MONTH_NAMES) + ")"
_DAY_MONTH_YEAR = re.compile(rf"^(\d{{1,2}}) {_MONTH},? (\d{{3,4}})$")
_MONTH_DAY_YEAR = re.compile(rf"^{_MONTH} 0?(\d{{1,2}}),? (\d{{3,4}})$")
_SEASON = re.compile(r"^(\d{4})\s*[-–—]\s*(\d{2}|\d{4})$")


def clean_text(text: str) -> str:
    """An answer or option as shown: NFKC-normalised with single plain spaces, a full date written
    out one way ('7 September 1822', 'September 7 1822' -> 'September 7, 1822') and a season with an
    en dash ('2019-20' -> '2019–20'), so every option of an item has one format (App. A.1, Table 6)."""
    text = _normal(text)
    match = _DAY_MONTH_YEAR.match(text)
    if match:
        return f"{match[2]} {int(match[1])}, {match[3]}"
    match = _MONTH_DAY_YEAR.match(text)
    if match:
        return f"{match[1]} {int(match[2])}, {match[3]}"
    match = _SEASON.match(text)
    if match:
        return f"{match[1]}–{match[2]}"
    return text


def _words(question: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", question.lower())


def check_english(raw: str, names: set[str], referent: bool = False) -> None:
    """Rules a question must meet to read as English (App. A.1; criterion 5 "fluency")."""
    text = _normal(raw)
    if text.count("?") > 1 or "?" in text.rstrip("?"):
        raise Excluded("question_form", f"question {raw!r} holds more than one question")
    words = _words(text)
    if not words:
        raise Excluded("question_form", f"question {raw!r} has no words")
    junk = [w for w in words if w in JUNK]
    if junk:
        raise Excluded("question_junk", f"question {raw!r} contains the junk or typo token {junk[0]!r}")
    first = [w for w in words if w in FIRST_PERSON and not (referent and w in REFERRED)]
    if first:
        raise Excluded("first_person", f"question {raw!r} says {first[0]!r} without a referent")
    rare = [w for w in words if not w.isdigit() and w not in names and zipf_frequency(w, "en") < MIN_ZIPF and not lookup(w)]
    if rare:
        raise Excluded("question_junk", f"question {raw!r} has the word {rare[0]!r}, not English (wordfreq) and no known name")


RELATIVE_TIME = re.compile(
    r"\b(this|last|next) (year|season|week|month|time around)\b|\bthis\b|\bnew\b|\bcurrently\b|\bso far\b|\bto date\b|\bnowadays\b"
)
FUTURE = re.compile(r"\b(next|upcoming|will|going to)\b")


def relative_time(question: str) -> str | None:
    """A time question whose own words fix a time relative to when it was asked ('this year', 'last
    season', 'currently'): with an as-of date the two times clash, so the scope is not explicit."""
    match = RELATIVE_TIME.search(question.lower())
    return match.group(0) if match else None


PAST_WHEN = re.compile(r"^when (did|was|were|had)\b|\blast\b|\bmost recent")


def past_question(question: str) -> bool:
    """A question about the last or a past occurrence ('when did ... last', 'when was the last time'):
    no answer it is given may postdate the as-of date (Appendix A.1, criterion 4)."""
    return bool(PAST_WHEN.search(question.lower()))


def future_question(question: str) -> bool:
    """A question about the next or a future occurrence ('when is the next world cup')."""
    return bool(FUTURE.search(question.lower()))


def unstated_time(question: str) -> str | None:
    """A location question whose answer changes over time but which names no time ('current repo
    rate', 'who is the head of the nation'): the word that shows it, else None."""
    words = _words(question)
    if any(re.fullmatch(r"1[89]\d\d|20\d\d", w) for w in words):
        return None
    hit = next((w for w in words if w in UNSTATED_TIME), None)
    if hit:
        return hit
    text = " ".join(words)
    if re.match(r"(who|what) (is|are|'s) ", text + " ") or text.startswith("who's "):
        office = next((o for o in OFFICES if re.search(rf"\b{o}\b", text)), None)
        if office:
            return office
    return None


def truecase(question: str, names: dict[str, str]) -> str:
    """Capitalise the first word, acronyms, places the gazetteer knows and words written capitalised
    in the question's own answers (`names`: lower-case word -> its capitalised form)."""
    words = _normal(question).rstrip("?").strip().split(" ")
    out = list(words)
    i = 0
    while i < len(words):
        for n in (3, 2, 1):  # place names of up to three words
            chunk = " ".join(words[i : i + n])
            if (
                i + n <= len(words)
                and chunk.replace(" ", "").isalpha()
                and len(chunk) > 3
                and chunk.lower() in places()
                and words[i].lower() not in ("the", "of", "and", "in")
                and (n > 1 or _proper(chunk.lower()))
            ):
                for k in range(i, i + n):
                    out[k] = words[k][:1].upper() + words[k][1:] if words[k] not in ("of", "and", "the") else words[k]
                i += n - 1
                break
        i += 1
    for k, word in enumerate(out):
        low = word.lower()
        if low == "us" and k > 0 and out[k - 1].lower() == "the":
            out[k] = "US"
        elif low in ACRONYMS and low != "us":
            out[k] = ACRONYMS[low]
        elif low == "i":
            out[k] = "I"
        elif low in names and word == low:
            out[k] = names[low]
    text = " ".join(out)
    for pattern, shown in PROPER_PHRASES:
        text = pattern.sub(shown, text)
    return text[:1].upper() + text[1:]


COMMON_WORD_ZIPF = 5.0  # words at least this frequent in English are not taken as names from an answer
MONTHS = ("january", "february", "march", "april", "june", "july", "august", "september", "october", "november", "december")
LANGUAGES = ("english", "french", "spanish", "german", "portuguese", "arabic", "hindi", "chinese", "russian", "italian", "dutch", "urdu")
PROPER_PHRASES = tuple(
    (re.compile(rf"\b{re.escape(low)}\b"), shown)
    for low, shown in [
        *((m, m.title()) for m in MONTHS),
        *((lang, lang.title()) for lang in LANGUAGES),
        ("united nations", "United Nations"),
        ("european union", "European Union"),
        ("commonwealth of nations", "Commonwealth of Nations"),
        ("winter olympics", "Winter Olympics"),
        ("summer olympics", "Summer Olympics"),
        ("olympics", "Olympics"),
        ("eurovision", "Eurovision"),
        ("world cup", "World Cup"),
        ("super bowl", "Super Bowl"),
    ]
)


def _proper(word: str) -> bool:
    """A one-word place name to capitalise: a country or subdivision, or a city whose name is not a
    common English word ('independence', 'mobile' stay lower case)."""
    return any(p.kind in ("country", "subdivision", "region") for p in places()[word]) or zipf_frequency(word, "en") < 4.0


def answer_names(answers: list[str]) -> dict[str, str]:
    """Capitalised words of a question's answers, by lower-case form ('sotnikova' -> 'Sotnikova')."""
    found: dict[str, str] = {}
    for answer in answers:
        for word in _normal(answer).split(" "):
            bare = word.strip(".,()\"'")
            common = zipf_frequency(bare.lower(), "en") >= COMMON_WORD_ZIPF  # 'City' of 'Mexico City' stays 'city'
            if len(bare) > 2 and bare[:1].isupper() and bare.lower() not in ("the", "and", "of") and not common:
                found.setdefault(bare.lower(), bare)
    return found


def to_past(question: str) -> str:
    """'Who is the ...' -> 'Who was the ...': the question's auxiliary in the past, for a past date."""
    words = question.split(" ")
    if len(words) > 1 and words[1].lower() in PAST:
        words[1] = PAST[words[1].lower()]
    return " ".join(words)


def _past(verb: str) -> str:
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def _third(verb: str) -> str:
    if verb == "have":
        return "has"
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _prep(answer: str) -> str:
    """'in 2014', 'in May 2010', 'on May 3, 2010': the preposition a date answer takes."""
    return "on" if re.search(r"\d{1,2},? \d{4}$|^\d{1,2} \w+ \d{4}$", answer) else "in"


def _insert_be(rest: str, be: str) -> str:
    """'the first iphone released' + 'was' -> 'the first iphone was released' (before the participle)."""
    words = rest.split(" ")
    if "being" in words[1:]:
        k = words.index("being", 1)
        return " ".join(words[:k] + [be] + words[k:])
    for k in range(len(words) - 1, 0, -1):
        w = words[k].lower()
        if words[k][:1].isupper():
            continue
        if (
            w.endswith(PARTICIPLES)
            and len(w) > 3
            and w not in ("golden", "garden", "women", "children", "seven", "eleven", "heaven", "queen")
        ):
            return " ".join(words[:k] + [be] + words[k:])
    return f"{rest} {be}"


def _split_verb(rest: str) -> tuple[str, str, str] | None:
    """'england last get to the semi final' -> ('england last', 'get', 'to the semi final'); the last
    known verb after the subject, so a noun that is also a verb stays in the subject ('the smoking ban
    come' -> ('the smoking ban', 'come', '')); None when no known verb follows a subject."""
    words = rest.split(" ")
    found = [k for k in range(1, len(words)) if words[k].lower() in VERBS]
    if not found:
        return None
    k = found[-1]
    return " ".join(words[:k]), words[k].lower(), " ".join(words[k + 1 :])


def restate(question: str, answer: str) -> str:
    """A declarative sentence (without the scope and the final full stop) stating the answer to a
    truecased question: 'Who was the prime minister of India' + 'Manmohan Singh' -> 'Manmohan Singh
    was the prime minister of India'."""
    q = question.rstrip("?").strip()
    low = q.lower()
    words = q.split(" ")
    if len(words) < 3:
        raise Excluded("no_restatement", f"question {question!r} is too short to restate")
    wh, aux, rest = low.split(" ")[0], low.split(" ")[1], " ".join(words[2:])
    if wh == "who's":
        return f"{answer} is {' '.join(words[1:])}"
    if wh == "who" and aux in ("is", "was", "are", "were"):
        return f"{answer} {aux} {rest}"
    if wh == "who" and aux in ("has", "have", "had") and len(words) > 3:
        return f"{answer} {aux} {rest}"
    if wh == "who" and (aux in VERBS or aux in IRREGULAR.values() or aux.endswith(("ed", "s"))) and aux not in ("does", "did", "do", "is"):
        return f"{answer} {' '.join(words[1:])}"
    if wh == "when" and aux in ("was", "were") and low.startswith(f"when {aux} the last time "):
        clause = " ".join(words[5:])
        return f"the last time {clause} was {_prep(answer)} {answer}"
    if wh in ("when", "where") and aux in ("did", "does", "do"):
        split = _split_verb(rest)
        if split is None:
            raise Excluded("no_restatement", f"question {question!r}: no known verb after its subject")
        subject, verb, tail = split
        verb = _past(verb) if aux == "did" else (_third(verb) if aux == "does" else verb)
        place = _prep(answer) if wh == "when" else "in"
        return " ".join(x for x in (_cap(subject), verb, tail, place, answer) if x)
    if wh in ("when", "where") and aux in ("is", "was", "are", "were"):
        place = _prep(answer) if wh == "when" else "in"
        return f"{_cap(_insert_be(rest, aux))} {place} {answer}"
    if wh == "what" and aux in ("is", "was", "are", "were") and words[2].lower() in ("the", "a", "an"):
        return f"{_cap(rest)} {aux} {answer}"
    if wh in ("what", "which") and len(words) > 3:
        noun_verb = _first_verb(words[1:])
        if noun_verb is not None:
            k, verb = noun_verb
            if (
                verb in ("is", "was", "are", "were", "has", "had", "have")
                or verb in VERBS
                or verb in IRREGULAR.values()
                or verb.endswith("ed")
            ):
                if k > 0 and low.split(" ")[-1] not in PREPOSITIONS:  # 'what region are colorado in' does not restate so
                    return f"{answer} {' '.join(words[1 + k :])}"
    if wh == "how" and aux in ("many", "much"):
        return _how_many(words, answer, question)
    raise Excluded("no_restatement", f"question {question!r} has no form the restatement rules cover")


def _first_verb(words: list[str]) -> tuple[int, str] | None:
    for k, w in enumerate(words):
        lw = w.lower()
        if lw in ("is", "was", "are", "were", "has", "had", "have") or lw in IRREGULAR.values() or (lw.endswith("ed") and len(lw) > 4):
            return k, lw
    return None


def _how_many(words: list[str], answer: str, question: str) -> str:
    """'How many states are there in the US' -> 'There are 50 states in the US'; 'How many seasons
    does Friends have' -> 'Friends has 10 seasons'; 'How many titles has X won' -> 'X has won 5 titles'."""
    low = [w.lower() for w in words]
    for k in range(3, len(low)):
        if low[k] in ("are", "were", "is", "was") and k + 1 < len(low) and low[k + 1] == "there":
            noun, tail = " ".join(words[2:k]), " ".join(words[k + 2 :])
            return " ".join(x for x in ("there", low[k], answer, noun, tail) if x)
        if low[k] in ("does", "do", "did", "has", "have", "had"):
            noun = " ".join(words[2:k])
            split = _split_verb(" ".join(words[k + 1 :]))
            if split is None:
                break
            subject, verb, tail = split
            if low[k] in ("has", "have", "had"):
                verb = f"{low[k]} {verb}"
            else:
                verb = _past(verb) if low[k] == "did" else (_third(verb) if low[k] == "does" else verb)
            return " ".join(x for x in (_cap(subject), verb, answer, noun, tail) if x)
        if low[k] in ("are", "were", "is", "was"):
            noun, tail = " ".join(words[2:k]), " ".join(words[k:])
            return " ".join(x for x in (answer, noun, tail) if x)
    raise Excluded("no_restatement", f"question {question!r} has no 'how many' form the restatement rules cover")


def _cap(text: str) -> str:
    """Words from the question keep their (truecased) form inside the sentence."""
    return text


AGREEMENT = {"are": "is", "were": "was", "have": "has", "do": "does", "was": "was"}


def has_referent_words(question: str) -> bool:
    return any(w in REFERRED for w in _words(question))


def name_referent(question: str, place: str) -> str:
    """A location question's 'we' / 'our' is the place asked about (SituatedQA writes 'when did we gain
    independence' for India): 'When did we gain independence' + 'India' -> 'When did India gain
    independence'; 'our' -> "India's"; the verb after 'we' agrees with the place."""
    words = question.split(" ")
    out = []
    for k, word in enumerate(words):
        low = word.lower()
        if low == "we":
            out.append(place)
            if k + 1 < len(words) and words[k + 1].lower() in AGREEMENT:
                words[k + 1] = AGREEMENT[words[k + 1].lower()]
        elif low == "our":
            out.append(f"{place}'" if place.endswith("s") else f"{place}'s")
        else:
            out.append(word)
    text = " ".join(out)
    return text[:1].upper() + text[1:]


# --- questions that leave their scope unstated (criterion 2 "explicit scopes") ---------------------

AS_OF = re.compile(r"\s+as of [A-Z][a-z]+ \d{1,2}, \d{4}\?$|\s+as of \d{4}\?$")
YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
ONE_OFF_EVENT = re.compile(r"\b(won|win|wins|hosted|host|hosts|beat|beats|played|sang|sings|scored|held)\b")
EVENT_ANCHOR = re.compile(
    r"\b(last|latest|most|recent|recently|first|ever|all|record|records|current|currently|reigning|defending|next|has|have|times|many|so far)\b"
)
UNSTATED_CONDITION = (
    (re.compile(r"\b(ban|banned)\b"), "a ban without saying which (smoking bans differ by venue and year)"),
    (
        re.compile(r"\bmedals?\b(?!.*\b(olympics|olympic games|commonwealth games|asian games|championships?)\b)"),
        "medals without naming the games",
    ),
)
NEXT_EVENT = re.compile(r"^(when is|when are|when will|when does|when do)\b|\belection\b")
OFFICE_IN_YEAR = re.compile(
    r"\b(president|prime minister|king|queen|governor|governor general|chancellor|premier|mayor|pope|emperor|ruler|leader)\b.*\bin (1[5-9]\d\d|20\d\d)\b"
)
ONGOING = re.compile(r"\b(has|have) been\b|\binterim\b|\bacting\b")
RULED = re.compile(r"^who (governed|ruled|led|reigned|was the (king|queen|ruler|leader|president|prime minister))\b")
BARE_VERB = re.compile(r"^(who|what|which team|which country) (win|come|become|go|have|lead)\b")


def unscoped(question: str, dimension: str) -> tuple[str, str] | None:
    """(reason, detail) for a question whose answer depends on a time or condition it does not state
    (criterion 2): a time question that names its own year besides the as-of date ('how many medals did
    Poland win in 2014'), a one-off event asked as of a date without 'last' ('who won at Silverstone'),
    or an event or rule it does not identify ('when did the smoking ban come into effect'); else None."""
    text = AS_OF.sub("", question.strip()).lower()
    if dimension == "time":
        year = YEAR.search(text)
        if year:
            return "year_in_question", f"question {question!r} names the year {year.group(0)} besides its as-of date"
        event = ONE_OFF_EVENT.search(text)
        if event and not EVENT_ANCHOR.search(text):
            return (
                "unscoped_event",
                f"question {question!r} asks who {event.group(0)} without 'last' or 'first': which occurrence is unstated",
            )
    else:
        if NEXT_EVENT.search(text) and not YEAR.search(text):
            return "unstated_time", f"question {question!r} asks for an event whose date depends on when it is asked"
        if not YEAR.search(text):
            event = None if EVENT_ANCHOR.search(text) else ONE_OFF_EVENT.search(text)
            ongoing = ONGOING.search(text) or event or RULED.search(text)
            if ongoing:
                return "unstated_time", f"question {question!r} asks what holds at some time ({ongoing.group(0)!r}) but names none"
        office = OFFICE_IN_YEAR.search(text)
        if office:
            return (
                "scope_imprecise",
                f"question {question!r} asks who held an office in {office.group(2)}, which can change within the year",
            )
    if BARE_VERB.search(text):
        return "question_form", f"question {question!r} is not grammatical (a bare verb after the wh-word)"
    for pattern, what in UNSTATED_CONDITION:
        if pattern.search(text):
            return "unstated_condition", f"question {question!r} asks about {what}"
    return None
