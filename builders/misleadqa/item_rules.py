"""MisleadQA item rules (paper Appendix B.1 "Automated checks", Appendix A.1; SPEC "Validators").

Each rule is a plain function of one item returning problem messages. The builder screens
candidates with them, so every released item passes them by construction, and the validators
replay the same functions on the release.
"""

from __future__ import annotations

import datetime as dt
import re
from fractions import Fraction
from typing import Callable

from ctxrobust.builders.misleadqa.answer_types import precision
from ctxrobust.builders.misleadqa.config import MisleadQAConfig
from ctxrobust.builders.misleadqa.normalise import answer_key, content_tokens, entity_clash, mentions, unit_of, word_count
from ctxrobust.builders.misleadqa.phrasing import FIRST_PERSON, JUNK, future_question, past_question, unscoped, unstated_time
from ctxrobust.builders.misleadqa.scopes import scopes_overlap, time_interval
from ctxrobust.builders.misleadqa.substitution import ReplayError, replay

ITEM_SCHEMA = "misleadqa.item"
SUBSTANTIVE = ("A", "B", "C", "D")
ABSTAIN = "Insufficient information"
CONTEXTS = ("G", "S", "F")


# --- item-level checks -------------------------------------------------------


def distractor_letters(item: dict) -> list[str]:
    return [letter for letter in SUBSTANTIVE if letter not in (item["gold"], item["lure"])]


def gold_forms(item: dict) -> list[str]:
    """The gold option and every registered gold expression."""
    return [item["options"][item["gold"]]] + [s["old"] for s in item.get("substitutions", [])]


def span_replay_problems(item: dict) -> list[str]:
    """F is G with the recorded edits applied, byte for byte; each edit is a registered gold-to-lure substitution."""
    g, f = item["contexts"]["G"]["text"], item["contexts"]["F"]["text"]
    edits = item.get("f_edits", [])
    if not edits:
        return ["F has no recorded edits: G states no registered gold expression"]
    try:
        replayed = replay(g, edits)
    except (ReplayError, KeyError, TypeError) as exc:
        return [f"f_edits cannot be replayed on G: {exc}"]
    problems = []
    if replayed != f:
        at = next((i for i, (a, b) in enumerate(zip(replayed, f)) if a != b), min(len(replayed), len(f)))
        problems.append(
            f"replaying f_edits on G does not give F (first difference at offset {at}); F must differ from G only in the edited spans"
        )
    gold, lure = item["options"][item["gold"]], item["options"][item["lure"]]
    registered = {}
    for sub in item.get("substitutions", []):
        if answer_key(sub["old"]) != answer_key(gold):
            problems.append(f"registered expression {sub['old']!r} is not an expression of the gold answer {gold!r}")
        if answer_key(sub["new"]) != answer_key(lure):
            problems.append(f"registered replacement {sub['new']!r} is not an expression of the lure {lure!r}")
        registered.setdefault(sub["old"].casefold(), sub["new"])
    for number, edit in enumerate(edits):
        old = edit["old"].casefold()
        if old not in registered:
            problems.append(f"edit {number} replaces {edit['old']!r}, which is not a registered gold expression")
        elif edit["new"] != registered[old]:
            problems.append(f"edit {number} writes {edit['new']!r}, not the registered lure form {registered[old]!r}")
    return problems


def answer_isolation_problems(item: dict) -> list[str]:
    """Neither the gold answer nor the lure appears in the question (Appendix B.1)."""
    question = item["question"]
    problems = []
    for role in ("gold", "lure"):
        text = item["options"][item[role]]
        if mentions(question, text):
            problems.append(f"the {role} answer {text!r} appears in the question")
    for form in gold_forms(item)[1:]:
        if mentions(question, form) and not mentions(question, item["options"][item["gold"]]):
            problems.append(f"the gold expression {form!r} appears in the question")
    return problems


def distractor_leakage_problems(item: dict) -> list[str]:
    """No distractor appears in the question or in any context (Appendix A.1 "Distractors")."""
    problems = []
    for letter in distractor_letters(item):
        text = item["options"][letter]
        if mentions(item["question"], text):
            problems.append(f"distractor {letter} {text!r} appears in the question")
        for name in CONTEXTS:
            if mentions(item["contexts"][name]["text"], text):
                problems.append(f"distractor {letter} {text!r} appears in context {name}")
    return problems


def gold_mention_problems(item: dict) -> list[str]:
    """F contains no expression of the gold answer once the substitution is made (Appendix A.1)."""
    f = item["contexts"]["F"]["text"]
    for form in gold_forms(item):
        if mentions(f, form):
            return [f"F still mentions the gold answer ({form!r})"]
    return []


# a span of two years in parentheses, 'born – died' style: '(3 July 1750 – 28 February 1825)', '(1684–1716)'
_SPAN = re.compile(r"\([^()]*?\b(?P<first>\d{3,4})\b[^()–—]*?(?:\s*[–—]\s*|\s+-\s+|(?<=\d)-(?=\d))[^()]*?\b(?P<last>\d{3,4})\b[^()]*?\)")
_NAME_WORD = re.compile(r"[A-Z][a-z]{2,}")


def f_consistency_problems(item: dict) -> list[str]:
    """The substitution makes F false, not absurd or half-edited (Appendix A.1: no remaining gold
    expression, no unintended contradiction): a year span G gives in order does not run backwards in F
    (a death before the birth); the surname of a gold name does not stay in F ('Davis' after 'Miles Davis'
    became the lure); the lure has the gold's precision (a decade for a year, a full date for a year)."""
    problems = []
    g, f = item["contexts"]["G"]["text"], item["contexts"]["F"]["text"]
    g_spans = {(int(m["first"]), int(m["last"])) for m in _SPAN.finditer(g)}
    for m in _SPAN.finditer(f):
        first, last = int(m["first"]), int(m["last"])
        if first > last and not any(a > b for a, b in g_spans):
            problems.append(f"F's span {m[0]!r} runs backwards (G's runs forwards): the substitution contradicts the text around it")
    gold, lure = item["options"][item["gold"]], item["options"][item["lure"]]
    words = gold.replace(",", " ").split()
    if len(words) >= 2 and all(_NAME_WORD.fullmatch(w) or w[:1].isupper() for w in words):
        last = words[-1]
        if _NAME_WORD.fullmatch(last) and re.search(rf"\b{re.escape(last)}\b", f) and last not in lure.split():
            problems.append(f"F still names the gold by its last word {last!r} after {gold!r} became {lure!r}")
    if precision(gold) != precision(lure):
        problems.append(f"the gold {gold!r} is a {precision(gold)}, the lure {lure!r} a {precision(lure)}")
    for m in _SPAN.finditer(f):
        first, last = int(m["first"]), int(m["last"])
        if m[0] not in g and first <= last and not MIN_LIFE <= last - first <= MAX_LIFE and _lifespan(f, m):
            problems.append(f"F's life span {m[0]!r} gives an age of {last - first}: the substitution makes the person implausible")
    said = _described(g, gold) if not re.search(r"\d", gold) else ""  # a name, not a date or a number
    if said and said != _described(item["contexts"]["S"]["text"], lure):
        problems.append(f"G calls the gold {said!r} ({gold!r}); F says it of the lure {lure!r}, which S does not")
    return problems


MIN_LIFE, MAX_LIFE = 25, 105  # a life span in F outside these years is an unintended contradiction
# words that describe who or what an answer is ('American singer X', 'the English rock band X'): kept in F, they
# describe the lure, which is an unintended contradiction unless S says the same of it
DESCRIPTORS = frozenset(
    "singer singers songwriter singer-songwriter band group duo trio artist musician rapper composer producer actor actress comedian "
    "saxophonist pianist guitarist drummer vocalist conductor dj orchestra ensemble quartet collective".split()
)
_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:an|ian|ese|ish|ch|i)$")


def _lifespan(text: str, match: re.Match) -> bool:
    """The span is a person's life ('X (3 July 1750 – 28 February 1825) was'), not a reign or a season."""
    return bool(re.match(r"\s*,?\s*(?:was|is)\b", text[match.end() :]))


def _described(text: str, answer: str) -> str:
    """The describing words right before the answer in `text` ('American singer'), lower-cased; '' when none."""
    at = text.find(answer)
    if at < 0:
        return ""
    words = re.findall(r"[A-Za-z-]+", text[:at])[-4:]
    said = [w for w in words if w.lower() in DESCRIPTORS or _DEMONYM.match(w)]
    return " ".join(w.lower() for w in said) if any(w.lower() in DESCRIPTORS for w in said) else ""


def distinctness_problems(item: dict) -> list[str]:
    """Options A-D distinct after normalisation, with no near-duplicates; gold differs from lure."""
    problems = []
    options = item["options"]
    if item["gold"] == item["lure"]:
        problems.append(f"gold and lure are the same option {item['gold']}")
    for i, a in enumerate(SUBSTANTIVE):
        for b in SUBSTANTIVE[i + 1 :]:
            clash = entity_clash(options[a], options[b])
            if clash is not None:
                problems.append(f"options {a} {options[a]!r} and {b} {options[b]!r} {clash}")
    return problems


def overlap(question: str, context: str) -> tuple[Fraction, Fraction]:
    """Appendix A.1: (Jaccard similarity, question-token recall) of two texts' content-token sets
    (normalised, stop words removed): shared / all distinct tokens, and shared / question tokens."""
    q, c = content_tokens(question), content_tokens(context)
    shared, union = len(q & c), len(q | c)
    return (Fraction(shared, union) if union else Fraction(0)), (Fraction(shared, len(q)) if q else Fraction(0))


def comparability_problems(item: dict, max_ratio: float, max_diff: int) -> list[str]:
    """Appendix A.1 "Context comparability": lengths close; S no closer to the question than G and F."""
    problems = []
    counts = {name: word_count(item["contexts"][name]["text"]) for name in CONTEXTS}
    longest, shortest = max(counts.values()), min(counts.values())
    if shortest == 0 or Fraction(longest, shortest) > Fraction(str(max_ratio)):
        problems.append(f"context word counts {counts} have ratio {longest}/{shortest} above {max_ratio}")
    if longest - shortest > max_diff:
        problems.append(f"context word counts {counts} differ by {longest - shortest}, more than {max_diff}")
    scores = {name: overlap(item["question"], item["contexts"][name]["text"]) for name in CONTEXTS}
    for name in ("G", "F"):
        if scores["S"][0] > scores[name][0]:
            problems.append(
                f"S's Jaccard similarity with the question ({float(scores['S'][0]):.3f}) is above {name}'s ({float(scores[name][0]):.3f})"
            )
        if scores["S"][1] > scores[name][1]:
            problems.append(f"S's question-token recall ({float(scores['S'][1]):.3f}) is above {name}'s ({float(scores[name][1]):.3f})")
    return problems


def scope_design_problems(item: dict) -> list[str]:
    """Section 3.1: G = <s, y*> true, in scope; S = <s', l> true, out of scope; F = <s, l> false, in scope;
    s' changes exactly the item's scope dimension, and neither scope covers the other."""
    problems = []
    ctx, options = item["contexts"], item["options"]
    expected = {
        "G": (item["target_scope"], options[item["gold"]], True, True),
        "S": (item["alt_scope"], options[item["lure"]], True, False),
        "F": (item["target_scope"], options[item["lure"]], False, True),
    }
    for name, (scope, value, true, in_scope) in expected.items():
        if ctx[name]["scope"] != scope:
            problems.append(f"context {name} states scope {ctx[name]['scope']}, expected {scope}")
        if ctx[name]["value"] != value:
            problems.append(f"context {name} asserts {ctx[name]['value']!r}, expected the option text {value!r}")
        if ctx[name]["true"] is not true or ctx[name]["in_scope"] is not in_scope:
            problems.append(f"context {name} must be marked true={true}, in_scope={in_scope}")
    dimension = item["scope_dimension"]
    changed = sorted(
        k for k in set(item["target_scope"]) | set(item["alt_scope"]) if item["target_scope"].get(k) != item["alt_scope"].get(k)
    )
    if changed != [dimension]:
        problems.append(f"target and alternative scopes differ in {changed or 'nothing'}, expected exactly [{dimension!r}]")
    elif scopes_overlap(dimension, item["target_scope"][dimension], item["alt_scope"][dimension]):
        problems.append(f"alternative {dimension} {item['alt_scope'][dimension]!r} overlaps the target {item['target_scope'][dimension]!r}")
    if options.get("E") != ABSTAIN:
        problems.append(f"option E is {options.get('E')!r}, expected {ABSTAIN!r}")
    if item["gold"] not in SUBSTANTIVE or item["lure"] not in SUBSTANTIVE:
        problems.append("gold and lure must be letters A-D")
    return problems


def fred_pair_problems(item: dict, max_gap_years: int, first_year: int, last_year: int) -> list[str]:
    """Appendix A.1: FRED time pairs at most eight years apart; location pairs share the date; 1990-2024 facts."""
    if item["source"] != "fred":
        return []
    problems = []
    target, alt = dt.date.fromisoformat(item["target_scope"]["time"]), dt.date.fromisoformat(item["alt_scope"]["time"])
    for label, day in (("target", target), ("alternative", alt)):
        if not first_year <= day.year <= last_year:
            problems.append(f"{label} date {day} is outside {first_year}-{last_year}")
    if item["scope_dimension"] == "time" and abs(target.year - alt.year) > max_gap_years:
        problems.append(f"time pair {target} / {alt} is more than {max_gap_years} years apart")
    if item["scope_dimension"] == "location" and target != alt:
        problems.append(f"location pair dates differ ({target} / {alt})")
    return problems


# --- natural, explicit and precise items (Appendix A.1; B.1 criteria 2, 4, 5, 6) ---------------

INVERTED = re.compile(r"^(\d[\d,.]*|[A-Z][a-z]+ \d{1,2}, \d{4}|\d{1,2} [A-Z][a-z]+ \d{4}) (did|does|do|was|were|is|are)\b")
ASKED_NOUN = re.compile(r"^(what|which) ((?:[a-z]+ ){0,2}?[a-z]+) (is|are|was|were)\b")  # 'what ethnic community is'
QUOTED_TEMPLATE = re.compile(r"the answer to the question\s+\"", re.IGNORECASE)
ODD_SPACE = re.compile(r"[^\S ]|[\u00a0\u2000-\u200b\u202f\u205f\u3000]")  # any space but the plain one


def _texts(item: dict) -> list[tuple[str, str]]:
    out = [("question", item["question"])] + [(f"option {k}", v) for k, v in item["options"].items()]
    return out + [(f"context {name}", item["contexts"][name]["text"]) for name in CONTEXTS]


def natural_text_problems(item: dict) -> list[str]:
    """Questions and contexts read as English: no quoted-question template, one capitalised question
    ending in '?', plain spaces only; SituatedQA questions without junk or unresolved first person."""
    problems = []
    for where, text in _texts(item):
        if QUOTED_TEMPLATE.search(text) and item["source"] in ("fred", "situatedqa"):
            problems.append(f"{where} uses the quoted-question template ('the answer to the question \"...')")
        if ODD_SPACE.search(text):
            problems.append(f"{where} {text!r} holds a non-breaking or other non-plain space")
    for name in ("G", "S"):
        text = item["contexts"][name]["text"]
        if INVERTED.match(text):
            problems.append(f"context {name} {text!r} reads as a question (an answer before an inverted auxiliary)")
    noun = ASKED_NOUN.match(item["question"].lower())
    if item["source"] == "situatedqa" and noun and noun.group(2) not in item["contexts"]["G"]["text"].lower():
        problems.append(f"context G {item['contexts']['G']['text']!r} drops {noun.group(2)!r}, the kind of answer the question asks for")
    for letter in SUBSTANTIVE:
        parts = [p.strip() for p in item["options"][letter].split(",") if p.strip()]
        if len(parts) > 2 and any(p[:1].isupper() for p in parts) and any(p[:1].islower() for p in parts):
            problems.append(f"option {letter} {item['options'][letter]!r} lists names in mixed case")
    question = item["question"]
    if not question[:1].isupper() or question.count("?") != 1 or not question.endswith(("?", ".")):
        problems.append(f"question {question!r} must start with a capital letter and hold exactly one question mark")
    if item["source"] == "situatedqa":
        words = set(re.findall(r"[a-z']+", question.lower()))
        bad = sorted(words & (JUNK | (FIRST_PERSON - {"i"})))
        if bad:
            problems.append(f"question {question!r} holds {bad[0]!r} (junk, a typo or first person without a referent)")
        if item["scope_dimension"] == "location":
            hint = unstated_time(question)
            if hint is not None:
                problems.append(f"location question {question!r} asks for something that changes over time ({hint!r}) but names no time")
    return problems


def _day(text: str) -> dt.date | None:
    span = time_interval(" ".join(text.split()))
    return span[0] if span else None


def scope_precision_problems(item: dict) -> list[str]:
    """SituatedQA time scopes are days (a year is re-anchored to its last day); no option of a question
    about the past postdates the as-of date, and no gold or lure of a question about the next
    occurrence precedes its own scope (F must not contradict its scope)."""
    if item["source"] != "situatedqa" or item["scope_dimension"] != "time":
        return []
    problems = []
    days = {}
    for role in ("target_scope", "alt_scope"):
        span = time_interval(item[role]["time"] or "")
        if span is None or span[0] != span[1]:
            problems.append(f"{role} {item[role]['time']!r} is not one day: the answer may change within it")
        else:
            days[role] = span[0]
    target = days.get("target_scope")
    if target is None:
        return problems
    if past_question(item["question"]):
        for letter in SUBSTANTIVE:
            when = _day(item["options"][letter])
            if when is not None and when > target:
                problems.append(
                    f"option {letter} {item['options'][letter]!r} postdates the as-of date {item['target_scope']['time']} of a question about the past"
                )
    elif future_question(item["question"]):
        when = _day(item["options"][item["lure"]])
        if when is not None and when < target:
            problems.append(
                f"lure {item['options'][item['lure']]!r} precedes the as-of date of a question about the next occurrence, so F contradicts its scope"
            )
    return problems


def scope_stated_problems(item: dict) -> list[str]:
    """A SituatedQA question states everything its answer depends on (criterion 2): no year of its own
    besides the as-of date, no one-off event without 'last' or 'first', no unidentified ban or games."""
    if item["source"] != "situatedqa":
        return []
    found = unscoped(item["question"], item["scope_dimension"])
    return [] if found is None else [f"{found[0]}: {found[1]}"]


def unit_problems(item: dict) -> list[str]:
    """Gold, lure and distractors are in one unit (Appendix A.1: comparable type and precision)."""
    gold = unit_of(item["options"][item["gold"]])
    return [
        f"option {letter} {item['options'][letter]!r} is not in the gold answer's unit"
        for letter in SUBSTANTIVE
        if letter != item["gold"] and unit_of(item["options"][letter]) != gold
    ]


FRED_RATE = re.compile(r"\$\d+\.\d{2}")


def fred_cents_problems(item: dict) -> list[str]:
    """FRED rates are printed in dollars and whole cents ('$12.00', never '$12.006')."""
    if item["source"] != "fred":
        return []
    return [
        f"option {k} {item['options'][k]!r} is not a rate in dollars and cents"
        for k in SUBSTANTIVE
        if not FRED_RATE.fullmatch(item["options"][k])
    ]


def item_checks(cfg: MisleadQAConfig) -> dict[str, Callable[[dict], list[str]]]:
    """Every item-level rule by name, thresholds from the build configuration (the paper's by default)."""
    return {
        "span_replay": span_replay_problems,
        "answer_isolation": answer_isolation_problems,
        "distractor_leakage": distractor_leakage_problems,
        "gold_mention_in_f": gold_mention_problems,
        "f_consistency": f_consistency_problems,
        "distinctness": distinctness_problems,
        "scope_design": lambda item: (
            scope_design_problems(item) + fred_pair_problems(item, cfg.fred_max_gap_years, cfg.fred_first_year, cfg.fred_last_year)
        ),
        "comparability": lambda item: comparability_problems(item, cfg.comparability_max_ratio, cfg.comparability_max_diff),
        "natural_text": natural_text_problems,
        "scope_precision": scope_precision_problems,
        "scope_stated": scope_stated_problems,
        "units": unit_problems,
        "fred_cents": fred_cents_problems,
    }
