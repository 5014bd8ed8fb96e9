"""A base problem's topic, and the templates that are in-topic or off-topic for it [§3.1] [tab. 1].

Rule (also in templates.json "about"): count, in the lower-cased question, the
occurrences of each topic's keywords (whole words; multi-word keywords as
phrases; where two keywords of a topic overlap, the longer one counts once); the
topic with the highest count wins, ties going to the topic listed first in
templates.json. No keyword at all: no topic.
"""

from __future__ import annotations

import re
from functools import cache

from ctxrobust.builders.gsm_ic.lexicon import Template, Templates


@cache
def _pattern(keywords: tuple[str, ...]) -> re.Pattern:
    longest_first = sorted(keywords, key=lambda k: (-len(k), k))
    return re.compile(r"(?<![a-z])(?:" + "|".join(re.escape(k) for k in longest_first) + r")(?![a-z])")


def topic_scores(question: str, templates: Templates) -> dict[str, list[str]]:
    """Topic -> the keyword occurrences found (sorted), for topics with at least one."""
    text = question.lower()
    found: dict[str, list[str]] = {}
    for topic in templates.topics:
        hits = _pattern(tuple(topic.keywords)).findall(text)
        if hits:
            found[topic.name] = sorted(hits)
    return found


def assign_topic(question: str, templates: Templates) -> tuple[str | None, list[str]]:
    """(topic, keyword occurrences) by the documented rule; (None, []) when no keyword occurs."""
    scores = topic_scores(question, templates)
    best, evidence = None, []
    for topic in templates.topics:  # listed order breaks ties
        hits = scores.get(topic.name, [])
        if len(hits) > len(evidence):
            best, evidence = topic.name, hits
    return best, evidence


def in_topic_templates(topic: str, templates: Templates) -> list[Template]:
    return [t for t in templates.in_topic if topic in t.topics]


def off_topic_templates(topic: str, templates: Templates) -> list[Template]:
    return [t for t in templates.off_topic if topic not in t.topics]


def sentence_label(template_topics: list[str], topic: str) -> str:
    """in_topic iff the template is tagged with the problem's topic."""
    return "in_topic" if topic in template_topics else "off_topic"
