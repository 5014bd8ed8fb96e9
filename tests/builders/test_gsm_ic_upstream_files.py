"""GSM-IC_2step.json and GSM-IC_mstep.json: the upstream GSM-IC format in the release, read with plain
`json.load`, replayed by `validate`, refused when tampered with or swapped for a link, carried by `push`."""

from __future__ import annotations

import json
import os
import shutil

import huggingface_hub.constants
import pytest
from hub_server import HubServer

from ctxrobust.build import build_release, write_sums
from ctxrobust.builders.gsm_ic import upstream_files
from ctxrobust.builders.gsm_ic.upstream_files import upstream_template
from ctxrobust.canonical import dumps, dumps_pretty, read_jsonl, sha256_file
from ctxrobust.cli import main
from ctxrobust.release import Release
from ctxrobust.validators.checks import run_checks

UPSTREAM = ("GSM-IC_2step.json", "GSM-IC_mstep.json")
# the fields of the original files and their JSON types (the upstream README's table; answers and numbers are strings)
FIELD_TYPES = {
    "original_question": str,
    "new_question": str,
    "answer": str,
    "n_steps": int,
    "role": str,
    "number": str,
    "sentence_template": str,
    "role_label": str,
    "number_label": str,
    "sentence_label": str,
}
TOKEN = "hf_test_token_do_not_print_1234567890"
SMALL = {"n_two_step": 6, "n_more_steps": 4, "n_variants": 240, "eval_size": 60}  # a few base problems of each kind


@pytest.fixture(scope="module")
def release(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("gsm-ic-upstream")
    return build_release("gsm-ic", "0.0.1-up", SMALL, out, store).path


def _copy(release, tmp_path):
    copy = tmp_path / "gsm-ic-copy"
    shutil.copytree(release, copy)
    return copy


def _rewrite_records(folder, name, records) -> None:
    """Write `records` into an upstream file and make SHA256SUMS and the manifest agree with it (a forger's edit)."""
    (folder / name).write_text("[\n" + ",\n".join(dumps(r) for r in records) + "\n]\n", encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["extra_files"]:
        if entry["name"] == name:
            entry.update(sha256=sha256_file(folder / name), bytes=(folder / name).stat().st_size, rows=len(records))
    (folder / "manifest.json").write_text(dumps_pretty(manifest), encoding="utf-8")
    (folder / "SHA256SUMS").unlink()
    write_sums(folder)


def test_plain_json_load_gives_the_upstream_fields_and_types(release):
    variants = read_jsonl(release / "variants.jsonl")
    by_text = {v["new_question"]: v for v in variants}
    for name in UPSTREAM:
        with open(release / name, encoding="utf-8") as handle:
            records = json.load(handle)
        assert isinstance(records, list) and records
        for record in records:
            assert set(record) == set(FIELD_TYPES)
            assert all(type(record[field]) is kind for field, kind in FIELD_TYPES.items())
            assert record["role_label"] in ("overlapped", "nonoverlapped")
            assert record["number_label"] in ("in_range", "out_range")
            assert record["sentence_label"] in ("in_topic", "out_topic")
            # what code written for the original files does with them
            sentence = record["sentence_template"].format(role=record["role"], number=record["number"])
            assert sentence in record["new_question"]
            variant = by_text[record["new_question"]]  # variant texts are distinct
            assert sentence == variant["sentence"]
            assert (record["original_question"], record["answer"], record["n_steps"], record["role"]) == (
                variant["original_question"],
                variant["answer"],
                variant["n_steps"],
                variant["role"],
            )
            assert record["number"].replace(",", "") == variant["number"]
            assert record["sentence_label"] == {"in_topic": "in_topic", "off_topic": "out_topic"}[variant["sentence_label"]]
            assert (record["role_label"], record["number_label"]) == (variant["role_label"], variant["number_label"])
        two_step = name == "GSM-IC_2step.json"
        assert all((r["n_steps"] == 2) == two_step for r in records)
        assert len(records) == sum(1 for v in variants if (v["n_steps"] == 2) == two_step)


def test_the_manifest_the_sums_and_the_release_view_list_them(release):
    view = Release(release)
    sums = (release / "SHA256SUMS").read_text(encoding="utf-8")
    for name in UPSTREAM:
        entry = view.model.extra_files[[e.name for e in view.model.extra_files].index(name)]
        assert (entry.format, entry.schema_name, entry.mirrors) == ("json", "gsm-ic.upstream", "variants.jsonl")
        assert entry.sha256 == sha256_file(release / name) and entry.bytes == (release / name).stat().st_size
        assert f"{entry.sha256}  {name}\n" in sums
        assert len(view.records(name)) == entry.rows
    assert view.manifest["validators"]["upstream_files"] == {"passed": True, "failures": 0}
    assert "## Other files" in (release / "README.md").read_text(encoding="utf-8")


def test_a_rebuild_gives_the_same_bytes(release, store, tmp_path):
    again = build_release("gsm-ic", "0.0.1-up", SMALL, tmp_path, store).path
    for name in UPSTREAM:
        assert (again / name).read_bytes() == (release / name).read_bytes()


def test_validate_refuses_a_link_in_place_of_an_upstream_file(release, tmp_path, capsys):
    copy = _copy(release, tmp_path)
    outside = tmp_path / "elsewhere.json"
    shutil.copy(copy / "GSM-IC_mstep.json", outside)
    (copy / "GSM-IC_mstep.json").unlink()
    os.symlink(outside, copy / "GSM-IC_mstep.json")
    assert main(["validate", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "GSM-IC_mstep.json" in out and "symbolic link" in out


def test_validate_refuses_a_changed_byte(release, tmp_path, capsys):
    copy = _copy(release, tmp_path)
    path = copy / "GSM-IC_2step.json"
    data = path.read_bytes()
    at = data.index(b'"in_range"')
    path.write_bytes(data[:at] + b'"out_range"' + data[at + len(b'"in_range"') :])
    assert main(["validate", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "GSM-IC_2step.json" in out and "hashes" in out


def test_a_forged_record_with_matching_hashes_is_named_by_check_and_id(release, tmp_path):
    copy = _copy(release, tmp_path)
    records = json.loads((copy / "GSM-IC_2step.json").read_text(encoding="utf-8"))
    records[5]["number"] = "999999"
    dropped = json.loads((copy / "GSM-IC_mstep.json").read_text(encoding="utf-8"))[:-1]
    _rewrite_records(copy, "GSM-IC_2step.json", records)
    _rewrite_records(copy, "GSM-IC_mstep.json", dropped)
    results = run_checks(Release(copy))
    assert not results["hashes"]  # the forger made the hashes agree: only the replay can tell
    found = {(f.file, f.item) for f in results["upstream_files"]}
    two_step_ids = sorted(v["id"] for v in read_jsonl(copy / "variants.jsonl") if v["n_steps"] == 2)
    assert ("GSM-IC_2step.json", two_step_ids[5]) in found
    assert any(f.file == "GSM-IC_mstep.json" and "records" in f.message for f in results["upstream_files"])
    message = next(f.message for f in results["upstream_files"] if f.item == two_step_ids[5])
    assert "number" in message and "record 6" in message


def test_a_release_without_the_upstream_files_fails(release, tmp_path):
    copy = _copy(release, tmp_path)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["extra_files"] = [e for e in manifest["extra_files"] if e["name"] != "GSM-IC_mstep.json"]
    (copy / "manifest.json").write_text(dumps_pretty(manifest), encoding="utf-8")
    (copy / "GSM-IC_mstep.json").unlink()
    (copy / "SHA256SUMS").unlink()
    write_sums(copy)
    results = run_checks(Release(copy))
    assert [(f.file, f.item) for f in results["upstream_files"]] == [("GSM-IC_mstep.json", None)]


def test_push_uploads_the_upstream_files(release, mirror, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCES_MIRROR", str(mirror))  # `validate` replays the sources through the command line
    monkeypatch.setenv("CTXROBUST_CACHE", str(tmp_path / "cache"))
    staged = tmp_path / "staged"
    assert main(["push", str(release), "--repo", "my-org/gsm-ic", "--dry-run", str(staged)]) == 0
    for name in UPSTREAM:
        assert (staged / name).read_bytes() == (release / name).read_bytes()
    croissant = json.loads((staged / "croissant.json").read_text(encoding="utf-8"))
    described = {d["name"]: d for d in croissant["distribution"]}
    assert all(described[name]["sha256"] == sha256_file(release / name) for name in UPSTREAM)
    assert "GSM-IC_2step.json" in described["GSM-IC_2step.json"]["description"]
    assert main(["validate", str(staged)]) == 0
    with HubServer(TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.url)
        assert main(["push", str(release), "--repo", "my-org/gsm-ic"]) == 0
        received = server.hub.repo("dataset", "my-org/gsm-ic").resolve("v0.0.1-up").files
    for name in UPSTREAM:
        assert received[name] == (release / name).read_bytes()
    capsys.readouterr()


# -- the template in the upstream form ------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "role", "number", "sentence", "expected"),
    [
        ("{role} has {number} marbles.", "Ada", "7", "Ada has 7 marbles.", ("{role} has {number} marbles.", "7")),
        ("{role} has {number} bees.", "Tom", "24000", "Tom has 24,000 bees.", ("{role} has {number} bees.", "24,000")),
        ("{role} spent {money} on a hat.", "Max", "40", "Max spent $40 on a hat.", ("{role} spent ${number} on a hat.", "40")),
        ("{role} saved {money}.", "Mary", "1500", "Mary saved 1,500 dollars.", ("{role} saved {number} dollars.", "1,500")),
        (
            "last year {role} read {number} books.",
            "Emma",
            "12",
            "Last year Emma read 12 books.",
            ("Last year {role} read {number} books.", "12"),
        ),
        ("{role} wrote {{x}} {number} times.", "Jack", "3", "Jack wrote {x} 3 times.", ("{role} wrote {{x}} {number} times.", "3")),
    ],
)
def test_upstream_template_fills_back_to_the_sentence(template, role, number, sentence, expected):
    assert upstream_template(template, role, number, sentence) == expected
    upstream, written = expected
    assert upstream.format(role=role, number=written) == sentence


@pytest.mark.parametrize(
    ("template", "role", "number", "sentence"),
    [
        ("{role} has {number} marbles.", "Ada", "7", "Ada has 8 marbles."),  # another number
        ("{role} has {number} marbles.", "Ada", "7", "David has 7 marbles."),  # another role
        ("{role} has {count} marbles.", "Ada", "7", "Ada has 7 marbles."),  # a field upstream has no name for
        ("{role} has marbles.", "Ada", "7", "Ada has marbles."),  # no number
    ],
)
def test_upstream_template_refuses_what_does_not_fit(template, role, number, sentence):
    with pytest.raises(ValueError):
        upstream_template(template, role, number, sentence)


def test_variants_split_by_steps():
    assert upstream_files.file_of(2) == "GSM-IC_2step.json"
    assert {upstream_files.file_of(n) for n in range(3, 8)} == {"GSM-IC_mstep.json"}
