"""GSM-IC prompts: the paper's one-exemplar formats, one request per base problem and per variant."""

from __future__ import annotations

import json

import pytest

from ctxrobust.build import write_sums
from ctxrobust.canonical import dumps_pretty, write_jsonl
from ctxrobust.cli import main
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.gsm_ic.prompts import PROMPTS, build_prompt, prompts
from ctxrobust.release import Release

INSTRUCTION = "Solve grade school math problems. Feel free to ignore irrelevant information given in the questions."
COT_EXEMPLAR = (
    "Q: Elsa has 5 apples. Anna has 2 more apples than Elsa. How many apples do they have together?\n"
    "A: Anna has 2 more apples than Elsa, so Anna has 2 + 5 = 7 apples. Elsa and Anna have 5 + 7 = 12 apples together. The answer is 12."
)


@pytest.fixture()
def release(tmp_path) -> Release:
    folder = tmp_path / "release"
    folder.mkdir()
    write_jsonl(
        folder / "base.jsonl",
        [
            {
                "id": "b2",
                "question": "Tom has 3 pens. He buys 4 more. How many pens does he have?",
                "answer": "7",
                "n_steps": 2,
                "solution": "3 + 4 = 7",
            },
            {"id": "b1", "question": "Ann has 2 cats. How many legs?", "answer": "8", "n_steps": 2, "solution": "2 * 4 = 8"},
        ],
    )
    write_jsonl(
        folder / "variants.jsonl",
        [
            {
                "id": f"{b}-v{k}",
                "base_id": b,
                "original_question": "...",
                "new_question": f"Variant {k} of {b}. How many?",
                "answer": a,
                "n_steps": 2,
                "role": "Ada",
                "number": 9,
                "sentence_template": "t",
                "role_label": "overlapped",
                "number_label": "in_range",
                "sentence_label": "in_topic",
                "topic": "x",
                "sentence": "s",
                "insert_offset": 0,
                "edits": [],
            }
            for b, a in (("b1", "8"), ("b2", "7"))
            for k in range(3)
        ],
    )
    write_jsonl(folder / "gsm-ic-4k.jsonl", [{"id": "b1-v0", "base_id": "b1"}, {"id": "b2-v2", "base_id": "b2"}])
    (folder / "manifest.json").write_text(dumps_pretty({"dataset": "gsm-ic", "version": "0.0.1", "files": []}), encoding="utf-8")
    write_sums(folder)  # frozen: the command line reads intact releases only
    return Release(folder)


def test_default_is_the_papers_cot_prompt():
    text, messages = build_prompt("Tom has 3 pens. How many?")
    assert text == COT_EXEMPLAR + "\n\nQ: Tom has 3 pens. How many?\nA:"
    assert messages == [
        {"role": "user", "content": COT_EXEMPLAR.split("\n")[0]},
        {"role": "assistant", "content": COT_EXEMPLAR.split("\n")[1]},
        {"role": "user", "content": "Q: Tom has 3 pens. How many?\nA:"},
    ]


def test_instruction_is_prepended():
    text, messages = build_prompt("P?", "cot", instruction=True)
    assert text == INSTRUCTION + "\n\n" + COT_EXEMPLAR + "\n\nQ: P?\nA:"
    assert messages[0] == {"role": "system", "content": INSTRUCTION}


def test_every_format():
    assert PROMPTS == ["0-cot", "cot", "cot-ic", "ltm", "ltm-ic", "program", "program-ic"]
    assert build_prompt("P?", "0-cot")[0] == "Q: P?\nA: Let's think step by step:"
    ltm = build_prompt("P?", "ltm")[0]
    assert ltm.endswith("Q: P?\nA: Let's break down this problem:")
    assert "A: Let's break down this problem: 1. How many apples does Anna have?" in ltm
    program = build_prompt("P?", "program-ic")[0]
    assert "Liz has 4 peaches. How many apples do they have together?" in program
    assert "A: Let's solve the problem by a Python program:\nElsa_apples = 5\n" in program
    assert program.endswith("print(Elsa_Anna_apples)\n\nQ: P?\nA: Let's solve the problem by a Python program:")
    assert "Liz" not in build_prompt("P?", "cot")[0] and "Liz has 4 peaches." in build_prompt("P?", "cot-ic")[0]
    with pytest.raises(CtxRobustError, match="choose one of"):
        build_prompt("P?", "original")


def test_one_request_per_base_problem_and_variant(release):
    requests = list(prompts(release, {"instruction": True}))
    assert [r["id"] for r in requests] == ["b1", "b2", "b1-v0", "b1-v1", "b1-v2", "b2-v0", "b2-v1", "b2-v2"]
    assert [r["kind"] for r in requests] == ["base"] * 2 + ["variant"] * 6
    assert {r["prompt"] for r in requests} == {"cot"} and all(r["instruction"] for r in requests)
    assert [r["in_4k"] for r in requests] == [True, True, True, False, False, False, False, True]
    first_variant = requests[2]
    assert first_variant["base_id"] == "b1" and first_variant["n_steps"] == 2
    assert first_variant["text"].endswith("Q: Variant 0 of b1. How many?\nA:")
    assert requests[0]["text"].endswith("Q: Ann has 2 cats. How many legs?\nA:")
    assert "answer" not in first_variant  # the gold answer never goes into a request


def test_cli_writes_the_requests(release, tmp_path):
    out = tmp_path / "requests.jsonl"
    assert main(["prompts", str(release.path), "--instruction", "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8
    first = json.loads(lines[0])
    assert first["meta"]["text"].startswith(INSTRUCTION + "\n\nQ: Elsa has 5 apples.")
    assert (first["id"], first["item"], first["sample"], first["sampling"]) == ("b1/-/0", "b1", 0, {"temperature": 0.0})
    again = tmp_path / "again.jsonl"
    assert main(["prompts", str(release.path), "--instruction", "-o", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


def test_a_malformed_release_is_one_clear_error(release):
    variants = release.path / "variants.jsonl"
    variants.write_text(variants.read_text(encoding="utf-8").replace('"new_question":"Variant 1 of b2. How many?",', ""), encoding="utf-8")
    with pytest.raises(CtxRobustError, match=r"variants.jsonl: item 'b2-v1': no 'new_question' text; .* rebuild it"):
        list(prompts(release, {}))
