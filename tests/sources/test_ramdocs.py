"""RAMDocs test split -> AmbigDocs-shaped entity records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import FIXTURES

from ctxrobust.errors import CtxRobustError
from ctxrobust.sources import ramdocs

SAMPLE = FIXTURES / "ramdocs_sample.jsonl"


def write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "RAMDocs_test.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_records_keep_only_correct_documents_that_open_with_a_title():
    records = ramdocs.read_file(SAMPLE)
    first = records[0]
    assert first.qid == "q1" and first.ambiguous_entity == "Harbour Lighthouse"
    assert [(d.pid, d.title, d.answer) for d in first.documents] == [
        ("1.0", "Harbour Lighthouse (Maine)", "1871"),
        ("1.1", "Harbour Lighthouse (Oregon)", "1896"),
    ]
    assert first.documents[0].text.startswith("The Harbour Lighthouse is a lighthouse on the coast of Maine")


def test_misinfo_and_noise_documents_are_never_read():
    texts = " ".join(d.text for r in ramdocs.read_file(SAMPLE) for d in r.documents)
    answers = {d.answer for r in ramdocs.read_file(SAMPLE) for d in r.documents}
    assert "1905" not in texts and "1905" not in answers  # the misinfo document's (false) year
    assert "Categories" not in texts and "unknown" not in answers  # the noise document


def test_provenance_locates_the_document():
    record = ramdocs.read_file(SAMPLE)[0]
    prov = record.document_provenance(record.documents[1])
    assert (prov.line, prov.pid, prov.field, prov.value) == (1, "1.1", "documents[1].answer", "1896")
    assert prov.snapshot == "ramdocs_sample.jsonl" and len(prov.sha256) == 64


def test_a_question_whose_shared_name_cannot_be_decided_gives_no_record():
    assert [r.qid for r in ramdocs.read_file(SAMPLE)] == ["q1", "q2", "q3"]  # line 4's titles share no name with it


@pytest.mark.parametrize(
    ("question", "titles", "name"),
    [
        ('Who directed the film "Yellow Ticket"?', ["The Yellow Ticket", "The Yellow Ticket (1918 film)"], "Yellow Ticket"),
        (
            "What is the population of Pinehurst, Texas?",
            ["Pinehurst, Montgomery County, Texas", "Pinehurst, Orange County, Texas"],
            "Pinehurst",
        ),
        ("When was Judge Howe born?", ["Harland Bradley Howe", "James Henry Howe"], "Judge Howe"),
        ("Who was Mahmud I's father?", ["Mahmud I", "Mahmud I of Great Seljuq"], "Mahmud I"),
        ("What war did the Pretoria Peace Agreement end?", ["Pretoria Convention", "Treaty of Vereeniging"], None),
        ("What is the population of Sherbourne?", ["Sherborne", "Sherbourne, Warwickshire"], None),
    ],
)
def test_shared_name_comes_from_the_question_and_titles(question, titles, name):
    found = ramdocs.shared_name(question, titles)
    assert (found[0] if found else None) == name


def test_a_title_without_the_shared_name_is_left_out():
    titles = ["Bert Smith (footballer, born 1892)", "Bert Smith (footballer, born 1896)", "Stan Kowalski"]
    assert ramdocs.shared_name("When was Bert Smith born?", titles) == ("Bert Smith", titles[:2])


def test_bad_records_are_one_line_naming_file_and_line(tmp_path):
    good = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    cases = [
        ("not json", "RAMDocs_test.jsonl:2: not valid JSON"),
        ({**good, "disambig_entity": "Harbour Lighthouse"}, "RAMDocs_test.jsonl:2: field 'disambig_entity'"),
        ({**good, "documents": [{**good["documents"][0], "type": "rumour"}]}, "RAMDocs_test.jsonl:2: documents[0]: field 'type'"),
        ({**good, "documents": [{"type": "correct", "answer": "1871"}]}, "RAMDocs_test.jsonl:2: documents[0]: field 'text'"),
    ]
    for row, message in cases:
        with pytest.raises(CtxRobustError) as err:
            ramdocs.read_file(write(tmp_path, [good, row]))
        assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_every_document_read_from_the_pinned_split_is_a_correct_one(real_mirror):
    """On the real RAMDocs test split: each document a record holds is a `correct` document of its line."""
    path = real_mirror / "ramdocs" / "RAMDocs_test.jsonl"
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    records = ramdocs.read_file(path, "ramdocs/RAMDocs_test.jsonl", "0" * 64)
    assert len(records) > 300
    for record in records:
        for doc in record.documents:
            line, index = (int(x) for x in doc.pid.split("."))
            source = raw[line - 1]["documents"][index]
            assert source["type"] == "correct" and source["answer"] == doc.answer and source["text"].endswith(doc.text)
