"""The dataset card: YAML header for the Hub, body from the manifest and cards.json, deterministic."""

from __future__ import annotations

import copy
import dataclasses
import json
import re

import pytest
import yaml
from publish_releases import nested_release, pseudowords_release  # noqa: F401  (fixtures)

from ctxrobust import registry
from ctxrobust.errors import CtxRobustError
from ctxrobust.publish import card
from ctxrobust.publish.card import front_matter, hub_configs, read_manifest, release_licence, render_card, size_category
from ctxrobust.release import Release

EXPECTED_CONFIGS = {
    "gsm-ic": {"variants", "base", "gsm-ic-4k"},
    "misleadqa": {"main", "condition", "audit_sample", "exclusions", "candidates"},
    "pseudowords": {"vocabulary", "contexts"},
}


def bare_manifest(dataset: str, **fields) -> dict:
    """A manifest with no files: what the card says of the sources and settings alone."""
    return {
        "dataset": dataset,
        "version": "1.0.0",
        "builder": {"package_version": "0.1.0", "code_sha256": "0" * 64},
        "config": {},
        "sources": [],
        "files": [],
        "parquet": [],
        "build_notes": {},
        "validators": {},
        **fields,
    }


def header_of(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text[4 : text.index("\n---\n", 3)])


def test_the_release_card_is_render_card_of_its_manifest(pseudowords_release):
    release = Release(pseudowords_release)
    text = (pseudowords_release / "README.md").read_text(encoding="utf-8")
    assert text == render_card(release.manifest, folder=pseudowords_release)
    assert render_card(copy.deepcopy(release.manifest), folder=pseudowords_release) == text  # same manifest and files, same bytes


def test_header_declares_one_config_per_parquet_file(pseudowords_release):
    release = Release(pseudowords_release)
    header = header_of((pseudowords_release / "README.md").read_text(encoding="utf-8"))
    assert header["configs"] == [
        {"config_name": "contexts", "data_files": [{"split": "test", "path": "contexts.parquet"}], "default": True},
        {"config_name": "vocabulary", "data_files": [{"split": "test", "path": "vocabulary.parquet"}]},
    ]
    assert header["configs"] == hub_configs(read_manifest(release.manifest))
    assert header["license"] == "cc0-1.0"
    assert header["language"] == ["en"]
    assert header["pretty_name"].startswith("Pseudowords")
    assert header["task_categories"] and header["tags"]
    assert header["size_categories"] == ["1K<n<10K"]  # 2,000 words + 6 contexts


def test_body_has_counts_fields_checks_notes_limits_and_citation(pseudowords_release):
    manifest = Release(pseudowords_release).manifest
    text = render_card(manifest)
    for entry in manifest["parquet"]:
        assert f"`{entry['sha256']}`" in text
    assert "| `vocabulary` | test | vocabulary.parquet | 2,000 |" in text
    assert "| `zipf` | Its English Zipf frequency" in text  # a field description
    for name in manifest["validators"]:
        assert f"| `{name}` | passed | 0 |" in text
    assert f"{len(manifest['validators'])} of the {len(manifest['validators'])} run when the release was frozen passed" in text
    assert f"`candidates_drawn`: {manifest['build_notes']['vocabulary']['candidates_drawn']}" in text
    assert "| `vocabulary_size` | `2000` |" in text
    assert "## Known limits" in text and "not meant to be naturalistic" in text
    assert "The Illusion of Robustness" in text and "Zhang, Yanzhe and Koyejo, Sanmi and Yang, Diyi" in text
    assert "```bibtex" in text


def test_no_dates_or_times_in_the_card(pseudowords_release):
    text = render_card(Release(pseudowords_release).manifest)
    assert not re.search(r"\b(19|20)\d\d-\d\d-\d\d\b|\b\d\d:\d\d(:\d\d)?\b", text)


def test_failed_checks_sources_and_exclusions_are_shown(nested_release):
    manifest = copy.deepcopy(Release(nested_release).manifest)
    manifest["validators"]["balance"] = {"passed": False, "failures": 3}
    manifest["build_notes"]["kinds_not_built"] = {"WEB": "no corpus"}
    text = render_card(manifest)
    assert "| `balance` | FAILED | 3 |" in text
    assert "1 of the 2 run when the release was frozen passed" in text
    assert "| `fred/STTMINWGNE.csv` | `" + "ab" * 32 + "` |" in text
    assert "public domain" in text
    assert "(build note `excluded`)" in text and "(build note `kinds_not_built`)" in text
    assert "MisleadQA: Diagnosing LLM Failures under Misleading Context" in text
    assert "do not use this dataset as a source of facts" in text


def test_long_note_lists_are_summarised_not_dumped(nested_release):
    manifest = copy.deepcopy(Release(nested_release).manifest)
    manifest["build_notes"]["skipped_unjoined"] = [{"id": f"pool-{i}", "reason": "x"} for i in range(40)]
    text = render_card(manifest)
    assert "`skipped_unjoined`: 40 entries (manifest.json `build_notes.skipped_unjoined`)" in text
    assert "pool-39" not in text


@pytest.mark.parametrize(
    ("dataset", "sources", "user_sources", "expected"),
    [
        ("pseudowords", [], [], "cc0-1.0"),
        ("pseudowords", [], [{"kind": "web_corpus", "name": "docs.jsonl"}], "odc-by"),  # fineweb-edu, ODC-BY
        ("misleadqa", ["fred/STTMINWGNE.csv"], {"ambigdocs": {"file": "a.json", "sha256": "0" * 64}}, "cc-by-sa-4.0"),
        ("gsm-ic", ["gsm8k/train.jsonl", "gsm_ic/gsm8k_validation.jsonl"], [], "mit"),  # GSM8K is MIT
        ("misleadqa", ["fred/STTMINWGNE.csv"], [], "cc-by-sa-4.0"),  # the paper's release licence
        ("misleadqa", ["fred/STTMINWGNE.csv", "situatedqa/temp.train.jsonl"], [], "cc-by-sa-4.0"),
        ("gsm-ic", ["gsm8k/train.jsonl", "ambigdocs/dev.json"], [], "cc-by-sa-4.0"),  # Wikipedia text forces share-alike
    ],
)
def test_licence_follows_the_sources(dataset, sources, user_sources, expected):
    manifest = read_manifest(
        bare_manifest(dataset, sources=[{"name": n, "sha256": "0" * 64} for n in sources], build_notes={"user_sources": user_sources})
    )
    assert release_licence(manifest) == expected
    assert front_matter(manifest)["license"] == expected


def test_user_sources_recorded_as_a_mapping_are_listed_with_their_licence():
    manifest = bare_manifest(
        "misleadqa",
        config={"ambigdocs_path": "/data/ambigdocs.json", "condambigqa_path": None},
        sources=[{"name": "fred/STTMINWGNE.csv", "sha256": "0" * 64}],
        build_notes={"user_sources": {"ambigdocs": {"file": "ambigdocs.json", "sha256": "1" * 64}}},
    )
    text = render_card(manifest)
    assert "| `ambigdocs/` | 1 | AmbigDocs (Lee et al., 2024) | Apache 2.0; its documents are Wikipedia excerpts (CC BY-SA) |" in text
    assert "The entity group comes from RAMDocs" not in text  # the limit applies only when the setting is null
    assert "the 2,000-question CondAmbigQA" in text


def test_size_categories():
    assert [size_category(n) for n in (0, 999, 1000, 9999, 10_000, 58_152, 100_000, 2_000_000)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "1K<n<10K",
        "10K<n<100K",
        "10K<n<100K",
        "100K<n<1M",
        "1M<n<10M",
    ]


def test_card_text_covers_every_dataset_and_its_configs():
    assert set(registry.names()) == set(EXPECTED_CONFIGS)
    shared = card.card_text()
    for dataset, configs in EXPECTED_CONFIGS.items():
        described = card.dataset_text(dataset)
        assert set(described.configs) == configs
        assert described.default_config in configs
        assert described.limits and described.construction and described.description
        assert described.licence in shared.licences
    assert all(shared.licences[s.imposes] for s in shared.sources if s.imposes)


def test_paper_citations_name_the_papers():
    citations = card.card_text().citations
    assert "Large Language Models Can Be Easily Distracted by Irrelevant Context" in citations["shi2023distracted"].bibtex
    assert "MisleadQA: Diagnosing LLM Failures under Misleading Context" in citations["misleadqa"].text
    assert "The Illusion of Robustness" in citations["zhang2026illusion"].bibtex
    for citation in citations.values():
        assert citation.bibtex.count("{") == citation.bibtex.count("}")


def assert_card_text_refused(tmp_path, monkeypatch, edit, message: str) -> None:
    """Card text changed by `edit` (a function of the parsed cards.json) is refused with `message`."""
    broken = tmp_path / "cards.json"
    data = json.loads(card.CARD_TEXT.read_text(encoding="utf-8"))
    edit(data)
    broken.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(card, "CARD_TEXT", broken)
    card.card_text.cache_clear()
    try:
        with pytest.raises(CtxRobustError, match=message):
            card.card_text()
    finally:
        card.card_text.cache_clear()


def assert_dataset_text_refused(monkeypatch, dataset: str, edit, message: str) -> None:
    """A dataset's card.json changed by `edit` (a function of the parsed text) is refused with `message`."""
    declared = registry.get(dataset)
    edited = copy.deepcopy(declared.card_text)
    edit(edited)
    replaced = dataclasses.replace(declared)
    replaced.__dict__["card_text"] = edited  # the cached card text, as if read from the changed file
    monkeypatch.setitem(registry._DATASETS, dataset, replaced)
    with pytest.raises(CtxRobustError, match=message):
        card.dataset_text(dataset)


def test_unusable_card_text_is_one_clear_error(tmp_path, monkeypatch):
    assert_dataset_text_refused(
        monkeypatch,
        "gsm-ic",
        lambda data: data.update(licence="wtfpl"),
        r"card\.json: card text for gsm-ic: unknown licence wtfpl; fix the file",
    )
    assert_dataset_text_refused(
        monkeypatch, "gsm-ic", lambda data: data.pop("summary"), r"card\.json: unusable card text for gsm-ic \(summary"
    )
    assert_card_text_refused(
        tmp_path,
        monkeypatch,
        lambda data: data["licence_precedence"].pop(),
        r"cards\.json: unusable card text .*licence_precedence must list every licence",
    )


def test_a_dataset_without_card_text_gets_a_bare_card_and_no_licence_claim(nested_release, monkeypatch):
    monkeypatch.setitem(registry._DATASETS, "toy", dataclasses.replace(registry.get("pseudowords"), name="toy", card="", schemas=()))
    manifest = copy.deepcopy(Release(nested_release).manifest)
    manifest["dataset"] = "toy"
    text = render_card(manifest)
    header = header_of(text)
    assert header["license"] == "other" and header["pretty_name"] == "toy"
    assert [c["config_name"] for c in header["configs"]] == ["audit_sample", "main"]  # condition is empty
    assert "No licence is stated for this dataset" in text
    assert "| `balance` | passed | 0 |" in text
    citations = text[text.index("## Citation") :]
    assert "@misc{usdol_fred," in citations and "MisleadQA" not in citations  # its FRED source is cited, nothing else


def test_an_empty_file_is_carried_but_not_declared_and_said_to_be_empty(nested_release):
    """`datasets.load_dataset` cannot load an empty split, so no configuration is declared for one."""
    text = (nested_release / "README.md").read_text(encoding="utf-8")
    assert "condition" not in [c["config_name"] for c in header_of(text)["configs"]]
    assert (
        "| `condition` | test | condition.parquet | 0 |" in text
        and "Empty in this build: carried as files, not declared as a configuration." in text
    )
    assert (
        "`condition` has no rows in this build: its files are carried with their columns, but it is not declared as a configuration."
        in text
    )
    assert "`condition` has no rows in this build, so it is not declared as a configuration" in text
    assert "### `condition`" in text  # its fields are listed like those of any configuration


def test_a_release_is_cited_with_the_sources_it_was_built_from():
    manifest = bare_manifest(
        "misleadqa",
        sources=[{"name": "fred/STTMINWGNE.csv", "sha256": "0" * 64}, {"name": "situatedqa/temp.dev.jsonl", "sha256": "1" * 64}],
        build_notes={"user_sources": {"ambigdocs": {"file": "dev.json", "sha256": "2" * 64}}},
    )
    text = render_card(manifest)
    citations = text[text.index("## Citation") :]
    keys = re.findall(r"^@\w+\{([^,]+),", citations, flags=re.M)
    assert keys == ["misleadqa", "usdol_fred", "zhang2021situatedqa", "lee2024ambigdocs"]  # no CondAmbigQA: not used
    gsm_ic = render_card(
        bare_manifest(
            "gsm-ic",
            sources=[{"name": "gsm8k/train.jsonl", "sha256": "0" * 64}, {"name": "gsm_ic/gsm8k_validation.jsonl", "sha256": "1" * 64}],
        )
    )
    assert re.findall(r"^@\w+\{([^,]+),", gsm_ic, flags=re.M) == ["shi2023distracted", "cobbe2021gsm8k"]


def test_the_licence_section_gives_the_reason_and_every_source_licence():
    text = render_card(
        bare_manifest(
            "misleadqa",
            sources=[{"name": "fred/STTMINWGNE.csv", "sha256": "0" * 64}],
            build_notes={"user_sources": {"condambigqa": {"file": "c.jsonl", "sha256": "1" * 64}}},
        )
    )
    licence = text[text.index("## Licence") : text.index("## Known limits")]
    assert "distributed under [CC BY-SA 4.0](https://creativecommons.org/licenses/by-sa/4.0/)" in licence
    assert "Because some contexts come from Wikipedia, we release the dataset under CC BY-SA 4.0" in licence  # the paper's reason
    assert "- `fred/`: public domain (U.S. Department of Labor data)" in licence
    assert (
        "- `condambigqa/`: no licence stated in the repository (the MisleadQA paper calls it MIT); its contexts are Wikipedia passages (CC BY-SA)"
        in licence
    )
    assert "- none" in render_card(bare_manifest("pseudowords"))  # generated from a seed: no source to name


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.pop("version"), r"manifest\.json: version: Field required"),
        (lambda m: m["parquet"][0].pop("from"), r"manifest\.json: parquet\.0\.from: Field required"),
        (lambda m: m["validators"].update(balance="yes"), r"manifest\.json: validators\.balance: Input should be a valid dictionary"),
    ],
)
def test_a_malformed_manifest_is_one_clear_error(nested_release, change, message):
    manifest = copy.deepcopy(Release(nested_release).manifest)
    change(manifest)
    with pytest.raises(CtxRobustError, match=message + ".*rebuild it$"):
        render_card(manifest)


def _misleadqa_card(groups: dict[str, int] | None, sources: list[str], user_sources: dict, main_rows: int) -> str:
    notes = {"user_sources": user_sources}
    if groups is not None:
        notes["groups"] = {key: {"requested": 200, "items": n} for key, n in groups.items()}
    return render_card(
        bare_manifest(
            "misleadqa",
            config={"ambigdocs_path": "/data/dev.json" if "ambigdocs" in user_sources else None, "condambigqa_path": None},
            sources=[{"name": n, "sha256": "0" * 64} for n in sources],
            parquet=[
                {"name": "main.parquet", "sha256": "1" * 64, "bytes": 1, "rows": main_rows, "from": "main.jsonl"},
                {"name": "condition.parquet", "sha256": "2" * 64, "bytes": 1, "rows": 0, "from": "condition.jsonl"},
            ],
            build_notes=notes,
        )
    )


def _row(text: str, config: str) -> str:
    (row,) = [line for line in text.splitlines() if line.startswith(f"| `{config}` | test |")]
    return row


PINNED = ["fred/STTMINWGNE.csv", "situatedqa/temp.train.jsonl"]


def test_the_main_row_names_only_the_sources_the_build_used():
    text = _misleadqa_card({"fred/location": 200, "fred/time": 200, "situatedqa/location": 160, "situatedqa/time": 150}, PINNED, {}, 710)
    row = _row(text, "main")
    assert row.endswith(
        "| The main split: the items to evaluate, with option positions balanced within every source-scope group. "
        "In this build: 400 items from FRED and 310 from SituatedQA; none from AmbigDocs or RAMDocs. |"
    )
    assert "AmbigDocs when" not in row and "SituatedQA and AmbigDocs" not in row
    assert _row(text, "condition").endswith("Empty in this build: carried as files, not declared as a configuration. |")  # names no source


def test_the_main_row_names_ambigdocs_when_it_gave_items():
    groups = {"ambigdocs/entity": 5, "fred/location": 200, "fred/time": 200, "situatedqa/location": 160, "situatedqa/time": 150}
    row = _row(_misleadqa_card(groups, PINNED, {"ambigdocs": {"file": "dev.json", "sha256": "3" * 64}}, 715), "main")
    assert row.endswith("In this build: 400 items from FRED, 310 from SituatedQA and 5 from AmbigDocs; none from RAMDocs. |")


def test_a_source_given_but_giving_no_items_is_not_named_as_a_source_of_items():
    groups = {"ambigdocs/entity": 0, "fred/location": 200, "fred/time": 200, "situatedqa/time": 1}
    row = _row(_misleadqa_card(groups, PINNED, {"ambigdocs": {"file": "dev.json", "sha256": "3" * 64}}, 401), "main")
    assert row.endswith("In this build: 400 items from FRED and 1 from SituatedQA; none from AmbigDocs or RAMDocs. |")


def test_without_item_counts_the_row_names_the_sources_the_build_used(nested_release):
    row = _row(_misleadqa_card(None, ["fred/STTMINWGNE.csv"], {}, 7), "main")
    assert row.endswith("In this build: items from FRED; none from SituatedQA, AmbigDocs or RAMDocs. |")
    assert _row((nested_release / "README.md").read_text(encoding="utf-8"), "main").endswith(
        "In this build: items from FRED; none from SituatedQA, AmbigDocs or RAMDocs. |"
    )


def test_config_sources_must_be_sources_the_card_text_describes(monkeypatch):
    assert_dataset_text_refused(
        monkeypatch,
        "misleadqa",
        lambda data: data["configs"]["main"]["sources"].update(wikipedia="Wikipedia"),
        r"card text for misleadqa: config main: source wikipedia is not one of `sources`",
    )


def test_the_card_reads_in_the_order_a_hub_visitor_needs(pseudowords_release, tmp_path, capsys):
    """Summary, loading, one example row per configuration and how to evaluate come first; the check count is the
    one `validate` runs; build settings and notes come after the checks, limits and licence."""
    from ctxrobust.canonical import iter_jsonl
    from ctxrobust.cli import main

    manifest = Release(pseudowords_release).manifest
    text = (pseudowords_release / "README.md").read_text(encoding="utf-8")
    order = [
        "## Loading",
        "## Configurations",
        "## Example rows",
        "## Evaluating a model",
        "## About the data",
        "## Fields",
        "## Validation",
        "## Licence",
        "## Known limits",
        "## How it was built",
        "### Build notes",
    ]
    positions = [text.index(heading) for heading in order]
    assert positions == sorted(positions)
    for entry in manifest["parquet"]:
        _, first = next(iter_jsonl(pseudowords_release / entry["from"]))
        assert f'"id": "{first["id"]}"' in text.split("## Example rows", 1)[1].split("## Evaluating", 1)[0]
    assert "pip install" not in text  # ctxrobust is not on the package index: installed from a clone
    assert "from a clone of the ctxrobust repository (Python 3.10 or later): `make install`, then `source .venv/bin/activate`" in text
    assert "ctxrobust prompts hf://datasets/ORG/NAME@v0.0.1 --benchmark benchmark.jsonl -o requests.jsonl" in text
    assert "ctxrobust score hf://datasets/ORG/NAME@v0.0.1 predictions.jsonl --benchmark benchmark.jsonl -o report.md" in text
    assert main(["validate", str(pseudowords_release)]) == 0
    ran = int(re.search(r"pseudowords 0\.0\.1: (\d+) checks, ok", capsys.readouterr().out).group(1))
    assert f"`ctxrobust validate` runs {ran} checks on this release" in text
    assert "the JSON Lines files this repository does not carry" not in text
    staged = render_card(manifest, repo="my-org/pw", folder=pseudowords_release)
    assert 'load_dataset("my-org/pw", "contexts", split="test", revision="v0.0.1")' in staged and "ORG/NAME" not in staged
    assert "ctxrobust validate hf://datasets/my-org/pw@v0.0.1" in staged
