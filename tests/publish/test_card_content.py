"""What each dataset's card tells a reader: counts that keep items to evaluate apart from exclusions and candidates,
one literal predictions line with real ids of the release and the field that holds the answer, the flags `score`
needs, installing from a clone, loading from the Hub and from a local folder, and what GSM-IC's extra files are."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys

import jsonschema
import pytest
from publish_releases import nested_release, pseudowords_release, write_release  # noqa: F401  (fixtures)

from ctxrobust import registry
from ctxrobust.canonical import iter_jsonl
from ctxrobust.errors import CtxRobustError
from ctxrobust.publish import card
from ctxrobust.publish.card import render_card
from ctxrobust.release import Release
from ctxrobust.schemas import load_schema

SHA = "0" * 64


def manifest_with(dataset: str, published: dict[str, int], **fields) -> dict:
    """A manifest whose Parquet files have the given row counts (config -> rows), and no folder to read rows from."""
    return {
        "dataset": dataset,
        "version": "1.0.0",
        "builder": {"package_version": "0.1.0", "code_sha256": SHA},
        "config": {},
        "sources": [],
        "files": [],
        "parquet": [
            {"name": f"{name}.parquet", "sha256": SHA, "bytes": 1, "rows": rows, "from": f"{name}.jsonl"}
            for name, rows in published.items()
        ],
        "build_notes": {},
        "validators": {},
        **fields,
    }


def section(text: str, heading: str) -> str:
    """The text of a `## heading` section, up to the next `## ` heading."""
    start = text.index(f"## {heading}\n")
    following = text.find("\n## ", start + 1)
    return text[start : following if following >= 0 else len(text)]


def overview(text: str) -> str:
    return text[text.index("|  |  |") : text.index("## Loading")]


def predictions_line(text: str) -> dict:
    """The card's literal predictions line: the JSON block after 'A predictions line:'."""
    evaluating = section(text, "Evaluating a model")
    block = re.search(r"A predictions line:\n\n```json\n(.*)\n```", evaluating)
    assert block, "the card shows no predictions line"
    assert "\n" not in block.group(1)  # one line, as JSON Lines needs
    return json.loads(block.group(1))


def assert_valid_prediction(dataset: str, row: dict) -> None:
    jsonschema.validate(row, load_schema(f"predictions.{dataset}"))


# -- counts --------------------------------------------------------------------------------------------------


def test_misleadqa_counts_keep_items_apart_from_exclusions_and_candidates():
    text = render_card(
        manifest_with("misleadqa", {"main": 464, "condition": 0, "audit_sample": 92, "exclusions": 23_631, "candidates": 587})
    )
    top = overview(text)
    assert "24,774" not in text and "| rows |" not in top  # no total adding exclusions to items
    lines = [line for line in top.splitlines() if line.startswith("| `")]
    assert lines[0] == "| `main` | 464 items to evaluate |"  # the default configuration first
    assert (
        "| `exclusions` | 23,631 exclusions: candidates (and source files that yield none) left out, each with its reason; not items to evaluate |"
        in lines
    )
    assert "| `candidates` | 587 candidates before adjudication, `main`'s items among them: not further items to evaluate |" in lines
    assert "| `audit_sample` | 92 ids of `main` items sampled for the human audit: not further items |" in lines
    assert "| `condition` | none in this build (carried as files, not declared as a configuration) |" in lines


def test_gsm_ic_and_pseudowords_counts_say_what_the_rows_are():
    gsm_ic = overview(render_card(manifest_with("gsm-ic", {"variants": 58_052, "base": 100, "gsm-ic-4k": 4000})))
    assert "| `variants` | 58,052 variants to evaluate |" in gsm_ic
    assert "| `base` | 100 base problems to evaluate as they are" in gsm_ic
    assert "| `gsm-ic-4k` | 4,000 variant ids of `variants`: the GSM-IC-4K sample (Section 5), not further items |" in gsm_ic
    pseudowords = overview(render_card(manifest_with("pseudowords", {"vocabulary": 1, "contexts": 80})))
    assert "| `contexts` | 80 contexts to prepend to the questions of your benchmark (the release holds no questions) |" in pseudowords
    assert "| `vocabulary` | 1 pseudo-word, the vocabulary CHA contexts are drawn from |" in pseudowords  # singular for one row


def test_every_configuration_says_what_its_rows_are():
    for dataset in registry.names():
        for name, described in card.dataset_text(dataset).configs.items():
            assert described.unit != ("row", "rows") and described.counted_as, f"{dataset} {name}: its rows are not named"


def test_candidates_are_counted_from_their_own_file_not_from_the_items(tmp_path):
    """The build notes' groups count the items of main; the candidates row counts the candidates file itself."""
    row = {"id": "c", "source": "fred"}
    folder = write_release(
        tmp_path,
        "misleadqa",
        "1.0.0",
        {
            "main.jsonl": [dict(row, id=f"fred-{i}") for i in range(3)],
            "candidates.jsonl": [dict(row, id=f"fred-{i}") for i in range(5)] + [{"id": "sq-0", "source": "situatedqa"}],
        },
        notes={"groups": {"fred/time": {"requested": 3, "items": 3}}},
        sources=[{"name": "fred/STTMINWGNE.csv", "sha256": SHA}, {"name": "situatedqa/temp.train.jsonl", "sha256": SHA}],
    )
    text = render_card(Release(folder).manifest, folder=folder)
    (candidates,) = [line for line in text.splitlines() if line.startswith("| `candidates` | test |")]
    assert candidates.endswith(
        "In this build: 5 candidates from FRED and 1 from SituatedQA; none from AmbigDocs, CondAmbigQA or RAMDocs. |"
    )
    (main,) = [line for line in text.splitlines() if line.startswith("| `main` | test |")]
    assert main.endswith("In this build: 3 items from FRED; none from SituatedQA, AmbigDocs or RAMDocs. |")
    unread = render_card(Release(folder).manifest)  # no folder: the groups count main only, so candidates get no count
    (candidates,) = [line for line in unread.splitlines() if line.startswith("| `candidates` | test |")]
    assert candidates.endswith("In this build: candidates from FRED and SituatedQA; none from AmbigDocs, CondAmbigQA or RAMDocs. |")


# -- the predictions line ------------------------------------------------------------------------------------


def test_the_pseudowords_card_shows_a_predictions_line_with_a_context_of_the_release(pseudowords_release):
    text = (pseudowords_release / "README.md").read_text(encoding="utf-8")
    _, first = next(iter_jsonl(pseudowords_release / "contexts.jsonl"))
    row = predictions_line(text)
    assert row == {"model": "my-model", "id": "q1", "context": first["id"], "trial": 0, "response": "Answer: C"}
    assert_valid_prediction("pseudowords", row)
    evaluating = section(text, "Evaluating a model")
    assert "The answer goes in `response`" in evaluating
    assert "`id` is the id of a question of your benchmark" in evaluating
    # score grades `response` rows against the benchmark, so its command carries --benchmark, as prompts does
    assert "ctxrobust score hf://datasets/ORG/NAME@v0.0.1 predictions.jsonl --benchmark benchmark.jsonl -o report.md" in evaluating
    assert "ctxrobust prompts hf://datasets/ORG/NAME@v0.0.1 --benchmark benchmark.jsonl -o requests.jsonl" in evaluating
    assert '`benchmark.jsonl` is your benchmark, one `{"id", "question", "options"?, "answer"}` per line' in evaluating


def test_the_gsm_ic_card_shows_a_variant_id_and_its_answer(tmp_path):
    variants = [
        {"id": "pool-0007-v0001", "base_id": "pool-0007", "answer": "12", "n_steps": 2},
        {"id": "pool-0007-v0002", "base_id": "pool-0007", "answer": "12", "n_steps": 2},
    ]
    folder = write_release(
        tmp_path,
        "gsm-ic",
        "1.0.0",
        {"variants.jsonl": variants, "base.jsonl": [{"id": "pool-0007", "answer": "12"}], "gsm-ic-4k.jsonl": [{"id": "pool-0007-v0002"}]},
    )
    text = render_card(Release(folder).manifest, folder=folder)
    row = predictions_line(text)
    assert row == {"model": "my-model", "id": "pool-0007-v0001", "response": "... The answer is 12."}
    assert_valid_prediction("gsm-ic", row)
    evaluating = section(text, "Evaluating a model")
    assert "The answer goes in `response`" in evaluating and "A row may give `answer` instead" in evaluating
    assert "A predictions row is a JSON object with `model`, `id` and either `response` or `answer`" in evaluating
    assert "ctxrobust score hf://datasets/ORG/NAME@v1.0.0 predictions.jsonl -o report.md" in evaluating  # no flag needed


def test_the_misleadqa_card_shows_an_item_id_a_condition_and_a_letter(nested_release):
    text = render_card(Release(nested_release).manifest, folder=nested_release)
    _, first = next(iter_jsonl(nested_release / "main.jsonl"))
    row = predictions_line(text)
    assert row == {"model": "my-model", "id": first["id"], "condition": "S", "response": "B"}
    assert_valid_prediction("misleadqa", row)
    evaluating = section(text, "Evaluating a model")
    assert "The answer goes in `response`" in evaluating and "single letter A-E" in evaluating
    assert "A predictions row is a JSON object with `model`, `id`, `condition` and `response`" in evaluating


def test_without_a_folder_the_line_names_what_goes_where():
    row = predictions_line(render_card(manifest_with("gsm-ic", {"variants": 2})))
    assert row["id"] == "<id of a variants row>" and row["response"] == "... The answer is <answer of a variants row>."


def test_every_dataset_card_names_the_field_that_holds_the_answer():
    for dataset in registry.names():
        predictions = card.dataset_text(dataset).predictions
        assert predictions is not None, dataset
        assert predictions.answer.startswith("The answer goes in `")
        field = re.match(r"The answer goes in `(\w+)`", predictions.answer).group(1)
        assert field in predictions.example  # the example line holds the field the text names
        assert field in load_schema(f"predictions.{dataset}")["properties"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda data: data["predictions"].update(config="nowhere"), r"predictions: config nowhere is not one of its configs"),
        (
            lambda data: data["predictions"]["example"].update(id="{nonexistent}"),
            r"predictions: \{nonexistent\} is not a field of config variants",
        ),
    ],
)
def test_a_predictions_example_must_refer_to_the_datasets_own_fields(monkeypatch, edit, message):
    declared = registry.get("gsm-ic")
    edited = copy.deepcopy(declared.card_text)
    edit(edited)
    replaced = dataclasses.replace(declared)
    replaced.__dict__["card_text"] = edited
    monkeypatch.setitem(registry._DATASETS, "gsm-ic", replaced)
    with pytest.raises(CtxRobustError, match=message):
        card.dataset_text("gsm-ic")


# -- installing and loading ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", ["gsm-ic", "misleadqa", "pseudowords"])
def test_install_from_a_clone_not_from_the_package_index(dataset):
    evaluating = section(render_card(manifest_with(dataset, {card.dataset_text(dataset).default_config: 1})), "Evaluating a model")
    assert "pip install" not in evaluating and "git clone" not in evaluating
    assert "from a clone of the ctxrobust repository (Python 3.10 or later): `make install`, then `source .venv/bin/activate`" in evaluating
    assert "\nmake install " in evaluating and "\nsource .venv/bin/activate " in evaluating


@pytest.mark.parametrize(("dataset", "config"), [("gsm-ic", "variants"), ("misleadqa", "main"), ("pseudowords", "contexts")])
def test_loading_shows_the_hub_and_a_local_folder(dataset, config):
    loading = section(render_card(manifest_with(dataset, {config: 1}), repo=f"my-org/{dataset}"), "Loading")
    assert f'load_dataset("my-org/{dataset}", "{config}", split="test", revision="v1.0.0")' in loading
    assert f'local = load_dataset("releases/{dataset}/1.0.0", "{config}", split="test")' in loading


def test_the_local_loading_line_loads_the_release(pseudowords_release, tmp_path):
    """The card's own local line, run with `datasets` where `make release` would have put the release."""
    work = tmp_path / "clone"
    shutil.copytree(pseudowords_release, work / "releases" / "pseudowords" / "0.0.1")
    text = (work / "releases" / "pseudowords" / "0.0.1" / "README.md").read_text(encoding="utf-8")
    (line,) = [line for line in section(text, "Loading").splitlines() if line.startswith("local = load_dataset(")]
    code = f"from datasets import load_dataset\n{line}\nprint(len(local), local[0]['id'])\n"
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    _, first = next(iter_jsonl(pseudowords_release / "contexts.jsonl"))
    rows = next(f["rows"] for f in Release(pseudowords_release).manifest["files"] if f["name"] == "contexts.jsonl")
    assert run.stdout.split()[-2:] == [str(rows), first["id"]]


def test_croissant_is_named_only_where_the_folder_has_it(pseudowords_release):
    """A built release has no croissant.json; `ctxrobust push` stages one beside the card it writes for the Hub."""
    manifest = Release(pseudowords_release).manifest
    built = render_card(manifest, folder=pseudowords_release)
    assert "`ctxrobust push` adds `croissant.json`" in built and "`manifest.json` and `croissant.json`" not in built
    staged = render_card(manifest, repo="my-org/pw", folder=pseudowords_release)
    assert "`croissant.json` describes every file" in staged and "the card, `manifest.json` and `croissant.json`" in staged


# -- GSM-IC's extra files -------------------------------------------------------------------------------------


def test_gsm_ic_extra_files_are_said_to_be_this_releases_variants_in_the_upstream_format():
    extra = [
        {"name": name, "sha256": SHA, "bytes": 1, "format": "json", "description": "variants", "rows": 1, "from": "variants.jsonl"}
        for name in ("GSM-IC_2step.json", "GSM-IC_mstep.json")
    ]
    text = render_card(manifest_with("gsm-ic", {"variants": 2, "base": 1}, extra_files=extra))
    other = section(text, "Other files")
    assert "`GSM-IC_2step.json` and `GSM-IC_mstep.json` are not the GSM-IC authors' files" in other
    assert "they are this release's own variants" in other and "in the file format of the authors' files of the same names" in other
    limits = section(text, "Known limits")
    assert "are not part of the release" not in limits  # the files are in the release: what is not is the authors' data
    assert (
        "The GSM-IC authors' own files are not in this release. `GSM-IC_2step.json` and `GSM-IC_mstep.json` here hold this release's variants"
        in limits
    )
    verifying = section(text, "Verifying")
    assert "the canonical JSON Lines files they copy, the other files, the card and `manifest.json`" in verifying
