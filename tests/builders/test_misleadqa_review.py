"""The MisleadQA review is pinned to what readers read (App. B.1): a decision names the item's hash, a
changed item is unreviewed again, and a partial adjudication file leaves the rest unreviewed."""

from __future__ import annotations

import json

import pytest

from ctxrobust.build import build_release
from ctxrobust.builders.misleadqa.adjudication import item_sha256
from ctxrobust.publish.card import render_card
from ctxrobust.release import Release

SMALL = {
    "fred_time_n": 6,
    "fred_location_n": 6,
    "situatedqa_time_n": 6,
    "situatedqa_location_n": 6,
    "ambigdocs_n": 4,
    "condambigqa_n": 4,
    "audit_sizes": {"fred/time": 1},
    "restatements": "none",  # the candidates as the rules build them; a test's own restatements file changes one
}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def retain(row: dict) -> dict:
    return {
        "id": row["id"],
        "item_sha256": row["item_sha256"],
        "decision": "retain",
        "criterion": None,
        "reason": "no defect found",
        "reviewer": "test reviewer",
    }


@pytest.fixture(scope="module")
def pool(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("mqa-pool")
    result = build_release("misleadqa", "0.0.1-pool", {**SMALL, "adjudication": "none"}, out, store)
    return Release(result.path, store=store).rows("candidates.jsonl")


def build(tmp_path, store, version, **settings):
    result = build_release("misleadqa", version, {**SMALL, **settings}, tmp_path, store)
    return Release(result.path, store=store)


def test_candidates_carry_the_hash_of_what_a_reader_reads(pool):
    assert pool and all(row["item_sha256"] == item_sha256(row) for row in pool)
    row = pool[0]
    moved = json.loads(json.dumps(row))  # the same texts at other letters: the same item
    a, b = sorted(k for k in "ABCD" if k not in (row["gold"], row["lure"]))
    moved["options"][a], moved["options"][b] = row["options"][b], row["options"][a]
    assert item_sha256(moved) == row["item_sha256"]
    changed = json.loads(json.dumps(row))
    changed["options"][a] = changed["options"][a] + " "
    assert item_sha256(changed) != row["item_sha256"]


def test_changing_one_distractor_of_a_retained_item_makes_it_unreviewed_and_excluded(pool, tmp_path, store):
    decisions = write_jsonl(tmp_path / "decisions.jsonl", [retain(r) for r in pool])
    target = next(r for r in pool if r["source"] == "situatedqa")
    letters = [k for k in "ABCD" if k not in (target["gold"], target["lure"])]
    restated = {
        "id": target["id"],
        "base_sha256": target["item_sha256"],
        "distractors": [target["options"][letters[0]], "Zyx Qwv"],
        "reason": "one distractor changed",
        "reviewer": "test reviewer",
    }
    restatements = write_jsonl(tmp_path / "restatements.jsonl", [restated])
    release = build(tmp_path / "out", store, "0.0.2-changed", adjudication=str(decisions), restatements=str(restatements))
    released = {i["id"] for i in release.rows("main.jsonl") + release.rows("condition.jsonl")}
    assert target["id"] not in released
    finished = {r["id"] for r in pool if not r["needs_restatement"]}  # drafts are never released as they are
    assert released == finished - {target["id"]}
    excluded = {e["id"]: e for e in release.rows("exclusions.jsonl")}
    assert excluded[target["id"]]["reason"] == "adjudication_unreviewed"
    assert "another version of the item" in excluded[target["id"]]["detail"]
    group = release.manifest["build_notes"]["screening"]["groups"][f"situatedqa/{target['scope_dimension']}"]
    assert group["unreviewed"] == 1 and group["excluded"] == 1
    candidate = next(r for r in release.rows("candidates.jsonl") if r["id"] == target["id"])
    assert "Zyx Qwv" in candidate["options"].values() and candidate["item_sha256"] != target["item_sha256"]


def test_a_partial_adjudication_file_leaves_the_unlisted_candidates_unreviewed(pool, tmp_path, store):
    listed = [r for r in pool if not r["needs_restatement"]][::2]
    decisions = write_jsonl(tmp_path / "partial.jsonl", [retain(r) for r in listed])
    release = build(tmp_path / "out", store, "0.0.3-partial", adjudication=str(decisions))
    screening = release.manifest["build_notes"]["screening"]
    drafts = [r for r in pool if r["needs_restatement"]]
    assert screening["unreviewed"] == len(pool) - len(listed) - len(drafts) > 0
    assert screening["screened"] == len(listed)
    for name, group in screening["groups"].items():
        source, dimension = name.split("/")
        in_group = [r for r in pool if (r["source"], r["scope_dimension"]) == (source, dimension)]
        assert group["candidates"] == len(in_group)
        assert group["unreviewed"] == len([r for r in in_group if r not in listed and not r["needs_restatement"]])
        assert group["retained"] + group["excluded"] == group["candidates"]
    released = {i["id"] for i in release.rows("main.jsonl") + release.rows("condition.jsonl")}
    assert released == {r["id"] for r in listed}
    card = render_card(release.manifest, folder=release.path)
    assert "`unreviewed`: " + str(screening["unreviewed"]) in card

    kept = build(tmp_path / "kept", store, "0.0.4-kept", adjudication=str(decisions), keep_unreviewed=True)
    notes = kept.manifest["build_notes"]["screening"]
    assert notes["unreviewed"] == screening["unreviewed"] and notes["keep_unreviewed"] is True
    assert {i["id"] for i in kept.rows("main.jsonl") + kept.rows("condition.jsonl")} == {
        r["id"] for r in pool if not r["needs_restatement"]
    }
    assert "keep_unreviewed=true" in render_card(kept.manifest, folder=kept.path)


def test_a_decision_row_without_the_item_hash_is_one_line_naming_it(tmp_path, store):
    from ctxrobust.errors import CtxRobustError

    bad = write_jsonl(tmp_path / "old.jsonl", [{"id": "x", "decision": "retain", "reason": "ok", "reviewer": "r"}])
    with pytest.raises(CtxRobustError, match=r"old.jsonl:1: item_sha256"):
        build(tmp_path / "out", store, "0.0.5-old", adjudication=str(bad))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe{}\n", r"not UTF-8"),
        (b'{"id": "x", "base_sha256": "short", "reason": "r", "reviewer": "me"}\n', r"bad\.jsonl:1: not a restatement row"),
        (b"[" * 300 + b"\n", r"bad\.jsonl:1: not a restatement row"),
    ],
)
def test_a_bad_restatements_file_is_one_line_naming_it(tmp_path, content, message):
    from ctxrobust.builders.misleadqa import restatements
    from ctxrobust.errors import CtxRobustError

    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    with pytest.raises(CtxRobustError, match=message):
        restatements.read(bad)
