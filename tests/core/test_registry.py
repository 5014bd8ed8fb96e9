"""The dataset registry: every dataset declares every part, and a dataset defined only here is
built, validated, prompted and scored through the real command line (docs/architecture.md,
"Adding a dataset")."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from ctxrobust import cli, registry
from ctxrobust.builders.base import BuildConfig, Builder
from ctxrobust.publish.card import dataset_text
from ctxrobust.schemas import load_schema
from ctxrobust.sources.lock import load_lock


@pytest.mark.parametrize("name", ["gsm-ic", "misleadqa", "pseudowords"])
def test_every_dataset_declares_every_part(name):
    dataset = registry.get(name)
    builder = dataset.builder_cls
    assert issubclass(builder, Builder) and builder.dataset == name and issubclass(builder.Config, BuildConfig)
    for part in ("prompt_options", "score_options"):
        assert issubclass(dataset.load(part), BaseModel)
        assert all(info.description for info in dataset.load(part).model_fields.values()), f"{name} {part}: a flag without help"
    prompts = dataset.load("prompts")
    assert callable(prompts.requests) and callable(prompts.prediction) and prompts.PLAN.samples >= 1
    assert callable(dataset.load("scorer"))
    assert dataset.renderers and all(callable(dataset.load("render_" + form)) for form in dataset.renderers)
    assert dataset.load("checks").__name__ == dataset.checks
    text = dataset_text(name)  # the card text exists and refers only to known licences and citations
    assert text.licence == dataset.licence
    for stem in dataset.schemas:
        assert load_schema(stem)["$schema"].startswith("https://json-schema.org/")
    assert f"predictions.{name}" in dataset.schemas
    pinned = load_lock()
    for prefix in dataset.sources:
        assert any(snapshot.startswith(prefix) for snapshot in pinned), f"{name}: no snapshot pinned under {prefix}"


def test_a_builders_snapshots_are_under_its_declared_prefixes():
    for name in ("gsm-ic", "misleadqa"):
        dataset = registry.get(name)
        needed = dataset.builder_cls(dataset.config_cls()).required_snapshots()
        assert needed and all(any(s.startswith(p) for p in dataset.sources) for s in needed)


def test_an_unknown_dataset_is_one_line():
    with pytest.raises(Exception, match="unknown dataset 'nosuch'; choose one of: gsm-ic, misleadqa, pseudowords"):
        registry.get("nosuch")


def test_a_part_that_cannot_be_loaded_names_the_dataset_and_part(monkeypatch):
    import dataclasses

    broken = dataclasses.replace(registry.get("pseudowords"), scorer="ctxrobust.evaluation.pseudowords.scorer:nosuch")
    with pytest.raises(
        Exception, match="dataset pseudowords: its scorer 'ctxrobust.evaluation.pseudowords.scorer:nosuch' cannot be loaded"
    ):
        broken.load("scorer")


@pytest.fixture
def toy(monkeypatch):
    """The tests' own dataset (tests/toy/), registered with its one declaration."""
    from toy import DATASET

    monkeypatch.setitem(registry._DATASETS, DATASET.name, DATASET)
    return DATASET


def test_a_dataset_defined_only_in_the_tests_goes_through_the_command_line(toy, tmp_path, capsys):
    out = tmp_path / "releases"
    assert cli.main(["build", "toy", "--version", "0.1.0", "--seed", "3", "--set", "n=5", "--out", str(out)]) == 0
    release = out / "toy" / "0.1.0"
    assert sorted(p.name for p in release.iterdir()) == ["README.md", "SHA256SUMS", "items.jsonl", "items.parquet", "manifest.json"]
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["config"] == {"n": 5, "seed": 3} and "answer_replay" in manifest["validators"]
    assert "Sums of two small numbers" in (release / "README.md").read_text()
    capsys.readouterr()

    assert cli.main(["validate", str(out)]) == 0
    assert "toy 0.1.0: " in capsys.readouterr().out

    requests = tmp_path / "requests.jsonl"
    assert cli.main(["prompts", str(release), "--shout", "-o", str(requests)]) == 0
    lines = [json.loads(line) for line in requests.read_text().splitlines()]
    assert len(lines) == 5 and lines[0]["messages"][0]["content"].startswith("WHAT IS") and lines[0]["dataset"] == "toy"
    assert cli.main(["prompts", str(release), "--kinds", "CHA", "-o", str(requests)]) == 2
    assert "--kinds: not an option for toy prompts (it takes: --shout)" in capsys.readouterr().err

    items = [json.loads(line) for line in (release / "items.jsonl").read_text().splitlines()]
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"model": "m", "id": i["id"], "response": str(i["answer"] if k % 2 == 0 else -1)}) + "\n"
            for k, i in enumerate(items)
        )
    )
    report = tmp_path / "report.md"
    assert cli.main(["score", str(release), str(predictions), "-o", str(report)]) == 0
    assert "| m | 0.60 |" in report.read_text()
    assert cli.main(["score", str(release), str(predictions), "--format", "html"]) == 2
    assert "--format html: toy reports render as json, csv, parquet or md" in capsys.readouterr().err


def test_a_damaged_toy_release_fails_its_own_check(toy, tmp_path, capsys):
    out = tmp_path / "releases"
    assert cli.main(["build", "toy", "--version", "0.1.0", "--out", str(out)]) == 0
    items = out / "toy" / "0.1.0" / "items.jsonl"
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    rows[0]["answer"] += 1
    items.write_text("".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in rows))
    capsys.readouterr()
    assert cli.main(["validate", str(out)]) == 1
    assert f"FAIL toy 0.1.0 items.jsonl {rows[0]['id']} answer_replay: answer" in capsys.readouterr().out
