"""The Hub loop: push a release to the local Hub stand-in, download it, and `validate`, `prompts` and `score`
the downloaded folder (under any name) and the `hf://datasets/ORG/NAME@vX.Y.Z` name; every declared
configuration of the download loads with `datasets` row for row equal to the JSON Lines files."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import datasets
import huggingface_hub.constants
import pytest
from hub_server import HubServer
from huggingface_hub import snapshot_download
from publish_releases import pseudowords_release  # noqa: F401  (fixture)

from ctxrobust.canonical import iter_jsonl
from ctxrobust.cli import main
from ctxrobust.errors import CtxRobustError
from ctxrobust.publish.download import parse_hub_url
from ctxrobust.publish.hub import push_release
from ctxrobust.validators.checks import checks_for

TOKEN = "hf_test_token_loop_0987654321"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    with HubServer(TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        monkeypatch.setenv("CTXROBUST_CACHE", str(tmp_path / "cache"))
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        # huggingface_hub reads HF_ENDPOINT once, at import, for its side requests and its download URLs
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.url)
        monkeypatch.setattr(
            huggingface_hub.constants, "HUGGINGFACE_CO_URL_TEMPLATE", server.url + "/{repo_id}/resolve/{revision}/{filename}"
        )
        yield server


@pytest.fixture
def pushed(hub, pseudowords_release, capsys):
    assert push_release(pseudowords_release, "my-org/pw-loop", None) == 0
    capsys.readouterr()
    return "hf://datasets/my-org/pw-loop@v0.0.1"


def predictions(path: Path, release: Path) -> Path:
    contexts = [row["id"] for _, row in iter_jsonl(release / "contexts.jsonl")][:2]
    rows = [{"model": "m", "id": f"q{i}", "context": None, "trial": t, "correct": (i + t) % 2} for i in range(12) for t in range(4)]
    rows += [
        {"model": "m", "id": f"q{i}", "context": c, "trial": t, "correct": (i * t) % 2}
        for i in range(12)
        for c in contexts
        for t in range(2)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_downloaded_folder_validates_and_scores_under_any_name(hub, pushed, pseudowords_release, tmp_path, capsys):
    folder = Path(
        snapshot_download(
            "my-org/pw-loop",
            repo_type="dataset",
            revision="v0.0.1",
            local_dir=str(tmp_path / "some download"),
            endpoint=hub.url,
            token=TOKEN,
        )
    )
    assert (folder / ".gitattributes").exists() and (folder / "croissant.json").exists()  # what the Hub gives
    assert main(["validate", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"pseudowords 0.0.1: {len(checks_for('pseudowords'))} checks, ok" in out and "all passed" in out
    preds = predictions(tmp_path / "preds.jsonl", pseudowords_release)
    assert main(["score", str(folder), str(preds), "-o", str(tmp_path / "r.json")]) == 0
    assert main(["score", str(pseudowords_release), str(preds), "-o", str(tmp_path / "local.json")]) == 0
    downloaded = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    local = json.loads((tmp_path / "local.json").read_text(encoding="utf-8"))
    assert downloaded["models"] == local["models"]  # the same release, the same figures
    # a changed byte in the download is still caught
    (folder / "vocabulary.jsonl").write_bytes((folder / "vocabulary.jsonl").read_bytes().replace(b'"zipf"', b'"zipF"', 1))
    assert main(["validate", str(folder)]) == 1
    assert "vocabulary.jsonl - hashes: sha256 is" in capsys.readouterr().out


def test_hf_names_work_for_validate_prompts_and_score(hub, pushed, pseudowords_release, tmp_path, capsys):
    assert main(["validate", pushed]) == 0
    assert "all passed" in capsys.readouterr().out
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)}) + "\n" for i in range(3)))
    assert main(["prompts", pushed, "--benchmark", str(bench), "-o", str(tmp_path / "req.jsonl")]) == 0
    assert main(["prompts", str(pseudowords_release), "--benchmark", str(bench), "-o", str(tmp_path / "req-local.jsonl")]) == 0
    assert (tmp_path / "req.jsonl").read_bytes() == (tmp_path / "req-local.jsonl").read_bytes()
    preds = predictions(tmp_path / "preds.jsonl", pseudowords_release)
    assert main(["score", pushed, str(preds), "--format", "csv", "-o", str(tmp_path / "r.csv")]) == 0
    assert (
        (tmp_path / "r.csv")
        .read_text(encoding="utf-8")
        .startswith("dataset,section,model,metric,estimate,ci_low,ci_high,n,unit,higher_is_better\n")
    )
    assert TOKEN not in capsys.readouterr().err


def test_every_declared_configuration_of_the_download_loads_row_for_row(hub, pushed, tmp_path):
    folder = Path(
        snapshot_download(
            "my-org/pw-loop", repo_type="dataset", revision="v0.0.1", local_dir=str(tmp_path / "dl"), endpoint=hub.url, token=TOKEN
        )
    )
    configs = datasets.get_dataset_config_names(str(folder))
    assert sorted(configs) == ["contexts", "vocabulary"]
    for config in configs:
        loaded = datasets.load_dataset(str(folder), config, split="test", cache_dir=str(tmp_path / "c"))
        rows = [row for _, row in iter_jsonl(folder / f"{config}.jsonl")]
        assert loaded.num_rows == len(rows) > 0
        assert list(loaded) == rows


def test_a_repository_named_after_its_dataset_validates(hub, pseudowords_release, capsys):
    assert push_release(pseudowords_release, "my-org/pseudowords", None) == 0
    capsys.readouterr()
    assert main(["validate", "hf://datasets/my-org/pseudowords@v0.0.1"]) == 0
    out = capsys.readouterr().out
    assert f"pseudowords 0.0.1: {len(checks_for('pseudowords'))} checks, ok" in out and "location" not in out


def test_hub_names_and_errors_are_one_line(hub, pushed, capsys):
    assert parse_hub_url("hf://datasets/my-org/pw-loop@v0.0.1") == ("my-org/pw-loop", "v0.0.1")
    for bad in ("hf://datasets/my-org/pw-loop", "hf://models/a/b@v1", "hf://datasets/a--b/c@v1", "hf://datasets/a/b@../x"):
        with pytest.raises(CtxRobustError, match="give hf://datasets/ORG/NAME@vX.Y.Z"):
            parse_hub_url(bad)
    assert main(["validate", "hf://datasets/my-org/pw-loop@v9.9.9"]) == 2
    assert "has no revision v9.9.9" in capsys.readouterr().err
    assert main(["validate", "hf://datasets/my-org/absent@v0.0.1"]) == 2
    assert "no dataset repository my-org/absent" in capsys.readouterr().err


def test_a_release_in_a_releases_tree_must_sit_at_its_dataset_and_version(pseudowords_release, tmp_path, capsys):
    anywhere = tmp_path / "downloads" / "whatever-name"
    shutil.copytree(pseudowords_release, anywhere)
    assert main(["validate", str(anywhere)]) == 0
    misplaced = tmp_path / "releases" / "pseudowords" / "9.9.9"
    shutil.copytree(pseudowords_release, misplaced)
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "releases")]) == 1
    assert "location: the folder pseudowords/9.9.9 holds pseudowords 0.0.1" in capsys.readouterr().out


@pytest.fixture(autouse=True)
def _quiet():
    logging.getLogger("absl").setLevel(logging.ERROR)
    datasets.disable_progress_bars()
