"""croissant.json: valid under mlcroissant, every file and field described, records readable and equal to the release."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import mlcroissant as mlc
import pytest
from croissant_records import assert_records_match
from publish_releases import nested_release, pseudowords_release  # noqa: F401  (fixtures)

from ctxrobust.canonical import sha256_file
from ctxrobust.errors import CtxRobustError
from ctxrobust.publish.card import read_manifest
from ctxrobust.publish.croissant import CONFORMS_TO, croissant, date_published
from ctxrobust.publish.hub import stage
from ctxrobust.release import Release


@pytest.fixture(scope="module")
def staged_pseudowords(pseudowords_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("croissant") / "pw"
    stage(Release(pseudowords_release), "my-org/pseudowords", out, "https://huggingface.co")
    return out


@pytest.fixture(scope="module")
def staged_nested(nested_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("croissant") / "nested"
    stage(Release(nested_release), "my-org/misleadqa", out, "https://huggingface.co")
    return out


def load(folder: Path) -> mlc.Dataset:
    return mlc.Dataset(jsonld=str(folder / "croissant.json"))


@pytest.mark.parametrize(("which", "release_fixture"), [("staged_pseudowords", "pseudowords_release"), ("staged_nested", "nested_release")])
def test_valid_and_every_record_set_matches_the_release(which, release_fixture, request):
    folder = request.getfixturevalue(which)
    release = Release(request.getfixturevalue(release_fixture))
    document = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    dataset = load(folder)  # raises mlcroissant.ValidationError on any error
    assert dataset.metadata.ctx.issues.errors == set()
    published = read_manifest(release.manifest).published
    assert {rs.uuid for rs in dataset.metadata.record_sets} == {entry.config for entry in published}
    for entry in published:
        records = list(dataset.records(entry.config))
        assert len(records) == entry.rows
        assert assert_records_match(document, entry.config, records, release.rows(entry.copy_of)) >= entry.rows


def test_only_warning_is_the_missing_date(staged_pseudowords):
    warnings = load(staged_pseudowords).metadata.ctx.issues.warnings
    assert len(warnings) == 1 and "datePublished" in next(iter(warnings))


def test_every_file_is_described_with_its_sha256(staged_nested):
    document = json.loads((staged_nested / "croissant.json").read_text(encoding="utf-8"))
    files = {
        p.name: p for p in staged_nested.iterdir() if p.name not in ("croissant.json", "SHA256SUMS")
    }  # SHA256SUMS hashes croissant.json
    described = {d["name"]: d for d in document["distribution"]}
    assert set(described) == set(files)
    for name, path in files.items():
        assert described[name]["sha256"] == sha256_file(path)
        assert described[name]["contentUrl"] == name
        assert described[name]["contentSize"] == f"{path.stat().st_size} B"
    assert described["main.parquet"]["encodingFormat"] == "application/x-parquet"
    assert described["condition.parquet"]["description"].startswith("Configuration `condition`, split `test`: The condition supplement")
    assert described["condition.parquet"]["description"].endswith(" Empty in this build.")
    condition = next(rs for rs in document["recordSet"] if rs["@id"] == "condition")
    main = next(rs for rs in document["recordSet"] if rs["@id"] == "main")
    assert [f["name"] for f in condition["field"]] == [f["name"] for f in main["field"]]  # an empty file keeps its columns
    assert document["conformsTo"] == CONFORMS_TO
    assert document["url"] == "https://huggingface.co/datasets/my-org/misleadqa"
    assert document["license"] == "https://creativecommons.org/licenses/by-sa/4.0/"
    assert document["version"] == "0.0.1"
    assert "MisleadQA" in document["citeAs"]


def test_nested_fields_are_flattened_sub_fields_with_types(staged_nested):
    document = json.loads((staged_nested / "croissant.json").read_text(encoding="utf-8"))
    main = next(rs for rs in document["recordSet"] if rs["@id"] == "main")
    fields = {f["name"]: f for f in main["field"]}
    assert main["key"] == {"@id": "main/id"}
    assert fields["weight"]["dataType"] == "sc:Float" and fields["cluster"]["dataType"] == "sc:Integer"
    assert fields["audited"]["dataType"] == "sc:Boolean" and fields["question"]["dataType"] == "sc:Text"
    assert fields["tags"]["isArray"] is True and fields["tags"]["dataType"] == "sc:Text"
    options = {f["name"]: f for f in fields["options"]["subField"]}
    assert set(options) == {"A", "B", "C", "D", "E"}
    assert options["E"]["source"] == {
        "fileObject": {"@id": "main.parquet"},
        "extract": {"column": "options"},
        "transform": {"jsonPath": "E"},
    }
    contexts = {f["name"]: f for f in fields["contexts"]["subField"]}
    assert contexts["G.scope.time"]["source"]["transform"] == {"jsonPath": "G.scope.time"}
    assert contexts["G.scope.time"]["@id"] == "main/contexts/G/scope/time"
    assert contexts["G.cues"]["isArray"] is True  # a list inside a struct
    substitutions = {f["name"]: f for f in fields["substitutions"]["subField"]}
    assert fields["substitutions"]["isArray"] is True
    assert substitutions["start"]["source"]["transform"] == {"jsonPath": "[*].start"}
    assert "isArray" not in substitutions["start"]
    provenance = {f["name"]: f for f in fields["provenance"]["subField"]}
    assert provenance["distractors.line"]["source"]["transform"] == {"jsonPath": "distractors[*].line"}
    assert provenance["distractors.line"]["isArray"] is True


def test_a_list_of_lists_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ctxrobust.publish.croissant import record_set

    pq.write_table(pa.Table.from_pylist([{"id": "a", "grid": [[1, 2], [3]]}]), tmp_path / "t.parquet")
    with pytest.raises(CtxRobustError, match="a list of lists has no Croissant description"):
        record_set(tmp_path / "t.parquet", "t", {}, "t")


def test_field_descriptions_come_from_the_card_text(staged_pseudowords):
    document = json.loads((staged_pseudowords / "croissant.json").read_text(encoding="utf-8"))
    vocabulary = next(rs for rs in document["recordSet"] if rs["@id"] == "vocabulary")
    zipf = next(f for f in vocabulary["field"] if f["name"] == "zipf")
    assert zipf["description"].startswith("Its English Zipf frequency")


def test_source_date_epoch_sets_date_published(staged_pseudowords, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    assert date_published() == "2026-01-01"
    manifest = json.loads((staged_pseudowords / "manifest.json").read_text(encoding="utf-8"))
    document = croissant(read_manifest(manifest), staged_pseudowords, "https://huggingface.co/datasets/o/n")
    assert document["datePublished"] == "2026-01-01"
    (tmp_path / "croissant.json").write_text(json.dumps(document), encoding="utf-8")
    for path in staged_pseudowords.iterdir():
        if path.name != "croissant.json":
            (tmp_path / path.name).write_bytes(path.read_bytes())
    assert load(tmp_path).metadata.ctx.issues.warnings == set()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(CtxRobustError, match="SOURCE_DATE_EPOCH"):
        date_published()


def test_without_source_date_epoch_no_date(monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert date_published() is None


@pytest.fixture(autouse=True)
def _quiet_absl():
    logging.getLogger("absl").setLevel(logging.ERROR)
