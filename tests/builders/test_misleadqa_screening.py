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

SMALL = {"fred_time_n": 8, "fred_location_n": 8, "situatedqa_time_n": 8, "situatedqa_location_n": 8}


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

    # a human adjudicates each flagged item; the decisions are a pinned build input
    decisions = tmp_path / "adjudication.csv"
    decisions.write_text(
        "id,decision,criterion,reason,reviewer\n"
        f"{situated[0]},exclude,4,two answers in the asked year,tester\n"
        f"{situated[1]},retain,,flag not confirmed,tester\n"
        f"{situated[2]},revise,2,scope to be restated,tester\n"
    )
    reviewed = build_release("misleadqa", "0.1.1-screen", {**SMALL, "adjudication": str(decisions)}, out, store)
    release = Release(reviewed.path, store=store)
    main_ids = {r["id"] for r in release.rows("main.jsonl")}
    assert situated[0] not in main_ids and situated[2] not in main_ids and situated[1] in main_ids
    excluded = {r["id"]: r for r in release.rows("exclusions.jsonl")}
    assert (
        excluded[situated[0]]["reason"] == "adjudication_exclude"
        and "criterion 4 (answer uniqueness): two answers" in excluded[situated[0]]["detail"]
    )
    assert excluded[situated[2]]["reason"] == "adjudication_revise"
    notes = release.manifest["build_notes"]
    assert notes["screening"] == {
        "candidates": len(ids),
        "reviewed": True,
        "flagged": 3,
        "retained": len(ids) - 2,
        "excluded": 2,
        "decisions": {"exclude": 1, "retain": 1, "revise": 1},
        "unreviewed": 0,  # a user file keeps the paper's rule: a candidate without a row was not flagged
        "rows_for_other_candidates": 0,
        "ids_not_in_pool": [],
    }
    assert notes["user_sources"]["adjudication"]["file"] == "adjudication.csv"
    card = (reviewed.path / "README.md").read_text(encoding="utf-8")
    assert "`flagged`: 3" in card and "`excluded`: 2" in card and "not reviewed" not in card
    assert "not reviewed" in (path / "README.md").read_text(encoding="utf-8")  # the unreviewed build says so


def test_the_default_review_excludes_unread_situatedqa_candidates_and_names_stale_rows(tmp_path, store):
    from ctxrobust.builders.misleadqa import adjudication

    result = build_release("misleadqa", "0.1.2-default", {**SMALL, "situatedqa_location_n": 20}, tmp_path / "out", store)
    release = Release(result.path, store=store)
    decided = adjudication.read(adjudication.DEFAULT)
    pool = [r for r in release.rows("candidates.jsonl") if r["source"] == "situatedqa"]
    unread = {r["id"] for r in pool if r["id"] not in decided}
    excluded = {r["id"]: r for r in release.rows("exclusions.jsonl") if r["reason"] == "adjudication_unreviewed"}
    assert set(excluded) == unread
    assert not unread & {r["id"] for r in release.rows("main.jsonl")}
    screening = release.manifest["build_notes"]["screening"]
    assert screening["unreviewed"] == len(unread)
    assert screening["ids_not_in_pool"] == sorted(set(decided) - {r["id"] for r in release.rows("candidates.jsonl")})
    assert screening["rows_for_other_candidates"] == len(screening["ids_not_in_pool"])


def test_parse_answer_refuses_a_missing_criterion():
    with pytest.raises(ValueError, match="criterion 3"):
        parse_answer(json.dumps({n: {"judgment": "pass"} for n in ("1", "2", "4", "5", "6")}))
