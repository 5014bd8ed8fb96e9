"""Every release, staged for the Hub, loads with `datasets` and mlcroissant: every config, every row, equal to the JSONL."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import datasets
import mlcroissant as mlc
import pyarrow.parquet as pq
import pytest

from ctxrobust.card import config_fields, config_name, dataset_text, published_files
from ctxrobust.hub import stage
from ctxrobust.release import Release, build_release
from croissant_records import assert_records_match
from publish_releases import pseudowords_release  # noqa: F401  (fixture)

# small builds: a few base problems / items per group, the paper's structure otherwise
GSM_IC_SMALL = {"n_two_step": 3, "n_more_steps": 2, "n_variants": 80, "eval_size": 20}
MISLEADQA_SMALL = {
    "fred_time_n": 8, "fred_location_n": 8, "situatedqa_time_n": 8, "situatedqa_location_n": 8,
    "audit_sizes": {"fred/time": 2, "fred/location": 2, "situatedqa/time": 2, "situatedqa/location": 2},
}
EXPECTED_CONFIGS = {
    "pseudowords": {"vocabulary", "contexts"},
    "gsm-ic": {"variants", "base", "gsm-ic-4k"},
    "misleadqa": {"main", "audit_sample", "exclusions"},  # condition is empty without a CondAmbigQA file
}


@pytest.fixture(scope="session")
def gsm_ic_release(store, tmp_path_factory) -> Path:
    return build_release("gsm-ic", "0.0.1", GSM_IC_SMALL, tmp_path_factory.mktemp("gsm-ic"), store).path


@pytest.fixture(scope="session")
def misleadqa_release(store, tmp_path_factory) -> Path:
    return build_release("misleadqa", "0.0.1", MISLEADQA_SMALL, tmp_path_factory.mktemp("misleadqa"), store).path


@pytest.fixture(scope="module", params=["pseudowords", "gsm-ic", "misleadqa"])
def staged(request, tmp_path_factory) -> tuple[Release, Path]:
    release = Release(request.getfixturevalue(f"{request.param.replace('-', '_')}_release"))
    out = tmp_path_factory.mktemp("staged") / release.dataset
    stage(release, f"my-org/{release.dataset}", out, "https://huggingface.co")
    return release, out


def test_every_config_loads_with_datasets_equal_to_the_jsonl(staged, tmp_path):
    release, folder = staged
    published = published_files(release.manifest)
    assert {config_name(p["name"]) for p in published} == EXPECTED_CONFIGS[release.dataset]
    for entry in published:
        name = config_name(entry["name"])
        loaded = datasets.load_dataset(str(folder), name, cache_dir=str(tmp_path / "cache"))
        assert list(loaded) == ["test"]
        split = loaded["test"]
        assert split.num_rows == entry["rows"] == next(f["rows"] for f in release.files if f["name"] == entry["from"])
        expected = release.rows(entry["from"])
        for number, (got, want) in enumerate(zip(split, expected), start=1):
            assert got == want, f"{entry['name']} row {number} ({want.get('id')}) differs from {entry['from']}"


def test_every_record_set_iterates_in_mlcroissant(staged):
    release, folder = staged
    document = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    dataset = mlc.Dataset(jsonld=str(folder / "croissant.json"))
    assert {rs.uuid for rs in dataset.metadata.record_sets} == {config_name(p["name"]) for p in published_files(release.manifest)}
    for entry in published_files(release.manifest):
        name = config_name(entry["name"])
        records = list(dataset.records(name))
        assert len(records) == entry["rows"]
        assert assert_records_match(document, name, records, release.rows(entry["from"])) >= entry["rows"]


def test_every_column_has_a_description(staged):
    release, folder = staged
    text = dataset_text(release.dataset)
    for entry in published_files(release.manifest):
        columns = pq.read_schema(folder / entry["name"]).names
        described = config_fields(text, config_name(entry["name"]))
        assert set(columns) <= set(described), f"{release.dataset} {entry['name']}: no description for {sorted(set(columns) - set(described))}"


def test_the_card_header_matches_the_published_files(staged):
    release, folder = staged
    card = (folder / "README.md").read_text(encoding="utf-8")
    for entry in published_files(release.manifest):
        assert f"    path: {entry['name']}\n" in card
    for entry in release.manifest["parquet"]:
        if not entry["rows"]:
            assert not (folder / entry["name"]).exists()
            assert f"`{config_name(entry['name'])}` has no rows in this build" in card


@pytest.fixture(autouse=True)
def _quiet():
    logging.getLogger("absl").setLevel(logging.ERROR)
    datasets.disable_progress_bars()
