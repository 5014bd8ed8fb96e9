"""MisleadQA prompts (Figures 4 and 5), the predictions schema and its pydantic mirror, response parsing,
and the bootstrap building blocks."""

from __future__ import annotations

import json

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from paths import REPO
from pydantic import ValidationError

from ctxrobust.build import write_sums
from ctxrobust.cli import main as cli_main
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import cluster_bootstrap as cb
from ctxrobust.evaluation import resampling
from ctxrobust.evaluation.misleadqa.prompts import prompts
from ctxrobust.evaluation.misleadqa.responses import CONDITIONS, INVALID, MisleadQAPrediction, parse_letter, row_problem
from ctxrobust.release import Release

# Table 5 of the paper (the FRED time example), written out here with its recorded option positions
NEBRASKA = {
    "id": "fred-time-ne-1997",
    "split": "main",
    "source": "fred",
    "scope_dimension": "time",
    "cluster_id": "NE",
    "dependency_group_id": "fred",
    "question": "What was the recorded basic state minimum wage in Nebraska on January 1, 1997? Give the rate in US dollars per hour.",
    "options": {"A": "$5.15", "B": "$13.50", "C": "$4.25", "D": "$5.85", "E": "Insufficient information"},
    "gold": "C",
    "lure": "A",
    "target_scope": {},
    "alt_scope": {},
    "contexts": {
        "G": {
            "text": "On January 1, 1997, the recorded basic state minimum wage in Nebraska was $4.25 per hour.",
            "scope": {},
            "value": "$4.25",
            "true": True,
            "in_scope": True,
        },
        "S": {
            "text": "On January 1, 1998, the recorded basic state minimum wage in Nebraska was $5.15 per hour.",
            "scope": {},
            "value": "$5.15",
            "true": True,
            "in_scope": False,
        },
        "F": {
            "text": "On January 1, 1997, the recorded basic state minimum wage in Nebraska was $5.15 per hour.",
            "scope": {},
            "value": "$5.15",
            "true": False,
            "in_scope": True,
        },
    },
    "f_edits": [],
    "provenance": {},
}
SUPPLEMENT_ITEM = {**NEBRASKA, "id": "cond-1", "split": "condition", "source": "condambigqa", "scope_dimension": "condition"}

QUESTION_AND_OPTIONS = (
    "Question:\n"
    "What was the recorded basic state minimum wage in Nebraska on January 1, 1997? Give the rate in US dollars per hour.\n"
    "\n"
    "Options:\n"
    "A. $5.15\n"
    "B. $13.50\n"
    "C. $4.25\n"
    "D. $5.85\n"
    "E. Insufficient information"
)


@pytest.fixture
def release(tmp_path) -> Release:
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "main.jsonl").write_text(json.dumps(NEBRASKA, sort_keys=True) + "\n", encoding="utf-8")
    (folder / "condition.jsonl").write_text(json.dumps(SUPPLEMENT_ITEM, sort_keys=True) + "\n", encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"dataset": "misleadqa", "version": "0.0.1"}), encoding="utf-8")
    write_sums(folder)  # frozen: the command line reads intact releases only
    return Release(folder)


def test_answering_prompt_is_figure_4(release):
    requests = list(prompts(release, {}))
    assert len(requests) == 2 * 8
    assert [r["id"] for r in requests] == ["cond-1"] * 8 + ["fred-time-ne-1997"] * 8  # sorted by id, then condition
    assert [r["condition"] for r in requests[8:]] == list(CONDITIONS)
    by_condition = {r["condition"]: r for r in requests if r["id"] == "fred-time-ne-1997"}
    head = "Answer the following multiple-choice question. Return only A, B, C, D, or E.\n\n" + QUESTION_AND_OPTIONS
    assert by_condition["none"]["text"] == head  # no context: the prompt ends after the options
    assert (
        by_condition["S"]["text"] == head + "\n\nOn January 1, 1998, the recorded basic state minimum wage in Nebraska was $5.15 per hour."
    )
    assert by_condition["F+G"]["text"] == (
        head
        + "\n\nOn January 1, 1997, the recorded basic state minimum wage in Nebraska was $5.15 per hour."
        + "\n\nOn January 1, 1997, the recorded basic state minimum wage in Nebraska was $4.25 per hour."
    )
    for r in requests:
        assert r["messages"] == [{"role": "user", "content": r["text"]}] and r["prompt"] == "original"
        assert "(gold)" not in r["text"] and "lure" not in r["text"].lower()  # no labels, no answer key
    assert {r["split"] for r in requests} == {"main", "condition"}


def test_context_faithful_prompt_is_figure_5b(release):
    requests = {r["condition"]: r for r in prompts(release, {"prompt": "cf"}) if r["id"] == "fred-time-ne-1997"}
    assert len(requests) == 8 and {r["prompt"] for r in requests.values()} == {"cf"}
    assert requests["G+S"]["text"].startswith(
        "Answer the following multiple-choice question using only the supplied evidence that applies to the exact entity, "
        "time, population, and conditions asked about. Do not use outside knowledge to correct claims in the supplied evidence. "
        "Ignore evidence about a different scope. Choose E if the applicable evidence is insufficient to determine an answer, "
        "or if applicable passages support conflicting answers that cannot be resolved from the supplied evidence. "
        "Return only A, B, C, D, or E.\n\n"
        + QUESTION_AND_OPTIONS
        + "\n\nOn January 1, 1997, the recorded basic state minimum wage in Nebraska was $4.25 per hour.\n\n"
    )
    # App. C.1: the no-context condition keeps the answering prompt
    assert requests["none"]["text"].startswith("Answer the following multiple-choice question. Return only A, B, C, D, or E.\n\n")


def test_scope_prompt_is_figure_5a(release):
    requests = [r for r in prompts(release, {"prompt": "scope"}) if r["id"] == "fred-time-ne-1997"]
    assert [r["condition"] for r in requests] == ["G", "S", "F"]
    assert requests[1]["text"] == (
        "Determine whether the assertion in the material refers to the same target scope as the question, including the "
        "entity, time, and location specified in the question. Ignore whether the answer value is factually correct; judge "
        "only whether the scope matches. Output exactly one label: Applicable, Not applicable, or Cannot determine.\n\n"
        + QUESTION_AND_OPTIONS
        + "\n\nMaterial:\nOn January 1, 1998, the recorded basic state minimum wage in Nebraska was $5.15 per hour."
    )


def test_prompts_cli_writes_jsonl(release, tmp_path, capsys):
    out = tmp_path / "requests.jsonl"
    assert cli_main(["prompts", str(release.path), "--prompt", "cf", "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    assert len(lines) == 16 and first["item"] == "cond-1" and first["id"] == "cond-1/cf:none/0" and first["condition"] == "none"
    assert cli_main(["prompts", str(release.path), "--instruction"]) == 2
    assert (
        "--instruction: not an option for misleadqa prompts (it takes: --diagnostic-sample, --option-orders, --prompt)"
        in capsys.readouterr().err
    )


def test_prompts_refuse_a_release_without_main_split(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"dataset": "misleadqa", "version": "0.0.1"}), encoding="utf-8")
    with pytest.raises(CtxRobustError, match="no main.jsonl"):
        list(prompts(Release(tmp_path), {}))


# ----------------------------------------------------------------------------------------- predictions schema
SCHEMA = json.loads((REPO / "schemas" / "predictions.misleadqa.schema.json").read_text(encoding="utf-8"))


def test_schema_file_and_pydantic_model_agree():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    generated = MisleadQAPrediction.model_json_schema()
    assert generated["required"] == SCHEMA["required"]
    assert generated["additionalProperties"] is SCHEMA["additionalProperties"] is False
    assert set(generated["properties"]) == set(SCHEMA["properties"])
    for name, spec in SCHEMA["properties"].items():
        mine = {k: v for k, v in generated["properties"][name].items() if k != "title"}
        assert mine == spec, name


ROWS = [
    {"model": "m", "id": "q", "condition": "G+S", "response": "A"},
    {"model": "m", "id": "q", "condition": "none", "response": "", "prompt": "cf"},
    {"model": "m", "id": "q", "condition": "GS", "response": "A"},
    {"model": "m", "id": "q", "condition": "G", "response": "A", "prompt": "scope"},
    {"model": "", "id": "q", "condition": "G", "response": "A"},
    {"model": "m", "id": "q", "condition": "G", "response": 3},
    {"model": "m", "id": "q", "condition": "G"},
    {"model": "m", "id": "q", "condition": "G", "response": "A", "extra": True},
    {"model": "m", "id": 7, "condition": "G", "response": "A"},
    {"model": "m", "id": "q", "condition": "S", "response": "Not applicable", "prompt": "scope"},
    {"model": "m", "id": "q", "condition": "none", "response": "A", "prompt": "scope"},
    {"model": "m", "id": "q", "condition": "S", "response": "A", "option_order": "BCDA"},
    {"model": "m", "id": "q", "condition": "S", "response": "A", "option_order": "BCDA", "prompt": "original"},
    {"model": "m", "id": "q", "condition": "S", "response": "A", "option_order": "BCDE"},
    {"model": "m", "id": "q", "condition": "S", "response": "A", "option_order": "AABC"},
    {"model": "m", "id": "q", "condition": "G+S", "response": "A", "option_order": "BCDA"},
    {"model": "m", "id": "q", "condition": "S", "response": "A", "option_order": "BCDA", "prompt": "cf"},
    {"model": "m", "id": "q", "condition": "S", "response": "A", "option_order": None},
]


@pytest.mark.parametrize("row", ROWS)
def test_schema_and_reader_accept_the_same_rows(row):
    by_schema = Draft202012Validator(SCHEMA).is_valid(row)
    try:
        parsed = MisleadQAPrediction.model_validate_json(json.dumps(row))
        by_reader = row_problem(parsed, {"q"}) is None
    except ValidationError:
        by_reader = False
    assert by_schema == by_reader


# ---------------------------------------------------------------------------------------- response parsing
@pytest.mark.parametrize(
    "text, strict, lenient",
    [
        ("A", 0, 0),
        (" E\n", 4, 4),
        ("\tc", INVALID, INVALID),
        ("B.", INVALID, 1),
        ("(D)", INVALID, 3),
        ("AB", INVALID, INVALID),
        ("F", INVALID, INVALID),
        ("", INVALID, INVALID),
        ("B. $5.15", INVALID, INVALID),
        ("(B", INVALID, INVALID),
        ("Answer: B", INVALID, INVALID),
    ],
)
def test_valid_responses_are_single_letters(text, strict, lenient):
    assert parse_letter(text)[0] == strict
    letter, used = parse_letter(text, lenient=True)
    assert letter == lenient and used == (strict == INVALID and lenient != INVALID)


# ----------------------------------------------------------------------------------- bootstrap building blocks
def test_multiplicities_count_the_generator_draws():
    weights = cb.multiplicities(4, 3, seed=11)
    draws = np.random.default_rng(11).integers(0, 4, size=(3, 4))
    assert weights.tolist() == [[int((row == u).sum()) for u in range(4)] for row in draws]
    assert (weights.sum(axis=1) == 4).all()


def test_percentile_intervals_match_numpy_and_skip_undefined():
    rng = np.random.default_rng(3)
    samples = rng.random((101, 3))
    samples[[4, 50], 1] = np.nan
    samples[:, 2] = np.nan
    lo, hi, undefined = resampling.percentile_intervals(samples, np.array([0.95, 0.975, 0.95]))
    assert lo[0] == pytest.approx(np.percentile(samples[:, 0], 2.5)) and hi[0] == pytest.approx(np.percentile(samples[:, 0], 97.5))
    kept = samples[~np.isnan(samples[:, 1]), 1]
    assert lo[1] == pytest.approx(np.percentile(kept, 1.25)) and hi[1] == pytest.approx(np.percentile(kept, 98.75))
    assert undefined.tolist() == [0, 2, 101] and np.isnan(lo[2]) and np.isnan(hi[2])


def test_unit_index_is_sorted_and_stable():
    index, units = cb.unit_index([("fred", "NE"), ("ambigdocs", "9"), ("fred", "NE"), ("fred", "IA")])
    assert units == [("ambigdocs", "9"), ("fred", "IA"), ("fred", "NE")] and index.tolist() == [2, 0, 2, 1]


@pytest.mark.parametrize(
    "change, message",
    [
        ({"contexts": {"G": NEBRASKA["contexts"]["G"]}}, "item 'fred-time-ne-1997': contexts: must hold G, S and F; rebuild the release"),
        ({"lure": "C"}, "item 'fred-time-ne-1997': gold and lure are both C; rebuild the release"),
        ({"options": {k: v for k, v in NEBRASKA["options"].items() if k != "E"}}, "item 'fred-time-ne-1997': options: must be exactly A-E"),
        ({"cluster_id": None}, "item 'fred-time-ne-1997': cluster_id: Input should be a valid string"),
    ],
)
def test_a_damaged_release_item_is_one_clear_line(tmp_path, capsys, change, message):
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "main.jsonl").write_text(json.dumps({**NEBRASKA, **change}, sort_keys=True) + "\n", encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"dataset": "misleadqa", "version": "0.0.1"}), encoding="utf-8")
    write_sums(folder)
    (tmp_path / "p.jsonl").write_text("", encoding="utf-8")
    for command in (["prompts", str(folder)], ["score", str(folder), str(tmp_path / "p.jsonl")]):
        assert cli_main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and f"main.jsonl: {message}" in err, err
