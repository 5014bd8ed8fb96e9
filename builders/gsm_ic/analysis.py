"""What the builder needs to know about one base problem, and whether it can be used.

The authors checked every variant by hand [§3.1] [app. A]; the builder instead uses
only problems where its automatic steps are safe. A pool problem is usable when
- the question names a person (for overlapping roles);
- the question has a topic: a reviewed one (an entry, or a pool problem's topic label),
  one its base_file line gives, or one the keyword rule decides (topics.decide_topic;
  undecided: excluded, with the reason);
- the question sentence names no group the inserted person could join
  (they, them, their, we, us, our, everyone, everybody, people, persons);
- a he/she/him/his/her opening the question sentence can be tied to one person
  (insertion.pronoun_edits);
- the final answer is a number, and some whole number >= 2 is in range and some is
  out of range (numbers.py);
- the question sentence has no "it" the inserted sentence could take over
  (irrelevance.ambiguous_it).
The topic of a problem with a reviewed entry (reviewed.json) is that entry's (its
topic_keywords then record the 1.0.0 count rule's evidence, topics.count_rule); a pool
problem the maintainers labelled (reviewed.json topic parts: every pool id) takes its
label; base_file problems take the topic their line gives (topic_source "base_file"), else the
keyword rule's decided topic (topics.decide_topic, topic_rule.json; topic_source
"keywords", its evidence in topic_evidence).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from ctxrobust.builders.gsm_ic import irrelevance
from ctxrobust.builders.gsm_ic.insertion import Edit, KeptPronoun, Unresolved, apply_edits, pronoun_edits, question_sentence_start
from ctxrobust.builders.gsm_ic.lexicon import Lexicon, Reviewed, Templates, TopicRule, load_topic_rule
from ctxrobust.builders.gsm_ic.numbers import candidate_intervals, known_numbers, number_style, parse_answer, solution_text
from ctxrobust.builders.gsm_ic.roles import Person, find_people
from ctxrobust.builders.gsm_ic.topics import count_rule, decide_topic, weighted_scores

# Words in the question sentence that name a group the inserted person could be read
# as joining ("How many apples do they have?"); such problems are not used.
GROUP_WORDS = re.compile(r"\b(they|them|their|theirs|we|us|our|everyone|everybody|people|persons)\b", re.IGNORECASE)


@dataclass
class Analysis:
    question: str
    solution: str
    answer: Fraction | None
    people: list[Person] = field(default_factory=list)
    topic: str | None = None
    topic_keywords: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    insert_offset: int = 0
    known: list[Fraction] = field(default_factory=list)  # the positive numbers b of the problem and its solution [§3.1]
    targets: list[str] = field(default_factory=list)  # irrelevance.target_words of the question sentence
    money_question: bool = False
    relations_present: list[str] = field(default_factory=list)  # relations the problem already names
    open_pronouns: list[str] = field(default_factory=list)  # genders a role must not have (irrelevance.open_pronoun_genders)
    style: dict = field(default_factory=dict)  # numbers.number_style
    topic_source: str = "keywords"  # "reviewed", "base_file" or "keywords"
    topic_evidence: str = ""  # why the topic is the problem's (the keyword rule's evidence, the entry, the file line)
    pronoun_kept: str | None = None  # why the question's pronoun is not reworded (insertion.KeptPronoun)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, message): why it cannot be used


def analyse(
    question: str,
    solution: str,
    answer: str,
    lexicon: Lexicon,
    templates: Templates,
    reviewed: Reviewed | None = None,
    base_id: str | None = None,
    relations: list[str] = (),
    topic_rule: TopicRule | None = None,
    from_file: bool = False,
    given_topic: str | None = None,
    pool_sha256: str | None = None,
) -> Analysis:
    """`from_file`: a problem of the user's base_file, whose line may give its topic (`given_topic`);
    `pool_sha256`: the pool file's, for the maintainers' topic labels (reviewed.json topic_pool_sha256)."""
    worked = solution_text(solution)
    try:
        value = parse_answer(answer)
    except ValueError:
        value = None
    result = Analysis(question=question, solution=solution, answer=value)
    if value is None:
        result.problems.append(("answer_not_a_number", f"the final answer {answer!r} is not a number"))
    result.known = known_numbers(question, solution)
    result.people = find_people(question, worked, lexicon)
    entry = reviewed.entry(base_id, question) if reviewed is not None and base_id is not None else None
    if entry is not None and entry.people is not None:
        result.people = [p for p in result.people if p.name in entry.people]
    if not result.people:
        result.problems.append(("no_person", "no person named in the question to derive an overlapping role from"))
    label = reviewed.pool_topic(base_id, pool_sha256) if reviewed is not None and base_id is not None and not from_file else None
    _set_topic(result, question, templates, topic_rule or load_topic_rule(), entry, label, from_file, given_topic)
    start = question_sentence_start(question)
    group = GROUP_WORDS.search(question, start)
    if group:
        result.problems.append(
            ("group_reference", f"the question sentence refers to a group ({group.group(1)!r}) the inserted person could join")
        )
    try:
        result.edits = pronoun_edits(question, result.people)
    except Unresolved as exc:
        result.problems.append(("pronoun_unresolved", str(exc)))
    except KeptPronoun as exc:
        result.pronoun_kept = str(exc)
    both_labels = bool(result.known) and all(candidate_intervals(result.known, label) for label in ("in_range", "out_range"))
    if not both_labels:
        result.problems.append(("no_numbers", "no whole number >= 2 can be in range and out of range for the problem's numbers"))
    it = irrelevance.ambiguous_it(question[start:])
    if it:
        result.problems.append(("it_reference", f"the question sentence's {it!r} could be read as the inserted sentence's subject"))
    edited = apply_edits(question, [e.as_row() for e in result.edits])
    result.insert_offset = question_sentence_start(edited)
    asked = edited[result.insert_offset :]
    result.targets = irrelevance.target_words(asked, question + "\n" + worked)
    result.money_question = irrelevance.is_money_question(asked, solution)
    if result.money_question:
        result.targets = sorted(set(result.targets) | irrelevance.MONEY_WORDS)
    result.relations_present = irrelevance.relations_in_problem(question + "\n" + worked, list(relations))
    result.open_pronouns = irrelevance.open_pronoun_genders(asked, [(p.name, p.gender) for p in result.people])
    result.style = number_style(question, solution)
    return result


def _set_topic(
    result: Analysis, question: str, templates: Templates, rule: TopicRule, entry, label, from_file: bool, given: str | None
) -> None:
    """A reviewed entry's topic, else the maintainers' topic label of a pool problem, else the base_file line's,
    else the keyword rule's decided one; undecided: a usability reason."""
    if entry is not None:
        result.topic, result.topic_source = entry.topic, "reviewed"
        result.topic_keywords = count_rule(question, templates)[1]
        result.topic_evidence = "reviewed.json entry"
        return
    if label is not None:
        result.topic, result.topic_source = label[0], "reviewed"
        result.topic_keywords = count_rule(question, templates)[1]
        result.topic_evidence = f"reviewed.json {label[1]} label"
        return
    if given is not None:
        result.topic, result.topic_source = given, "base_file"
        result.topic_keywords = weighted_scores(question, templates, rule)[1].get(given, [])
        result.topic_evidence = "given by the base_file line"
        return
    decision = decide_topic(question, templates, rule)
    result.topic, result.topic_keywords, result.topic_evidence = decision.topic, decision.keywords, decision.evidence()
    if decision.topic is not None:
        return
    if from_file:
        result.problems.append(("topic_undecided", f"topic undecided: add a topic field ({decision.undecided})"))
    elif decision.leader is None:
        result.problems.append(("no_topic", "no topic keyword in the question"))
    else:
        result.problems.append(("topic_undecided", f"topic undecided: {decision.undecided}"))
