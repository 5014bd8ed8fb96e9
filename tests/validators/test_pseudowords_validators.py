"""Each pseudowords check catches the condition it names, reporting the item id."""

from __future__ import annotations

import json
import shutil
from importlib import metadata
from pathlib import Path

import pytest
from paths import FIXTURES

from ctxrobust.build import build_release
from ctxrobust.canonical import read_jsonl, write_jsonl
from ctxrobust.cli import validate_main
from ctxrobust.release import Release
from ctxrobust.validators.checks import run_checks

VERSION = "0.0.0-test"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    overrides = {
        "vocabulary_size": 1500,
        "lengths": [10, 100, 1000],
        "contexts_per_length": 3,
        "web_corpus": str(FIXTURES / "web_corpus"),
    }
    result = build_release("pseudowords", VERSION, overrides, tmp_path_factory.mktemp("releases"))
    return result.path


@pytest.fixture
def copy(built, tmp_path) -> Path:
    target = tmp_path / "pseudowords" / VERSION
    shutil.copytree(built, target)
    return target


def edit(folder: Path, name: str, change) -> None:
    rows = read_jsonl(folder / name)
    change(rows)
    write_jsonl(folder / name, rows)


def failures(folder: Path, check: str) -> list[tuple[str | None, str | None]]:
    results = run_checks(Release(folder))
    return [(f.file, f.item) for f in results[check]]


def by_id(rows: list[dict], item: str) -> dict:
    return next(r for r in rows if r["id"] == item)


def test_built_release_passes_every_check(built):
    results = run_checks(Release(built))
    assert {name for name, found in results.items() if found} == set()
    for name in (
        "build_config",
        "zipf_replay",
        "vocabulary_offensive",
        "vocabulary_alphabet",
        "vocabulary_unique",
        "vocabulary_size",
        "cha_vocabulary",
        "token_count_replay",
        "contexts_distinct",
        "context_bank",
    ):
        assert name in results
    kinds = {r["kind"] for r in Release(built).rows("contexts.jsonl")}
    assert kinds == {"CHA", "TOK", "WEB"}


def test_zipf_replay_catches_a_wrong_recorded_value(copy):
    word = read_jsonl(copy / "vocabulary.jsonl")[5]["id"]
    edit(copy, "vocabulary.jsonl", lambda rows: by_id(rows, word).update(zipf=1.23))
    assert ("vocabulary.jsonl", word) in failures(copy, "zipf_replay")


def test_zipf_replay_names_both_wordfreq_versions_when_they_differ(copy):
    word = read_jsonl(copy / "vocabulary.jsonl")[7]["id"]
    edit(copy, "vocabulary.jsonl", lambda rows: by_id(rows, word).update(zipf=1.01))
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["build_notes"]["wordfreq"] = "wordfreq 0.0.1"
    found = run_checks(Release(copy, manifest=manifest))["zipf_replay"]
    assert [f.item for f in found] == [word]
    assert f"(built with wordfreq 0.0.1, replayed with wordfreq {metadata.version('wordfreq')})" in found[0].message


def test_zipf_replay_catches_a_frequent_english_word(copy):
    def add_the(rows):
        rows[0].update(id="the", word="the", zipf=7.73)

    edit(copy, "vocabulary.jsonl", add_the)
    found = run_checks(Release(copy))["zipf_replay"]
    assert any(f.item == "the" and "at or above the threshold 1.5" in f.message for f in found)


def test_vocabulary_offensive_catches_a_word_holding_a_listed_string(copy):
    word = read_jsonl(copy / "vocabulary.jsonl")[4]["id"]
    edit(copy, "vocabulary.jsonl", lambda rows: by_id(rows, word).update(word="pornhand"))
    found = run_checks(Release(copy))["vocabulary_offensive"]
    assert [(f.item, "'porn'" in f.message) for f in found] == [(word, True)]


def test_vocabulary_offensive_is_not_replayed_for_a_release_built_without_the_filter(copy):
    word = read_jsonl(copy / "vocabulary.jsonl")[4]["id"]
    edit(copy, "vocabulary.jsonl", lambda rows: by_id(rows, word).update(word="pornhand"))
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    del manifest["config"]["offensive_filter"]  # as in releases made before the filter
    assert run_checks(Release(copy, manifest=manifest))["vocabulary_offensive"] == []


@pytest.mark.parametrize("bad", ["abcdefghi", "ab", "abcé"])
def test_vocabulary_alphabet_catches_length_and_letters(copy, bad):
    word = read_jsonl(copy / "vocabulary.jsonl")[3]["id"]
    edit(copy, "vocabulary.jsonl", lambda rows: by_id(rows, word).update(word=bad))
    assert ("vocabulary.jsonl", word) in failures(copy, "vocabulary_alphabet")


def test_vocabulary_unique_catches_a_repeated_word(copy):
    rows = read_jsonl(copy / "vocabulary.jsonl")
    first, second = rows[0]["id"], rows[1]["id"]
    edit(copy, "vocabulary.jsonl", lambda rows: by_id(rows, second).update(word=first))
    assert ("vocabulary.jsonl", second) in failures(copy, "vocabulary_unique")


def test_vocabulary_size_catches_a_missing_word(copy):
    edit(copy, "vocabulary.jsonl", lambda rows: rows.pop(0))
    assert failures(copy, "vocabulary_size") == [("vocabulary.jsonl", None)]


def test_cha_vocabulary_catches_a_word_outside_the_vocabulary(copy):
    edit(copy, "contexts.jsonl", lambda rows: by_id(rows, "CHA-000100-001").update(text="hello " + by_id(rows, "CHA-000100-001")["text"]))
    assert ("contexts.jsonl", "CHA-000100-001") in failures(copy, "cha_vocabulary")


def test_cha_vocabulary_catches_a_double_space(copy):
    def double(rows):
        row = by_id(rows, "CHA-000010-002")
        row["text"] = row["text"].replace(" ", "  ", 1)

    edit(copy, "contexts.jsonl", double)
    assert failures(copy, "cha_vocabulary") == [("contexts.jsonl", "CHA-000010-002")]


@pytest.mark.parametrize("item", ["CHA-001000-000", "TOK-000100-002", "WEB-000010-001"])
def test_token_count_replay_catches_a_text_of_the_wrong_length(copy, item):
    def lengthen(rows):
        row = by_id(rows, item)
        row["text"] += " extra"
        row["n_chars"] = len(row["text"])

    edit(copy, "contexts.jsonl", lengthen)
    assert failures(copy, "token_count_replay") == [("contexts.jsonl", item)]


def test_token_count_replay_catches_wrong_recorded_counts(copy):
    def miscount(rows):
        by_id(rows, "TOK-000010-000")["n_tokens"] = 11
        by_id(rows, "CHA-000010-000")["n_chars"] += 1

    edit(copy, "contexts.jsonl", miscount)
    assert sorted(failures(copy, "token_count_replay")) == [("contexts.jsonl", "CHA-000010-000"), ("contexts.jsonl", "TOK-000010-000")]


def test_contexts_distinct_catches_a_repeated_context(copy):
    edit(
        copy,
        "contexts.jsonl",
        lambda rows: by_id(rows, "TOK-000100-001").update(
            text=by_id(rows, "TOK-000100-000")["text"], n_chars=by_id(rows, "TOK-000100-000")["n_chars"]
        ),
    )
    assert failures(copy, "contexts_distinct") == [("contexts.jsonl", "TOK-000100-001")]


def test_context_bank_catches_a_missing_context(copy):
    edit(copy, "contexts.jsonl", lambda rows: rows.remove(by_id(rows, "WEB-001000-002")))
    assert failures(copy, "context_bank") == [("contexts.jsonl", "WEB-001000-002")]


def test_a_configuration_the_builder_refuses_is_named(copy):
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["config"]["lengths"] = [0]
    found = run_checks(Release(copy, manifest=manifest))["build_config"]
    assert [(f.file, f.item) for f in found] == [("manifest.json", None)] and "config lengths" in found[0].message


def test_rows_of_the_wrong_shape_are_left_to_the_schema_check(copy):
    def damage(rows):
        by_id(rows, "CHA-000010-000")["text"] = 12345
        del by_id(rows, "TOK-000010-000")["tokenizer"]

    edit(copy, "contexts.jsonl", damage)
    edit(copy, "vocabulary.jsonl", lambda rows: rows[0].update(word=None))
    results = run_checks(Release(copy))
    crashed = [f for found in results.values() for f in found if "could not run" in f.message]
    assert crashed == []
    assert {f.item for f in results["schema"]} >= {"CHA-000010-000", "TOK-000010-000"}
    assert ("contexts.jsonl", "TOK-000010-000") in failures(copy, "token_count_replay")


@pytest.mark.parametrize(
    "name", ["contexts.jsonl", "contexts.parquet", "vocabulary.jsonl", "vocabulary.parquet", "README.md", "SHA256SUMS"]
)
def test_one_changed_byte_in_any_release_file_is_reported_by_file_name(copy, capsys, name):
    path = copy / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert validate_main([str(copy)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("FAIL")]
    assert lines and all(line.startswith(f"FAIL pseudowords {VERSION} ") for line in lines)
    assert any(name in line for line in lines)


def test_one_changed_byte_in_the_manifest_is_reported_by_file_name(copy, capsys):
    path = copy / "manifest.json"
    text = path.read_text(encoding="utf-8")
    position = text.index('"code_sha256": "') + len('"code_sha256": "')  # a byte of a value: still valid JSON
    path.write_text(text[:position] + ("1" if text[position] != "1" else "2") + text[position + 1 :], encoding="utf-8")
    assert validate_main([str(copy)]) == 1
    assert f"FAIL pseudowords {VERSION} manifest.json - hashes:" in capsys.readouterr().out


def test_validate_command_names_dataset_version_file_item_and_check(copy, capsys):
    def lengthen(rows):
        by_id(rows, "CHA-000100-000")["text"] += " zzzzzz"

    edit(copy, "contexts.jsonl", lengthen)
    assert validate_main([str(copy)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL pseudowords {VERSION} contexts.jsonl CHA-000100-000 token_count_replay:" in out
    assert f"FAIL pseudowords {VERSION} contexts.jsonl CHA-000100-000 cha_vocabulary:" in out
