"""The screening loop end to end (paper Appendix B.1): `prompts --prompt screen` -> judgments of two
scripted screening models (some unparseable) -> `screen` -> an adjudication file -> build ->
exclusions, manifest and card counts."""

from __future__ import annotations

import csv
import json

import pytest

from ctxrobust.build import build_release
from ctxrobust.cli import main
from ctxrobust.evaluation.misleadqa.screening import CRITERIA, parse_answer
from ctxrobust.release import Release

SMALL = {"fred_time_n": 8, "fred_location_n": 8, "situatedqa_time_n": 8, "situatedqa_location_n": 8, "ambigdocs_n": 8, "condambigqa_n": 6}


def answer(fail: set[str] = frozenset()) -> str:
    return json.dumps(
        {
            n: {"judgment": "fail" if n in fail else "pass", "reason": f"criterion {n} {'broken' if n in fail else 'holds'}"}
            for n in CRITERIA
        }
    )


@pytest.fixture(scope="module")
def unreviewed(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("screen-releases")
    result = build_release("misleadqa", "0.1.0-screen", {**SMALL, "adjudication": "none"}, out, store)
    return out, result.path


def test_the_screening_loop_from_prompts_to_a_reviewed_release(unreviewed, tmp_path, store, capsys):
    out, path = unreviewed
    requests = tmp_path / "screen.jsonl"
    assert main(["prompts", str(path), "--prompt", "screen", "-o", str(requests)]) == 0
    rows = [json.loads(line) for line in requests.read_text().splitlines()]
    candidates = Release(path, store=store).rows("candidates.jsonl")
    assert [r["item"] for r in rows] == sorted(c["id"] for c in candidates) and {r["condition"] for r in rows} == {"screen"}
    assert all(
        "6. Distractor validity." in r["meta"]["text"]
        and '"judgment": "pass"' in r["meta"]["text"]
        and r["messages"][0]["content"] == r["meta"]["text"]
        for r in rows
    )
    ids = [r["item"] for r in rows]
    situated = [i for i in ids if i.startswith("situatedqa-")]

    # two scripted screening models: A fails criterion 4 on two items, B fails 6 on one of them and 2 on another
    a_lines = [{"model": "astra", "id": i, "condition": "screen", "response": answer({"4"} if i in situated[:2] else set())} for i in ids]
    a_lines[5]["response"] = "I think it is fine."  # unparseable
    b_lines = [
        {
            "model": "opus",
            "id": i,
            "condition": "screen",
            "response": "```json\n" + answer({"6"} if i == situated[1] else {"2"} if i == situated[2] else set()) + "\n```",
        }
        for i in ids
    ]
    (tmp_path / "astra.jsonl").write_text("".join(json.dumps(x) + "\n" for x in a_lines))
    (tmp_path / "opus.jsonl").write_text("".join(json.dumps(x) + "\n" for x in b_lines) + "{not json\n")
    capsys.readouterr()
    flags = tmp_path / "flags.jsonl"
    assert main(["screen", str(path), str(tmp_path / "astra.jsonl"), str(tmp_path / "opus.jsonl"), "-o", str(flags)]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert f"astra.jsonl:6: {ids[5]}: the answer is not JSON" in captured.err and "opus.jsonl:" in captured.err  # by file and line
    assert summary["flagged"] == 3 and summary["unparseable"] == 1
    assert summary["table9"]["situatedqa"] == {"items": len(situated), "astra": 2, "opus": 2, "either": 3}
    assert summary["table9"]["fred"]["either"] == 0 and summary["table9"]["total"]["either"] == 3
    sheet = {r["id"]: r for r in map(json.loads, flags.read_text().splitlines())}
    assert sheet[situated[1]]["flags"] == {"astra": ["4"], "opus": ["6"]} and sheet[situated[1]]["reasons"]["opus"] == {
        "6": "criterion 6 broken"
    }
    assert sheet[ids[5]]["unparseable"] == ["astra"] and not sheet[ids[5]]["flagged"]  # listed, never dropped
    with open(flags.with_suffix(".csv"), newline="") as handle:
        assert {(r["id"], r["model"]) for r in csv.DictReader(handle) if r["flagged"] == "True"} >= {
            (situated[0], "astra"),
            (situated[2], "opus"),
        }
    assert "| situatedqa |" in flags.with_suffix(".table9.md").read_text()

    assert sheet[situated[1]]["item_sha256"] == next(c["item_sha256"] for c in candidates if c["id"] == situated[1])

    # a human adjudicates each flagged item, naming the item read; the decisions are a pinned build input
    decisions = tmp_path / "adjudication.csv"
    decisions.write_text(
        "id,item_sha256,decision,criterion,reason,reviewer\n"
        f"{situated[0]},{sheet[situated[0]]['item_sha256']},exclude,4,two answers in the asked year,tester\n"
        f"{situated[1]},{sheet[situated[1]]['item_sha256']},retain,,flag not confirmed,tester\n"
        f"{situated[2]},{sheet[situated[2]]['item_sha256']},revise,2,scope to be restated,tester\n"
    )
    # the unflagged candidates were read by no one: kept on request (the paper's rule), counted as unreviewed
    settings = {**SMALL, "adjudication": str(decisions), "keep_unreviewed": True}
    reviewed = build_release("misleadqa", "0.1.1-screen", settings, out, store)
    release = Release(reviewed.path, store=store)
    main_ids = {r["id"] for r in release.rows("main.jsonl")}
    assert situated[0] not in main_ids and situated[2] not in main_ids and situated[1] in main_ids
    excluded = {r["id"]: r for r in release.rows("exclusions.jsonl")}
    assert (
        excluded[situated[0]]["reason"] == "adjudication_exclude"
        and "criterion 4 (answer uniqueness): two answers" in excluded[situated[0]]["detail"]
    )
    assert excluded[situated[2]]["reason"] == "adjudication_revise"
    screening = release.manifest["build_notes"]["screening"]
    drafts = sum(1 for c in candidates if c.get("needs_restatement"))  # never released without a restatement
    totals = {k: screening[k] for k in ("candidates", "drafts", "screened", "flagged", "retained", "excluded", "unreviewed")}
    assert totals == {
        "candidates": len(ids),
        "drafts": drafts,
        "screened": 3,
        "flagged": 2,
        "retained": len(ids) - 2 - drafts,
        "excluded": 2 + drafts,
        "unreviewed": len(ids) - 3 - drafts,  # never counted as reviewed
    }
    assert screening["reviewed"] and screening["keep_unreviewed"]
    assert {r for g in screening["groups"].values() for r in g["read_by"]} == {"tester"}  # who read what
    assert release.manifest["build_notes"]["user_sources"]["adjudication"]["file"] == "adjudication.csv"
    card = (reviewed.path / "README.md").read_text(encoding="utf-8")
    assert "`flagged`: 2" in card and f"`excluded`: {2 + drafts}" in card and f"`unreviewed`: {len(ids) - 3 - drafts}" in card
    assert "keep_unreviewed=true" in card and "not reviewed" not in card
    assert "not reviewed" in (path / "README.md").read_text(encoding="utf-8")  # the unreviewed build says so


def test_the_default_review_excludes_unread_candidates_and_names_stale_rows(tmp_path, store):
    from ctxrobust.builders.misleadqa import adjudication

    result = build_release("misleadqa", "0.1.2-default", {**SMALL, "situatedqa_location_n": 20}, tmp_path / "out", store)
    release = Release(result.path, store=store)
    decided = adjudication.read(adjudication.DEFAULT)
    pool = release.rows("candidates.jsonl")
    current = {r["id"] for r in pool if r["id"] in decided and decided[r["id"]].item_sha256 == r["item_sha256"]}
    unread = {r["id"] for r in pool if r["id"] not in current and not r.get("needs_restatement")}
    excluded = {r["id"]: r for r in release.rows("exclusions.jsonl") if r["reason"] == "adjudication_unreviewed"}
    assert set(excluded) == unread
    assert not unread & {r["id"] for r in release.rows("main.jsonl") + release.rows("condition.jsonl")}
    screening = release.manifest["build_notes"]["screening"]
    assert screening["unreviewed"] == len(unread)
    assert screening["ids_not_in_pool"] == sorted(set(decided) - {r["id"] for r in pool})
    assert screening["rows_for_other_candidates"] == len(screening["ids_not_in_pool"])


def test_parse_answer_refuses_a_missing_criterion():
    with pytest.raises(ValueError, match="criterion 3"):
        parse_answer(json.dumps({n: {"judgment": "pass"} for n in ("1", "2", "4", "5", "6")}))
