"""GSM-IC checks: each variant's text, labels and answer are replayed from the item and its base problem.

Paper: Shi et al. 2023, Section 3.1 (factors, number rule), Table 1 (the sentence goes
before the question), Appendix A (pronoun rewording), Section 5 (GSM-IC-4K).
"""

from __future__ import annotations

import re
from collections import defaultdict
from fractions import Fraction
from typing import Iterable

from ctxrobust import release_files
from ctxrobust.builders.gsm_ic import irrelevance, magnitudes, upstream_files
from ctxrobust.builders.gsm_ic.builder import GsmIcConfig, template_mix_distance
from ctxrobust.builders.gsm_ic.insertion import (
    PRONOUNS,
    apply_edits,
    insert_sentence,
    possessive,
    question_sentence_start,
    unnamed_referent,
)
from ctxrobust.builders.gsm_ic.lexicon import load_lexicon, load_reviewed, load_templates
from ctxrobust.builders.gsm_ic.numbers import known_numbers, number_label, number_style, parse_answer, problem_numbers, solution_text
from ctxrobust.builders.gsm_ic.roles import role_label
from ctxrobust.builders.gsm_ic.selection import paper_step_mix
from ctxrobust.builders.gsm_ic.topics import sentence_label
from ctxrobust.builders.gsm_ic.variants import CELLS, cell_key, render
from ctxrobust.errors import CtxRobustError
from ctxrobust.validators.checks import Failure, check

BASE = "base.jsonl"
VARIANTS = "variants.jsonl"
EVAL = "gsm-ic-4k.jsonl"


def _bases(release) -> dict[str, dict]:
    return {row["id"]: row for row in release.rows(BASE)}


def _templates(release) -> dict:
    """The shared templates and those written for the release's base problems, by id."""
    shared = load_templates()
    out = {t.id: t for t in shared.in_topic + shared.off_topic}
    reviewed = load_reviewed()
    for base_id, base in _bases(release).items():
        out.update({t.id: t for t in reviewed.templates_for(base_id, base["question"])})
    return out


def _is_identifier(templates: dict, row: dict) -> bool:
    template = templates.get(row.get("template_id"))
    return template is not None and magnitudes.is_identifier(template)


@check("gsm-ic", "span_replay")
def span_replay(release) -> Iterable[Failure]:
    """Edits (each a he/she/him/his/her replaced by the name of a person of the problem [app. A]) applied to
    original_question, then sentence + ' ' inserted at insert_offset, give new_question byte for byte; the
    offset is the start of the question sentence [tab. 1]."""
    bases = _bases(release)
    names = {base_id: {form for name in base["people"] for form in (name, possessive(name))} for base_id, base in bases.items()}
    question_start: dict[str, int] = {}
    templates = _templates(release)
    for row in release.rows(VARIANTS):
        for edit in row["edits"]:
            if edit["old"].lower() not in PRONOUNS or edit["new"] not in names.get(row["base_id"], ()):
                yield Failure(
                    VARIANTS, row["id"], f"edit {edit['old']!r} -> {edit['new']!r} does not replace a pronoun by a person of the problem"
                )
            elif edit["old"].lower() in PRONOUNS:
                original = row["original_question"]
                other = unnamed_referent(original[: question_sentence_start(original)], PRONOUNS[edit["old"].lower()])
                if other is not None:
                    yield Failure(
                        VARIANTS, row["id"], f"edit {edit['old']!r} -> {edit['new']!r}: the pronoun could also be the problem's {other!r}"
                    )
        try:
            edited = apply_edits(row["original_question"], row["edits"])
        except ValueError as exc:
            yield Failure(VARIANTS, row["id"], f"edits do not apply to original_question: {exc}")
            continue
        try:
            style = bases[row["base_id"]]["number_style"] if row["base_id"] in bases else {}
            expected_sentence = render(row["sentence_template"], row["role"], row["number"], style, _is_identifier(templates, row))
        except (KeyError, IndexError, ValueError) as exc:
            expected_sentence = f"<sentence_template does not format: {exc!r}>"
        if row["sentence"] != expected_sentence:
            yield Failure(
                VARIANTS, row["id"], f"sentence {row['sentence']!r} is not the template filled with role and number ({expected_sentence!r})"
            )
        offset = row["insert_offset"]
        if not 0 <= offset <= len(edited):
            yield Failure(VARIANTS, row["id"], f"insert_offset {offset} lies outside the edited question (length {len(edited)})")
            continue
        rebuilt = insert_sentence(edited, offset, row["sentence"])
        if rebuilt != row["new_question"]:
            at = next(
                (i for i, (a, b) in enumerate(zip(rebuilt, row["new_question"])) if a != b), min(len(rebuilt), len(row["new_question"]))
            )
            yield Failure(VARIANTS, row["id"], f"new_question differs from the replayed insertion at character {at}")
        if edited not in question_start:
            question_start[edited] = question_sentence_start(edited)
        if offset != question_start[edited]:
            yield Failure(
                VARIANTS, row["id"], f"insert_offset {offset} is not the start of the question sentence ({question_start[edited]})"
            )


def _number(row: dict) -> Fraction | None:
    """The inserted number, or None when the row does not hold a whole number (reported by the caller)."""
    return Fraction(int(row["number"])) if isinstance(row["number"], str) and row["number"].isdigit() else None


@check("gsm-ic", "factor_replay")
def factor_replay(release) -> Iterable[Failure]:
    """number_label, role_label and sentence_label recomputed from the item and its base problem [§3.1]."""
    bases = _bases(release)
    config = release.config_as(GsmIcConfig)
    known: dict[str, list[Fraction]] = {}
    number_labels: dict[tuple[str, Fraction], str] = {}
    role_labels: dict[tuple[str, str], str | None] = {}
    for row in release.rows(VARIANTS):
        base = bases.get(row["base_id"])
        if base is None:
            continue  # reported by answer_matches_base
        number = _number(row)
        if number is None:
            yield Failure(VARIANTS, row["id"], f"number {row['number']!r} is not a whole number")
        else:
            if base["id"] not in known:
                known[base["id"]] = known_numbers(base["question"], base["solution"])
            if (base["id"], number) not in number_labels:
                number_labels[base["id"], number] = number_label(number, known[base["id"]])
            expected = number_labels[base["id"], number]
            if row["number_label"] != expected:
                yield Failure(
                    VARIANTS,
                    row["id"],
                    f"number_label {row['number_label']!r}, but {number} is {expected} for the numbers of the problem and its solution",
                )
        if (base["id"], row["role"]) not in role_labels:
            found = role_label(row["role"], base["people"], base["question"], base["solution"])
            owner, sep, relation = row["role"].partition("'s ")
            if found == "overlapped" and relation not in config.relations or found == "nonoverlapped" and row["role"] not in config.names:
                found = None
            role_labels[base["id"], row["role"]] = found
        expected = role_labels[base["id"], row["role"]]
        if expected is None:
            yield Failure(
                VARIANTS,
                row["id"],
                f"role {row['role']!r} is neither one of the configured relations of a person of the problem nor a configured name absent from it",
            )
        elif row["role_label"] != expected:
            yield Failure(VARIANTS, row["id"], f"role_label {row['role_label']!r}, but role {row['role']!r} is {expected}")
        if row["topic"] != base["topic"]:
            yield Failure(VARIANTS, row["id"], f"topic {row['topic']!r}, but the base problem's topic is {base['topic']!r}")
        expected = sentence_label(row["template_topics"], base["topic"])
        if "/" in row["template_id"] and row["template_id"].split("/")[0] != base["id"]:
            expected = "off_topic"  # a template written for another problem is never in-topic here
        if row["sentence_label"] != expected:
            yield Failure(
                VARIANTS, row["id"], f"sentence_label {row['sentence_label']!r}, but the template is {expected} for topic {base['topic']!r}"
            )


@check("gsm-ic", "answer_matches_base")
def answer_matches_base(release) -> Iterable[Failure]:
    """Every variant keeps its base problem's question, answer and step count."""
    bases = _bases(release)
    for row in release.rows(VARIANTS):
        base = bases.get(row["base_id"])
        if base is None:
            yield Failure(VARIANTS, row["id"], f"base_id {row['base_id']} is not in {BASE}")
            continue
        for field, base_field in (("answer", "answer"), ("original_question", "question"), ("n_steps", "n_steps")):
            if row[field] != base[base_field]:
                yield Failure(VARIANTS, row["id"], f"{field} {row[field]!r} differs from base {base['id']} ({base[base_field]!r})")


@check("gsm-ic", "inserted_number")
def inserted_number(release) -> Iterable[Failure]:
    """The inserted number is not the answer and not a number of the problem or its solution (it is in the
    sentence: span_replay checks the sentence is its template filled with it)."""
    bases = _bases(release)
    numbers_of: dict[str, set[Fraction]] = {}
    answers: dict[str, Fraction | None] = {}
    for row in release.rows(VARIANTS):
        number, base = _number(row), bases.get(row["base_id"])
        if number is None or base is None:
            continue  # reported by factor_replay / answer_matches_base
        if base["id"] not in numbers_of:
            numbers_of[base["id"]] = problem_numbers(base["question"], base["solution"])
        if row["answer"] not in answers:
            try:
                answers[row["answer"]] = parse_answer(row["answer"])
            except ValueError:
                answers[row["answer"]] = None
        if answers[row["answer"]] is None:
            yield Failure(VARIANTS, row["id"], f"answer {row['answer']!r} is not a number")
        elif number == answers[row["answer"]]:
            yield Failure(VARIANTS, row["id"], f"inserted number {row['number']} is the answer")
        elif number in numbers_of[base["id"]]:
            yield Failure(VARIANTS, row["id"], f"inserted number {row['number']} is a number of the problem or its solution")


@check("gsm-ic", "distinct_text")
def distinct_text(release) -> Iterable[Failure]:
    """No two variants have the same new_question, and none equals its original."""
    seen: dict[str, str] = {}
    for row in release.rows(VARIANTS):
        text = row["new_question"]
        if text in seen:
            yield Failure(VARIANTS, row["id"], f"new_question is the same text as variant {seen[text]}")
        else:
            seen[text] = row["id"]
        if text == row["original_question"]:
            yield Failure(VARIANTS, row["id"], "new_question equals original_question")


@check("gsm-ic", "cell_coverage")
def cell_coverage(release) -> Iterable[Failure]:
    """Every base problem has variants in all 8 cells (topic x role x number) [§3.1]."""
    cells: dict[str, set] = defaultdict(set)
    for row in release.rows(VARIANTS):
        cells[row["base_id"]].add((row["sentence_label"], row["role_label"], row["number_label"]))
    for base_id in sorted(_bases(release)):
        missing = [cell_key(c) for c in CELLS if c not in cells.get(base_id, set())]
        if missing:
            yield Failure(BASE, base_id, f"no variant in cell(s) {', '.join(missing)}")


@check("gsm-ic", "base_selection")
def base_selection(release) -> Iterable[Failure]:
    """The base problems are those the configuration asks for: listed ids, or n_two_step two-step and
    n_more_steps problems with 3..max_steps steps [§3.1]."""
    config = release.config_as(GsmIcConfig)
    bases = release.rows(BASE)
    max_steps = config.max_steps
    for base in bases:
        if not 2 <= base["n_steps"] <= max_steps:
            yield Failure(BASE, base["id"], f"n_steps {base['n_steps']} outside 2..{max_steps}")
    user = release.manifest.get("build_notes", {}).get("user_sources", {}).get("base_file")
    if config.base_file and config.base_ids is None:
        if not user:
            yield Failure(BASE, None, "built from base_file, but the build notes record no user_sources.base_file (name and sha256)")
        for base in bases:
            if not base["id"].startswith("user-"):
                yield Failure(BASE, base["id"], "built from base_file, but the id is not a user-NNNN line id")
        return
    if config.base_ids is not None:
        wanted, have = set(config.base_ids), {b["id"] for b in bases}
        for missing in sorted(wanted - have):
            yield Failure(BASE, missing, "listed in base_ids but not in the release")
        for extra in sorted(have - wanted):
            yield Failure(BASE, extra, "in the release but not listed in base_ids")
        return
    two = sum(1 for b in bases if b["n_steps"] == 2)
    more = len(bases) - two
    if two != config.n_two_step or more != config.n_more_steps:
        yield Failure(
            BASE,
            None,
            f"{two} two-step and {more} longer base problems; the configuration asks for {config.n_two_step} and {config.n_more_steps}",
        )
    wanted = config.step_mix or paper_step_mix(config.n_more_steps, config.max_steps)
    have = {k: sum(1 for b in bases if b["n_steps"] == k) for k in wanted}
    note = release.manifest.get("build_notes", {}).get("step_mix_note")
    if have != wanted and not note:
        yield Failure(
            BASE, None, f"longer base problems by steps {have}, the configured mix is {wanted}, and no build note says the pool lacked it"
        )


@check("gsm-ic", "gsm_ic_4k")
def gsm_ic_4k(release) -> Iterable[Failure]:
    """GSM-IC-4K: eval_size variants of variants.jsonl covering every base problem [§5]."""
    variant_base = {row["id"]: row["base_id"] for row in release.rows(VARIANTS)}
    rows = release.rows(EVAL)
    size = release.config_as(GsmIcConfig).eval_size
    if len(rows) != size:
        yield Failure(EVAL, None, f"{len(rows)} rows, the configuration asks for {size}")
    for row in rows:
        if row["id"] not in variant_base:
            yield Failure(EVAL, row["id"], f"not a variant of {VARIANTS}")
        elif variant_base[row["id"]] != row["base_id"]:
            yield Failure(EVAL, row["id"], f"base_id {row['base_id']}, but the variant's base is {variant_base[row['id']]}")
    covered = {row["base_id"] for row in rows}
    for base_id in sorted({b["id"] for b in release.rows(BASE)} - covered):
        yield Failure(EVAL, base_id, "base problem has no variant in GSM-IC-4K")


@check("gsm-ic", "provenance")
def provenance(release) -> Iterable[Failure]:
    """Every base problem re-read from the pinned snapshots: its question, answer and step count from the
    pool line it names, its worked solution from the GSM8K training line it names [§3.1]."""
    from ctxrobust.sources import gsm8k

    user = release.manifest.get("build_notes", {}).get("user_sources", {}).get("base_file")
    if user:
        yield from _user_provenance(release, user)
        return
    if release.store is None:
        yield Failure(
            BASE, None, f"provenance needs the source snapshots {gsm8k.POOL} and {gsm8k.TRAIN}: set SOURCES_MIRROR to a folder holding them"
        )
        return
    from ctxrobust.errors import SourceError

    try:
        paths = release.store.require([gsm8k.POOL, gsm8k.TRAIN])
    except SourceError as exc:
        yield Failure(BASE, None, f"provenance needs the source snapshots, which are unavailable: {exc}")
        return
    pool = {record.line: record for record in gsm8k.read_pool(paths[gsm8k.POOL])}
    train = {record.line: record for record in gsm8k.read_solutions(paths[gsm8k.TRAIN])}
    for row in release.rows(BASE):
        record = pool.get(row["pool_line"])
        if record is None or row["id"] != gsm8k.base_id(record.line):
            yield Failure(BASE, row["id"], f"names pool line {row['pool_line']}, which {gsm8k.POOL} does not hold under this id")
        elif (row["question"], row["answer"], row["n_steps"]) != (record.question, record.answer, record.n_steps):
            yield Failure(BASE, row["id"], f"question, answer or n_steps differs from {gsm8k.POOL} line {record.line}")
        solution = train.get(row["solution_line"])
        if solution is None or (row["question"], row["solution"]) != (solution.question, solution.solution):
            yield Failure(BASE, row["id"], f"question or solution differs from {gsm8k.TRAIN} line {row['solution_line']}")


# --- irrelevance rules (builders/gsm_ic/irrelevance.py), replayed from each base problem ---------------------------


def _asked(release) -> Iterable[tuple[dict, dict, str]]:
    """Each variant with its base row and its question sentence after the variant's recorded pronoun edits."""
    bases = _bases(release)
    cache: dict[tuple[str, str], str] = {}
    for row in release.rows(VARIANTS):
        base = bases.get(row["base_id"])
        if base is None:
            continue
        key = (base["id"], repr(row["edits"]))
        if key not in cache:
            try:
                edited = apply_edits(base["question"], row["edits"])
            except ValueError:
                continue  # reported by span_replay
            cache[key] = edited[question_sentence_start(edited) :]
        yield row, base, cache[key]


@check("gsm-ic", "target_not_named")
def target_not_named(release) -> Iterable[Failure]:
    """No inserted sentence names the question's target object or unit; the recorded targets are the rule's."""
    targets: dict[tuple[str, str], list[str]] = {}
    for row, base, sentence in _asked(release):
        if (base["id"], sentence) not in targets:
            found = irrelevance.target_words(sentence, base["question"] + "\n" + solution_text(base["solution"]))
            if irrelevance.is_money_question(sentence, base["solution"]):
                found = sorted(set(found) | irrelevance.MONEY_WORDS)
            targets[base["id"], sentence] = found
        found = targets[base["id"], sentence]
        named = irrelevance.names_target(row["sentence"], found)
        if named:
            yield Failure(VARIANTS, row["id"], f"the sentence names {named[0]!r}, a target object or unit of the question")
    for base_id, base in _bases(release).items():
        recorded = [t for (b, _), t in targets.items() if b == base_id]
        if recorded and base["targets"] not in recorded:
            yield Failure(BASE, base_id, f"targets {base['targets']} differ from the rule's {recorded[0]}")


@check("gsm-ic", "no_money_in_money_question")
def no_money_in_money_question(release) -> Iterable[Failure]:
    """In a question about money, no inserted sentence gives anyone money."""
    money: dict[tuple[str, str], bool] = {}
    for row, base, sentence in _asked(release):
        if (base["id"], sentence) not in money:
            money[base["id"], sentence] = irrelevance.is_money_question(sentence, base["solution"])
        if money[base["id"], sentence] and irrelevance.template_gives_money(row["sentence_template"]):
            yield Failure(VARIANTS, row["id"], "the sentence gives money in a question about money")
    for base_id, base in _bases(release).items():
        found = [m for (b, _), m in money.items() if b == base_id]
        if found and base["money_question"] not in found:
            yield Failure(BASE, base_id, f"money_question {base['money_question']}, but the rule says {found[0]}")


@check("gsm-ic", "role_not_in_problem")
def role_not_in_problem(release) -> Iterable[Failure]:
    """No overlapped role names a relation the problem already has ("Mike's sister" beside Mike's sister Barbara),
    and no role is a person of the problem."""
    config = release.config_as(GsmIcConfig)
    present: dict[str, list[str]] = {}
    for base_id, base in _bases(release).items():
        present[base_id] = irrelevance.relations_in_problem(base["question"] + "\n" + solution_text(base["solution"]), config.relations)
        if present[base_id] != base["relations_present"]:
            yield Failure(BASE, base_id, f"relations_present {base['relations_present']}, but the rule finds {present[base_id]}")
    people = {base_id: set(base["people"]) for base_id, base in _bases(release).items()}
    for row in release.rows(VARIANTS):
        owner, sep, relation = row["role"].partition("'s ")
        if sep and relation in present.get(row["base_id"], ()):
            yield Failure(VARIANTS, row["id"], f"role {row['role']!r}: the problem already names a {relation}")
        if row["role"] in people.get(row["base_id"], ()):
            yield Failure(VARIANTS, row["id"], f"role {row['role']!r} is a person of the problem")


@check("gsm-ic", "no_ambiguous_reference")
def no_ambiguous_reference(release) -> Iterable[Failure]:
    """The question sentence has no "it" the sentence could take over, and no he/she/him/his/her that no earlier
    name of that sentence carries and that the role could be read as [app. A]."""
    lexicon = load_lexicon()
    config = release.config_as(GsmIcConfig)
    genders = {name: lexicon.gender_of(name) for name in config.names}
    state: dict[tuple[str, str], tuple[str | None, list[str]]] = {}
    for row, base, sentence in _asked(release):
        if (base["id"], sentence) not in state:
            people = [(name, _gender(name, lexicon)) for name in base["people"]]
            state[base["id"], sentence] = (irrelevance.ambiguous_it(sentence), irrelevance.open_pronoun_genders(sentence, people))
        it, open_ = state[base["id"], sentence]
        if it:
            yield Failure(VARIANTS, row["id"], f"the question's {it!r} could be read as the inserted sentence's subject")
        if open_:
            gender = irrelevance.role_gender(row["role"], genders)
            if gender is None or gender in open_:
                yield Failure(VARIANTS, row["id"], f"role {row['role']!r} could be read as the question's {'/'.join(open_)} pronoun")


def _gender(name: str, lexicon) -> str | None:
    """A person's gender as the person finder gives it: a title's ("Mrs. Boyden"), else the name's."""
    title = name.split()[0].rstrip(".")
    return lexicon.titles[title] if " " in name and title in lexicon.titles else lexicon.gender_of(name)


@check("gsm-ic", "number_format")
def number_format(release) -> Iterable[Failure]:
    """Inserted numbers are written as the problem writes numbers: 10,000 and more always with separators,
    1,000 and more with them when the problem uses them; money with "$" when the problem writes "$"; an
    identifier (a template marked `identifier`: employee ID, card, ticket or serial number) as plain digits."""
    bases = _bases(release)
    templates = _templates(release)
    styles = {base_id: number_style(base["question"], base["solution"]) for base_id, base in bases.items()}
    for base_id, base in bases.items():
        if base["number_style"] != styles[base_id]:
            yield Failure(BASE, base_id, f"number_style {base['number_style']} is not the rule's {styles[base_id]}")
    for row in release.rows(VARIANTS):
        style = styles.get(row["base_id"])
        if style is None or not row["number"].isdigit():
            continue
        value = int(row["number"])
        if _is_identifier(templates, row):
            if re.search(r"\d,\d{3}(?!\d)", row["sentence"]) or not re.search(rf"(?<![\d,]){value}(?![\d,])", row["sentence"]):
                yield Failure(VARIANTS, row["id"], f"identifier {value} is not written as plain digits")
            continue
        plain = re.search(r"(?<![\d,])\d{5,}(?![\d,])", row["sentence"])
        if plain:
            yield Failure(VARIANTS, row["id"], f"{plain.group()} is written without thousands separators")
        if value >= 1000 and style["separators"] and f"{value:,}" not in row["sentence"]:
            yield Failure(VARIANTS, row["id"], f"{value} is not written with separators as the problem writes numbers")
        if "{money}" in row["sentence_template"] and style["dollar_sign"] != ("$" in row["sentence"]):
            yield Failure(VARIANTS, row["id"], "money is not written the way the problem writes it ($ or dollars)")


@check("gsm-ic", "out_range_outside")
def out_range_outside(release) -> Iterable[Failure]:
    """[§3.1] An out-of-range number lies outside the problem's whole range [l/10, 10r], never in a gap inside it."""
    bounds = {}
    for base_id, base in _bases(release).items():
        known = known_numbers(base["question"], base["solution"])
        if known:
            bounds[base_id] = (min(known) / 10, max(known) * 10)
    for row in release.rows(VARIANTS):
        if row["number_label"] != "out_range" or row["base_id"] not in bounds or not row["number"].isdigit():
            continue
        low, high = bounds[row["base_id"]]
        if low <= int(row["number"]) <= high:
            yield Failure(VARIANTS, row["id"], f"out-of-range number {row['number']} lies inside [{float(low):g}, {float(high):g}]")


@check("gsm-ic", "template_bounds")
def template_bounds(release) -> Iterable[Failure]:
    """Each inserted number lies within the magnitudes its template reads naturally with (its min and max: "owns 300
    watches", never 22,000,000, intersected with its magnitude class's), for the shared templates and for those
    written for the base problem."""
    bounds = _templates(release)
    for row in release.rows(VARIANTS):
        template = bounds.get(row["template_id"])
        if template is None:
            yield Failure(VARIANTS, row["id"], f"template {row['template_id']!r} is neither a shared template nor one written for its base")
            continue
        low, high = magnitudes.bounds(template)
        value = int(row["number"]) if row["number"].isdigit() else None
        if value is not None and not low <= value <= (high if high is not None else value):
            yield Failure(
                VARIANTS,
                row["id"],
                f"number {value:,} is outside what template {template.id} reads with ({low:,} to {'any' if high is None else f'{high:,}'})",
            )


@check("gsm-ic", "magnitude_plausible")
def magnitude_plausible(release) -> Iterable[Failure]:
    """Numbers a reader believes: each variant's sentence is classed again from its own text by the phrase rules of
    magnitudes.py (an identifier, a favourite's audience, a crowd, a factory's output, a business's year, a shop's
    week, an odometer, an elevation, a city, a town, a parking lot, a phone's contacts, and the holder floors: a
    professional's years, a chain's period, a shop's total since opening, a library's members, a bank's customers, a
    farm's planting), and its number lies in the class's bounds; an identifier is written without separators and has at most six digits."""
    templates = _templates(release)
    for row in release.rows(VARIANTS):
        if not row["number"].isdigit():
            continue
        template = templates.get(row["template_id"])
        marked = template is not None and template.identifier
        # one place decides the class: the phrase rules (a template's declared class agrees, lexicon.Template)
        magnitude = magnitudes.class_of(row["sentence_template"], marked)
        value = int(row["number"])
        if value < magnitude.low or (magnitude.high is not None and value > magnitude.high):
            yield Failure(
                VARIANTS,
                row["id"],
                f"number {value:,} is implausible for {magnitude.what} (class {magnitude.name}: "
                f"{magnitude.low:,} to {'any' if magnitude.high is None else f'{magnitude.high:,}'})",
            )
        if magnitude.name == "identifier" and re.search(r"\d,\d{3}(?!\d)", row["sentence"]):
            yield Failure(VARIANTS, row["id"], f"identifier {value} is written with separators")


@check("gsm-ic", "template_mix")
def template_mix(release) -> Iterable[Failure]:
    """Per base problem, in-range and out-of-range variants share the template mix (total-variation distance <= 0.05)."""
    for base_id, distance in sorted(template_mix_distance(release.rows(VARIANTS)).items()):
        if distance > 0.05:
            yield Failure(
                BASE,
                base_id,
                f"template mixes of in-range and out-of-range variants differ by {distance:.3f} (total variation; at most 0.05)",
            )


MAX_UPSTREAM_REPORTED = 50


@check("gsm-ic", "upstream_files")
def upstream_files_mirror_variants(release) -> Iterable[Failure]:
    """GSM-IC_2step.json and GSM-IC_mstep.json hold exactly the variants of variants.jsonl with two steps and with
    more [§3.1], each record the row's fields mapped to the upstream ones (upstream_files.py), in id order; and each
    record replays: its sentence_template filled with its role and number is in its new_question."""
    expected, problems = upstream_files.expected_records(release.rows(VARIANTS))
    for item, reason in problems[:MAX_UPSTREAM_REPORTED]:
        yield Failure(VARIANTS, item, f"gives no upstream-format record: {reason}")
    for name in upstream_files.FILES:
        entry = release.extra_file(name)
        if entry is None:
            yield Failure(name, None, "not listed in manifest.json extra_files: the release lacks the upstream-format file, rebuild it")
            continue
        if entry.get("from") != VARIANTS or entry.get("format") != "json":
            yield Failure(
                name, None, f"manifest.json records it as {entry.get('format')!r} from {entry.get('from')!r}, not json from {VARIANTS}"
            )
        if release_files.entry_problem(release.path, name):
            continue  # missing or not a regular file: reported by hashes and contents
        try:
            records = release.records(name)
        except CtxRobustError as exc:
            yield Failure(name, None, str(exc))
            continue
        yield from _compare_upstream(name, records, expected[name])


def _compare_upstream(name: str, records: list, expected: list[tuple[str, dict]]) -> Iterable[Failure]:
    reported = 0
    if len(records) != len(expected):
        yield Failure(name, None, f"{len(records)} records; variants.jsonl has {len(expected)} variants for this file")
        reported += 1
    for number, (record, (item, want)) in enumerate(zip(records, expected), start=1):
        if reported >= MAX_UPSTREAM_REPORTED:
            yield Failure(name, None, f"{MAX_UPSTREAM_REPORTED} differences listed; stopped checking this file")
            return
        if record != want:
            fields = sorted(
                k
                for k in set(want) | set(record if isinstance(record, dict) else {})
                if not isinstance(record, dict) or record.get(k) != want.get(k)
            )
            yield Failure(name, item, f"record {number} differs from variant {item} of {VARIANTS} in {', '.join(fields)}")
            reported += 1
            continue
        try:
            filled = record["sentence_template"].format(role=record["role"], number=record["number"])
        except (KeyError, IndexError, ValueError) as exc:
            filled = f"<does not format: {exc!r}>"
        if filled not in record["new_question"]:
            yield Failure(name, item, f"record {number}: sentence_template filled with role and number ({filled!r}) is not in new_question")
            reported += 1


def _user_provenance(release, user: dict) -> Iterable[Failure]:
    """A build from the user's base_file: when the configured file is at hand with the recorded sha256, every base
    problem is re-read from the line its id names; otherwise the recorded sha256 is all there is to check against."""
    from pathlib import Path

    from ctxrobust.canonical import sha256_file
    from ctxrobust.sources import gsm8k

    path = Path(release.config_as(GsmIcConfig).base_file or "").expanduser()
    if not path.is_file() or sha256_file(path) != user["sha256"]:
        return
    problems = {p.id: p for p in gsm8k.read_user_file(path).problems}
    for row in release.rows(BASE):
        problem = problems.get(row["id"])
        if problem is None or (row["question"], row["solution"], row["n_steps"]) != (problem.question, problem.solution, problem.n_steps):
            yield Failure(BASE, row["id"], f"question, solution or n_steps differs from line {row['pool_line']} of {user['file']}")
