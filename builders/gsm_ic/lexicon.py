"""The project's word lists, templates and topic rule (lexicon.json, templates.json, topic_rule.json, reviewed.json
beside this module), as typed models."""

from __future__ import annotations

import hashlib
import json
from functools import cache, cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxrobust.builders.gsm_ic.magnitudes import CLASSES, class_of

HERE = Path(__file__).parent


class Lexicon(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    about: str
    names: dict[str, list[str]]
    ambiguous_names: dict[str, list[str]]
    titles: dict[str, str | None]
    not_names: list[str]
    person_verbs: list[str]

    def gender_of(self, name: str) -> str | None:
        for gender in ("f", "m"):
            if name in self.names.get(gender, ()) or name in self.ambiguous_names.get(gender, ()):
                return gender
        return census_names().get(name)

    @cached_property
    def own_names(self) -> frozenset[str]:
        return self._own

    @cached_property
    def _own(self) -> frozenset[str]:
        return frozenset(n for group in self.names.values() for n in group)

    @cached_property
    def known_names(self) -> frozenset[str]:
        """The lexicon's names and the census first names that are not common English words nor not_names."""
        census = {n for n in census_names() if n.lower() not in self.stop and n not in common_word_names()}
        return self._own | (frozenset(census) - self.ambiguous)

    @cached_property
    def ambiguous(self) -> frozenset[str]:
        own = frozenset(n for group in self.ambiguous_names.values() for n in group)
        return own | (common_word_names() - self._own)

    @cached_property
    def verbs(self) -> frozenset[str]:
        return frozenset(self.person_verbs)

    @cached_property
    def titles_lower(self) -> frozenset[str]:
        return frozenset(t.lower() for t in self.titles)

    @cached_property
    def stop(self) -> frozenset[str]:
        return frozenset(self.not_names)


class Template(BaseModel):
    """One sentence with a {role} slot and a number slot: {number} (a count) or {money} ("$40" or "40 dollars",
    as the problem writes money)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    text: str
    topics: list[str]  # topics for which the sentence is in-topic
    min: int = 2  # the numbers the sentence reads naturally with ("is 40 years old", not "is 4000")
    max: int | None = None  # None: no upper bound
    # an identifier (an employee ID, a card, ticket or serial number): written as digits, never "ID 1,200,000"
    identifier: bool = False
    magnitude: str | None = None  # its magnitude class, declared; the phrase rules of magnitudes.py decide and must agree

    @model_validator(mode="after")
    def _slots(self) -> Template:
        if self.magnitude is not None and self.magnitude not in CLASSES:
            raise ValueError(f"template {self.id}: unknown magnitude class {self.magnitude!r} (one of {', '.join(CLASSES)})")
        if self.magnitude is not None and self.magnitude != (ruled := class_of(self.text, self.identifier).name):
            raise ValueError(f"template {self.id}: declares magnitude class {self.magnitude!r}, its phrase rules give {ruled!r}")
        if self.text.count("{role}") != 1 or self.text.count("{number}") + self.text.count("{money}") != 1:
            raise ValueError(f"template {self.id}: needs exactly one {{role}} and one {{number}} or {{money}} slot")
        if self.min < 2 or (self.max is not None and self.max < self.min):
            raise ValueError(f"template {self.id}: needs 2 <= min <= max")
        return self


class ProblemEntry(BaseModel):
    """A base problem's reviewed topic and the in-topic templates written for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    question_sha256: str  # the entry holds only for the problem with this question (ids are per pool file)
    topic: str
    templates: list[str]
    # per template, the largest number it reads naturally with ("owns 300 watches", not 22,000,000); null: no bound
    max: list[int | None] | None = None
    min: list[int] | None = None  # per template, the smallest number it reads naturally with ("a city of 5 people": no)
    identifier: list[bool] | None = None  # per template, whether its number is an identifier (written as digits)
    magnitude: list[str | None] | None = None  # per template, its magnitude class (None: its phrase rules')
    people: list[str] | None = None  # the problem's people, where the person finder also took a place or an animal for one


class DefaultBase(BaseModel):
    """The default build's base problems, pinned: drawn once by the seeded step-mix draw, then reviewed."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    about: str
    seed: int
    ids: list[str]


TOPIC_PARTS = ("topic_sample", "topic_held_out", "topic_second_held_out", "topic_rest")  # reviewed.json's pool topic labels


class Reviewed(BaseModel):
    """reviewed.json: project-authored review data (see its "about" and "review")."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    about: str
    review: str
    default_base: DefaultBase
    problems: dict[str, ProblemEntry]
    topic_sample: dict[str, str]  # the tuning part of the maintainers' topic sample of the pool
    topic_held_out: dict[str, str]  # its held-out part, never looked at while the rule was tuned
    topic_second_held_out: dict[str, str]  # labelled after the committed rule was fixed, measured once
    topic_rest: dict[str, str]  # every other pool problem, so that each has a maintainers' topic
    topic_held_out_relabelled: dict[str, str]  # topic_held_out labelled again, blind: the labels' own reliability
    topic_pool_sha256: str  # the pool file the topic labels were read from; another file's ids are other problems

    def pool_topic(self, base_id: str, pool_sha256: str | None) -> tuple[str, str] | None:
        """(topic, part) of a problem of the labelled pool file the maintainers labelled; None: not labelled."""
        if pool_sha256 != self.topic_pool_sha256:
            return None
        for part in TOPIC_PARTS:
            topic = getattr(self, part).get(base_id)
            if topic is not None:
                return topic, part
        return None

    def entry(self, base_id: str, question: str) -> ProblemEntry | None:
        """The reviewed entry of a base problem, if there is one for this very question."""
        entry = self.problems.get(base_id)
        if entry is None or entry.question_sha256 != hashlib.sha256(question.encode("utf-8")).hexdigest():
            return None
        return entry

    def templates_for(self, base_id: str, question: str) -> list[Template]:
        """The in-topic templates written for this base problem (none when it has no entry for this question)."""
        return self.templates_of(base_id) if self.entry(base_id, question) is not None else []

    def templates_of(self, base_id: str) -> list[Template]:
        entry = self.problems.get(base_id)
        if entry is None:
            return []
        highs = entry.max or [None] * len(entry.templates)
        lows = entry.min or [2] * len(entry.templates)
        marks = entry.identifier or [False] * len(entry.templates)
        classes = entry.magnitude or [None] * len(entry.templates)
        if not len(highs) == len(lows) == len(marks) == len(classes) == len(entry.templates):
            raise ValueError(f"reviewed.json: {base_id}: 'min', 'max', 'identifier' and 'magnitude' need one entry per template")
        return [
            Template(id=f"{base_id}/{i}", text=text, topics=[entry.topic], min=low, max=high, identifier=mark, magnitude=kind)
            for i, (text, low, high, mark, kind) in enumerate(zip(entry.templates, lows, highs, marks, classes), start=1)
        ]


class Topic(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    keywords: list[str]


class Templates(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    about: str
    topics: list[Topic]
    in_topic: list[Template]
    off_topic: list[Template]

    @model_validator(mode="after")
    def _consistent(self) -> Templates:
        names = {t.name for t in self.topics}
        ids = [t.id for t in self.in_topic + self.off_topic]
        if len(ids) != len(set(ids)):
            raise ValueError("template ids must be unique")
        for template in self.in_topic + self.off_topic:
            unknown = set(template.topics) - names
            if unknown:
                raise ValueError(f"template {template.id}: unknown topics {sorted(unknown)}")
        return self


@cache
def census_names() -> dict[str, str | None]:
    """First names of the US Census Bureau's 1990 lists (the PyPI package `names`), capitalised, with the gender
    of the list they are on; a name on both lists takes the list where it is at least ten times more frequent."""
    import names  # the package ships the census files beside its module

    folder = Path(names.__file__).parent
    frequency: dict[str, dict[str, float]] = {}
    for gender, file in (("m", "dist.male.first"), ("f", "dist.female.first")):
        for line in (folder / file).read_text(encoding="ascii").splitlines():
            parts = line.split()
            if parts:
                frequency.setdefault(parts[0].capitalize(), {})[gender] = float(parts[1])
    out: dict[str, str | None] = {}
    for name, by_gender in sorted(frequency.items()):
        m, f = by_gender.get("m", 0.0), by_gender.get("f", 0.0)
        out[name] = "m" if m >= 10 * f else "f" if f >= 10 * m else None
    return out


@cache
def common_word_names() -> frozenset[str]:
    """Census names that are also very common English words (wordfreq Zipf >= 5: "Will", "May", "Mark")."""
    from wordfreq import zipf_frequency

    return frozenset(n for n in census_names() if zipf_frequency(n.lower(), "en") >= 5.0)


@cache
def load_lexicon(path: Path = HERE / "lexicon.json") -> Lexicon:
    return Lexicon.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))


@cache
def load_reviewed(path: Path = HERE / "reviewed.json") -> Reviewed:
    reviewed = Reviewed.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    names = {t.name for t in load_templates().topics}
    for base_id, entry in reviewed.problems.items():
        if entry.topic not in names:
            raise ValueError(f"reviewed.json: {base_id}: unknown topic {entry.topic!r}")
        reviewed.templates_of(base_id)  # each template has its slots
    seen: set[str] = set(reviewed.problems)
    for part in TOPIC_PARTS:
        labels = getattr(reviewed, part)
        for base_id, topic in labels.items():
            if topic not in names:
                raise ValueError(f"reviewed.json: {part} {base_id}: unknown topic {topic!r}")
        if seen & set(labels):
            raise ValueError(
                f"reviewed.json: {part} labels problems that another part or `problems` holds ({sorted(seen & set(labels))[:3]})"
            )
        seen |= set(labels)
    if set(reviewed.topic_held_out_relabelled) != set(reviewed.topic_held_out):
        raise ValueError("reviewed.json: topic_held_out_relabelled labels other problems than topic_held_out")
    if set(reviewed.topic_held_out_relabelled.values()) - names:
        raise ValueError("reviewed.json: topic_held_out_relabelled has an unknown topic")
    missing = [i for i in reviewed.default_base.ids if i not in reviewed.problems]
    if missing or len(set(reviewed.default_base.ids)) != len(reviewed.default_base.ids):
        raise ValueError(f"reviewed.json: default_base lists ids twice or without a reviewed entry ({missing[:3]})")
    return reviewed


class TopicDecisionRule(BaseModel):
    """When the keyword rule's leading topic counts as decided (topics.decide_topic); tuned on topic_sample only."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    min_distinct_keywords: int = Field(ge=1)  # distinct keywords of the leading topic (a plural counts as its singular)
    min_score: float = Field(ge=0)  # the leading topic's weighted total
    min_margin: float = Field(ge=0, lt=1)  # (leader - runner-up) / leader


class TopicRule(BaseModel):
    """topic_rule.json: the keyword topic rule's extra keywords, weights, question-sentence weight and decision
    thresholds (topics.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    about: str
    question_weight: float
    decision: TopicDecisionRule
    extra_keywords: dict[str, list[str]]
    weights: dict[str, dict[str, float]]


@cache
def load_topic_rule(path: Path = HERE / "topic_rule.json") -> TopicRule:
    rule = TopicRule.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
    topics = {t.name: set(t.keywords) for t in load_templates().topics}
    for name in set(rule.extra_keywords) | set(rule.weights):
        if name not in topics:
            raise ValueError(f"topic_rule.json: unknown topic {name!r}")
    for name, weights in rule.weights.items():
        unknown = set(weights) - topics[name] - set(rule.extra_keywords.get(name, ()))
        if unknown or any(w <= 0 for w in weights.values()):
            raise ValueError(f"topic_rule.json: {name}: weights for keywords the topic lacks ({sorted(unknown)[:3]}) or not > 0")
    return rule


@cache
def load_templates(path: Path = HERE / "templates.json") -> Templates:
    return Templates.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
