"""The project's word lists and templates (lexicon.json, templates.json beside this module), as typed models."""
from __future__ import annotations

import json
from functools import cached_property, lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

HERE = Path(__file__).parent


class Lexicon(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    about: str
    names: dict[str, list[str]]
    ambiguous_names: dict[str, list[str]]
    insertable_names: list[str]
    titles: dict[str, str | None]
    not_names: list[str]
    relations: list[str]
    person_verbs: list[str]

    def gender_of(self, name: str) -> str | None:
        for gender in ("f", "m"):
            if name in self.names.get(gender, ()) or name in self.ambiguous_names.get(gender, ()):
                return gender
        return None

    @cached_property
    def known_names(self) -> frozenset[str]:
        return frozenset(n for group in self.names.values() for n in group) | frozenset(self.insertable_names)

    @cached_property
    def ambiguous(self) -> frozenset[str]:
        return frozenset(n for group in self.ambiguous_names.values() for n in group)

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
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    text: str
    topics: list[str]  # topics for which the sentence is in-topic
    min: int = 2  # the numbers the sentence reads naturally with ("is 40 years old", not "is 4000")
    max: int | None = None  # None: no upper bound

    @model_validator(mode="after")
    def _slots(self) -> "Template":
        if self.text.count("{role}") != 1 or self.text.count("{number}") != 1:
            raise ValueError(f"template {self.id}: needs exactly one {{role}} and one {{number}} slot")
        if self.min < 2 or (self.max is not None and self.max < self.min):
            raise ValueError(f"template {self.id}: needs 2 <= min <= max")
        return self


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
    def _consistent(self) -> "Templates":
        names = {t.name for t in self.topics}
        ids = [t.id for t in self.in_topic + self.off_topic]
        if len(ids) != len(set(ids)):
            raise ValueError("template ids must be unique")
        for template in self.in_topic + self.off_topic:
            unknown = set(template.topics) - names
            if unknown:
                raise ValueError(f"template {template.id}: unknown topics {sorted(unknown)}")
        return self


@lru_cache(maxsize=None)
def load_lexicon(path: Path = HERE / "lexicon.json") -> Lexicon:
    return Lexicon.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))


@lru_cache(maxsize=None)
def load_templates(path: Path = HERE / "templates.json") -> Templates:
    return Templates.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))
