"""CondAmbigQA condition candidates from records and the project's review of short answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrobust.builders.misleadqa import condition_items
from ctxrobust.builders.misleadqa.candidate import Excluded
from ctxrobust.builders.misleadqa.config import MisleadQAConfig
from ctxrobust.builders.misleadqa.item_rules import item_checks
from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import condambigqa

SAMPLE = Path(__file__).parents[1] / "fixtures" / "condambigqa_sample.json"
REVIEWER = "the project's maintainers"
ANSWERS = [  # property -> (condition, answer, passage)
    ("the original 1911 timber bridge", "Ada Merrow", 1),
    ("the 1958 steel arch", "Tomas Wexley", 2),
    ("the 2004 pedestrian footbridge", "Nell Okafor", 3),
]


def _rows(record, **changes) -> list[dict]:
    rows = []
    for position, (condition, answer, passage) in enumerate(ANSWERS):
        rows.append(
            {
                "question_id": record.upstream_id,
                "property": position,
                "groundtruth_sha256": record.properties[position].groundtruth_sha256,
                "condition": condition,
                "answer": answer,
                "context": record.ctxs[passage - 1].text,
                "method": "extract",
                "citation": f"{passage}. {record.ctxs[passage - 1].title}",
                "reviewer": REVIEWER,
            }
        )
    for position, change in changes.items():
        rows[int(position[1:])].update(change)
    extra = {"question_id": record.upstream_id, "extra_distractor": "Piet Hallam", "citation": "4. Lisk county", "reviewer": REVIEWER}
    return rows + [extra]


def _review(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "condition_answers.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _outcomes(records, review: Path) -> dict[str, object]:
    out = {}
    for spec in condition_items.specs(records, seed=0, review=review):
        try:
            out[spec.id.rsplit("-", 2)[-2] + spec.id.rsplit("-", 1)[-1]] = spec.build()
        except Excluded as excluded:
            out[spec.id.rsplit("-", 2)[-2] + spec.id.rsplit("-", 1)[-1]] = excluded
    return out


@pytest.fixture
def records():
    return condambigqa.read_file(SAMPLE)


def test_candidates_use_the_reviewed_answers_and_contexts(tmp_path, records):
    outcomes = _outcomes(records, _review(tmp_path, _rows(records[0])))
    assert sorted(outcomes) == ["01", "02", "10", "12", "20", "21"]  # the one-property record has no pair
    candidate = outcomes["01"]
    assert (candidate.gold, candidate.lure) == ("Ada Merrow", "Tomas Wexley")
    assert candidate.question == "Who designed the corvane bridge? Answer under this interpretation: the original 1911 timber bridge."
    assert (candidate.g_text, candidate.s_text) == (records[0].ctxs[0].text, records[0].ctxs[1].text)
    assert candidate.construction == {"G": "extract", "S": "extract"}
    assert candidate.split == "condition" and candidate.target_scope.condition == "the original 1911 timber bridge"
    f_text, _ = candidate.f_text_and_edits()
    assert "Tomas Wexley" in f_text and "Ada Merrow" not in f_text
    assert sorted(d.text for d in candidate.distractors) == ["Nell Okafor", "Piet Hallam"]
    assert candidate.provenance_g.field == "properties[0].answer" and candidate.provenance_g.value == "Ada Merrow"
    item = candidate.item("A", "B", ("C", "D"))
    problems = {name: check(item) for name, check in item_checks(MisleadQAConfig()).items()}
    assert not any(problems.values()), problems


def test_a_stale_or_unanswerable_row_excludes_with_a_reason(tmp_path, records):
    rows = _rows(records[0], p1={"groundtruth_sha256": "0" * 64}, p2={"answer": None, "reason": "two designers are named"})
    outcomes = _outcomes(records, _review(tmp_path, rows))
    assert isinstance(outcomes["01"], Excluded) and outcomes["01"].reason == "stale_review"
    assert outcomes["20"].reason == "no_short_answer" and "two designers are named" in outcomes["20"].detail
    assert all(isinstance(o, Excluded) for o in outcomes.values())


def test_a_long_answer_without_a_row_is_not_an_option(tmp_path, records):
    outcomes = _outcomes(records, _review(tmp_path, []))
    assert {o.reason for o in outcomes.values()} == {"no_short_answer", "multiple_answers"}  # property 1 lists two answers


def test_short_groundtruth_without_a_row_keeps_the_template(tmp_path):
    path = tmp_path / "old.jsonl"
    props = [{"condition": "the 1911 bridge", "groundtruth": "Ada Merrow"}, {"condition": "the 1958 arch", "groundtruth": "Tomas Wexley"}]
    path.write_text(json.dumps({"id": "o1", "question": "Who designed the bridge?", "properties": props}) + "\n", encoding="utf-8")
    outcomes = _outcomes(condambigqa.read_file(path), _review(tmp_path, []))
    assert outcomes["01"].reason == "too_few_distractors"  # built from the template; no distractors to draw


def test_the_lure_stated_in_g_excludes(tmp_path, records):
    rows = _rows(records[0], p0={"context": records[0].ctxs[0].text + " Tomas Wexley later rebuilt it."})
    assert _outcomes(records, _review(tmp_path, rows))["01"].reason == "lure_in_g"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"answer": "Ada Merrow of the county engineering office of Lisk"}, "must be 1-6 words"),
        ({"context": "Somebody designed it."}, "containing the answer 'Ada Merrow' verbatim"),
        ({"method": "guess"}, "field 'method' must be one of"),
        ({"answer": None}, "needs a reason"),
        ({"property": "0"}, "property an integer"),
    ],
)
def test_a_malformed_review_row_is_one_error(tmp_path, records, change, message):
    path = _review(tmp_path, _rows(records[0], p0=change))
    with pytest.raises(CtxRobustError) as caught:
        condition_items.review_rows(path)
    assert message in str(caught.value) and str(caught.value).startswith("condition_answers.jsonl:1:")


def test_the_projects_review_loads():
    rows = condition_items.review_rows()
    answered = [row for row in rows if row.get("answer")]
    assert len({row["question_id"] for row in answered}) >= 15
    assert all(row["reviewer"] == REVIEWER for row in rows)


def test_the_projects_review_matches_the_pinned_release(mirror):
    """Every row names a property of mcaqa.json with the reviewed groundtruth; extracts and extras stand in their passages."""
    records = {r.upstream_id: r for r in condambigqa.read_file(mirror / "condambigqa" / "mcaqa.json")}
    for row in condition_items.review_rows():
        record = records[row["question_id"]]
        if "extra_distractor" in row:
            assert record.passage_span(int(row["citation"].split(".")[0]), row["extra_distractor"]) is not None, row
            continue
        assert record.properties[row["property"]].groundtruth_sha256 == row["groundtruth_sha256"], row
        if row["answer"] is None:
            continue
        number, title = row["citation"].split(". ", 1)
        assert record.ctxs[int(number) - 1].title == title, row
        if row["method"] == "extract":
            assert row["context"] in " ".join(record.ctxs[int(number) - 1].text.split()), row
