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
from ctxrobust.builders.misleadqa.selection import Selected, SelectionState, select
from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError

FRED_PREFIX = "fred/"
DEFAULT_ADJUDICATION = "builders/misleadqa/review/adjudication.jsonl"
SITUATEDQA_PREFIX = "situatedqa/"


class MisleadQABuilder(Builder):
    dataset = "misleadqa"
    Config = MisleadQAConfig
    _checks = None  # the item rules, made at the first screening

    def required_snapshots(self) -> list[str]:
        from ctxrobust.sources.lock import load_lock

        names = self.store.names() if self.store is not None else list(load_lock())
        return sorted(n for n in names if n.startswith(FRED_PREFIX) or self._situatedqa_split_read(n))

    def _situatedqa_split_read(self, name: str) -> bool:
        """A pinned SituatedQA qa_data file (temp.<split>.jsonl, geo.<split>.jsonl) of a split the config names."""
        if not name.startswith(SITUATEDQA_PREFIX):
            return False
        split = name.removeprefix(SITUATEDQA_PREFIX).split(".")[1:-1]
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
        exclusions: list[dict] = []
        selections = self._fred(notes, exclusions) | self._situatedqa(notes) | self._user_items(user_records)
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
        state, out = SelectionState(), {}
        for kind, dimension, n in (("temp", "time", cfg.situatedqa_time_n), ("geo", "location", cfg.situatedqa_location_n)):
            pool = situatedqa_items.SituatedQAPool(records[kind])
            specs = situatedqa_items.specs(pool, cfg.seed)
            out[("situatedqa", dimension)] = self._select(specs, n, cfg.situatedqa_per_question, state)
        return out

    def _user_items(self, records: dict[str, list]) -> dict[tuple[str, str], Selected]:
        """AmbigDocs (entity) and CondAmbigQA (the condition supplement) items, from the files supplied."""
        cfg, out = self.config, {}
        if "ambigdocs" in records:
            specs = entity_items.specs(records["ambigdocs"], cfg.seed)
            out[("ambigdocs", "entity")] = self._select(specs, cfg.ambigdocs_n, cfg.ambigdocs_per_question, SelectionState())
        if "condambigqa" in records:
            specs = condition_items.specs(records["condambigqa"], cfg.seed)
            out[("condambigqa", "condition")] = self._select(specs, cfg.condambigqa_n, cfg.condambigqa_per_question, SelectionState())
        return out

    def _screen(self, candidate: Candidate) -> None:
        """Construction rules (Appendix B.1), the same the validators replay: every released item passes
        them by construction, and `validate` proves it again."""
        if self._checks is None:
            self._checks = item_checks(self.config)
        item = candidate.item(*provisional_letters(self.config.seed, candidate.id))
        for name, check in self._checks.items():
            problems = check(item)
            if problems:
                raise Excluded(name, problems[0])

    def _select(self, specs, n, per_cluster, state) -> Selected:
        return select(specs, n, per_cluster, self.config.seed, state, self._screen)

    def _candidates(self, selections: dict[tuple[str, str], Selected]) -> list[dict]:
        """The candidate pool before adjudication (Appendix A.2 "Candidate pool"): every candidate that
        passed the construction rules, at its provisional option positions, with its construction
        metadata; the input to screening (`ctxrobust prompts --prompt screen`)."""
        chosen = [c for _, selected in sorted(selections.items()) for c in selected.accepted]
        groups = dependency_groups(chosen)
        rows = []
        for candidate in chosen:
            row = candidate.item(*provisional_letters(self.config.seed, candidate.id))
            row["dependency_group_id"] = groups[candidate.cluster_id]
            rows.append(row)
        return sorted(rows, key=lambda r: r["id"])

    def _adjudicate(self, selections: dict[tuple[str, str], Selected], notes: dict, exclusions: list[dict]) -> None:
        """Human adjudication (Appendix B.1): candidates decided exclude, revise or verify leave the
        release for exclusions.jsonl with their decision and reason; the counts go to the notes."""
        from ctxrobust.builders.misleadqa import adjudication

        value = self.config.adjudication
        screened = sum(len(s.accepted) for s in selections.values())
        if value == "none":
            notes["screening"] = {
                "candidates": screened,
                "reviewed": False,
                "flagged": 0,
                "retained": screened,
                "excluded": 0,
                "note": "built without adjudication: the items were not reviewed by a person",
            }
            return
        path = adjudication.DEFAULT if value == "default" else Path(value)
        decisions = adjudication.read(path)
        notes["user_sources"]["adjudication"] = {
            "file": path.name if value != "default" else DEFAULT_ADJUDICATION,
            "sha256": sha256_file(path),
        }
        by_decision: Counter = Counter()
        flagged = 0
        known = set()
        unreviewed: list[str] = []
        for selected in selections.values():
            kept = []
            for candidate in selected.accepted:
                known.add(candidate.id)
                decision = decisions.get(candidate.id)
                if decision is not None:
                    flagged += 1
                    by_decision[decision.decision] += 1
                elif value == "default" and candidate.source in adjudication.FULLY_REVIEWED:
                    # the project's file decides every candidate of these sources: one without a row was not read
                    unreviewed.append(candidate.id)
                    exclusions.append(
                        {
                            "id": candidate.id,
                            "source": candidate.source,
                            "scope_dimension": candidate.scope_dimension,
                            "cluster_id": candidate.cluster_id,
                            "reason": "adjudication_unreviewed",
                            "detail": f"no decision in {DEFAULT_ADJUDICATION}, which decides every {candidate.source} candidate; "
                            "the candidate was not read, so it is not released",
                        }
                    )
                    continue
                if decision is None or decision.decision == "retain":
                    kept.append(candidate)
                    continue
                exclusions.append(
                    {
                        "id": candidate.id,
                        "source": candidate.source,
                        "scope_dimension": candidate.scope_dimension,
                        "cluster_id": candidate.cluster_id,
                        "reason": f"adjudication_{decision.decision}",
                        "detail": adjudication.exclusion_detail(decision),
                    }
                )
            selected.accepted = kept
        stale = sorted(set(decisions) - known)
        notes["screening"] = {
            "candidates": screened,
            "reviewed": True,
            "flagged": flagged,
            "retained": screened - len(unreviewed) - sum(n for d, n in by_decision.items() if d != "retain"),
            "excluded": len(unreviewed) + sum(n for d, n in by_decision.items() if d != "retain"),
            "decisions": dict(sorted(by_decision.items())),
            "unreviewed": len(unreviewed),
            "rows_for_other_candidates": len(stale),
            "ids_not_in_pool": stale,
        }
        if unreviewed or stale:
            notes["screening"]["note"] = (
                f"{len(unreviewed)} candidate(s) have no decision and are excluded as unreviewed; "
                f"{len(stale)} decision(s) name ids that are not in this candidate pool (listed in ids_not_in_pool)"
                if value == "default"
                else f"{len(stale)} decision(s) name ids that are not in this candidate pool (listed in ids_not_in_pool); "
                "candidates without a row count as not flagged and are retained"
            )

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
        "first); the paper's restatements were written with model assistance.",
        "situatedqa_question_types": "the cap of twenty items per question type is not applied: the qa_data files carry no question-type labels.",
        "situatedqa_distractors": "distractors are only answers of contexts of the same question or of questions asking the same "
        "relation (situatedqa_items.same_relation); the qa_data holds few such answers (most time questions have two), so fewer "
        "SituatedQA candidates have two valid distractors than the paper's 200 per group (see groups.*.shortfall).",
        "screening": "candidates.jsonl is the pool screening reads (`ctxrobust prompts --prompt screen`, `ctxrobust screen`); "
        + (
            "no screening model judged this pool; the project's maintainers read every SituatedQA candidate against the six "
            "criteria and their decisions (the adjudication file) set release membership, so groups are thinned by review "
            "(paper: 183 SituatedQA time and 184 location items); a SituatedQA candidate the file has no decision for is "
            "excluded as unreviewed (build_notes.screening.unreviewed)."
            if notes.get("screening", {}).get("reviewed")
            else "this build was not adjudicated: its items were not reviewed by a person, only by the rule-based checks."
        ),
        "dependency_groups": "clusters are merged when they share distractor sources, AmbigDocs documents or reworded SituatedQA "
        "questions; the archived passages behind the paper's groups are not available, so the groups are the project's own and not comparable with the paper's 132.",
    }
    if "ambigdocs/entity" not in groups:
        out["ambigdocs"] = "no file supplied (ambigdocs_path), so the main split has no entity items (paper: 192)."
    if "condambigqa/condition" not in groups:
        out["condambigqa"] = "no file supplied (condambigqa_path), so condition.jsonl is empty (paper: 25 items)."
    return out
