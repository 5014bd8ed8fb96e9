"""MisleadQA checks (paper Appendix B.1 "Automated checks", Appendix A.1; SPEC "Validators").

Item-level checks replay the builder's item rules (`builders/misleadqa/item_rules.py`): the
builder screens candidates with them, so every released item passes them by construction and
`validate` proves it again.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Iterable

from ctxrobust.builders.misleadqa.config import MisleadQAConfig
from ctxrobust.builders.misleadqa.item_rules import ABSTAIN, ITEM_SCHEMA, SUBSTANTIVE, distractor_letters, item_checks
from ctxrobust.builders.misleadqa.normalise import answer_key
from ctxrobust.builders.misleadqa.phrasing import clean_text
from ctxrobust.builders.misleadqa.scopes import time_interval
from ctxrobust.errors import CtxRobustError
from ctxrobust.validators.checks import Failure, check

DATASET = "misleadqa"
RAW_PREFIX = "situatedqa_raw/"  # SituatedQA raw_data records: the answer timelines
USER_SITUATEDQA = "situatedqa_dir/"  # snapshot-name prefix of files read from config situatedqa_dir


# --- release-level checks ----------------------------------------------------


def _item_files(release) -> list[str]:
    return [entry["name"] for entry in release.files if entry.get("schema") == ITEM_SCHEMA]


def _items(release) -> Iterable[tuple[str, dict]]:
    for name in _item_files(release):
        for row in release.rows(name):
            yield name, row


def _register_item_check(name: str) -> None:
    @check(DATASET, name)
    def run(release) -> Iterable[Failure]:
        fn = item_checks(release.config_as(MisleadQAConfig))[name]
        for file, row in _items(release):
            try:
                problems = fn(row)
            except (KeyError, TypeError, ValueError) as exc:
                problems = [f"item is malformed ({type(exc).__name__}: {exc})"]
            for message in problems:
                yield Failure(file, str(row.get("id")), message)


for _name in item_checks(MisleadQAConfig()):
    _register_item_check(_name)


def _fact_key(item: dict, scope: dict) -> tuple:
    subject = "fred" if item["source"] == "fred" else item["cluster_id"]
    return (item["source"], subject, tuple(sorted((k, answer_key(v)) for k, v in scope.items() if v is not None)))


@check(DATASET, "repeated_targets")
def check_repeated_targets(release) -> Iterable[Failure]:
    """No repeated target facts and no reversed fact pairs (Appendix A.1 "Candidate selection"); a
    SituatedQA time fact is its question and answer, whatever the as-of date."""
    targets: dict[tuple, str] = {}
    pairs: dict[tuple, str] = {}
    answered: dict[tuple, str] = {}
    for name, item in _items(release):
        if item["source"] == "situatedqa" and item["scope_dimension"] == "time":
            fact = (item["cluster_id"], answer_key(item["options"][item["gold"]]))
            if fact in answered:
                yield Failure(name, item["id"], f"repeats the target fact (question and answer) of item {answered[fact]}")
            answered.setdefault(fact, item["id"])
        target, alt = _fact_key(item, item["target_scope"]), _fact_key(item, item["alt_scope"])
        if target in targets:
            yield Failure(name, item["id"], f"repeats the target fact of item {targets[target]}")
        targets.setdefault(target, item["id"])
        if (alt, target) in pairs:
            yield Failure(name, item["id"], f"reverses the fact pair of item {pairs[(alt, target)]}")
        pairs.setdefault((target, alt), item["id"])


def balance_problems(items: list[dict]) -> list[tuple[str | None, str]]:
    """Appendix B.1 "Final option assignment": within each source-scope group of the main split,
    gold counts over A-D, lure counts over A-D and the 12 ordered (gold, lure) pair counts each differ
    by at most one; E is always "Insufficient information"."""
    problems: list[tuple[str | None, str]] = []
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for item in items:
        if item["options"].get("E") != ABSTAIN:
            problems.append((item["id"], f"option E is {item['options'].get('E')!r}, expected {ABSTAIN!r}"))
        if item["split"] == "main":
            groups[(item["source"], item["scope_dimension"])].append(item)
    pairs = [(g, l) for g in SUBSTANTIVE for l in SUBSTANTIVE if g != l]
    for (source, dimension), members in sorted(groups.items()):
        gold = Counter(item["gold"] for item in members)
        lure = Counter(item["lure"] for item in members)
        pair = Counter((item["gold"], item["lure"]) for item in members)
        for label, counter, keys, position in (
            ("gold", gold, SUBSTANTIVE, lambda i: i["gold"]),
            ("lure", lure, SUBSTANTIVE, lambda i: i["lure"]),
            ("(gold, lure) pair", pair, pairs, lambda i: (i["gold"], i["lure"])),
        ):
            values = [counter.get(k, 0) for k in keys]
            if max(values) - min(values) > 1:
                shown = {("".join(k) if isinstance(k, tuple) else k): counter.get(k, 0) for k in keys}
                crowded = [k for k in keys if counter.get(k, 0) == max(values)]
                ids = sorted(i["id"] for i in members if position(i) in crowded)
                problems.append(
                    (
                        None,
                        f"group {source}/{dimension}: {label} position counts {shown} differ by more than one; "
                        f"most used by items {', '.join(ids[:20])}{' ...' if len(ids) > 20 else ''}",
                    )
                )
    return problems


@check(DATASET, "balance")
def check_balance(release) -> Iterable[Failure]:
    for name in _item_files(release):
        for item_id, message in balance_problems(release.rows(name)):
            yield Failure(name, item_id, message)


@check(DATASET, "audit_sample")
def check_audit_sample(release) -> Iterable[Failure]:
    """The audit sample is the SHA-256 ranking of main items under the recorded seed (Appendix B.2)."""
    from ctxrobust.builders.misleadqa.audit import audit_sample

    names = {entry["name"] for entry in release.files}
    if "audit_sample.jsonl" not in names or "main.jsonl" not in names:
        yield Failure("audit_sample.jsonl", None, "missing from the release; rebuild it")
        return
    config = release.config_as(MisleadQAConfig)
    expected = audit_sample(release.rows("main.jsonl"), config.audit_seed, config.audit_sizes)
    actual = {row["id"]: row for row in release.rows("audit_sample.jsonl")}
    wanted = {row["id"]: row for row in expected}
    for item_id in sorted(set(actual) - set(wanted)):
        yield Failure("audit_sample.jsonl", item_id, "is not in the sample the recorded seed selects")
    for item_id in sorted(set(wanted) - set(actual)):
        yield Failure("audit_sample.jsonl", item_id, "is selected by the recorded seed but missing from the sample")
    for item_id in sorted(set(wanted) & set(actual)):
        if actual[item_id] != wanted[item_id]:
            yield Failure("audit_sample.jsonl", item_id, "row differs from the recomputed sample (stratum, rank or hash)")


@check(DATASET, "exclusions")
def check_exclusions(release) -> Iterable[Failure]:
    """Every exclusion counted in the build notes, none of them released."""
    names = {entry["name"] for entry in release.files}
    if "exclusions.jsonl" not in names:
        yield Failure("exclusions.jsonl", None, "missing from the release; rebuild it")
        return
    released = {item["id"] for _, item in _items(release)}
    counted: Counter = Counter()
    for row in release.rows("exclusions.jsonl"):
        counted[(row["source"], row["scope_dimension"] or "-", row["reason"])] += 1
        if row["id"] in released:
            yield Failure("exclusions.jsonl", row["id"], "is excluded but also released")
    noted = release.manifest.get("build_notes", {}).get("exclusions_by_reason", {})
    recorded = Counter()
    for group, reasons in noted.items():
        source, _, dimension = group.partition("/")
        for reason, count in reasons.items():
            recorded[(source, dimension or "-", reason)] = count
    if recorded != counted:
        differing = sorted(k for k in set(recorded) | set(counted) if recorded.get(k) != counted.get(k))
        for source, dimension, reason in differing:
            yield Failure(
                "exclusions.jsonl",
                None,
                f"{source}/{dimension} {reason}: {counted.get((source, dimension, reason), 0)} rows, build notes say {recorded.get((source, dimension, reason), 0)}",
            )


# --- provenance ---------------------------------------------------------------


def _dollars(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace("$", "").replace(",", "").strip())
    except InvalidOperation:
        return None


class _SourceReader:
    """Snapshot files re-read for provenance checks, each once."""

    def __init__(self, store, situatedqa_dir: str | None = None):
        self.store = store
        self.situatedqa_dir = situatedqa_dir
        self._fred: dict = {}
        self._lines: dict = {}

    def fred(self, snapshot: str, sha256: str):
        from ctxrobust.sources.fred import read_series

        if snapshot not in self._fred:
            self._fred[snapshot] = read_series(self.store.path(snapshot), snapshot, sha256)
        return self._fred[snapshot]

    def path(self, snapshot: str) -> Path:
        """A pinned snapshot's verified path, or a file of the SituatedQA folder the build read."""
        if snapshot.startswith(USER_SITUATEDQA) and self.situatedqa_dir:
            return Path(self.situatedqa_dir) / snapshot[len(USER_SITUATEDQA) :]
        return self.store.path(snapshot)

    def line(self, path: Path, line: int) -> str | None:
        key = str(path)
        if key not in self._lines:
            self._lines[key] = path.read_text(encoding="utf-8").splitlines()
        lines = self._lines[key]
        return lines[line - 1] if 0 < line <= len(lines) else None


def _fred_problems(reader: _SourceReader, role: str, prov: dict, scope: dict, value: str) -> list[str]:
    series = reader.fred(prov["snapshot"], prov["sha256"])
    if series.is_federal:
        return [f"{role}: {prov['snapshot']} holds the federal series {series.series_id}, not a state minimum wage"]
    if not series.holds_own_series:
        return [f"{role}: {prov['snapshot']} holds series {series.series_id}, not the state's own series"]
    if series.series_id != prov["series_id"]:
        return [f"{role}: provenance names series {prov['series_id']}, the snapshot holds {series.series_id}"]
    if scope is not None and scope.get("location") != series.jurisdiction:
        return [f"{role}: scope names {scope.get('location')!r}, {prov['snapshot']} is {series.jurisdiction}'s series"]
    date = prov["date"]
    if scope is not None and scope.get("time") != date:
        return [f"{role}: scope date {scope.get('time')} differs from the provenance date {date}"]
    obs = next((o for o in series.observations if o.date.isoformat() == date), None)
    if obs is None or obs.value is None:
        return [f"{role}: {prov['snapshot']} has no observation on {date}"]
    stated = _dollars(value)
    if stated is None or stated != obs.value:
        return [f"{role}: states {value!r} for {series.jurisdiction} on {date}; {prov['snapshot']} line {obs.line} says {obs.raw}"]
    if obs.line != prov["line"]:
        return [f"{role}: provenance names line {prov['line']}, the observation is on line {obs.line}"]
    return []


def _situatedqa_problems(reader: _SourceReader, role: str, prov: dict, scope: dict | None, value: str) -> list[str]:
    text = reader.line(reader.path(prov["snapshot"]), prov["line"] or 0)
    if text is None:
        return [f"{role}: {prov['snapshot']} has no line {prov['line']}"]
    row = json.loads(text)
    if str(row.get("id")) != prov["upstream_id"]:
        return [f"{role}: {prov['snapshot']}:{prov['line']} is question {row.get('id')}, provenance says {prov['upstream_id']}"]
    field_name = prov.get("field") or "answer"
    if prov["snapshot"].startswith(RAW_PREFIX):  # an answer timeline value (raw_data), e.g. timelines[0].prev_answers
        from ctxrobust.sources.situatedqa import raw_field

        answers = raw_field(row, field_name) if field_name.startswith("timelines[") else None
        answers = answers if isinstance(answers, list) else []
    else:
        answers = row.get(field_name if field_name in ("answer", "any_answer") else "answer", [])
    if answer_key(value) not in {answer_key(clean_text(answer)) for answer in answers}:
        return [f"{role}: {value!r} is not an entry of {field_name} at {prov['snapshot']}:{prov['line']} ({answers})"]
    if scope is not None:
        field = "date" if "time" in [k for k, v in scope.items() if v is not None] else "location"
        stated = scope.get("time") if field == "date" else scope.get("location")
        if str(row.get(field, "")).strip() != stated and not _reanchored(str(row.get(field, "")), stated or ""):
            return [f"{role}: scope {stated!r} differs from the record's {field} {row.get(field)!r}"]
    return []


def _reanchored(recorded: str, stated: str) -> bool:
    """A year or month re-anchored to its last day ('2014' -> 'December 31, 2014', scope precision)."""
    span, day = time_interval(recorded.strip()), time_interval(stated)
    return span is not None and day is not None and day[0] == day[1] == span[1]


def _provenances(item: dict) -> list[dict]:
    return [item["provenance"]["G"], item["provenance"]["S"], *item["provenance"]["distractors"]]


@check(DATASET, "provenance")
def check_provenance(release) -> Iterable[Failure]:
    """Every fact traceable to its snapshot record; every snapshot sha256 equal to the lock (or the recorded user file)."""
    store = getattr(release, "store", None)
    if store is None:
        yield Failure(
            None,
            None,
            "provenance needs the source snapshots: set SOURCES_MIRROR to a folder laid out like fred/ and situatedqa/ "
            "(or fill the cache with `ctxrobust sources`) and validate again",
        )
        return
    lock = store.lock
    pinned = sorted({p["snapshot"] for _, item in _items(release) for p in _provenances(item) if p["snapshot"] in lock})
    try:
        store.require(pinned)
    except CtxRobustError as exc:
        yield Failure(None, None, f"provenance needs the source snapshots, which are unavailable: {exc}")
        return
    user = release.manifest.get("build_notes", {}).get("user_sources", {})
    user_by_file = {entry["file"]: (source, entry) for source, entry in user.items() if "file" in entry}
    folder = user.get("situatedqa", {})
    for file, sha in folder.get("files", {}).items():  # a SituatedQA folder given as situatedqa_dir
        user_by_file[file] = ("situatedqa", {"sha256": sha})
    user_readers = {}
    reader = _SourceReader(store, release.config_as(MisleadQAConfig).situatedqa_dir)
    for name, item in _items(release):
        options = item["options"]
        # options the maintainers restated (construction.options): each source value is re-read as recorded
        restated = item["construction"].get("options") == "restated"
        records = [
            ("G", item["provenance"]["G"], item["target_scope"], item["provenance"]["G"]["value"] if restated else options[item["gold"]]),
            ("S", item["provenance"]["S"], item["alt_scope"], item["provenance"]["S"]["value"] if restated else options[item["lure"]]),
        ]
        distractor_texts = [options[letter] for letter in distractor_letters(item)]
        for number, prov in enumerate(item["provenance"]["distractors"]):
            if restated:
                records.append((f"distractor {number}", prov, None, prov["value"]))
                continue
            matching = [t for t in distractor_texts if answer_key(t) == answer_key(prov["value"])]
            if not matching:
                yield Failure(name, item["id"], f"distractor provenance {number} ({prov['value']!r}) matches no distractor option")
                continue
            records.append((f"distractor {number}", prov, None, matching[0]))
        for role, prov, scope, value in records:
            snapshot = prov["snapshot"]
            if snapshot in lock:
                if prov["sha256"] != lock[snapshot].sha256:
                    yield Failure(
                        name, item["id"], f"{role}: {snapshot} sha256 {prov['sha256']} differs from the lock ({lock[snapshot].sha256})"
                    )
                    continue
            elif snapshot in user_by_file:
                source, entry = user_by_file[snapshot]
                if prov["sha256"] != entry["sha256"]:
                    yield Failure(
                        name,
                        item["id"],
                        f"{role}: {snapshot} sha256 {prov['sha256']} differs from the recorded user source ({entry['sha256']})",
                    )
                    continue
            else:
                yield Failure(name, item["id"], f"{role}: {snapshot} is neither pinned in the lock nor a recorded user source")
                continue
            try:
                if item["source"] == "fred":
                    problems = _fred_problems(reader, role, prov, scope, value)
                elif item["source"] == "situatedqa":
                    problems = _situatedqa_problems(reader, role, prov, scope, value)
                else:
                    problems = _user_problems(release, user_readers, item["source"], role, prov, value)
            except Exception as exc:  # a snapshot that cannot be read is a failure, named
                problems = [f"{role}: {snapshot} could not be re-read ({type(exc).__name__}: {exc})"]
            for message in problems:
                yield Failure(name, item["id"], message)


def _pool_items(release) -> Iterable[tuple[str, dict]]:
    """Released items, then the candidate pool (candidates.jsonl) reviewers read."""
    yield from _items(release)
    if any(entry["name"] == CANDIDATES for entry in release.files):
        for row in release.rows(CANDIDATES):
            yield CANDIDATES, row


CANDIDATES = "candidates.jsonl"


def distractor_relation_problems(reader: _SourceReader, item: dict) -> list[str]:
    """SituatedQA distractors (Appendix A.1 "Distractors"): each an `answer` of a context (never an
    `any_answer` entry), of the item's own upstream question or of one asking the same relation (same
    wh-word and scope-free form), and not an answer the target context itself gives."""
    from ctxrobust.builders.misleadqa.situatedqa_items import same_relation

    g = item["provenance"]["G"]
    target = json.loads(reader.line(reader.path(g["snapshot"]), g["line"] or 0) or "{}")
    problems = []
    for number, prov in enumerate(item["provenance"]["distractors"]):
        if prov["snapshot"].startswith(RAW_PREFIX) and prov["upstream_id"] == g["upstream_id"]:
            # a value of the question's own answer timeline: the same relation by construction
            if answer_key(prov["value"]) in {answer_key(clean_text(a)) for a in target.get("answer", [])}:
                problems.append(f"distractor {number} ({prov['value']!r}) is an answer of the target context itself")
            continue
        if prov.get("field") != "answer":
            problems.append(f"distractor {number} ({prov['value']!r}) comes from {prov.get('field')!r}, not an answer of a context")
            continue
        row = json.loads(reader.line(reader.path(prov["snapshot"]), prov["line"] or 0) or "{}")
        if prov["upstream_id"] != g["upstream_id"] and not same_relation(str(target.get("question", "")), str(row.get("question", ""))):
            problems.append(
                f"distractor {number} ({prov['value']!r}) answers {row.get('question')!r}, another relation than {target.get('question')!r}"
            )
        if answer_key(prov["value"]) in {answer_key(clean_text(a)) for a in target.get("answer", [])}:
            problems.append(f"distractor {number} ({prov['value']!r}) is an answer of the target context itself")
    return problems


@check(DATASET, "distractor_relation")
def check_distractor_relation(release) -> Iterable[Failure]:
    store = getattr(release, "store", None)
    if store is None:
        yield Failure(None, None, "distractor_relation needs the SituatedQA snapshots: set SOURCES_MIRROR and validate again")
        return
    reader = _SourceReader(store, release.config_as(MisleadQAConfig).situatedqa_dir)
    for name, item in _pool_items(release):
        if item["source"] != "situatedqa":
            continue
        try:
            problems = distractor_relation_problems(reader, item)
        except Exception as exc:  # a snapshot that cannot be read is a failure, named
            problems = [f"sources could not be re-read ({type(exc).__name__}: {exc})"]
        for message in problems:
            yield Failure(name, item["id"], message)


def fred_january_problems(reader: _SourceReader, item: dict, recorded: set[int]) -> list[str]:
    """A FRED item's G and S facts each state a rate the series shows in force on January 1
    (builders.misleadqa.fred_items.january_rate_known: the paper leaves out changes within a year, A.1);
    `recorded`: the years the snapshots' source table records (fred_items.recorded_years)."""
    from ctxrobust.builders.misleadqa.fred_items import january_rate_known
    from ctxrobust.sources.fred import january_facts

    problems = []
    for role in ("G", "S"):
        prov = item["provenance"][role]
        facts = {fact.scope.time: fact for fact in january_facts(reader.fred(prov["snapshot"], prov["sha256"]))}
        if prov["date"] not in facts:
            problems.append(f"{role}: {prov['snapshot']} has no January 1 observation on {prov['date']}")
            continue
        unknown = january_rate_known(facts, prov["date"], recorded)
        if unknown:
            problems.append(f"{role} ({prov['date']}): {unknown}")
    return problems


def fred_recorded_years(reader: _SourceReader) -> set[int]:
    """fred_items.recorded_years over every pinned FRED snapshot holding a state's own annual series."""
    from ctxrobust.builders.misleadqa.fred_items import recorded_years
    from ctxrobust.sources.fred import january_facts

    by_code = {}
    for name in sorted(n for n in reader.store.lock if n.startswith("fred/")):
        series = reader.fred(name, reader.store.lock[name].sha256)
        if series.holds_own_series and series.frequency == "annual":  # as the builder reads them
            by_code[series.code] = {fact.scope.time: fact for fact in january_facts(series)}
    return recorded_years(by_code)


@check(DATASET, "fred_january_rate")
def check_fred_january_rate(release) -> Iterable[Failure]:
    if not release.config_as(MisleadQAConfig).fred_known_january:  # built with every year's value read as its January 1 rate
        return
    store = getattr(release, "store", None)
    if store is None:
        yield Failure(None, None, "fred_january_rate needs the FRED snapshots: set SOURCES_MIRROR and validate again")
        return
    reader = _SourceReader(store)
    try:
        store.require(sorted(n for n in store.lock if n.startswith("fred/")))
        recorded = fred_recorded_years(reader)
    except Exception as exc:  # a snapshot that cannot be read is a failure, named
        yield Failure(None, None, f"fred_january_rate: the FRED snapshots could not be read ({type(exc).__name__}: {exc})")
        return
    for name, item in _pool_items(release):
        if item.get("source") != "fred":
            continue
        try:
            problems = fred_january_problems(reader, item, recorded)
        except Exception as exc:  # a snapshot that cannot be read is a failure, named
            problems = [f"sources could not be re-read ({type(exc).__name__}: {exc})"]
        for message in problems:
            yield Failure(name, item["id"], message)


@check(DATASET, "fred_review")
def check_fred_review(release) -> Iterable[Failure]:
    """No FRED G or S fact the project's review excludes (builders/misleadqa/review/fred_facts.jsonl)."""
    from ctxrobust.builders.misleadqa.fred_items import fred_review, reviewed_problem

    try:
        fred_review()  # a malformed review file is one error, not a failure of every item
    except CtxRobustError as exc:
        yield Failure(None, None, str(exc))
        return
    for name, item in _pool_items(release):
        if item.get("source") != "fred":
            continue
        for role in ("G", "S"):
            prov = (item.get("provenance") or {}).get(role) if isinstance(item.get("provenance"), dict) else None
            try:
                series_id, year = prov["series_id"], int(prov["date"][:4])
            except (KeyError, TypeError, ValueError):
                yield Failure(name, item.get("id"), f"{role}: the provenance names no series_id and ISO date to check against the review")
                continue
            problem = reviewed_problem(series_id, year)
            if problem:
                yield Failure(name, item.get("id"), f"{role} ({prov['date']}): {problem}")


def _facts_of(source: str, path: Path, snapshot: str, sha256: str) -> dict:
    """(line, index, field) -> fact of every record of an entity or condition source file."""
    from ctxrobust.builders.misleadqa.condition_items import reviewed_values
    from ctxrobust.sources import ambigdocs, condambigqa, ramdocs

    reader = {"ambigdocs": ambigdocs, "ramdocs": ramdocs, "condambigqa": condambigqa}[source]
    if source == "condambigqa":  # the short answers and extra values of the project's review are facts of the record too

        def facts_of(record):
            return condambigqa.facts(record, reviewed_values)
    else:
        facts_of = ambigdocs.facts
    facts = {}
    for record in reader.read_file(path, snapshot, sha256):
        for fact in facts_of(record):
            p = fact.provenance
            facts[(p.line, p.index, p.field)] = fact
    return facts


def _user_problems(release, readers: dict, source: str, role: str, prov: dict, value: str) -> list[str]:
    """Re-read an entity (AmbigDocs, RAMDocs) or CondAmbigQA fact: from the pinned snapshot it names,
    or from the user file the build recorded."""
    if source not in readers:
        store = getattr(release, "store", None)
        snapshot = prov["snapshot"]
        if store is not None and snapshot in store.lock:
            readers[source] = _facts_of(source, store.path(snapshot), snapshot, store.lock[snapshot].sha256)
        else:
            entry = release.manifest.get("build_notes", {}).get("user_sources", {}).get(source)
            path_field = f"{source}_path"
            path = getattr(release.config_as(MisleadQAConfig), path_field, None)
            if entry is None or not path or not Path(path).is_file():
                readers[source] = (
                    f"{source} file {path or '(none recorded)'} not found: supply it at that path (config {path_field}) to check provenance"
                )
            else:
                from ctxrobust.canonical import sha256_file

                if sha256_file(Path(path)) != entry["sha256"]:
                    readers[source] = (
                        f"{path}: sha256 differs from the one recorded at build time ({entry['sha256']}); supply the file the release was built from"
                    )
                else:
                    readers[source] = _facts_of(source, Path(path), entry["file"], entry["sha256"])
    found = readers[source]
    if isinstance(found, str):
        return [f"{role}: {found}"]
    fact = found.get((prov["line"], prov["index"], prov["field"]))
    if fact is None:
        return [f"{role}: {prov['snapshot']} has no record at line {prov['line']} / index {prov['index']} field {prov['field']}"]
    if answer_key(fact.value) != answer_key(value):
        return [f"{role}: states {value!r}; {prov['snapshot']} {prov['field']} says {fact.value!r}"]
    return []
