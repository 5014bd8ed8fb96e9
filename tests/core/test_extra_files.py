"""Extra files a builder declares besides its JSON Lines data files (e.g. copies in another project's
format): written canonically by the pipeline, listed in the manifest and SHA256SUMS, read through the
checked opener, their records checked against their schema, refused when tampered with."""

from __future__ import annotations

import json
import os

import pytest
from cards import minimal_card

from ctxrobust import cli, registry, release_files, schemas
from ctxrobust.build import build_release, write_sums
from ctxrobust.builders.base import BuildConfig, Builder, BuildOutput, DataFile, ExtraFile
from ctxrobust.canonical import dumps_pretty, sha256_file, write_json
from ctxrobust.errors import CtxRobustError
from ctxrobust.release import Release
from ctxrobust.validators.checks import run_checks

ITEM_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["id", "value"],
    "properties": {"id": {"type": "string"}, "value": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}
RECORD_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["Value"],
    "properties": {"Value": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}


class ExtrasConfig(BuildConfig):
    extra_name: str = "items_upstream.json"
    extra_format: str = "json"
    extra_mirrors: str | None = "items.jsonl"
    bad_record: bool = False


class ExtrasBuilder(Builder):
    dataset = "extras"
    Config = ExtrasConfig

    def build(self) -> BuildOutput:
        rows = [{"id": f"item-{i:03d}", "value": v} for i, v in enumerate([5, 3, 9])]
        records = [{"Value": row["value"]} for row in rows]
        if self.config.bad_record:
            records[1]["Value"] = "three"
        extra = ExtraFile(
            self.config.extra_name,
            records,
            "the items in another format",
            format=self.config.extra_format,
            schema="extras.record",
            mirrors=self.config.extra_mirrors,
        )
        return BuildOutput(files=[DataFile("items.jsonl", rows, schema="extras.item")], extra_files=[extra])


CARD = minimal_card(
    "extras", "A test dataset with an extra file.", {"items": {"description": "items", "fields": {"id": "id", "value": "value"}}}
)


@pytest.fixture(autouse=True)
def extras_dataset(monkeypatch):
    monkeypatch.setitem(
        registry._DATASETS,
        "extras",
        registry.Dataset(
            name="extras",
            builder=f"{__name__}:ExtrasBuilder",
            checks="ctxrobust.validators.structure",
            prompts="toy.evaluation:prompts",
            prompt_options="toy.evaluation:PromptOptions",
            scorer="toy.evaluation:score",
            score_options="toy.evaluation:ScoreOptions",
            renderers={},
            card=CARD,
            schemas=("extras.item", "extras.record"),
        ),
    )
    original = schemas.load_schema
    loaded = {"extras.item": ITEM_SCHEMA, "extras.record": RECORD_SCHEMA}
    monkeypatch.setattr(schemas, "load_schema", lambda name: loaded.get(name) or original(name))
    original_path = schemas.schema_path
    monkeypatch.setattr(
        schemas, "schema_path", lambda name: schemas.SCHEMA_DIR / "manifest.schema.json" if name in loaded else original_path(name)
    )


def test_an_extra_file_is_written_listed_hashed_and_validated(tmp_path):
    folder = build_release("extras", "1.0.0", {}, tmp_path, None).path
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md",
        "SHA256SUMS",
        "items.jsonl",
        "items.parquet",
        "items_upstream.json",
        "manifest.json",
    ]
    with open(folder / "items_upstream.json", encoding="utf-8") as handle:
        assert json.load(handle) == [{"Value": 5}, {"Value": 3}, {"Value": 9}]  # in the builder's order
    assert (folder / "items_upstream.json").read_text(encoding="utf-8") == '[\n{"Value":5},\n{"Value":3},\n{"Value":9}\n]\n'
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["extra_files"] == [
        {
            "name": "items_upstream.json",
            "sha256": sha256_file(folder / "items_upstream.json"),
            "bytes": (folder / "items_upstream.json").stat().st_size,
            "format": "json",
            "description": "the items in another format",
            "rows": 3,
            "schema": "extras.record",
            "from": "items.jsonl",
        }
    ]
    assert f"{manifest['extra_files'][0]['sha256']}  items_upstream.json\n" in (folder / "SHA256SUMS").read_text(encoding="utf-8")
    release = Release(folder)
    assert release.records("items_upstream.json") == [{"Value": 5}, {"Value": 3}, {"Value": 9}]
    assert release.model.extra_files[0].mirrors == "items.jsonl" and release.model.extra_files[0].rows == 3
    assert "items_upstream.json" in (folder / "README.md").read_text(encoding="utf-8")
    results = run_checks(release)
    assert {"extra_schema", "hashes", "row_counts"} <= set(results) and all(not found for found in results.values())
    assert parquet_free(folder)


def parquet_free(folder) -> bool:
    """An extra file gets no Parquet copy and is no configuration."""
    return not (folder / "items_upstream.parquet").exists()


def test_the_same_build_gives_the_same_bytes(tmp_path):
    first = build_release("extras", "1.0.0", {}, tmp_path / "a", None).path
    second = build_release("extras", "1.0.0", {}, tmp_path / "b", None).path
    assert (first / "items_upstream.json").read_bytes() == (second / "items_upstream.json").read_bytes()
    assert build_release("extras", "1.0.0", {}, tmp_path / "a", None).status == "reproduced"


def test_a_record_that_breaks_its_schema_is_named_and_nothing_is_frozen(tmp_path):
    with pytest.raises(CtxRobustError) as caught:
        build_release("extras", "1.0.0", {"bad_record": True}, tmp_path, None)
    failures = getattr(caught.value, "failures", [])
    assert [(f.check, f.file, f.item) for f in failures] == [("extra_schema", "items_upstream.json", "record 2")]
    assert not (tmp_path / "extras" / "1.0.0").exists()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"extra_name": "items.jsonl"}, "must end in .json"),
        ({"extra_name": "other.jsonl"}, "must end in .json"),
        ({"extra_name": "manifest.json"}, "differ from every other file"),
        ({"extra_name": "../up.json"}, "folder part"),
        ({"extra_format": "csv"}, "format 'csv'"),
        ({"extra_mirrors": "nothing.jsonl"}, "no data file"),
    ],
)
def test_a_bad_declaration_is_one_line_and_nothing_is_written(tmp_path, settings, message):
    with pytest.raises(CtxRobustError, match=message.replace(".", r"\.").replace("(", r"\(")):
        build_release("extras", "1.0.0", settings, tmp_path, None)
    assert not (tmp_path / "extras" / "1.0.0").exists()


def test_a_changed_byte_a_link_and_a_lost_file_are_reported(tmp_path, capsys):
    folder = build_release("extras", "1.0.0", {}, tmp_path, None).path
    path = folder / "items_upstream.json"
    original = path.read_bytes()
    path.write_bytes(original.replace(b"9", b"8"))
    assert cli.validate_main([str(tmp_path)]) == 1
    assert "FAIL extras 1.0.0 items_upstream.json - hashes:" in capsys.readouterr().out

    outside = tmp_path / "outside.json"
    outside.write_bytes(original)
    path.unlink()
    os.symlink(outside, path)
    assert cli.validate_main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "items_upstream.json - contents: is a symbolic link" in out
    with pytest.raises(CtxRobustError, match="symbolic link"):
        release_files.read_json(folder, "items_upstream.json")

    path.unlink()  # gone, and dropped from SHA256SUMS too: the manifest still names it
    (folder / "SHA256SUMS").unlink()
    write_sums(folder)
    assert cli.validate_main([str(tmp_path)]) == 1
    assert "items_upstream.json - hashes: listed in manifest.json but missing" in capsys.readouterr().out


def test_a_record_count_that_disagrees_with_the_manifest_is_reported(tmp_path):
    folder = build_release("extras", "1.0.0", {}, tmp_path, None).path
    write_json(folder / "items_upstream.json", [{"Value": 5}, {"Value": 3}])
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["extra_files"][0].update(
        sha256=sha256_file(folder / "items_upstream.json"), bytes=(folder / "items_upstream.json").stat().st_size
    )
    (folder / "manifest.json").write_text(dumps_pretty(manifest), encoding="utf-8")
    (folder / "SHA256SUMS").unlink()
    write_sums(folder)
    results = run_checks(Release(folder))
    assert [(f.file, f.message) for f in results["row_counts"]] == [("items_upstream.json", "2 records, manifest.json says 3")]


def test_a_manifest_from_before_extra_files_still_reads(tmp_path):
    folder = build_release("extras", "1.0.0", {}, tmp_path, None).path
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    del manifest["extra_files"]
    release = Release(folder, manifest=manifest)
    assert release.extra_files == [] and release.model.extra_files == []


def _forge(folder, manifest) -> None:
    (folder / "manifest.json").write_text(dumps_pretty(manifest), encoding="utf-8")
    (folder / "SHA256SUMS").unlink()
    write_sums(folder)


def test_a_manifest_naming_a_file_outside_the_release_is_refused_unread(tmp_path, capsys, monkeypatch):
    folder = build_release("extras", "1.0.0", {}, tmp_path / "releases", None).path
    (tmp_path / "releases" / "extras" / "outside.json").write_text("[]", encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["extra_files"][0]["name"] = "../outside.json"
    _forge(folder, manifest)
    opened = []
    real_open = release_files.open_binary
    monkeypatch.setattr(release_files, "open_binary", lambda f, name: opened.append(name) or real_open(f, name))
    assert cli.validate_main([str(folder)]) == 1
    out = capsys.readouterr().out
    assert "not a plain file name inside the release folder" in out and "Traceback" not in out
    assert "../outside.json" not in opened


def test_an_extra_file_that_is_not_json_is_one_failure_line(tmp_path, capsys):
    folder = build_release("extras", "1.0.0", {}, tmp_path, None).path
    (folder / "items_upstream.json").write_text('[\n{"Value":5},\n', encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["extra_files"][0].update(
        sha256=sha256_file(folder / "items_upstream.json"), bytes=(folder / "items_upstream.json").stat().st_size
    )
    _forge(folder, manifest)
    assert cli.validate_main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "items_upstream.json - extra_schema:" in out and "not valid JSON" in out and "Traceback" not in out
    assert "could not run" not in out
