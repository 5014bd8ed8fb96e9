"""Chat requests for a benchmark over a pseudowords bank; SQA histories (paper Section 3, 3.3, Appendix H)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrobust.canonical import write_jsonl
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.pseudowords.prompts import SYSTEM_PROMPT, prompts, render_question
from ctxrobust.release import Release

N_QUESTIONS = 30


@pytest.fixture
def release(tmp_path) -> Release:
    folder = tmp_path / "pseudowords" / "0.0.0"
    folder.mkdir(parents=True)
    rows = [
        {
            "id": f"{kind}-{n:06d}-{i:03d}",
            "kind": kind,
            "target_tokens": n,
            "n_tokens": n,
            "n_chars": 9,
            "tokenizer": "o200k_base",
            "text": f"{kind.lower()} context {n} {i}",
        }
        for kind in ("CHA", "TOK")
        for n in (10, 100)
        for i in range(3)
    ]
    write_jsonl(folder / "contexts.jsonl", rows)
    manifest = {
        "dataset": "pseudowords",
        "version": "0.0.0",
        "config": {"seed": 0, "contexts_per_length": 3, "kinds": ["CHA", "TOK", "WEB"], "lengths": [10, 100]},
        "files": [{"name": "contexts.jsonl", "schema": "pseudowords.contexts"}],
        "build_notes": {"kinds_not_built": {"WEB": "no web_corpus given"}},
    }
    return Release(folder, manifest=manifest)


def write_benchmark(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def benchmark(tmp_path) -> Path:
    records = []
    for k in range(N_QUESTIONS):
        record = {"id": f"q{k:02d}", "question": f"Question number {k}?", "answer": f"answer-{k}"}
        if k % 2 == 0:
            record["options"] = [f"option {k}a", f"option {k}b", f"option {k}c"]
            record["answer"] = "ABC"[k % 3]
        records.append(record)
    return write_benchmark(tmp_path / "bench.jsonl", records)


EVERYTHING = {"kinds": ["CHA", "TOK", "SQA"], "lengths": [10, 100]}


def test_default_is_the_main_setting_cha_at_the_longest_length(release, benchmark):
    out = list(prompts(release, {"benchmark": str(benchmark)}))
    assert len(out) == N_QUESTIONS * (1 + 3)  # no-context baseline + M = 3 CHA contexts of 100 tokens
    assert {r["context"] for r in out} == {None, "CHA-000100-000", "CHA-000100-001", "CHA-000100-002"}


def test_one_request_per_question_and_condition_sorted(release, benchmark):
    out = list(prompts(release, {"benchmark": str(benchmark), **EVERYTHING}))
    # none + 12 bank contexts + 3 SQA histories (one per context index) for each question
    assert len(out) == N_QUESTIONS * (1 + 12 + 3)
    keys = [(r["id"], r["context"] or "") for r in out]
    assert keys == sorted(keys)
    assert set(out[0]) == {"id", "context", "request"}
    assert {r["context"] for r in out if r["id"] == "q00"} >= {None, "CHA-000010-000", "TOK-000100-002", "SQA-000020-002"}


def test_context_is_its_own_user_message_between_system_and_question(release, benchmark):
    out = {(r["id"], r["context"]): r["request"]["messages"] for r in prompts(release, {"benchmark": str(benchmark), **EVERYTHING})}
    question = (
        "Answer the following multiple-choice question. Give a brief explanation, then state the letter of your final answer.\n\n"
        "Question: Question number 4?\n\nOptions:\nA. option 4a\nB. option 4b\nC. option 4c"
    )
    assert out[("q04", None)] == [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
    assert out[("q04", "TOK-000010-001")] == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "tok context 10 1"},
        {"role": "user", "content": question},
    ]
    general = out[("q05", None)][-1]["content"]
    assert general.endswith("Question: Question number 5?") and "Options" not in general


def test_sqa_history_has_20_turns_of_other_questions_with_reference_answers(release, benchmark):
    records = {json.loads(line)["id"]: json.loads(line) for line in benchmark.read_text().splitlines()}
    rendered = {render_question_from(rec): rec for rec in records.values()}
    histories = []
    for row in prompts(release, {"benchmark": str(benchmark), "kinds": ["SQA"]}):
        if not (row["context"] or "").startswith("SQA"):
            continue
        msgs = row["request"]["messages"]
        assert msgs[0] == {"role": "system", "content": SYSTEM_PROMPT}
        turns = msgs[1:-1]
        assert len(turns) == 40
        assert [m["role"] for m in turns] == ["user", "assistant"] * 20
        asked = [rendered[m["content"]] for m in turns[0::2]]
        answers = [m["content"] for m in turns[1::2]]
        assert all(rec["id"] != row["id"] for rec in asked)  # never the question itself
        assert len({rec["id"] for rec in asked}) == 20
        assert answers == [str(rec["answer"]) for rec in asked]  # the benchmark's own reference answers
        assert msgs[-1]["content"] == render_question_from(records[row["id"]])
        histories.append((row["context"], tuple(rec["id"] for rec in asked)))
    assert len(histories) == N_QUESTIONS * 3
    assert len({h for _, h in histories}) > N_QUESTIONS  # histories differ across indices


def render_question_from(record: dict) -> str:
    from ctxrobust.evaluation.pseudowords.prompts import BenchmarkRecord

    return render_question(BenchmarkRecord.model_validate(record))


def test_sqa_is_seeded_and_independent_of_file_order(release, benchmark, tmp_path):
    lines = benchmark.read_text().splitlines()
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    a = list(prompts(release, {"benchmark": str(benchmark), "seed": 4, **EVERYTHING}))
    b = list(prompts(release, {"benchmark": str(shuffled), "seed": 4, **EVERYTHING}))
    c = list(prompts(release, {"benchmark": str(benchmark), "seed": 5, **EVERYTHING}))
    assert a == b
    assert a != c


def test_kinds_and_lengths_select_conditions(release, benchmark):
    out = list(prompts(release, {"benchmark": str(benchmark), "kinds": ["CHA"], "lengths": [100]}))
    assert {r["context"] for r in out} == {None, "CHA-000100-000", "CHA-000100-001", "CHA-000100-002"}
    only_sqa = list(prompts(release, {"benchmark": str(benchmark), "kinds": ["SQA"]}))
    assert len(only_sqa) == N_QUESTIONS * 4


def test_unbuilt_kind_or_length_is_a_clear_error(release, benchmark):
    with pytest.raises(CtxRobustError, match="kind 'WEB' is not in .*no web_corpus given"):
        list(prompts(release, {"benchmark": str(benchmark), "kinds": ["WEB"]}))
    with pytest.raises(CtxRobustError, match="length 1000 is not in"):
        list(prompts(release, {"benchmark": str(benchmark), "lengths": [1000]}))


def test_sqa_without_answers_is_refused(release, tmp_path):
    bench = write_benchmark(tmp_path / "b.jsonl", [{"id": f"q{k}", "question": f"Q{k}?"} for k in range(25)])
    with pytest.raises(CtxRobustError, match=r"b\.jsonl:1: no \"answer\""):
        list(prompts(release, {"benchmark": str(bench), "kinds": ["CHA", "SQA"]}))


def test_other_datasets_prompt_options_are_refused(release, benchmark):
    with pytest.raises(CtxRobustError, match="--prompt: not an option for pseudowords prompts"):
        list(prompts(release, {"benchmark": str(benchmark), "prompt": "cot"}))
    with pytest.raises(CtxRobustError, match="--instruction: not an option for pseudowords prompts"):
        list(prompts(release, {"benchmark": str(benchmark), "instruction": True}))
    with pytest.raises(CtxRobustError, match="--turns: not an option for pseudowords prompts"):
        list(prompts(release, {"benchmark": str(benchmark), "turns": 5}))


def test_a_selection_without_contexts_is_refused(release, benchmark):
    with pytest.raises(CtxRobustError, match="has no contexts of kinds \\(none\\)"):
        list(prompts(release, {"benchmark": str(benchmark), "kinds": []}))


def test_sqa_needs_more_questions_than_turns(release, tmp_path):
    bench = write_benchmark(tmp_path / "b.jsonl", [{"id": f"q{k}", "question": f"Q{k}?", "answer": "x"} for k in range(20)])
    with pytest.raises(CtxRobustError, match="need at least 21"):
        list(prompts(release, {"benchmark": str(bench), "kinds": ["SQA"]}))


@pytest.mark.parametrize(
    "line, message",
    [
        ("{bad json", r"bench\.jsonl:2: not valid JSON"),
        (json.dumps({"id": "x"}), r"bench\.jsonl:2: missing field 'question'"),
        (json.dumps({"id": "x", "question": "Q?", "options": "A or B"}), r"bench\.jsonl:2: field 'options"),
        (json.dumps({"id": "q0", "question": "Q?"}), r"bench\.jsonl:2: id 'q0' already used on line 1"),
        ('{"id": "x", "question": "half a pair \\udc80"}', r"bench\.jsonl:2: field 'question': .*unicode string"),
    ],
)
def test_bad_benchmark_line_is_one_error_naming_file_and_line(release, tmp_path, line, message):
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps({"id": "q0", "question": "Fine?"}) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(CtxRobustError, match=message):
        list(prompts(release, {"benchmark": str(path)}))


def test_missing_benchmark_option_or_file_or_not_utf8(release, tmp_path):
    with pytest.raises(CtxRobustError, match="pseudowords prompts needs --benchmark"):
        list(prompts(release, {}))
    with pytest.raises(CtxRobustError, match="no such benchmark file"):
        list(prompts(release, {"benchmark": str(tmp_path / "nope.jsonl")}))
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"id": "q0", "question": "Caf\xe9?"}\n')
    with pytest.raises(CtxRobustError, match=r"latin1\.jsonl:1: not UTF-8"):
        list(prompts(release, {"benchmark": str(latin1)}))


def test_options_as_object_are_rendered_in_letter_order(release, tmp_path):
    bench = write_benchmark(tmp_path / "b.jsonl", [{"id": 7, "question": "Pick.", "options": {"B": "second", "A": "first"}}])
    out = list(prompts(release, {"benchmark": str(bench), "kinds": ["CHA"], "lengths": [10]}))
    assert out[0]["id"] == "7"
    assert out[0]["request"]["messages"][-1]["content"].endswith("Options:\nA. first\nB. second")
