"""SituatedQA answer timelines (the raw_data annotation records; paper Appendix A.1 "Sources",
"Distractors"): each annotator's current answer with the date it started and the previous answer
with its own start, i.e. values of one relation at dated scopes.

Used for what they hold: the values of the same relation at other times are the first distractors of
a time item (before any other question is borrowed), and the start dates are precise scopes: a value
a timeline puts in force on the as-of date that differs from the qa_data answer, or a change within
the asked period that the year alone cannot place, leaves the item out.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from ctxrobust.builders.misleadqa.normalise import answer_key, same_answer
from ctxrobust.sources.situatedqa import TimelineValue


def _first_day(start: tuple[int, int | None, int | None]) -> dt.date:
    year, month, day = start
    return dt.date(year, month or 1, day or 1)


def _last_day(start: tuple[int, int | None, int | None]) -> dt.date:
    """The last day the start can fall on ('2019' -> December 31, 2019; 'March 2019' -> March 31)."""
    year, month, day = start
    if month is None:
        return dt.date(year, 12, 31)
    if day is None:
        return dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)
    return dt.date(year, month, day)


class Timelines:
    """The dated values of every question's timelines, by upstream id."""

    def __init__(self, values: list[TimelineValue]):
        self.by_question: dict[str, list[TimelineValue]] = defaultdict(list)
        for value in sorted(values, key=lambda v: (v.snapshot, v.line or 0, v.field)):
            self.by_question[value.upstream_id].append(value)

    def values(self, upstream_id: str) -> list[TimelineValue]:
        return self.by_question.get(upstream_id, [])

    def in_force(self, upstream_id: str, day: dt.date) -> list[tuple[TimelineValue, str]]:
        """(timeline value, its answer) each annotator's timeline puts in force on `day`: the current
        answer once its start has surely passed, the previous one from its start until the current
        one's start can have begun. A day too close to a start the timeline gives only by year or
        month is undecided and yields nothing for that timeline."""
        timelines: dict[tuple[str, int, str], dict[str, TimelineValue]] = defaultdict(dict)
        for value in self.values(upstream_id):
            index, which = value.field.removeprefix("timelines[").split("].")
            timelines[(value.snapshot, value.line or 0, index)][which.removesuffix("_answers")] = value
        out = []
        for parts in timelines.values():
            cur, prev = parts.get("cur"), parts.get("prev")
            if cur is None or cur.start is None:
                continue
            if day >= _last_day(cur.start):
                out.append((cur, cur.answers[0]))
            elif day < _first_day(cur.start) and prev is not None and prev.start is not None and day >= _last_day(prev.start):
                out.append((prev, prev.answers[0]))
        return out

    def conflict(self, upstream_id: str, day: dt.date, answer: str) -> TimelineValue | None:
        """A timeline value in force on `day` that is not `answer` (the qa_data answer is stale or early)."""
        for value, given in self.in_force(upstream_id, day):
            if not same_answer(given, answer) and not any(same_answer(a, answer) for a in value.answers):
                return value
        return None

    def changes_within(self, upstream_id: str, first: dt.date, last: dt.date, answer: str) -> TimelineValue | None:
        """A timeline value other than `answer` starting within [first, last]: the answer changes in the period."""
        key = answer_key(answer)
        for value in self.values(upstream_id):
            if value.start is None or any(answer_key(a) == key or same_answer(a, answer) for a in value.answers):
                continue
            if first <= _last_day(value.start) and _first_day(value.start) <= last:
                return value
        return None
