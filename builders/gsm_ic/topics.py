"""A base problem's topic, and the templates that are in-topic or off-topic for it [§3.1] [tab. 1].

The keyword rule (topic_rule.json "about"), for a problem without a reviewed topic:
- a topic's keywords are its templates.json keywords and its topic_rule.json extra
  keywords, each weighing 1 unless topic_rule.json gives another weight;
- the lower-cased problem text is matched once, left to right, each span taken by
  the longest keyword of any topic (whole words; "model trains" is not "trains");
  a keyword several topics list counts for each of them;
- an occurrence in the question sentence (insertion.question_sentence_start)
  counts question_weight times;
- the topic with the largest total wins, ties going to the topic listed first in
  templates.json; no keyword at all: no topic.

`count_rule` is the release 1.0.0 rule (templates.json keywords only, each occurrence
once, within one topic), kept because base.jsonl reports its evidence for reviewed topics.
"""

from __future__ import annotations

import re
from functools import cache

from ctxrobust.builders.gsm_ic.insertion import question_sentence_start
from ctxrobust.builders.gsm_ic.lexicon import Template, Templates, TopicRule


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
    """(topic, its keyword occurrences) by the keyword rule; (None, []) when no keyword occurs."""
    totals, found = weighted_scores(question, templates, rule)
    best, score = None, 0.0
    for topic in templates.topics:  # listed order breaks ties
        if round(totals.get(topic.name, 0.0), 9) > round(score, 9):
            best, score = topic.name, totals[topic.name]
    return best, found.get(best, []) if best else []


def in_topic_templates(topic: str, templates: Templates) -> list[Template]:
    return [t for t in templates.in_topic if topic in t.topics]


def off_topic_templates(topic: str, templates: Templates) -> list[Template]:
    return [t for t in templates.off_topic if topic not in t.topics]


def sentence_label(template_topics: list[str], topic: str) -> str:
    """in_topic iff the template is tagged with the problem's topic."""
    return "in_topic" if topic in template_topics else "off_topic"
