"""A base problem's topic, and the templates that are in-topic or off-topic for it [§3.1] [tab. 1].

The keyword rule (topic_rule.json "about"), for a problem without a reviewed topic:
- a topic's keywords are its templates.json keywords and its topic_rule.json extra
  keywords, each weighing 1 unless topic_rule.json gives another weight;
- the lower-cased problem text is matched once, left to right, each span taken by
  the longest keyword of any topic (whole words; "model trains" is not "trains");
  a keyword several topics list counts for each of them;
- an occurrence in the question sentence (insertion.question_sentence_start)
  counts question_weight times;
- the topic with the largest total leads, ties going to the topic listed first in
  templates.json; no keyword at all: no topic.

The decision (`decide_topic`, topic_rule.json "decision"): the leading topic is the
problem's topic only when its evidence is clear, that is when it rests on at least
min_distinct_keywords distinct keywords (a plural counting as its singular), totals at
least min_score, and leads the runner-up by at least min_margin of its own total;
otherwise the topic is undecided and the reason is recorded (a rule that cannot
decide a case excludes it; it never guesses). `measure` gives a rule's agreement with
labelled problems among those it decides, and its coverage.

`count_rule` is the release 1.0.0 rule (templates.json keywords only, each occurrence
once, within one topic), kept because base.jsonl reports its evidence for reviewed topics.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

from ctxrobust.builders.gsm_ic.insertion import question_sentence_start
from ctxrobust.builders.gsm_ic.lexicon import Template, Templates, TopicRule, load_templates, load_topic_rule


@cache
def _pattern(keywords: tuple[str, ...]) -> re.Pattern:
    longest_first = sorted(keywords, key=lambda k: (-len(k), k))
    return re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(k) for k in longest_first) + r")(?![a-z])")


def topic_scores(question: str, templates: Templates) -> dict[str, list[str]]:
    """Topic -> the templates.json keyword occurrences found (sorted), for topics with at least one."""
    text = question.lower()
    found: dict[str, list[str]] = {}
    for topic in templates.topics:
        hits = _pattern(tuple(topic.keywords)).findall(text)
        if hits:
            found[topic.name] = sorted(hits)
    return found


def count_rule(question: str, templates: Templates) -> tuple[str | None, list[str]]:
    """The 1.0.0 rule: the topic with the most templates.json keyword occurrences (ties: listed first)."""
    scores = topic_scores(question, templates)
    best, evidence = None, []
    for topic in templates.topics:  # listed order breaks ties
        hits = scores.get(topic.name, [])
        if len(hits) > len(evidence):
            best, evidence = topic.name, hits
    return best, evidence


_OWNERS: dict[tuple[int, int], tuple[Templates, TopicRule, dict, re.Pattern]] = {}


def _keyword_owners(templates: Templates, rule: TopicRule) -> tuple[dict[str, list[tuple[str, float]]], re.Pattern]:
    """keyword -> [(topic, weight)], and one pattern matching every keyword, longest first (kept per model pair)."""
    key = (id(templates), id(rule))
    if key in _OWNERS and _OWNERS[key][0] is templates and _OWNERS[key][1] is rule:
        return _OWNERS[key][2], _OWNERS[key][3]
    owners: dict[str, list[tuple[str, float]]] = {}
    for topic in templates.topics:
        weights = rule.weights.get(topic.name, {})
        for keyword in sorted(set(topic.keywords) | set(rule.extra_keywords.get(topic.name, ()))):
            owners.setdefault(keyword, []).append((topic.name, weights.get(keyword, 1.0)))
    pattern = _pattern(tuple(sorted(owners)))
    _OWNERS[key] = (templates, rule, owners, pattern)
    return owners, pattern


def weighted_scores(question: str, templates: Templates, rule: TopicRule) -> tuple[dict[str, float], dict[str, list[str]]]:
    """(topic -> weighted total, topic -> the keyword occurrences counted, sorted) by the keyword rule."""
    owners, pattern = _keyword_owners(templates, rule)
    start = question_sentence_start(question)
    totals: dict[str, float] = {}
    found: dict[str, list[str]] = {}
    for match in pattern.finditer(question.lower()):
        factor = rule.question_weight if match.start() >= start else 1.0
        for topic, weight in owners[match.group(0)]:
            totals[topic] = totals.get(topic, 0.0) + weight * factor
            found.setdefault(topic, []).append(match.group(0))
    return totals, {topic: sorted(hits) for topic, hits in found.items()}


def assign_topic(question: str, templates: Templates, rule: TopicRule) -> tuple[str | None, list[str]]:
    """(leading topic, its keyword occurrences) by the keyword rule, decided or not (decide_topic's
    leader: ties go to the topic listed first); (None, []) when no keyword occurs."""
    decision = decide_topic(question, templates, rule)
    return decision.leader, decision.keywords


def _singular(keyword: str) -> str:
    return keyword[:-1] if keyword.endswith("s") and not keyword.endswith("ss") else keyword


@dataclass(frozen=True)
class TopicDecision:
    """The keyword rule's answer for one problem, with its evidence."""

    topic: str | None  # the decided topic; None: undecided
    leader: str | None  # the leading topic (None: no keyword at all)
    keywords: list[str]  # the leading topic's keyword occurrences, sorted
    score: float  # the leader's weighted total
    runner_up: str | None
    runner_up_score: float
    distinct: int  # distinct keywords of the leader (a plural counting as its singular)
    undecided: str | None  # why no topic is decided (None: decided)

    @property
    def margin(self) -> float:
        return (self.score - self.runner_up_score) / self.score if self.score else 0.0

    def evidence(self) -> str:
        """One line: the leader's total, the runner-up's, the lead and the distinct keywords."""
        if self.leader is None:
            return "no topic keyword"
        runner = f"{self.runner_up} {self.runner_up_score:.2f}" if self.runner_up else "no other topic"
        return f"{self.leader} {self.score:.2f} over {runner} (lead {self.margin:.0%}), {self.distinct} distinct keyword{'' if self.distinct == 1 else 's'}"


def decide_topic(question: str, templates: Templates, rule: TopicRule) -> TopicDecision:
    """The keyword rule's leading topic when its evidence is clear (topic_rule.json "decision"), else undecided with the reason."""
    totals, found = weighted_scores(question, templates, rule)
    ranked = sorted(
        (name for name in (t.name for t in templates.topics) if round(totals.get(name, 0.0), 9) > 0),
        key=lambda name: -round(totals[name], 9),
    )  # stable: ties keep templates.json order
    if not ranked:
        return TopicDecision(None, None, [], 0.0, None, 0.0, 0, "no topic keyword in the question")
    leader, runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
    hits = found[leader]
    decision = TopicDecision(
        topic=leader,
        leader=leader,
        keywords=hits,
        score=totals[leader],
        runner_up=runner,
        runner_up_score=totals[runner] if runner else 0.0,
        distinct=len({_singular(k) for k in hits}),
        undecided=None,
    )
    thresholds = rule.decision
    why = None
    if decision.distinct < thresholds.min_distinct_keywords:
        why = (
            f"the leading topic {leader} rests on {decision.distinct} distinct keyword(s) ({', '.join(sorted(set(hits)))}), "
            f"fewer than {thresholds.min_distinct_keywords}"
        )
    elif round(decision.score, 9) < thresholds.min_score:
        why = f"the leading topic {leader} totals {decision.score:.2f}, under {thresholds.min_score:g}"
    elif round(decision.margin, 9) < thresholds.min_margin:
        why = (
            f"the leading topic {leader} ({decision.score:.2f}) leads {runner} ({decision.runner_up_score:.2f}) "
            f"by {decision.margin:.0%}, under {thresholds.min_margin:.0%}"
        )
    return decision if why is None else dataclasses.replace(decision, topic=None, undecided=why)


@dataclass(frozen=True)
class Agreement:
    """A topic rule against labelled problems: how many it decides, and how many of those match the label."""

    agreeing: int
    decided: int
    total: int

    @property
    def agreement(self) -> float:
        """Agreement among decided problems."""
        return self.agreeing / self.decided if self.decided else 0.0

    @property
    def coverage(self) -> float:
        """Share of the labelled problems the rule decides."""
        return self.decided / self.total if self.total else 0.0


def measure(labels: Mapping[str, str], questions: Mapping[str, str], rule: Callable[[str], str | None] | None = None) -> Agreement:
    """`rule` (question -> topic, None: undecided; default: decide_topic with the committed files) against
    `labels` ({pool id: topic}); `questions` gives each labelled id's question."""
    if rule is None:
        templates, topic_rule = load_templates(), load_topic_rule()

        def rule(question: str) -> str | None:
            return decide_topic(question, templates, topic_rule).topic

    missing = sorted(set(labels) - set(questions))
    if missing:
        raise ValueError(f"no question for labelled ids {missing[:3]}")
    answers = {base_id: rule(questions[base_id]) for base_id in sorted(labels)}
    decided = [base_id for base_id, topic in answers.items() if topic is not None]
    return Agreement(sum(answers[i] == labels[i] for i in decided), len(decided), len(labels))


def in_topic_templates(topic: str, templates: Templates) -> list[Template]:
    return [t for t in templates.in_topic if topic in t.topics]


def off_topic_templates(topic: str, templates: Templates) -> list[Template]:
    return [t for t in templates.off_topic if topic not in t.topics]


def sentence_label(template_topics: list[str], topic: str) -> str:
    """in_topic iff the template is tagged with the problem's topic."""
    return "in_topic" if topic in template_topics else "off_topic"
