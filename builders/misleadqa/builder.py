"""The MisleadQA builder: sources -> candidates -> selection -> balanced options -> release files.

Paper: Section 3 and Appendices A (construction) and B (screening, release,
audit sample). Files: main.jsonl (FRED, SituatedQA, AmbigDocs), condition.jsonl
(CondAmbigQA supplement), audit_sample.jsonl, exclusions.jsonl.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from pydantic import Field

from builders.base import Builder, BuildConfig, BuildOutput, DataFile
from builders.misleadqa import condition_items, entity_items, fred_items, situatedqa_items
from builders.misleadqa.audit import AUDIT_SEED, AUDIT_SIZES, audit_sample
from builders.misleadqa.candidate import Candidate, Excluded
from builders.misleadqa.options import balanced_letters, provisional_letters
from builders.misleadqa.selection import Selected, SelectionState, select
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError

FRED_PREFIX = "fred/"
SITUATEDQA_PREFIX = "situatedqa/"


class MisleadQAConfig(BuildConfig):
    # items per source-scope group (Appendix A.2 candidate pool)
    fred_time_n: int = Field(200, ge=0)
    fred_location_n: int = Field(200, ge=0)
    situatedqa_time_n: int = Field(200, ge=0)
    situatedqa_location_n: int = Field(200, ge=0)
    ambigdocs_n: int = Field(200, ge=0)
    condambigqa_n: int = Field(100, ge=0)
    # caps per cluster (Appendix A.1 "Candidate selection")
    fred_per_jurisdiction: int = Field(6, ge=1)
    situatedqa_per_question: int = Field(2, ge=1)
    # SituatedQA distractors from other questions: minimum content-word Jaccard between the questions
    situatedqa_fallback_min_similarity: float = Field(0.3, ge=0.0, le=1.0)
    ambigdocs_per_question: int = Field(1, ge=1)
    condambigqa_per_question: int = Field(3, ge=1)
    # FRED fact pairs (Appendix A.1 "Fact pairs", "Sources")
    fred_max_gap_years: int = Field(8, ge=1)
    fred_first_year: int = 1990
    fred_last_year: int = 2024
    # context comparability (Appendix A.1)
    comparability_max_ratio: float = Field(1.35, ge=1.0)
    comparability_max_diff: int = Field(25, ge=0)
    # audit sample (Appendix B.2)
    audit_seed: int = AUDIT_SEED
    audit_sizes: dict[str, int] = Field(default_factory=lambda: dict(AUDIT_SIZES))
    # user-supplied sources (not in the pinned mirror)
    ambigdocs_path: str | None = None
    condambigqa_path: str | None = None


class MisleadQABuilder(Builder):
    dataset = "misleadqa"
    Config = MisleadQAConfig

    def required_snapshots(self) -> list[str]:
        from sources.lock import load_lock

        names = self.store.names() if self.store is not None else list(load_lock())
        return sorted(n for n in names if n.startswith(FRED_PREFIX) or n.startswith(SITUATEDQA_PREFIX))

    # --- sources ---------------------------------------------------------------

    def _snapshot(self, name: str) -> tuple[Path, str]:
        return self.store.path(name), self.store.snapshot(name).sha256

    def _user_file(self, field: str) -> tuple[Path, str] | None:
        value = getattr(self.config, field)
        if value is None:
            return None
        path = Path(value)
        if not path.is_file():
            raise CtxRobustError(f"{field}={value}: file not found; give the path of the downloaded file, or leave {field} unset")
        return path, sha256_file(path)

    # --- build -----------------------------------------------------------------

    def build(self) -> BuildOutput:
        from sources import ambigdocs, condambigqa, situatedqa
        from sources.fred import read_series

        if self.store is None:
            raise CtxRobustError("misleadqa needs the FRED and SituatedQA snapshots: set SOURCES_MIRROR=DIR or run `ctxrobust sources`")
        cfg = self.config
        names = self.required_snapshots()
        fred_names = [n for n in names if n.startswith(FRED_PREFIX)]
        sqa_names = [n for n in names if n.startswith(SITUATEDQA_PREFIX)]
        if not fred_names or not sqa_names:
            raise CtxRobustError("sources/lock.json pins no fred/ or situatedqa/ snapshots; regenerate it from a mirror (python -m sources.lock --regenerate-from DIR)")

        exclusions: list[dict] = []
        selections: dict[tuple[str, str], Selected] = {}
        notes: dict = {"user_sources": {}}

        # FRED: only files holding their own state series (Appendix A "Sources")
        series = []
        for n in fred_names:
            path, sha = self._snapshot(n)
            series.append(read_series(path, n, sha))
        for s in series:
            if not s.holds_own_series:
                why = "federal minimum-wage series (the state has no minimum-wage law)" if s.is_federal else f"series {s.series_id}, not the state's own"
                exclusions.append({
                    "id": f"excl-fred-{s.file_series}", "source": "fred", "scope_dimension": None,
                    "cluster_id": f"fred-{s.code}", "reason": "federal_series" if s.is_federal else "not_own_series",
                    "detail": f"{s.snapshot} holds {why}; it yields no state minimum-wage facts",
                })
        ff = fred_items.FredFacts(series, cfg.fred_first_year, cfg.fred_last_year)
        notes["fred"] = {
            "jurisdictions": sorted(ff.by_code),
            "monthly_series_january_values": sorted(s.series_id for s in series if s.frequency == "monthly" and s.holds_own_series),
            "excluded_files": sorted(s.snapshot for s in series if not s.holds_own_series),
        }
        fred_state = SelectionState()
        selections[("fred", "time")] = self._select(fred_items.time_specs(ff, cfg.seed, cfg.fred_max_gap_years), cfg.fred_time_n, cfg.fred_per_jurisdiction, fred_state)
        selections[("fred", "location")] = self._select(fred_items.location_specs(ff, cfg.seed), cfg.fred_location_n, cfg.fred_per_jurisdiction, fred_state)

        # SituatedQA: time from temp.*, location from geo.*
        records = {"temp": [], "geo": []}
        for n in sqa_names:
            path, sha = self._snapshot(n)
            for record in situatedqa.read_file(path, n, sha):
                records[record.kind].append(record)
        sqa_state = SelectionState()
        for kind, dimension, count in (("temp", "time", cfg.situatedqa_time_n), ("geo", "location", cfg.situatedqa_location_n)):
            pool = situatedqa_items.SituatedQAPool(records[kind])
            selections[("situatedqa", dimension)] = self._select(situatedqa_items.specs(pool, cfg.seed, cfg.situatedqa_fallback_min_similarity), count, cfg.situatedqa_per_question, sqa_state)

        # AmbigDocs (entity) and CondAmbigQA (condition supplement), when supplied
        supplied = self._user_file("ambigdocs_path")
        if supplied is not None:
            path, sha = supplied
            notes["user_sources"]["ambigdocs"] = {"file": path.name, "sha256": sha}
            docs = ambigdocs.read_file(path, path.name, sha)
            selections[("ambigdocs", "entity")] = self._select(entity_items.specs(docs, cfg.seed), cfg.ambigdocs_n, cfg.ambigdocs_per_question, SelectionState())
        supplied = self._user_file("condambigqa_path")
        if supplied is not None:
            path, sha = supplied
            notes["user_sources"]["condambigqa"] = {"file": path.name, "sha256": sha}
            conds = condambigqa.read_file(path, path.name, sha)
            selections[("condambigqa", "condition")] = self._select(condition_items.specs(conds, cfg.seed), cfg.condambigqa_n, cfg.condambigqa_per_question, SelectionState())

        main, condition = self._items(selections)
        for selected in selections.values():
            exclusions.extend(selected.exclusions)
        notes.update(self._notes(selections, exclusions, main, condition))
        return BuildOutput(
            files=[
                DataFile("main.jsonl", main, schema="misleadqa.item"),
                DataFile("condition.jsonl", condition, schema="misleadqa.item"),
                DataFile("audit_sample.jsonl", audit_sample(main, cfg.audit_seed, cfg.audit_sizes), schema="misleadqa.audit"),
                DataFile("exclusions.jsonl", exclusions, schema="misleadqa.exclusion"),
            ],
            notes=notes,
        )

    def _screen(self, candidate: Candidate) -> None:
        """Construction rules checked with the validators' own item checks (Appendix B.1)."""
        from validators.misleadqa import screen  # validators.misleadqa imports this package's scope rules

        item = candidate.item(*provisional_letters(self.config.seed, candidate.id))
        found = screen(item, self.config.comparability_max_ratio, self.config.comparability_max_diff)
        if found is not None:
            raise Excluded(*found)

    def _select(self, specs, n, per_cluster, state) -> Selected:
        return select(specs, n, per_cluster, self.config.seed, state, self._screen)

    def _items(self, selections: dict[tuple[str, str], Selected]) -> tuple[list[dict], list[dict]]:
        """Final option assignment per source-scope group, then dependency groups (Appendix A.4, B.1)."""
        main, condition = [], []
        chosen: list[Candidate] = []
        for (source, dimension), selected in sorted(selections.items()):
            letters = balanced_letters([c.id for c in selected.accepted], self.config.seed, f"{source}/{dimension}")
            for candidate in selected.accepted:
                item = candidate.item(*letters[candidate.id])
                (main if candidate.split == "main" else condition).append(item)
                chosen.append(candidate)
        groups = dependency_groups(chosen)
        for item in main + condition:
            item["dependency_group_id"] = groups[item["cluster_id"]]
        return sorted(main, key=lambda i: i["id"]), sorted(condition, key=lambda i: i["id"])

    def _notes(self, selections, exclusions, main, condition) -> dict:
        requested = {
            ("fred", "time"): self.config.fred_time_n, ("fred", "location"): self.config.fred_location_n,
            ("situatedqa", "time"): self.config.situatedqa_time_n, ("situatedqa", "location"): self.config.situatedqa_location_n,
            ("ambigdocs", "entity"): self.config.ambigdocs_n, ("condambigqa", "condition"): self.config.condambigqa_n,
        }
        groups = {}
        for key, selected in sorted(selections.items()):
            label = "/".join(key)
            items = [i for i in main + condition if (i["source"], i["scope_dimension"]) == key]
            groups[label] = {
                "requested": requested[key],
                "items": len(items),
                "shortfall": max(0, requested[key] - len(items)),
                "clusters": len({i["cluster_id"] for i in items}),
                "candidates_available": selected.available,
                "candidates_examined": selected.examined,
            }
        by_reason: dict[str, Counter] = defaultdict(Counter)
        for row in exclusions:
            by_reason[row["source"] + (f"/{row['scope_dimension']}" if row["scope_dimension"] else "")][row["reason"]] += 1
        return {
            "groups": groups,
            "splits": {
                "main": {"items": len(main), "clusters": len({i["cluster_id"] for i in main}), "dependency_groups": len({i["dependency_group_id"] for i in main})},
                "condition": {"items": len(condition), "clusters": len({i["cluster_id"] for i in condition}), "dependency_groups": len({i["dependency_group_id"] for i in condition})},
            },
            "exclusions_by_reason": {group: dict(sorted(c.items())) for group, c in sorted(by_reason.items())},
        }


def dependency_groups(candidates: list[Candidate]) -> dict[str, str]:
    """cluster_id -> dependency_group_id (Appendix A.4): clusters linked by shared documents or
    distractor sources are merged; all FRED clusters form one group."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for candidate in sorted(candidates, key=lambda c: c.id):
        find(candidate.cluster_id)
        if candidate.source == "fred":
            union(candidate.cluster_id, "fred")
        for linked in sorted(candidate.linked_clusters):
            union(candidate.cluster_id, linked)
    out = {}
    for candidate in candidates:
        root = find(candidate.cluster_id)
        out[candidate.cluster_id] = "group-fred" if root == "fred" else f"group-{root}"
    return out
