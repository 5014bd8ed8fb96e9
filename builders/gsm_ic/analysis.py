"""What the builder needs to know about one base problem, and whether it can be used."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

from builders.gsm_ic.insertion import Edit, Unresolved, apply_edits, pronoun_edits, question_sentence_start
from builders.gsm_ic.lexicon import Lexicon, Templates
from builders.gsm_ic.numbers import known_numbers, numbers_in, parse_answer, solution_text
from builders.gsm_ic.roles import Person, find_people
from builders.gsm_ic.topics import assign_topic

# Words in the question sentence that name a group the inserted person could be read
# as joining ("How many apples do they have?"); such problems are not used.
GROUP_WORDS = re.compile(r"\b(they|them|their|theirs|we|us|our|everyone|everybody|people|persons)\b", re.IGNORECASE)


@dataclass
class Analysis:
    question: str
    solution: str
    answer: Fraction
    people: list[Person] = field(default_factory=list)
    topic: str | None = None
    topic_keywords: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    insert_offset: int = 0
    known: list[Fraction] = field(default_factory=list)
    problem_numbers: set[Fraction] = field(default_factory=set)
    solution_numbers: set[Fraction] = field(default_factory=set)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (kind, message): why it cannot be used

    @property
    def usable(self) -> bool:
        return not self.problems


def analyse(question: str, solution: str, answer: str, lexicon: Lexicon, templates: Templates) -> Analysis:
    worked = solution_text(solution)
    result = Analysis(question=question, solution=solution, answer=parse_answer(answer))
    result.known = known_numbers(question, solution)
    result.problem_numbers = numbers_in(question)
    result.solution_numbers = numbers_in(worked)
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
    if not result.known:
        result.problems.append(("no_numbers", "no positive number in the problem or its solution"))
    edited = apply_edits(question, [e.as_row() for e in result.edits])
    result.insert_offset = question_sentence_start(edited)
    return result
