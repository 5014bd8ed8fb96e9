"""The release pipeline on a small builder: atomic, frozen, deterministic, self-verifying."""

from __future__ import annotations

import json

import pytest
from cards import minimal_card

from ctxrobust import cli, registry, schemas
from ctxrobust.build import build_release
from ctxrobust.builders.base import BuildConfig, Builder, BuildOutput, DataFile
from ctxrobust.canonical import dumps, write_jsonl
from ctxrobust.errors import CtxRobustError, ValidationFailed
from ctxrobust.release import Release
from ctxrobust.validators.checks import run_checks

ITEM_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["id", "value"],
    "properties": {"id": {"type": "string"}, "value": {"type": "integer", "minimum": 0}},
    "additionalProperties": False,
}


class SmallConfig(BuildConfig):
    n: int = 5
    broken: bool = False
    empty_extra: bool = False


class SmallBuilder(Builder):
    dataset = "small"
    Config = SmallConfig

    def build(self) -> BuildOutput:
        import numpy as np

        rng = np.random.default_rng(self.config.seed)
        values = rng.integers(0, 100, size=self.config.n)
        rows = [{"id": f"item-{i:03d}", "value": int(v)} for i, v in enumerate(values)]
        if self.config.broken:
            rows[2]["value"] = -1
        rows.reverse()  # the pipeline, not the builder, fixes the order
        files = [DataFile("items.jsonl", rows, schema="small.item")]
        if self.config.empty_extra:
            files.append(DataFile("extra.jsonl", [], schema="small.item"))
        return BuildOutput(files=files, notes={"kinds": sorted({"a", "b"})})


SMALL_CARD = minimal_card(
    "small",
    "A small test dataset.",
    {
        "items": {"description": "items", "fields": {"id": "id", "value": "value"}},
        "extra": {"description": "extra", "fields": {}, "same_fields_as": "items"},
    },
)


@pytest.fixture(autouse=True)
def small_dataset(monkeypatch):
    monkeypatch.setitem(
        registry._DATASETS,
        "small",
        registry.Dataset(
            name="small",
            builder=f"{__name__}:SmallBuilder",
            checks="ctxrobust.validators.structure",
            prompts="toy.evaluation:prompts",
            prompt_options="toy.evaluation:PromptOptions",
            scorer="toy.evaluation:score",
            score_options="toy.evaluation:ScoreOptions",
            renderers={},
            card=SMALL_CARD,
            schemas=("small.item",),
        ),
    )
    original = schemas.load_schema
    monkeypatch.setattr(schemas, "load_schema", lambda name: ITEM_SCHEMA if name == "small.item" else original(name))


def test_release_has_every_file_and_validates(tmp_path):
    result = build_release("small", "1.0.0", {}, tmp_path, None)
    folder = tmp_path / "small" / "1.0.0"
    assert result.status == "built" and result.path == folder
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "SHA256SUMS", "items.jsonl", "items.parquet", "manifest.json"]
    lines = (folder / "items.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [f"item-{i:03d}" for i in range(5)]
    assert all(line == dumps(json.loads(line)) for line in lines)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["config"] == {"seed": 0, "n": 5, "broken": False, "empty_extra": False}
    assert manifest["files"][0]["rows"] == 5 and manifest["validators"]["schema"]["passed"]
    assert not [p for p in tmp_path.joinpath("small").iterdir() if p.name.startswith(".")]
    results = run_checks(Release(folder))
    assert "hashes" in results and all(not found for found in results.values())


def test_same_version_is_reproduced_byte_for_byte(tmp_path):
    build_release("small", "1.0.0", {"seed": 3}, tmp_path, None)
    sums = (tmp_path / "small" / "1.0.0" / "SHA256SUMS").read_bytes()
    again = build_release("small", "1.0.0", {"seed": 3}, tmp_path, None)
    assert again.status == "reproduced"
    assert (tmp_path / "small" / "1.0.0" / "SHA256SUMS").read_bytes() == sums


def test_other_configuration_is_refused_without_touching_release(tmp_path):
    build_release("small", "1.0.0", {}, tmp_path, None)
    folder = tmp_path / "small" / "1.0.0"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(CtxRobustError, match="different build configuration \\(seed\\)"):
        build_release("small", "1.0.0", {"seed": 1}, tmp_path, None)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_different_bytes_under_same_configuration_are_refused(tmp_path, monkeypatch):
    build_release("small", "1.0.0", {}, tmp_path, None)
    folder = tmp_path / "small" / "1.0.0"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    monkeypatch.setattr("ctxrobust.build.code_sha256", lambda dataset: "0" * 64)  # as if the builder code changed
    with pytest.raises(CtxRobustError, match="gave different bytes .*manifest.json"):
        build_release("small", "1.0.0", {}, tmp_path, None)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".")]


def test_failing_validator_freezes_nothing(tmp_path):
    with pytest.raises(ValidationFailed) as caught:
        build_release("small", "1.0.0", {"broken": True}, tmp_path, None)
    assert [(f.check, f.file, f.item) for f in caught.value.failures] == [("schema", "items.jsonl", "item-002")]
    assert not (tmp_path / "small").exists() or not any((tmp_path / "small").iterdir())


def test_unknown_config_field_is_one_clear_line(tmp_path):
    with pytest.raises(
        CtxRobustError, match="build configuration for small: no setting size; its settings are broken, empty_extra, n, seed"
    ):
        build_release("small", "1.0.0", {"size": 3}, tmp_path, None)


@pytest.mark.parametrize("name", ["items.jsonl", "items.parquet", "manifest.json", "README.md"])
def test_one_changed_byte_is_reported_by_file_name(tmp_path, capsys, name):
    build_release("small", "1.0.0", {}, tmp_path, None)
    path = tmp_path / "small" / "1.0.0" / name
    data = bytearray(path.read_bytes())
    index = data.index(b"7") if b"7" in data else len(data) // 2
    data[index] = ord("8") if data[index] != ord("8") else ord("9")
    path.write_bytes(bytes(data))
    assert cli.validate_main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL small 1.0.0 {name} - hashes:" in out
    assert "1 release(s)" in out


def test_validate_walks_every_release_and_passes(tmp_path, capsys):
    build_release("small", "1.0.0", {}, tmp_path, None)
    build_release("small", "1.1.0", {"n": 7}, tmp_path, None)
    assert cli.validate_main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "small 1.0.0:" in out and "small 1.1.0:" in out and "validated 2 release(s): all passed" in out


def test_validate_on_a_folder_without_releases_is_one_line(tmp_path, capsys):
    assert cli.validate_main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no release found" in err and "Traceback" not in err


def test_unlisted_extra_file_is_reported(tmp_path, capsys):
    build_release("small", "1.0.0", {}, tmp_path, None)
    (tmp_path / "small" / "1.0.0" / "notes.txt").write_text("x")
    assert cli.validate_main([str(tmp_path)]) == 1
    assert "notes.txt - hashes: file is not listed in SHA256SUMS" in capsys.readouterr().out


def test_write_jsonl_is_canonical(tmp_path):
    path = tmp_path / "x.jsonl"
    write_jsonl(path, [{"id": "b", "z": 1, "a": "é"}, {"id": "a", "k": [1.5, None]}])
    assert path.read_bytes() == '{"id":"a","k":[1.5,null]}\n{"a":"é","id":"b","z":1}\n'.encode()


def test_an_empty_file_gets_a_parquet_copy_with_its_declared_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    build_release("small", "1.0.0", {"empty_extra": True}, tmp_path, None)
    table = pq.read_table(tmp_path / "small" / "1.0.0" / "extra.parquet")
    assert table.num_rows == 0
    assert table.schema.names == ["id", "value"] and table.schema.field("value").type == pa.int64()
    assert pq.read_metadata(tmp_path / "small" / "1.0.0" / "extra.parquet").num_row_groups == 0


def test_a_parquet_copy_that_differs_from_its_jsonl_is_reported(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    build_release("small", "1.0.0", {}, tmp_path, None)
    folder = tmp_path / "small" / "1.0.0"
    rows = pq.read_table(folder / "items.parquet").to_pylist()
    rows[3]["value"] += 1
    pq.write_table(pa.Table.from_pylist(rows), folder / "items.parquet")
    found = run_checks(Release(folder))["parquet_copies"]
    assert [(f.file, f.item) for f in found] == [("items.parquet", "item-003")]


def test_arrow_types_follow_the_json_schema():
    import pyarrow as pa

    from ctxrobust.schemas.arrow import arrow_schema

    schema = {
        "type": "object",
        "$defs": {"edit": {"type": "object", "properties": {"start": {"type": "integer"}, "new": {"type": "string"}}}},
        "properties": {
            "id": {"type": "string"},
            "edits": {"type": "array", "items": {"$ref": "#/$defs/edit"}},
            "score": {"type": ["number", "null"]},
            "label": {"enum": ["in_range", "out_range"]},
            "kind": {"const": "CHA"},
            "value": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
            "free": {"type": "object"},
        },
    }
    result = arrow_schema(schema)
    assert result.names == ["edits", "free", "id", "kind", "label", "score", "value"]
    assert result.field("edits").type == pa.list_(pa.struct([pa.field("new", pa.string()), pa.field("start", pa.int64())]))
    assert result.field("score").type == pa.float64() and result.field("value").type == pa.float64()
    assert result.field("label").type == pa.string() and result.field("kind").type == pa.string()


def test_a_changed_sums_line_blames_sha256sums(tmp_path, capsys):
    build_release("small", "1.0.0", {}, tmp_path, None)
    sums = tmp_path / "small" / "1.0.0" / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.endswith("items.jsonl"))
    lines[index] = ("0" if lines[index][0] != "0" else "1") + lines[index][1:]
    sums.write_text("\n".join(lines) + "\n")
    assert cli.validate_main([str(tmp_path)]) == 1
    assert "FAIL small 1.0.0 SHA256SUMS items.jsonl hashes: says " in capsys.readouterr().out


def test_a_damaged_manifest_entry_is_named_and_other_failures_are_kept(tmp_path, capsys):
    build_release("small", "1.0.0", {}, tmp_path, None)
    path = tmp_path / "small" / "1.0.0" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["files"][0]["tha256"] = manifest["files"][0].pop("sha256")
    path.write_text(json.dumps(manifest))
    assert cli.validate_main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL small 1.0.0 manifest.json - hashes: sha256" in out  # the changed file itself
    assert "lacks name, sha256 or bytes" in out


def test_a_non_utf8_line_is_named(tmp_path):
    from ctxrobust.canonical import read_jsonl

    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "\xff"}\n')
    with pytest.raises(CtxRobustError, match="x.jsonl:2: not UTF-8"):
        read_jsonl(path)


def test_build_command_lists_each_validator_failure(tmp_path, capsys):
    assert cli.main(["build", "small", "--version", "1.0.0", "--set", "broken=true", "--out", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "FAIL small 1.0.0 items.jsonl item-002 schema: value: -1 is less than the minimum of 0" in captured.out
    assert captured.err.startswith("error: small 1.0.0: 1 validator failure(s); nothing was written")


@pytest.mark.parametrize("text", ["{}", "[1]", '{"dataset": "small"}'])
def test_a_manifest_without_dataset_and_version_is_one_line(tmp_path, capsys, text):
    build_release("small", "1.0.0", {}, tmp_path, None)
    (tmp_path / "small" / "1.0.0" / "manifest.json").write_text(text)
    assert cli.validate_main([str(tmp_path)]) == 1
    assert "manifest.json: names no dataset and version; the release is corrupted" in capsys.readouterr().out


@pytest.mark.parametrize("version", ["1.0.0 beta", "", ".hidden", "a/b", "-rc"])
def test_a_version_must_name_a_folder_and_a_tag(tmp_path, version):
    with pytest.raises(CtxRobustError, match="use letters, digits"):
        build_release("small", version, {}, tmp_path, None)


def test_an_empty_version_folder_is_named_not_taken_for_a_release(tmp_path):
    (tmp_path / "small" / "1.0.0").mkdir(parents=True)
    with pytest.raises(CtxRobustError, match="exists but holds no release \\(no manifest.json\\); remove the folder"):
        build_release("small", "1.0.0", {}, tmp_path, None)


def test_a_version_folder_without_manifest_fails_validation(tmp_path, capsys):
    build_release("small", "1.0.0", {}, tmp_path, None)
    build_release("small", "1.1.0", {"seed": 1}, tmp_path, None)
    (tmp_path / "small" / "1.1.0" / "manifest.json").unlink()
    (tmp_path / "small" / "2.0.0").mkdir()
    assert cli.validate_main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL small 1.1.0 manifest.json - load:" in out and "FAIL small 2.0.0 manifest.json - load:" in out
    assert "small 1.0.0: " in out and "validated 3 release(s): 2 failure(s)" in out


def test_one_changed_file_is_one_hash_failure(tmp_path):
    build_release("small", "1.0.0", {}, tmp_path, None)
    path = tmp_path / "small" / "1.0.0" / "items.jsonl"
    path.write_bytes(path.read_bytes().replace(b"item-000", b"item-00x"))
    found = run_checks(Release(tmp_path / "small" / "1.0.0"))["hashes"]
    assert [(f.file, f.item) for f in found] == [("items.jsonl", None)]


def test_code_sha256_does_not_depend_on_the_source_cache():
    """The default cache (sources/cache) sits inside the source adapters' folder; what a build downloads
    or reports missing there is not code, so it must not change the recorded code version."""
    from ctxrobust.build import code_files, code_sha256
    from ctxrobust.sources.store import DEFAULT_CACHE_DIR, REPORTS

    dataset = registry.get("pseudowords")
    before = code_sha256(dataset)
    report = DEFAULT_CACHE_DIR / REPORTS / "code-sha256-test.txt"
    report.parent.mkdir(parents=True, exist_ok=True)
    try:
        report.write_text("gsm8k/train.jsonl\n", encoding="utf-8")
        assert code_sha256(dataset) == before
        assert not [path for _, path in code_files(dataset) if path.resolve().is_relative_to(DEFAULT_CACHE_DIR)]
    finally:
        report.unlink(missing_ok=True)
    assert any(name.startswith("ctxrobust.sources/") for name, _ in code_files(dataset))  # the adapters still count
