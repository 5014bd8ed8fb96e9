"""The CondAmbigQA adapter reads the released format (citations, long-form or list groundtruth, reason)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import condambigqa

SAMPLE = Path(__file__).parents[1] / "fixtures" / "condambigqa_sample.json"


def _write(tmp_path: Path, records) -> Path:
    path = tmp_path / "cond.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _record(**prop) -> dict:
    base = {"condition": "the 1958 arch", "groundtruth": "Tomas Wexley designed it.", "citations": [{"title": "1. Arch", "text": "x"}]}
    return {"id": "q1", "question": "Who designed it?", "properties": [{**base, **prop}], "ctxs": [{"title": "Arch", "text": "x"}]}


def test_reads_the_released_field_names():
    records = condambigqa.read_file(SAMPLE)
    assert [r.upstream_id for r in records] == ["7f3c2a10-0001-4c1e-9a55-000000000001", "7f3c2a10-0002-4c1e-9a55-000000000002"]
    bridge = records[0]
    assert [len(bridge.properties), len(bridge.ctxs)] == [3, 4]
    first = bridge.properties[0].citations[0]
    assert (first.number, first.title, first.label) == (1, "Corvane Bridge (1911)", "1. Corvane Bridge (1911)")
    assert first.text == bridge.ctxs[0].text and "Ada Merrow" in first.text
    arch = bridge.properties[1]
    assert len(arch.groundtruth) == 2 and arch.groundtruth[0].startswith("The steel arch")
    assert arch.reason.startswith("The bridge was rebuilt")
    assert bridge.properties[0].reason is None
    raw = json.loads(SAMPLE.read_text(encoding="utf-8"))[0]["properties"][1]["groundtruth"]
    canonical = json.dumps(raw, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert arch.groundtruth_sha256 == hashlib.sha256(canonical.encode()).hexdigest()
    assert bridge.index == 0 and bridge.line is None


def test_reads_the_older_annotation_schema(tmp_path):
    path = tmp_path / "old.jsonl"
    row = {
        "id": "o1",
        "question": "When?",
        "properties": [{"condition": "c", "groundtruth": "1990", "condition_citations": [0], "answer_citations": [0]}],
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    (record,) = condambigqa.read_file(path)
    prop = record.properties[0]
    assert (prop.groundtruth, prop.citations, prop.condition_citations) == (("1990",), (), "[0]")


@pytest.mark.parametrize(
    "prop, message",
    [
        ({"groundtruth": {"a": 1}}, "groundtruth' must be a string or a list"),
        ({"groundtruth": []}, "groundtruth' must be a string or a list"),
        ({"citations": "1. Arch"}, "field 'citations' must be a list"),
        ({"citations": [{"title": 3, "text": "x"}]}, "'title' and 'text' must be strings"),
        ({"citations": [{"title": "7. Arch", "text": "x"}]}, "points to passage 7, but the record has 1 ctxs"),
        ({"reason": ["why"]}, "field 'reason' must be a string"),
    ],
)
def test_bad_records_are_one_error_naming_file_and_record(tmp_path, prop, message):
    path = _write(tmp_path, [_record(), _record(**prop)])
    with pytest.raises(CtxRobustError) as caught:
        condambigqa.read_file(path)
    text = str(caught.value)
    assert message in text and "cond.json" in text and "record 1: properties[0]" in text and "\n" not in text


def test_facts_add_the_reviewed_values():
    record = condambigqa.read_file(SAMPLE)[0]
    reviewed = [("properties[0].answer", "Ada Merrow"), (record.passage_provenance(4, "Piet Hallam").field, "Piet Hallam")]
    facts = condambigqa.facts(record, reviewed=lambda r: reviewed)
    assert [f.provenance.field for f in facts[:3]] == [f"properties[{i}].groundtruth" for i in range(3)]
    assert facts[1].alternatives and facts[0].value.startswith("The original Corvane Bridge")
    assert [(f.provenance.field, f.value) for f in facts[3:]] == reviewed
    start = record.ctxs[3].text.index("Piet Hallam")
    assert reviewed[1][0] == f"ctxs[3].text[{start}:{start + len('Piet Hallam')}]"
    with pytest.raises(CtxRobustError, match="does not contain 'Nobody'"):
        record.passage_provenance(4, "Nobody")
