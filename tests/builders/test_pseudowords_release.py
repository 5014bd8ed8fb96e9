"""The default pseudowords release, end to end: build, validate, the paper's figures, reproducibility."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import wordfreq
from paths import FIXTURES, REPO

from ctxrobust.builders.pseudowords import PseudowordsBuilder, PseudowordsConfig
from ctxrobust.canonical import sha256_file
from ctxrobust.cli import main, validate_main
from ctxrobust.release import Release

PAPER_CHA_10K_CHARS = 21_129.9  # Section 3, "Experiment Details"


@pytest.fixture(scope="module")
def default_release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("releases")
    assert main(["build", "pseudowords", "--version", "0.0.1-dev", "--out", str(out)]) == 0
    return out / "pseudowords" / "0.0.1-dev"


def test_default_build_validates(default_release, capsys):
    assert validate_main([str(default_release)]) == 0
    assert "all passed" in capsys.readouterr().out


def test_vocabulary_has_10000_words_all_below_zipf_1_5(default_release):
    rows = Release(default_release).rows("vocabulary.jsonl")
    assert len(rows) == 10_000 == len({r["word"] for r in rows})
    assert max(wordfreq.zipf_frequency(r["word"], "en") for r in rows) < 1.5
    assert "pornhand" not in {r["word"] for r in rows}  # drawn by seed 0 before the offensive filter


def test_default_bank_shape_and_paper_character_count(default_release):
    release = Release(default_release)
    rows = release.rows("contexts.jsonl")
    assert len(rows) == 2 * 4 * 10  # CHA and TOK, 4 lengths, M = 10
    assert all(r["n_tokens"] == r["target_tokens"] and r["tokenizer"] == "o200k_base" for r in rows)
    cha = [r["n_chars"] for r in rows if r["kind"] == "CHA" and r["target_tokens"] == 10_000]
    assert len(cha) == 10
    mean = sum(cha) / len(cha)
    assert abs(mean - PAPER_CHA_10K_CHARS) / PAPER_CHA_10K_CHARS < 0.02
    assert release.manifest["build_notes"]["mean_chars"]["CHA"]["10000"] == round(mean, 1)


def test_manifest_says_web_was_not_built_and_records_versions(default_release):
    manifest = Release(default_release).manifest
    notes = manifest["build_notes"]
    assert notes["kinds_built"] == ["CHA", "TOK"]
    assert "no web_corpus given" in notes["kinds_not_built"]["WEB"]
    assert notes["user_sources"] == []
    assert notes["tokenizer"] == {"name": "o200k_base", "model": "gpt-oss-120b", "package": notes["tokenizer"]["package"]}
    assert notes["tokenizer"]["package"].startswith("bpe-openai ")
    assert notes["wordfreq"].startswith("wordfreq ")
    assert notes["offensive_list"]["package"] == "better-profanity" and notes["vocabulary"]["rejected_offensive"] > 0
    assert notes["tok_pool"]["tokens"] == 198_424 and notes["tok_pool"]["of"] == 199_998  # Section 3.3 departure, recorded
    assert "the paper samples the whole vocabulary" in notes["tok_pool"]["rule"]
    assert "reference answers where the paper has the model answer them" in notes["sqa"]
    assert manifest["sources"] == []
    assert manifest["config"]["zipf_threshold"] == 1.5 and manifest["config"]["vocabulary_size"] == 10_000


def test_rebuilding_the_same_version_reproduces_it(default_release, capsys):
    out = default_release.parent.parent
    assert main(["build", "pseudowords", "--version", "0.0.1-dev", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("reproduced")


def test_web_built_from_a_user_corpus_records_its_sha256(tmp_path):
    corpus = FIXTURES / "web_corpus.jsonl"
    args = [
        "build",
        "pseudowords",
        "--version",
        "0.0.1-web",
        "--out",
        str(tmp_path),
        "--set",
        f"web_corpus={corpus}",
        "--set",
        "lengths=[10,100]",
        "--set",
        'kinds=["WEB"]',
        "--set",
        "vocabulary_size=200",
        "--set",
        "contexts_per_length=4",
    ]
    assert main(args) == 0
    release = Release(tmp_path / "pseudowords" / "0.0.1-web")
    notes = release.manifest["build_notes"]
    assert notes["kinds_built"] == ["WEB"] and notes["kinds_not_built"] == {}
    assert notes["user_sources"] == [
        {"kind": "web_corpus", "name": "web_corpus.jsonl", "format": "jsonl", "sha256": sha256_file(corpus), "documents": 4}
    ]
    rows = release.rows("contexts.jsonl")
    assert sorted(r["id"] for r in rows)[:2] == ["WEB-000010-000", "WEB-000010-001"] and len(rows) == 8


def test_bad_configuration_is_one_line(tmp_path, capsys):
    assert main(["build", "pseudowords", "--version", "x", "--out", str(tmp_path), "--set", "lengths=[0]"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: build configuration for pseudowords: lengths:") and "\n" not in err
    assert main(["build", "pseudowords", "--version", "y", "--out", str(tmp_path), "--set", "web_corpus=/nonexistent/corpus"]) == 2
    assert "web_corpus /nonexistent/corpus: not found" in capsys.readouterr().err
    assert main(["build", "pseudowords", "--version", "z", "--out", str(tmp_path), "--set", "web_corpus=c", "--set", 'kinds=["CHA"]']) == 2
    assert "kinds leaves out WEB" in capsys.readouterr().err
    assert main(["build", "pseudowords", "--version", "w", "--out", str(tmp_path), "--set", "zipf_language=xx"]) == 2
    assert "wordfreq has no 'best' word list for zipf_language 'xx'" in capsys.readouterr().err
    assert main(["build", "pseudowords", "--version", "n", "--out", str(tmp_path), "--set", "zipf_threshold=NaN"]) == 2
    assert "zipf_threshold: Input should be a finite number" in capsys.readouterr().err
    assert not (tmp_path / "pseudowords").exists()


def test_notes_name_the_model_of_the_chosen_tokenizer():
    config = PseudowordsConfig(tokenizer="cl100k_base", vocabulary_size=1000, kinds=("CHA",), lengths=(10,), contexts_per_length=2)
    output = PseudowordsBuilder(config).build()
    assert output.notes["tokenizer"]["name"] == "cl100k_base" and output.notes["tokenizer"]["model"] == "gpt-4"
    assert {row["tokenizer"] for row in output.files[1].rows} == {"cl100k_base"}
    assert "tok_pool" not in output.notes


def test_bytes_do_not_depend_on_pythonhashseed(tmp_path):
    args = [
        sys.executable,
        "-m",
        "ctxrobust.cli",
        "build",
        "pseudowords",
        "--version",
        "v",
        "--set",
        "vocabulary_size=800",
        "--set",
        "lengths=[10,300]",
        "--set",
        "contexts_per_length=3",
        "--set",
        f"web_corpus={FIXTURES / 'web_corpus'}",
    ]
    runs = {
        seed: subprocess.Popen(
            [*args, "--out", str(tmp_path / seed)],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for seed in ("1", "2")
    }
    for run in runs.values():
        assert run.wait() == 0, run.stderr.read().decode()
        run.stderr.close()
    sums = [(tmp_path / seed / "pseudowords" / "v" / "SHA256SUMS").read_bytes() for seed in runs]
    assert sums[0] == sums[1]
