"""Rules that keep an inserted sentence irrelevant to the question [§3.1] [app. A].

The authors read every sentence and reworded questions whose pronouns turned
ambiguous (Appendix A). The builder states the same judgements as named rules;
each is applied when candidates are drawn, recorded on the base problem, and
replayed over every variant by the validator (validators/gsm_ic.py):

- `target_not_named`: the sentence never names the question's target object or
  unit ("marbles" before "How many marbles does James have left?"), nor a thing the
  question sentence refers to with "the" or a possessive, nor its common synonym
  ("John's apartment building" before "How tall is the building?" would give "the
  building" a second antecedent);
- `no_money_in_money_question`: in a question about money, no sentence gives
  anyone money, so nobody's money can be read into the answer;
- `role_not_in_problem`: an overlapped role never names a relation the problem
  already has ("Mike's sister" when Mike's sister is in the problem);
- `no_ambiguous_reference`: the question has no "it" the sentence could take
  over, and no he/she/him/his/her that the role could be read as.
"""

from __future__ import annotations

import re

UNITS = {
    "dollar",
    "cent",
    "money",
    "minute",
    "hour",
    "second",
    "day",
    "week",
    "month",
    "year",
    "mile",
    "kilometer",
    "km",
    "meter",
    "foot",
    "feet",
    "inch",
    "yard",
    "pound",
    "ounce",
    "kilogram",
    "kg",
    "gram",
    "gallon",
    "liter",
    "litre",
    "quart",
    "cup",
    "acre",
    "percent",
    "point",
    "lb",
    "oz",
    "ml",
}
TIME_UNITS = {"second", "minute", "hour", "day", "week", "month", "year"}
DISTANCE_UNITS = {"mile", "kilometer", "km", "meter", "foot", "feet", "inch", "yard", "block", "lap"}
MONEY_WORDS = {"dollar", "cent", "money", "$"}
# words that end the noun phrase after "how many" / "how much"
_STOP = {
    "do",
    "does",
    "did",
    "will",
    "would",
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "should",
    "has",
    "have",
    "had",
    "must",
    "may",
    "might",
    "shall",
    "in",
    "on",
    "at",
    "for",
    "to",
    "from",
    "per",
    "each",
    "that",
    "than",
    "of",
    "more",
    "fewer",
    "less",
    "total",
    "altogether",
    "left",
    "remain",
    "remaining",
    "the",
    "a",
    "an",
    "and",
    "there",
    "she",
    "he",
    "they",
    "it",
    "we",
    "you",
    "i",
}
_ARTICLES = {"the", "a", "an", "more", "fewer", "less", "total", "extra", "additional", "different", "whole"}
_WORD = re.compile(r"\$|[A-Za-z]+(?:-[A-Za-z]+)*")

MONEY_QUESTION = re.compile(
    r"\$|\b(?:dollars?|cents?|money|costs?|spend|spends|spent|pay|pays|paid|earn|earns|earned|earnings|save|saves|saved|"
    r"savings|profit|profits|price|prices|charge|charges|charged|income|salary|wages?|afford|owe|owes|worth|budget|"
    r"change|revenue|receive|receives|received|make|makes|made|sell|sells|sold|tip|tips|refund)\b",
    re.IGNORECASE,
)
GIVES_MONEY = re.compile(
    r"\$|\b(?:dollars?|cents?|money|paid|pays?|earn|earns|earned|saved?|saves|savings|spent|spends?|worth|prices?|"
    r"costs?|donated?|rent|allowance|salary|wages?|profit|debt|loan|lent|budget|prize|coins?|bills?|cash|sold|sells?|won)\b",
    re.IGNORECASE,
)
# "the building", "his bike", "Jenny's library": a thing the question refers to as already known
_DEFINITE = re.compile(r"\b(?:the|his|her|their|its|[A-Za-z]+'s)\s+((?:[A-Za-z]+(?:-[A-Za-z]+)*\s+){0,2}[A-Za-z]+(?:-[A-Za-z]+)*)")
# words that end such a noun phrase or are no thing of it ("the car be paid", "the same speed", "Mr. Callen")
_NOT_NOUNS = {
    "be",
    "been",
    "same",
    "first",
    "last",
    "next",
    "other",
    "fully",
    "if",
    "take",
    "took",
    "gave",
    "give",
    "mr",
    "mrs",
    "ms",
    "dr",
    "number",
    "total",
    "average",
    "rest",
    "end",
    "whole",
    "only",
    "new",
    "old",
    "own",
    "sell",
    "buy",
    "make",
    "need",
    "get",
    "pay",
    "spend",
    "eat",
    "read",
    "use",
}
# common synonyms of such nouns, as normal() words: naming one names the other
SYNONYMS = {
    "bike": {"bicycle"},
    "bicycle": {"bike"},
    "car": {"automobile"},
    "automobile": {"car"},
    "shop": {"store"},
    "store": {"shop"},
    "kid": {"child"},
    "child": {"kid"},
}
_IT = re.compile(r"\b(it|its)\b", re.IGNORECASE)
_EXPLETIVE_IT = re.compile(r"\bit\s+(?:take|takes|took|cost|costs)\b.*\bto\b", re.IGNORECASE)
PRONOUN_GENDER = {"he": "m", "him": "m", "his": "m", "she": "f", "her": "f"}
_PRONOUN = re.compile(r"\b(he|him|his|she|her)\b", re.IGNORECASE)

# the words by which a problem already names each default relation
RELATION_WORDS = {
    "father": {"father", "dad", "daddy", "papa", "parent", "parents", "son", "sons", "daughter", "daughters"},
    "mother": {"mother", "mom", "mum", "mommy", "mama", "parent", "parents", "son", "sons", "daughter", "daughters"},
    "brother": {"brother", "sibling", "siblings"},
    "sister": {"sister", "sibling", "siblings"},
    "neighbor": {"neighbor", "neighbour"},
}
RELATION_GENDER = {"father": "m", "mother": "f", "brother": "m", "sister": "f", "son": "m", "daughter": "f", "uncle": "m", "aunt": "f"}


def normal(word: str) -> str:
    """A word lower-cased and made singular by the common English endings ("boxes" -> "box", "cherries" -> "cherry")."""
    w = word.lower()
    if w in {"feet", "people", "children"}:
        return {"feet": "foot", "people": "person", "children": "child"}[w]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith("ves"):
        return w[:-3] + "f"
    if len(w) > 3 and w.endswith("es") and w[:-2].endswith(("s", "x", "ch", "sh", "o")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def words(text: str) -> list[str]:
    return [normal(w) for w in _WORD.findall(text.replace("’", "'").replace("'s ", " "))]


def _phrase_after(tokens: list[str], index: int) -> list[str]:
    out = []
    for token in tokens[index:]:
        if token in _STOP and not (not out and token in _ARTICLES):
            break
        if token not in _ARTICLES:
            out.append(token)
        if len(out) == 4:
            break
    return out


def target_words(question_sentence: str, problem: str) -> list[str]:
    """The question's target object and units, as normal() words (sorted).

    The noun phrase after "how many" or "how much" (and after "number of", "amount of"),
    every unit word of the question sentence, money words for a money question, the
    problem's time units for "how long", its distance units for "how far", and
    age words for "how old".
    """
    raw = [w.lower() for w in _WORD.findall(question_sentence)]
    tokens = [normal(w) for w in raw]
    found: set[str] = set()
    for i, token in enumerate(raw):
        nxt = raw[i + 1] if i + 1 < len(raw) else ""
        if token == "how" and nxt in {"many", "much"}:
            found.update(_phrase_after(tokens, i + 2))
        if token in {"number", "amount", "total", "cost", "price", "length", "weight", "distance"} and nxt == "of":
            found.update(_phrase_after(tokens, i + 2))
        if token == "how" and nxt == "long":
            found.update(TIME_UNITS & set(words(problem)) or TIME_UNITS)
        if token == "how" and nxt == "far":
            found.update(DISTANCE_UNITS & set(words(problem)) or DISTANCE_UNITS)
        if (token == "how" and nxt == "old") or token == "age":
            found.update({"year", "old", "age"})
        if token == "how" and nxt == "tall":
            found.update(DISTANCE_UNITS & set(words(problem)) | {"tall", "height"})
    found.update(definite_nouns(question_sentence))
    found.update(UNITS & set(tokens))
    if is_money_question(question_sentence, ""):
        found.update(MONEY_WORDS)
    return sorted(found - _STOP)


def definite_nouns(question_sentence: str) -> set[str]:
    """The words of each noun phrase the question sentence opens with "the" or a possessive, and their synonyms
    (rule target_not_named): a sentence naming one would give the question's "the building" a second antecedent."""
    found: set[str] = set()
    for match in _DEFINITE.finditer(question_sentence.replace("’", "'")):
        phrase = []
        for raw in _WORD.findall(match.group(1))[:2]:
            word = normal(raw)
            if word in _STOP or word in _NOT_NOUNS or raw[:1].isupper():  # "the discount Maria received": no name
                break
            phrase.append(word)
        found.update(phrase)
        for word in phrase:
            found.update(SYNONYMS.get(word, ()))
    return found - _STOP


_BILL = re.compile(r"\bbills?\b")  # lower case: "Bill" is a name


def is_money_question(question_sentence: str, solution: str) -> bool:
    """The question asks about money: a money word in the question sentence, or "how much" answered in dollars."""
    if MONEY_QUESTION.search(question_sentence) or _BILL.search(question_sentence):
        return True
    last_step = [line for line in solution.splitlines() if line.strip() and not line.startswith("####")][-1:] or [""]
    return question_sentence.lower().lstrip().startswith("how much") and "$" in last_step[0]


def gives_money(sentence: str) -> bool:
    return bool(GIVES_MONEY.search(sentence))


def template_gives_money(template_text: str) -> bool:
    """A template gives money when it has a {money} slot or a money word outside its slots (a role "Bill" is no bill)."""
    return "{money}" in template_text or gives_money(template_text.replace("{role}", " ").replace("{number}", " "))


def names_target(sentence: str, targets: list[str]) -> list[str]:
    """The target words the sentence names (empty: none)."""
    return sorted(set(words(sentence)) & set(targets))


def relations_in_problem(problem: str, relations: list[str]) -> list[str]:
    """The relations of `relations` that the problem already names (by the relation word, plural or synonym)."""
    present = set(words(problem))
    return sorted(r for r in relations if {normal(w) for w in RELATION_WORDS.get(r, {r})} & present)


def ambiguous_it(question_sentence: str) -> str | None:
    """An "it"/"its" of the question sentence the inserted sentence could take over (not "it takes ... to")."""
    match = _IT.search(question_sentence)
    if match and not _EXPLETIVE_IT.search(question_sentence):
        return match.group(1)
    return None


def open_pronoun_genders(question_sentence: str, people: list[tuple[str, str | None]]) -> list[str]:
    """Genders of the he/she/him/his/her of the (edited) question sentence that no person named earlier in
    that sentence, with a fitting gender, can carry: the role must not be one they could be read as."""
    open_: set[str] = set()
    for match in _PRONOUN.finditer(question_sentence):
        gender = PRONOUN_GENDER[match.group(1).lower()]
        before = question_sentence[: match.start()]
        carried = any(re.search(r"(?<![A-Za-z])" + re.escape(name) + r"(?![A-Za-z])", before) and g in (None, gender) for name, g in people)
        if not carried:
            open_.add(gender)
    return sorted(open_)


def role_gender(role: str, name_genders: dict[str, str | None]) -> str | None:
    """ "Mike's sister" -> f; "Ada" -> the name's gender; None when unknown (neighbor)."""
    owner, sep, relation = role.partition("'s ")
    if sep:
        return RELATION_GENDER.get(relation)
    return name_genders.get(role)
