"""What the builder needs to know about one base problem, and whether it can be used.

The authors checked every variant by hand [§3.1] [app. A]; the builder instead uses
only problems where its automatic steps are safe. A pool problem is usable when
- the question names a person (for overlapping roles);
- the question has a topic by the keyword rule (topics.py);
- the question sentence names no group the inserted person could join
  (they, them, their, we, us, our, everyone, everybody, people, persons);
- a he/she/him/his/her opening the question sentence can be tied to one person
  (insertion.pronoun_edits);
- the final answer is a number, and some whole number >= 2 is in range and some is
  out of range (numbers.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from ctxrobust.builders.gsm_ic.insertion import Edit, Unresolved, apply_edits, pronoun_edits, question_sentence_start
from ctxrobust.builders.gsm_ic.lexicon import Lexicon, Templates
from ctxrobust.builders.gsm_ic.numbers import candidate_intervals, known_numbers, parse_answer, solution_text
from ctxrobust.builders.gsm_ic.roles import Person, find_people
from ctxrobust.builders.gsm_ic.topics import assign_topic

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
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, message): why it cannot be used


def analyse(question: str, solution: str, answer: str, lexicon: Lexicon, templates: Templates) -> Analysis:
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
    if not result.people:
        result.problems.append(("no_person", "no person named in the question to derive an overlapping role from"))
    result.topic, result.topic_keywords = assign_topic(question, templates)
    if result.topic is None:
        result.problems.append(("no_topic", "no topic keyword in the question"))
    start = question_sentence_start(question)
    group = GROUP_WORDS.search(question, start)
    if group:
        result.problems.append(("group_reference", f"the question sentence refers to a group ({group.group(1)!r}) the inserted person could join"))
    try:
        result.edits = pronoun_edits(question, result.people)
    except Unresolved as exc:
        result.problems.append(("pronoun_unresolved", str(exc)))
    both_labels = bool(result.known) and all(candidate_intervals(result.known, label) for label in ("in_range", "out_range"))
    if not both_labels:
        result.problems.append(("no_numbers", "no whole number >= 2 can be in range and out of range for the problem's numbers"))
    edited = apply_edits(question, [e.as_row() for e in result.edits])
    result.insert_offset = question_sentence_start(edited)
    return result
