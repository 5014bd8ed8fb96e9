"""The MisleadQA builder: sources -> candidates -> selection -> balanced options -> release files.

Paper: Section 3 and Appendices A (construction) and B (screening, release,
audit sample). Files: main.jsonl (FRED, SituatedQA, AmbigDocs), condition.jsonl
(CondAmbigQA supplement), audit_sample.jsonl, exclusions.jsonl.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ctxrobust.builders.base import Builder, BuildOutput, DataFile
from ctxrobust.builders.misleadqa import condition_items, entity_items, fred_items, situatedqa_items
from ctxrobust.builders.misleadqa.audit import audit_sample
from ctxrobust.builders.misleadqa.candidate import Candidate, Excluded
from ctxrobust.builders.misleadqa.config import MisleadQAConfig
from ctxrobust.builders.misleadqa.groups import dependency_groups
from ctxrobust.builders.misleadqa.item_rules import item_checks
from ctxrobust.builders.misleadqa.options import balanced_letters, provisional_letters
from ctxrobust.builders.misleadqa.selection import Selected, SelectionState, exclusion_row, select
from ctxrobust.builders.misleadqa.timelines import Timelines
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError

FRED_PREFIX = "fred/"
RAMDOCS = "ramdocs/RAMDocs_test.jsonl"  # the default entity group (questions sampled from AmbigDocs)
CONDAMBIGQA = "condambigqa/mcaqa.json"  # the default condition supplement
DEFAULT_ADJUDICATION = "builders/misleadqa/review/adjudication.jsonl"
DEFAULT_RESTATEMENTS = "builders/misleadqa/review/restatements.jsonl"
SITUATEDQA_PREFIX = "situatedqa/"
SITUATEDQA_RAW_PREFIX = "situatedqa_raw/"  # the annotation records: answer timelines of the time questions


class MisleadQABuilder(Builder):
    dataset = "misleadqa"
    Config = MisleadQAConfig
    _checks = None  # the item rules, made at the first screening
    _restated = None  # the maintainers' restatements and what became of them (read at the start of a build)

    def required_snapshots(self) -> list[str]:
        from ctxrobust.sources.lock import load_lock

        names = self.store.names() if self.store is not None else list(load_lock())
        pinned = {RAMDOCS: self.config.ambigdocs_path is None, CONDAMBIGQA: self.config.condambigqa_path is None}
        return sorted(n for n in names if n.startswith(FRED_PREFIX) or self._situatedqa_split_read(n) or pinned.get(n, False))

    def _situatedqa_split_read(self, name: str) -> bool:
        """A pinned SituatedQA qa_data file (temp.<split>.jsonl, geo.<split>.jsonl) of a split the config
        names, or (when the pinned qa_data is read) the raw_data temp file of that split."""
        if name.startswith(SITUATEDQA_RAW_PREFIX):
            if self.config.situatedqa_dir is not None or not name.removeprefix(SITUATEDQA_RAW_PREFIX).startswith("temp."):
                return False
            prefix = SITUATEDQA_RAW_PREFIX
        elif name.startswith(SITUATEDQA_PREFIX):
            prefix = SITUATEDQA_PREFIX
        else:
            return False
        split = name.removeprefix(prefix).split(".")[1:-1]
        return split != [] and split[0] in self.config.situatedqa_splits

    # --- sources ---------------------------------------------------------------

    def _snapshots(self, prefix: str) -> list[tuple[str, Path, str]]:
        """(lock name, verified path, sha256) of every pinned snapshot under `prefix`, in name order."""
        return [(n, self.store.path(n), self.store.snapshot(n).sha256) for n in self.required_snapshots() if n.startswith(prefix)]

    def _user_records(self, notes: dict) -> dict[str, list]:
        """The records of every user-supplied file (config `<source>_path`), its name and sha256 noted."""
        from ctxrobust.sources import ambigdocs, condambigqa

        out = {}
        for source, module in (("ambigdocs", ambigdocs), ("condambigqa", condambigqa)):
            field = f"{source}_path"
            value = getattr(self.config, field)
            if value is None:
                continue
            path = Path(value)
            if path.is_dir():
                raise CtxRobustError(
                    f"{field}={value}: is a folder, not a file; give the path of {module.EXPECTED} itself{_json_files_in(path)}, or leave {field} unset"
                )
            if not path.is_file():
                raise CtxRobustError(f"{field}={value}: file not found; give the path of the downloaded file, or leave {field} unset")
            sha = sha256_file(path)
            notes["user_sources"][source] = {"file": path.name, "sha256": sha}
            out[source] = module.read_file(path, path.name, sha)
        return out

    # --- build -----------------------------------------------------------------

    def build(self) -> BuildOutput:
        if self.store is None:
            raise CtxRobustError("misleadqa needs the FRED and SituatedQA snapshots: set SOURCES_MIRROR=DIR or run `ctxrobust sources`")
        names = self.required_snapshots()
        if not any(n.startswith(FRED_PREFIX) for n in names) or not any(n.startswith(SITUATEDQA_PREFIX) for n in names):
            raise CtxRobustError(
                "sources/lock.json pins no fred/ or situatedqa/ snapshots; regenerate it from a mirror (python -m ctxrobust.sources.regenerate_lock --regenerate-from DIR)"
            )
        cfg = self.config
        notes: dict = {"user_sources": {}}
        user_records = self._user_records(notes)  # a missing or malformed user file fails before anything is built
        self._restatements(notes)
        exclusions: list[dict] = []
        selections = self._fred(notes, exclusions) | self._situatedqa(notes) | self._user_items(user_records, notes)
        if self._restated is not None:
            accepted = {c.id for selected in selections.values() for c in selected.accepted}
            applied = self._restated["applied"]
            notes["restatements"] = {
                "applied": len(applied & accepted),
                "applied_to_candidates_left_out": len(applied - accepted),
                "stale": sorted(self._restated["stale"]),
                "ids_not_built": sorted(set(self._restated["rows"]) - self._restated["seen"]),
            }
        candidates = self._candidates(selections)
        self._adjudicate(selections, notes, exclusions)
        main, condition = self._items(selections)
        for selected in selections.values():
            exclusions.extend(selected.exclusions)
        notes.update(self._notes(selections, exclusions, main, condition))
        notes["departures_from_paper"] = departures(notes)
        return BuildOutput(
            files=[
                DataFile("main.jsonl", main, schema="misleadqa.item"),
                DataFile("condition.jsonl", condition, schema="misleadqa.item"),
                DataFile("audit_sample.jsonl", audit_sample(main, cfg.audit_seed, cfg.audit_sizes), schema="misleadqa.audit"),
                DataFile("exclusions.jsonl", exclusions, schema="misleadqa.exclusion"),
                DataFile("candidates.jsonl", candidates, schema="misleadqa.candidate"),
            ],
            notes=notes,
        )

    def _fred(self, notes: dict, exclusions: list[dict]) -> dict[tuple[str, str], Selected]:
        """FRED time and location items, from files holding their own state series only (Appendix A "Sources")."""
        from ctxrobust.sources.fred import read_series

        cfg = self.config
        series = [read_series(path, name, sha) for name, path, sha in self._snapshots(FRED_PREFIX)]
        for s in series:
            if not s.holds_own_series:
                why = (
                    "the federal minimum-wage series (the state has no minimum-wage law)"
                    if s.is_federal
                    else f"series {s.series_id}, not the state's own"
                )
                exclusions.append(
                    {
                        "id": f"excl-fred-{s.file_series}",
                        "source": "fred",
                        "scope_dimension": None,
                        "cluster_id": f"fred-{s.code}",
                        "reason": "federal_series" if s.is_federal else "not_own_series",
                        "detail": f"{s.snapshot} holds {why}; it yields no state minimum-wage facts",
                    }
                )
        ff = fred_items.FredFacts(series, cfg.fred_first_year, cfg.fred_last_year, cfg.fred_known_january)
        notes["fred"] = {
            "jurisdictions": sorted(ff.by_code),
            "monthly_series_january_values": sorted(s.series_id for s in series if s.frequency == "monthly" and s.holds_own_series),
            "excluded_files": sorted(s.snapshot for s in series if not s.holds_own_series),
            "known_january": cfg.fred_known_january,
            "unrecorded_years": [y for y in range(cfg.fred_first_year, cfg.fred_last_year + 1) if y not in ff.recorded],
        }
        state = SelectionState()  # a target fact is used once across both scope dimensions
        return {
            ("fred", "time"): self._select(
                fred_items.time_specs(ff, cfg.seed, cfg.fred_max_gap_years), cfg.fred_time_n, cfg.fred_per_jurisdiction, state
            ),
            ("fred", "location"): self._select(
                fred_items.location_specs(ff, cfg.seed), cfg.fred_location_n, cfg.fred_per_jurisdiction, state
            ),
        }

    def _situatedqa(self, notes: dict) -> dict[tuple[str, str], Selected]:
        """SituatedQA items: time from temp.*, location from geo.* (the pinned snapshots, or the
        qa_data folder `situatedqa_dir`, each file's sha256 noted)."""
        from ctxrobust.sources import situatedqa

        cfg = self.config
        records = {"temp": [], "geo": []}
        if cfg.situatedqa_dir is not None:
            files = situatedqa.folder_files(Path(cfg.situatedqa_dir))
            notes["user_sources"]["situatedqa"] = {"folder": Path(cfg.situatedqa_dir).name, "files": {name: sha for name, _, sha in files}}
        else:
            files = self._snapshots(SITUATEDQA_PREFIX)
        for name, path, sha in files:
            for record in situatedqa.read_file(path, name, sha):
                records[record.kind].append(record)
        timeline_values = [
            v for name, path, sha in self._snapshots(SITUATEDQA_RAW_PREFIX) for v in situatedqa.read_timelines(path, name, sha)
        ]
        timelines = Timelines(timeline_values)
        notes["situatedqa"] = {
            "timeline_values": len(timeline_values),
            "questions_with_timelines": len(timelines.by_question),
        }
        state, out = SelectionState(), {}
        for kind, dimension, n in (("temp", "time", cfg.situatedqa_time_n), ("geo", "location", cfg.situatedqa_location_n)):
            pool = situatedqa_items.SituatedQAPool(records[kind], timelines if kind == "temp" else None)
            specs = situatedqa_items.specs(pool, cfg.seed)
            out[("situatedqa", dimension)] = self._select(specs, n, cfg.situatedqa_per_question, state, cfg.situatedqa_per_type)
        return out

    def _user_items(self, records: dict[str, list], notes: dict) -> dict[tuple[str, str], Selected]:
        """Entity items (AmbigDocs when a file is supplied, else the pinned RAMDocs test split) and the
        condition supplement (CondAmbigQA: the supplied file, else the pinned mcaqa.json)."""
        from ctxrobust.sources import condambigqa, ramdocs

        cfg, out = self.config, {}
        if "ambigdocs" in records:
            entity_source, entity_records = "ambigdocs", records["ambigdocs"]
        else:
            entity_source, entity_records = (
                "ramdocs",
                ramdocs.read_file(self.store.path(RAMDOCS), RAMDOCS, self.store.snapshot(RAMDOCS).sha256),
            )
        notes["entity_source"] = entity_source
        specs = entity_items.specs(entity_records, cfg.seed, source=entity_source)
        out[(entity_source, "entity")] = self._select(specs, cfg.ambigdocs_n, cfg.ambigdocs_per_question, SelectionState())
        if "condambigqa" in records:
            condition_records = records["condambigqa"]
        else:
            condition_records = condambigqa.read_file(self.store.path(CONDAMBIGQA), CONDAMBIGQA, self.store.snapshot(CONDAMBIGQA).sha256)
        specs = condition_items.specs(condition_records, cfg.seed)
        out[("condambigqa", "condition")] = self._select(specs, cfg.condambigqa_n, cfg.condambigqa_per_question, SelectionState())
        return out

    def _restatements(self, notes: dict) -> None:
        """Read the maintainers' restatements (review/restatements.jsonl, App. A.1) before any candidate is built."""
        from ctxrobust.builders.misleadqa import restatements

        value = self.config.restatements
        if value == "none":
            return
        path = restatements.DEFAULT if value == "default" else Path(value)
        rows = restatements.read(path)
        notes["user_sources"]["restatements"] = {
            "file": DEFAULT_RESTATEMENTS if value == "default" else path.name,
            "sha256": sha256_file(path),
        }
        self._restated = {"rows": rows, "applied": set(), "stale": set(), "seen": set()}

    def _restate(self, candidate: Candidate) -> Candidate:
        """The candidate with the maintainers' restatement written for it, if any: a row written for another
        version of the candidate (its `base_sha256`) is stale and not applied."""
        from ctxrobust.builders.misleadqa import restatements
        from ctxrobust.builders.misleadqa.adjudication import item_sha256

        row = self._restated["rows"].get(candidate.id) if self._restated is not None else None
        if row is None:
            return candidate
        self._restated["seen"].add(candidate.id)
        letters = provisional_letters(self.config.seed, candidate.id)
        if row.base_sha256 != item_sha256(candidate.item(*letters)):
            self._restated["stale"].add(candidate.id)
            return candidate
        self._restated["applied"].add(candidate.id)
        return restatements.apply(candidate, row, letters[2])

    def _screen(self, candidate: Candidate) -> Candidate:
        """The candidate as released (with its restatement, if one was written for it) checked by the
        construction rules (Appendix B.1), the same the validators replay: every released item passes them
        by construction, and `validate` proves it again. A restated candidate that breaks a rule is
        excluded with the reason `restated_<rule>`."""
        restated = self._restate(candidate)
        if restated.needs:  # a draft: its placeholders are read once a maintainer's restatement replaces them
            return restated
        if self._checks is None:
            self._checks = item_checks(self.config)
        item = restated.item(*provisional_letters(self.config.seed, restated.id))
        for name, check in self._checks.items():
            problems = check(item)
            if problems:
                raise Excluded(f"restated_{name}" if restated is not candidate else name, problems[0])
        return restated

    def _select(self, specs, n, per_cluster, state, per_type=None) -> Selected:
        return select(specs, n, per_cluster, self.config.seed, state, self._screen, per_type)

    def _candidates(self, selections: dict[tuple[str, str], Selected]) -> list[dict]:
        """The candidate pool before adjudication (Appendix A.2 "Candidate pool"): every candidate that
        passed the construction rules, at its provisional option positions, with its construction
        metadata; the input to screening (`ctxrobust prompts --prompt screen`)."""
        from ctxrobust.builders.misleadqa.adjudication import item_sha256

        chosen = [c for _, selected in sorted(selections.items()) for c in selected.accepted]
        groups = dependency_groups(chosen)
        rows = []
        for candidate in chosen:
            row = candidate.item(*provisional_letters(self.config.seed, candidate.id))
            row["dependency_group_id"] = groups[candidate.cluster_id]
            row["item_sha256"] = item_sha256(row)
            row["needs_restatement"] = list(candidate.needs)
            rows.append(row)
        return sorted(rows, key=lambda r: r["id"])

    def _adjudicate(self, selections: dict[tuple[str, str], Selected], notes: dict, exclusions: list[dict]) -> None:
        """Human adjudication (Appendix B.1), pinned to the items read: a candidate whose decision names the
        item as built (adjudication.item_sha256) is kept or excluded as decided; one without such a
        decision is unreviewed, and excluded unless `keep_unreviewed`. Counts per source-scope group go
        to the notes, with who read what."""
        from ctxrobust.builders.misleadqa import adjudication

        cfg = self.config
        value = cfg.adjudication
        if value == "none":
            decisions, source = {}, None
        else:
            path = adjudication.DEFAULT if value == "default" else Path(value)
            decisions = adjudication.read(path)
            source = DEFAULT_ADJUDICATION if value == "default" else path.name
            notes["user_sources"]["adjudication"] = {"file": source, "sha256": sha256_file(path)}
        groups: dict[str, dict] = {}
        known = set()
        for (src, dimension), selected in sorted(selections.items()):
            counts = {
                "candidates": len(selected.accepted),
                "drafts": 0,
                "screened": 0,
                "flagged": 0,
                "retained": 0,
                "excluded": 0,
                "unreviewed": 0,
            }
            decided: Counter = Counter()
            readers: set[str] = set()
            kept = []
            for candidate in selected.accepted:
                known.add(candidate.id)
                if candidate.needs:  # a draft no restatement has completed: nothing a reader could read
                    counts["drafts"] += 1
                    counts["excluded"] += 1
                    exclusions.append(
                        exclusion_row(
                            candidate,
                            "needs_restatement",
                            f"no rule could write its {' and '.join(candidate.needs)} and no maintainer's restatement supplies them",
                        )
                    )
                    continue
                decision = decisions.get(candidate.id)
                current = decision is not None and decision.item_sha256 == adjudication.item_sha256(
                    candidate.item(*provisional_letters(cfg.seed, candidate.id))
                )
                if not current:
                    counts["unreviewed"] += 1
                    if value != "none" and not cfg.keep_unreviewed:
                        counts["excluded"] += 1
                        why = (
                            f"its decision in {source} names another version of the item (item_sha256 {decision.item_sha256[:12]}...)"
                            if decision is not None
                            else f"no decision in {source}"
                        )
                        exclusions.append(
                            exclusion_row(candidate, "adjudication_unreviewed", f"{why}; an item no one has read as built is not released")
                        )
                        continue
                    kept.append(candidate)
                    counts["retained"] += 1
                    continue
                counts["screened"] += 1
                readers.add(decision.reviewer)
                decided[decision.decision] += 1
                if decision.decision == "retain":
                    kept.append(candidate)
                    counts["retained"] += 1
                    continue
                counts["flagged"] += 1
                counts["excluded"] += 1
                exclusions.append(exclusion_row(candidate, f"adjudication_{decision.decision}", adjudication.exclusion_detail(decision)))
            selected.accepted = kept
            groups[f"{src}/{dimension}"] = counts | {"decisions": dict(sorted(decided.items())), "read_by": sorted(readers)}
        stale = sorted(set(decisions) - known)
        notes["screening"] = {
            "reviewed": value != "none",
            "adjudication": source,
            "keep_unreviewed": cfg.keep_unreviewed,
            "groups": groups,
            **{
                key: sum(g[key] for g in groups.values())
                for key in ("candidates", "drafts", "screened", "flagged", "retained", "excluded", "unreviewed")
            },
            "rows_for_other_candidates": len(stale),
            "ids_not_in_pool": stale,
        }
        if value == "none":
            notes["screening"]["note"] = "built without adjudication: no item was read by a person; every item is unreviewed"

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
        groups = {}
        for (source, dimension), selected in sorted(selections.items()):
            items = [i for i in main + condition if (i["source"], i["scope_dimension"]) == (source, dimension)]
            groups[f"{source}/{dimension}"] = {
                "requested": selected.requested,
                "items": len(items),
                "shortfall": max(0, selected.requested - len(items)),
                "clusters": len({i["cluster_id"] for i in items}),
                "candidates_available": selected.available,
                "candidates_examined": selected.examined,
            }
        by_reason: dict[str, Counter] = {}
        for row in exclusions:
            group = row["source"] + (f"/{row['scope_dimension']}" if row["scope_dimension"] else "")
            by_reason.setdefault(group, Counter())[row["reason"]] += 1
        return {
            "groups": groups,
            "splits": {name: _split_counts(items) for name, items in (("main", main), ("condition", condition))},
            "exclusions_by_reason": {group: dict(sorted(c.items())) for group, c in sorted(by_reason.items())},
        }


def _json_files_in(folder: Path, limit: int = 5) -> str:
    """' (the folder holds a.json, b.jsonl)': the JSON / JSON Lines files a folder given for a file holds, if any."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix.lower() in (".json", ".jsonl"))
    except OSError:
        return ""
    if not names:
        return ""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f" (the folder holds {', '.join(names[:limit])}{more})"


def _split_counts(items: list[dict]) -> dict[str, int]:
    return {
        "items": len(items),
        "clusters": len({i["cluster_id"] for i in items}),
        "dependency_groups": len({i["dependency_group_id"] for i in items}),
    }


def departures(notes: dict) -> dict[str, str]:
    """Where this build differs from the paper's release, and why (recorded in the build notes, shown on the card)."""
    fred, groups = notes["fred"], notes["groups"]
    monthly = "".join(f"; {series} is monthly and read at its January observations" for series in fred["monthly_series_january_values"])
    out = {
        "fred_jurisdictions": f"{len(fred['jurisdictions'])} jurisdictions hold their own series in the pinned snapshot (the "
        f"{len(fred['excluded_files'])} files holding the federal series are left out{monthly}); the paper used 44 annual series "
        f"(43 states and DC), so FRED has up to {len(fred['jurisdictions'])} clusters, not 44.",
        "fred_january": (
            "a fact is used only where the annual series shows the rate in force on January 1 (the last year the source table "
            "records before it and the first it records from that year on give the same value; fred_items.january_rate_known): "
            "FRED gives no effective dates and repeats values for the years the table skips, so this is how the paper's "
            "exclusion of changes within a year is applied here; it also leaves out true facts, among them the paper's own "
            "Nebraska 1998 lure ($5.15)."
            if fred.get("known_january", True)
            else "every annual observation is read as the January 1 rate (fred_known_january=false), as the paper's template "
            "does; after a change within a year FRED's value is the new rate, so some G or S contexts state a rate that "
            "applied later in that year (Minnesota 2014: $8.00 from August 1)."
        ),
        "situatedqa_answers": "answers are the qa_data annotations as given; the paper also checked each against archived passages; "
        "the project's review excludes as unverifiable a fact it cannot check offline.",
        "situatedqa_contexts": "G and S restate the fact by rule (phrasing.restate: the question turned into a statement, the scope "
        "first); where the rule's sentence is not what a careful writer would produce, or no rule can write it, the project's "
        "maintainers wrote the restatement (review/restatements.jsonl; construction method `restated`); the paper's "
        "restatements were written with model assistance.",
        "situatedqa_question_types": "SituatedQA's qa_data carries no question-type labels: the cap of twenty items per question type "
        "uses the project's labels (question_types.json; a competition, office or attribute is part of the type).",
        "situatedqa_distractors": "distractors are values of the question's own answer timeline (raw_data) and other contexts first, then "
        "answers of questions asking the same relation (situatedqa_items.same_relation); most time questions record two values, "
        "so fewer SituatedQA candidates have two valid distractors than the paper's 200 per group (see groups.*.shortfall).",
        "screening": "no screening model judged this pool; "
        + (
            "the project's maintainers read the candidates against the six criteria, and each decision is pinned to the item as "
            "read (adjudication.item_sha256); candidates without a current decision are unreviewed"
            + (" and released (keep_unreviewed)" if notes.get("screening", {}).get("keep_unreviewed") else " and not released")
            + "; per-group counts and readers are in screening.groups (paper: 183 SituatedQA time, 184 location and 192 entity items)."
            if notes.get("screening", {}).get("reviewed")
            else "this build was not adjudicated: its items were not reviewed by a person, only by the rule-based checks."
        ),
        "dependency_groups": "clusters are merged when they share distractor sources, AmbigDocs documents or reworded SituatedQA "
        "questions; the archived passages behind the paper's groups are not available, so the groups are the project's own and not comparable with the paper's 132.",
    }
    if "ramdocs/entity" in groups:
        out["entity_source"] = "the entity group comes from RAMDocs (test split, 500 questions sampled from AmbigDocs; correct documents "
        "only), not from AmbigDocs, which is not in the pinned sources (paper: 192 AmbigDocs items); ambigdocs_path uses AmbigDocs records."
    if notes.get("user_sources", {}).get("condambigqa") is None:
        out["condambigqa"] = "the condition supplement comes from the 200-question CondAmbigQA release (mcaqa.json); the paper drew "
        "its 100 candidates from the 2,000-question CondAmbigQA (25 released). Short answers, conditions and contexts are the "
        "maintainers' restatements of the cited passages (review/condition_answers.jsonl)."
    return out
