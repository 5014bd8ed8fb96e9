"""Every release, staged for the Hub, loads with `datasets` and mlcroissant: every config, every row, equal to the JSONL."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import datasets
import mlcroissant as mlc
import pyarrow.parquet as pq
import pytest
from croissant_records import assert_records_match
from paths import FIXTURES
from publish_releases import nested_release, pseudowords_release  # noqa: F401  (fixtures)

from ctxrobust.build import build_release
from ctxrobust.publish.card import config_fields, dataset_text, read_manifest
from ctxrobust.publish.hub import stage
from ctxrobust.release import Release

# small builds: a few base problems / items per group, the paper's structure otherwise
GSM_IC_SMALL = {"n_two_step": 3, "n_more_steps": 2, "n_variants": 80, "eval_size": 20}
MISLEADQA_SMALL = {
    "fred_time_n": 8,
    "fred_location_n": 8,
    "situatedqa_time_n": 8,
    "situatedqa_location_n": 8,
    "audit_sizes": {"fred/time": 2, "fred/location": 2, "situatedqa/time": 2, "situatedqa/location": 2, "ambigdocs/entity": 1},
    # the project-written AmbigDocs and CondAmbigQA samples: every split has rows, and the Wikipedia-text sources are in the card
    "ambigdocs_path": str(FIXTURES / "ambigdocs_sample.jsonl"),
    "condambigqa_path": str(FIXTURES / "condambigqa_sample.jsonl"),
    "keep_unreviewed": True,  # the samples' candidates have no decision in the project's review: kept, counted as unreviewed
}
EXPECTED_CONFIGS = {
    "pseudowords": {"vocabulary", "contexts"},
    "gsm-ic": {"variants", "base", "gsm-ic-4k"},
    "misleadqa": {"main", "condition", "audit_sample", "exclusions", "candidates"},
}
# the requirement's licences: GSM8K is MIT; MisleadQA with AmbigDocs (Wikipedia text) is CC BY-SA 4.0; pseudowords are generated
EXPECTED_LICENCE = {"pseudowords": "cc0-1.0", "gsm-ic": "mit", "misleadqa": "cc-by-sa-4.0"}


@pytest.fixture(scope="session")
def gsm_ic_release(store, tmp_path_factory) -> Path:
    return build_release("gsm-ic", "0.0.1", GSM_IC_SMALL, tmp_path_factory.mktemp("gsm-ic"), store).path


@pytest.fixture(scope="session")
def misleadqa_release(store, tmp_path_factory) -> Path:
    return build_release("misleadqa", "0.0.1", MISLEADQA_SMALL, tmp_path_factory.mktemp("misleadqa"), store).path


@pytest.fixture(
    scope="module",
    params=["pseudowords", pytest.param("gsm-ic", marks=pytest.mark.sources), pytest.param("misleadqa", marks=pytest.mark.sources)],
)
def staged(request, tmp_path_factory) -> tuple[Release, Path]:
    release = Release(request.getfixturevalue(f"{request.param.replace('-', '_')}_release"))
    out = tmp_path_factory.mktemp("staged") / release.dataset
    stage(release, f"my-org/{release.dataset}", out, "https://huggingface.co")
    return release, out


def test_every_config_loads_with_datasets_equal_to_the_jsonl(staged, tmp_path):
    release, folder = staged
    manifest = read_manifest(release.manifest)
    assert {entry.config for entry in manifest.published} == EXPECTED_CONFIGS[release.dataset]
    for entry in manifest.published:
        assert entry.rows > 0 and entry.rows == next(f.rows for f in manifest.files if f.name == entry.copy_of)
        loaded = datasets.load_dataset(str(folder), entry.config, cache_dir=str(tmp_path / "cache"))
        assert list(loaded) == ["test"]
        split = loaded["test"]
        assert split.num_rows == entry.rows
        for number, (got, want) in enumerate(zip(split, release.rows(entry.copy_of), strict=True), start=1):
            assert got == want, f"{entry.name} row {number} ({want.get('id')}) differs from {entry.copy_of}"


def test_every_record_set_iterates_in_mlcroissant(staged):
    release, folder = staged
    manifest = read_manifest(release.manifest)
    document = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    dataset = mlc.Dataset(jsonld=str(folder / "croissant.json"))
    assert {rs.uuid for rs in dataset.metadata.record_sets} == EXPECTED_CONFIGS[release.dataset]
    for entry in manifest.published:
        records = list(dataset.records(entry.config))
        assert len(records) == entry.rows
        assert assert_records_match(document, entry.config, records, release.rows(entry.copy_of)) >= entry.rows


def test_every_column_has_a_description(staged):
    release, folder = staged
    text = dataset_text(release.dataset)
    for entry in read_manifest(release.manifest).published:
        columns = pq.read_schema(folder / entry.name).names
        described = config_fields(text, entry.config)
        assert set(columns) <= set(described), f"{release.dataset} {entry.name}: no description for {sorted(set(columns) - set(described))}"


def test_the_card_header_declares_every_staged_parquet_file_and_the_licence(staged):
    release, folder = staged
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert f"\nlicense: {EXPECTED_LICENCE[release.dataset]}\n" in card.split("\n---\n", 1)[0]
    parquet = sorted(p.name for p in folder.glob("*.parquet"))
    assert parquet == sorted(entry.name for entry in read_manifest(release.manifest).published)
    for name in parquet:
        assert f"    path: {name}\n" in card


def test_an_empty_file_is_carried_but_no_configuration_load_dataset_cannot_load(nested_release, tmp_path):
    """datasets refuses to materialise an empty split ("corresponds to no data"), so an empty file is published
    as files with their columns but not declared as a configuration; every declared one loads."""
    folder = tmp_path / "staged"
    stage(Release(nested_release), "my-org/mq", folder, "https://huggingface.co")
    declared = datasets.get_dataset_config_names(str(folder))
    assert sorted(declared) == ["audit_sample", "main"]
    for config in declared:
        assert datasets.load_dataset(str(folder), config, split="test", cache_dir=str(tmp_path / "c")).num_rows > 0
    assert pq.read_schema(folder / "condition.parquet").names == pq.read_schema(folder / "main.parquet").names
    assert pq.read_metadata(folder / "condition.parquet").num_rows == 0 and (folder / "condition.jsonl").exists()
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "`condition` has no rows in this build, so it is not declared as a configuration" in card
    assert list(mlc.Dataset(jsonld=str(folder / "croissant.json")).records("condition")) == []


@pytest.fixture(autouse=True)
def _quiet():
    logging.getLogger("absl").setLevel(logging.ERROR)
    datasets.disable_progress_bars()
