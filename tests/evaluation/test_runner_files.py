"""Runners' files read as the runners write them and grouped into one submission per model run: a Batch
output with its error file, the parts of one Batch job, lm-eval samples of several tasks (written by
lm-eval's own EvaluationTracker), Inspect `.eval` logs (written by inspect_ai's own log writer, zstd
members), a request id in two files of one group, a file of another release's request ids, and zstd bombs."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hostile import error_lines
from test_eval_gsm_ic import BASES, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic
from test_hostile_formats import bounded, messages, request_lines
from test_run import batch_output, write_rows

from ctxrobust.cli import main
from ctxrobust.evaluation.formats import convert, grouping, inspect_log
from ctxrobust.evaluation.gsm_ic import prompts as gsm_ic_prompts
from ctxrobust.evaluation.misleadqa import prompts as misleadqa_prompts
from ctxrobust.evaluation.run.requests import decode

ANSWER = "The answer is 12."


@pytest.fixture
def gsm(tmp_path) -> Path:
    return write_gsm_ic(tmp_path / "gsm-ic" / "0.0.1", BASES, VARIANTS, SUBSET).path


@pytest.fixture
def lines(gsm, tmp_path) -> list[dict]:
    return request_lines(gsm, tmp_path)


def batch_inputs(lines: list[dict], model: str) -> list[dict]:
    return [{"custom_id": line["id"], "body": {"model": model}} for line in lines]


def texts_of(lines: list[dict]) -> dict[str, str]:
    return {line["id"]: f"The answer is {k}." for k, line in enumerate(lines)}


def all_records(group: grouping.Group) -> list[tuple]:
    return list(group.records(gsm_ic_prompts.prediction, {}))


def rows_of(records: list[tuple]) -> list[dict]:
    return [row for _, _, row, _ in records if row is not None]


def problems_of(records: list[tuple]) -> list[str]:
    return [problem for _, _, _, problem in records if problem]


# -- OpenAI Batch output, error file and parts ------------------------------------------------------------


def test_a_batch_output_and_its_error_file_are_one_group_with_the_model_of_the_output(lines, tmp_path):
    failed = {lines[1]["id"], lines[2]["id"], lines[5]["id"]}
    answered = batch_output(batch_inputs(lines, "gpt-4.1-2025-04-14"), texts_of(lines), failed)
    output = write_rows(tmp_path / "batch_abc_output.jsonl", [o for o in answered if o["custom_id"] not in failed])
    errors = write_rows(tmp_path / "batch_abc_errors.jsonl", [o for o in answered if o["custom_id"] in failed])
    other = write_rows(tmp_path / "other_output.jsonl", batch_output(batch_inputs(lines, "other-model"), texts_of(lines), set()))
    groups = grouping.group([errors, output, other], "gsm-ic")
    assert [(g.model, g.paths) for g in groups] == [("gpt-4.1-2025-04-14", [errors, output]), ("other-model", [other])]
    assert groups[0].label == "batch_abc_errors.jsonl + batch_abc_output.jsonl"
    assert [f.form for f in groups[0].files] == ["openai-batch", "openai-batch"]
    records = all_records(groups[0])
    rows = rows_of(records)
    assert len(rows) == len(lines) and {r["model"] for r in rows} == {"gpt-4.1-2025-04-14"}  # the error file's rows too
    failures = [(origin, problem) for _, origin, row, problem in records if row is not None and problem]
    assert len(failures) == 3 and all("counted as an invalid response" in p for _, p in failures)
    assert {row["response"] for row in rows if row["id"] in {lines[k]["item"] for k in (1, 2, 5)}} == {""}


def test_an_error_file_whose_job_cannot_be_told_is_a_submission_of_its_own(lines, tmp_path):
    failed = {lines[0]["id"]}
    for folder, model in (("a", "model-a"), ("b", "model-b")):
        (tmp_path / folder).mkdir()
        write_rows(
            tmp_path / folder / "out.jsonl",
            [o for o in batch_output(batch_inputs(lines, model), texts_of(lines), failed) if o["custom_id"] not in failed],
        )
    errors = write_rows(tmp_path / "errors.jsonl", batch_output(batch_inputs(lines[:1], "x"), {}, failed))
    groups = grouping.group([tmp_path / "a" / "out.jsonl", tmp_path / "b" / "out.jsonl", errors], "gsm-ic")
    assert [g.model for g in groups] == ["model-a", "model-b", None]
    [(path, note)] = groups[2].notes
    assert path == errors and "which job's error file it is cannot be told" in note
    # in the folder of one of them, it is that job's
    moved = write_rows(tmp_path / "b" / "errors.jsonl", batch_output(batch_inputs(lines[:1], "x"), {}, failed))
    groups = grouping.group([tmp_path / "a" / "out.jsonl", tmp_path / "b" / "out.jsonl", moved], "gsm-ic")
    assert [(g.model, len(g.files)) for g in groups] == [("model-a", 1), ("model-b", 2)]


def test_the_parts_of_one_batch_job_are_one_group(gsm, lines, tmp_path):
    out = tmp_path / "parts"
    out.mkdir()
    assert main(["prompts", str(gsm), "--format", "openai-batch", "--model", "m", "-o", str(out / "batch.jsonl")]) == 0
    inputs = [json.loads(line) for line in (out / "batch.jsonl").read_text(encoding="utf-8").splitlines()]
    halves = [inputs[: len(inputs) // 2], inputs[len(inputs) // 2 :]]
    parts = [
        write_rows(out / f"batch-{k:03d}_output.jsonl", batch_output(half, texts_of(lines), set())) for k, half in enumerate(halves, 1)
    ]
    [group] = grouping.group(parts, "gsm-ic")
    assert group.paths == parts and group.model == "m"
    records = all_records(group)
    assert sorted(r["id"] for r in rows_of(records)) == sorted(line["item"] for line in lines) and not problems_of(records)
    # the same parts named name-001.jsonl, ...: one submission scored, not one per part
    for k, part in enumerate(parts, 1):
        part.rename(out / f"out-{k:03d}.jsonl")
    [group] = grouping.group([out / "out-001.jsonl", out / "out-002.jsonl"], "gsm-ic")
    assert len(group.files) == 2 and group.label == "out-001.jsonl + out-002.jsonl"


def test_batch_files_of_two_models_or_overlapping_runs_stay_apart(lines, tmp_path):
    a = write_rows(tmp_path / "run-001.jsonl", batch_output(batch_inputs(lines, "model-a"), texts_of(lines), set()))
    b = write_rows(tmp_path / "run-002.jsonl", batch_output(batch_inputs(lines, "model-b"), texts_of(lines), set()))
    again = write_rows(tmp_path / "again.jsonl", batch_output(batch_inputs(lines, "model-a"), texts_of(lines), set()))
    groups = grouping.group([a, b, again], "gsm-ic")
    assert [(g.model, g.paths) for g in groups] == [("model-a", [a]), ("model-b", [b]), ("model-a", [again])]


def test_a_request_id_in_two_files_of_a_group_is_one_problem_and_counted_once(lines, tmp_path):
    inputs = batch_inputs(lines, "m")
    first = write_rows(tmp_path / "job-001.jsonl", batch_output(inputs[:7], texts_of(lines), set()))
    repeated = {"custom_id": lines[3]["id"], "body": {"model": "m"}}
    second = write_rows(
        tmp_path / "job-002.jsonl", batch_output([*inputs[7:], repeated], {**texts_of(lines), lines[3]["id"]: "Again."}, set())
    )
    [group] = grouping.group([first, second], "gsm-ic")
    records = all_records(group)
    [problem] = problems_of(records)
    assert problem.startswith("1 request id(s) of this file are also in ") and str(first) in problem and repr(lines[3]["id"]) in problem
    assert [path for path, origin, row, p in records if p] == [second]  # said of the later file
    rows = rows_of(records)
    assert len(rows) == len(lines) and "Again." not in {r["response"] for r in rows}  # the first file's row is the one counted
    left_out = [(path, origin) for path, origin, row, p in records if row is None and p is None]
    assert len(left_out) == 1 and left_out[0][0] == second and isinstance(left_out[0][1], int)


# -- lm-eval ----------------------------------------------------------------------------------------------

LM_EVAL_WRITER = """
import json, sys
from lm_eval.loggers import EvaluationTracker

out, model, tasks = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
tracker = EvaluationTracker(output_path=out)
tracker.general_config_tracker.log_experiment_args(
    model_source="local-chat-completions", model_args=f"model={model},base_url=http://127.0.0.1:1/v1", system_instruction=None,
    chat_template=None, fewshot_as_multiturn=False,
)
samples = {
    task: [
        {"doc_id": k, "doc": line, "target": "", "arguments": [[json.dumps(line["messages"]), {"until": []}]],
         "resps": [[text]], "filtered_resps": [text], "filter": "none", "metrics": ["exact_match"],
         "doc_hash": "d", "prompt_hash": "p", "target_hash": "t"}
        for k, (line, text) in enumerate(rows)
    ]
    for task, rows in tasks.items()
}
tracker.save_results_aggregated(results={"results": {task: {} for task in tasks}}, samples=samples)
for task, rows in samples.items():
    tracker.save_results_samples(task_name=task, samples=rows)
"""


def lm_eval_run(out: Path, model: str, tasks: dict[str, list[tuple[dict, str]]]) -> list[Path]:
    """The files lm-eval's own EvaluationTracker writes for a run with --output_path OUT --log_samples."""
    before = set(out.glob("*/samples_*.jsonl"))
    subprocess.run([sys.executable, "-c", LM_EVAL_WRITER, str(out), model, json.dumps(tasks)], check=True, capture_output=True, timeout=120)
    return sorted(set(out.glob("*/samples_*.jsonl")) - before)


def test_lm_eval_samples_of_two_tasks_in_one_run_are_one_group_named_for_the_model(lines, tmp_path):
    half = len(lines) // 2
    files = lm_eval_run(
        tmp_path / "results",
        "Qwen/Qwen3-8B",
        {"ctx_base": [(line, ANSWER) for line in lines[:half]], "ctx_variants": [(line, ANSWER) for line in lines[half:]]},
    )
    other = lm_eval_run(tmp_path / "results", "other/model", {"ctx_base": [(line, "The answer is 3.") for line in lines]})
    assert [f.parent.name for f in files] == ["Qwen__Qwen3-8B", "Qwen__Qwen3-8B"] and len(other) == 1
    groups = grouping.group(files + other, "gsm-ic")
    assert [(g.model, g.paths) for g in groups] == [("Qwen/Qwen3-8B", files), ("other/model", other)]
    assert [f.form for f in groups[0].files] == ["lm-eval", "lm-eval"]
    # the run folder given whole: its results file is the run's record, not a submission of its own
    folder = files[0].parent
    [whole] = grouping.group(sorted(folder.iterdir()), "gsm-ic")
    assert whole.paths == files and whole.model == "Qwen/Qwen3-8B"
    assert [p.name for p in whole.companions] == [p.name for p in folder.glob("results_*.json")]
    records = all_records(groups[0])
    rows = rows_of(records)
    assert len(rows) == len(lines) and {r["model"] for r in rows} == {"Qwen/Qwen3-8B"} and not problems_of(records)
    assert sorted((r["id"], r["sample"]) for r in rows) == sorted((line["item"], line["sample"]) for line in lines)


def test_each_lm_eval_run_in_one_folder_is_named_by_its_own_results_file(lines, tmp_path):
    (tmp_path / "run").mkdir()
    rows = [{"doc_id": k, "doc": line, "resps": [[ANSWER]], "filtered_resps": [ANSWER]} for k, line in enumerate(lines)]
    runs = {"2026-01-01T00-00-00.1": "model-a", "2026-01-02T00-00-00.2": "model-b"}
    files = []
    for date, model in runs.items():
        (tmp_path / "run" / f"results_{date}.json").write_text(json.dumps({"model_name": model}), encoding="utf-8")
        files.append(write_rows(tmp_path / "run" / f"samples_ctx_{date}.jsonl", rows))
    groups = grouping.group(files, "gsm-ic")
    assert [(g.model, g.paths) for g in groups] == [("model-a", files[:1]), ("model-b", files[1:])]
    assert {r["model"] for r in rows_of(all_records(groups[0]))} == {"model-a"}


def test_lm_eval_samples_without_a_results_file_are_grouped_by_folder(lines, tmp_path):
    (tmp_path / "run").mkdir()
    rows = [{"doc_id": k, "doc": line, "resps": [[ANSWER]], "filtered_resps": [ANSWER]} for k, line in enumerate(lines)]
    a = write_rows(tmp_path / "run" / "samples_a_2026-01-01T00-00-00.jsonl", rows[:5])
    b = write_rows(tmp_path / "run" / "samples_b_2026-01-01T00-00-00.jsonl", rows[5:])
    [group] = grouping.group([a, b], "gsm-ic")
    assert group.model is None and group.paths == [a, b]
    assert len(rows_of(all_records(group))) == len(lines)


# -- Inspect .eval logs, as inspect_ai writes them ------------------------------------------------------------

INSPECT_WRITER = """
import json, sys
from inspect_ai.log import EvalConfig, EvalDataset, EvalError, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import ModelOutput

path, model, rows = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="ctxrobust", dataset=EvalDataset(name="requests"), model=model, config=EvalConfig())
samples = []
for line, text in rows:
    sample = EvalSample(id=line["id"], epoch=1, input=line["messages"][-1]["content"], target="", metadata=line["meta"])
    if text is None:
        sample.error = EvalError(message="rate limited", traceback="", traceback_ansi="")
    else:
        sample.output = ModelOutput.from_content(model, text)
    samples.append(sample)
write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), path)
"""


def inspect_log_file(path: Path, model: str, rows: list[tuple[dict, str | None]]) -> Path:
    """An .eval log written by inspect_ai's own writer (in a child process: its zipfile patches stay there)."""
    subprocess.run([sys.executable, "-c", INSPECT_WRITER, str(path), model, json.dumps(rows)], check=True, capture_output=True, timeout=120)
    return path


def stdlib_zipfile(monkeypatch):
    """zipfile as the standard library has it before Python 3.14: no zstd (whatever else patched it)."""
    real = zipfile._get_decompressor

    def decompressor(kind):
        if kind == inspect_log.ZSTD:
            raise NotImplementedError("That compression method is not supported")
        return real(kind)

    monkeypatch.setattr(zipfile, "_get_decompressor", decompressor)


def test_an_inspect_eval_log_written_by_inspect_ai_gives_rows_with_the_right_ids_and_texts(lines, tmp_path, monkeypatch):
    stdlib_zipfile(monkeypatch)
    texts = {line["id"]: f"Step one. The answer is {k}." for k, line in enumerate(lines)}
    log = inspect_log_file(
        tmp_path / "log.eval", "openai/gpt-4.1", [(line, None if k == 2 else texts[line["id"]]) for k, line in enumerate(lines)]
    )
    assert {i.compress_type for i in zipfile.ZipFile(log).infolist()} == {inspect_log.ZSTD}  # Inspect's default
    got = list(convert.records(log, "inspect", gsm_ic_prompts.prediction, {}))
    assert len(got) == len(lines)
    by_origin = {origin: (row, problem) for origin, row, problem in got}
    for k, line in enumerate(lines):
        row, problem = by_origin[f"sample {line['id']}"]
        key = decode(line["id"])
        assert (row["id"], row["sample"], row["model"]) == (key.item, key.sample, "openai/gpt-4.1")
        if k == 2:
            assert row["response"] == "" and "the sample failed: rate limited; counted as an invalid response" == problem
        else:
            assert row["response"] == texts[line["id"]] and problem is None
    # the command line reads it too, in a process that never imported inspect_ai
    result, _ = bounded("score", str(lines_release(tmp_path)), str(log), "--replicates", "0", "-o", str(tmp_path / "r.json"))
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["predictions"]["input_format"] == "inspect" and list(report["models"]) == ["openai/gpt-4.1"]
    assert report["predictions"]["failed_requests"] == 1


def lines_release(tmp_path: Path) -> Path:
    return tmp_path / "gsm-ic" / "0.0.1"


def test_inspect_logs_are_grouped_by_their_model(lines, tmp_path, monkeypatch):
    stdlib_zipfile(monkeypatch)
    half = len(lines) // 2
    a = inspect_log_file(tmp_path / "a.eval", "openai/gpt-4.1", [(line, ANSWER) for line in lines[:half]])
    other = inspect_log_file(tmp_path / "b.eval", "anthropic/claude", [(line, ANSWER) for line in lines])
    c = inspect_log_file(tmp_path / "c.eval", "openai/gpt-4.1", [(line, ANSWER) for line in lines[half:]])
    groups = grouping.group([a, other, c], "gsm-ic")
    assert [(g.model, g.paths) for g in groups] == [("openai/gpt-4.1", [a, c]), ("anthropic/claude", [other])]
    assert len(rows_of(all_records(groups[0]))) == len(lines)


# -- bombs in zstd members ----------------------------------------------------------------------------------


def zstd_zeros(size: int) -> bytes:
    import zstandard

    packer = zstandard.ZstdCompressor(level=1).compressobj()
    block = b"\0" * (1 << 20)
    out = bytearray()
    for _ in range(size >> 20):
        out += packer.compress(block)
    return bytes(out + packer.flush())


def zstd_zip(path: Path, members: list[tuple[str, bytes, int, int]]) -> Path:
    """A zip of zstd members (name, compressed bytes, crc32, size declared unzipped) written byte by byte."""
    import struct

    body, directory = b"", b""
    for name, packed, crc, size in members:
        encoded = name.encode()
        directory += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 63, 63, 0, inspect_log.ZSTD, 0, 33, crc, len(packed), size, len(encoded), 0, 0, 0, 0, 0, len(body)
        )
        directory += encoded
        body += (
            struct.pack("<4s5H3L2H", b"PK\x03\x04", 63, 0, inspect_log.ZSTD, 0, 33, crc, len(packed), size, len(encoded), 0)
            + encoded
            + packed
        )
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0)
    path.write_bytes(body + directory + end)
    return path


def test_a_zstd_bomb_whose_directory_tells_is_refused_in_one_line(gsm, tmp_path):
    packed = zstd_zeros(100 << 20)
    log = zstd_zip(tmp_path / "bomb.eval", [(f"samples/s{k}_epoch_1.json", packed, 0, 100 << 20) for k in range(40)])
    result, peak = bounded("score", str(gsm), str(log), "--replicates", "0")
    assert result.returncode == 2, result.stderr
    [line] = error_lines(result.stderr)
    assert "more than the 2 GiB read from one log" in line and "internal error" not in line
    assert peak < 600 * 1024, f"peak memory {peak} KB"


def test_a_zstd_member_that_unzips_to_more_than_its_directory_declares_is_one_problem_in_little_memory(gsm, lines, tmp_path):
    import zlib

    good = json.dumps({"id": lines[0]["id"], "epoch": 1, "output": {"model": "m", "completion": ANSWER}}).encode()
    packed = zstd_zeros(1 << 30)  # 1 GiB of zeros in 32 KB, declared as 1 KB
    header = json.dumps({"eval": {"model": "m"}}).encode()
    import zstandard

    members = [
        ("header.json", zstandard.ZstdCompressor().compress(header), zlib.crc32(header), len(header)),
        ("samples/a_epoch_1.json", zstandard.ZstdCompressor().compress(good), zlib.crc32(good), len(good)),
        ("samples/bomb_epoch_1.json", packed, 0, 1024),
    ]
    log = zstd_zip(tmp_path / "log.eval", members)
    result, peak = bounded("score", str(gsm), str(log), "--replicates", "0", "-o", str(tmp_path / "r.json"), memory_mb=1024)
    assert result.returncode == 0, result.stderr
    problems = messages(json.loads((tmp_path / "r.json").read_text())["predictions"]["problems"])
    assert "samples/bomb_epoch_1.json: unzips to more than the 1 KiB its zip directory declares (a zip bomb?); not read" in problems
    assert peak < 400 * 1024, f"peak memory {peak} KB"
    # a member whose bytes are not zstd, or whose CRC is wrong, is one problem too
    broken = zstd_zip(
        tmp_path / "broken.eval",
        [members[0], ("samples/x_epoch_1.json", b"not zstd at all", 0, 10), (members[1][0], members[1][1], 1, members[1][3])],
    )
    got = list(convert.records(broken, "inspect", gsm_ic_prompts.prediction, {}))
    assert [problem for _, row, problem in got] == [
        "cannot be unzipped (its size or CRC-32 is not the one its zip directory declares); not read",
        "cannot be unzipped (zstd: zstd decompress error: Unknown frame descriptor); not read",
    ]


# -- request ids of another release or dataset ----------------------------------------------------------------


def test_a_file_of_another_datasets_request_ids_is_said_in_one_line(lines, tmp_path):
    output = write_rows(tmp_path / "out.jsonl", batch_output(batch_inputs(lines, "m"), texts_of(lines), set()))
    got = list(convert.records(output, "openai-batch", misleadqa_prompts.prediction, {}, "misleadqa"))
    said = [problem for _, _, problem in got if problem]
    assert len(said) == 1 and said[0].startswith(
        f"{len(lines)} of its {len(lines)} request ids look like request ids of another release or dataset (e.g. "
    )
    assert "a MisleadQA request id names its condition" in said[0]
    assert sum(1 for origin, row, problem in got if origin is not None and row is None and problem is None) == len(lines)
    converted = convert.convert(output, "openai-batch", misleadqa_prompts.prediction, {})
    assert converted.dropped == converted.left_out == len(lines) and len(converted.problems) == 1
    # a release that lacks the items (another release of the dataset): said once too
    got = list(convert.records(output, "openai-batch", gsm_ic_prompts.prediction, {}, known=lambda key: key.item == lines[0]["item"]))
    assert len([p for _, _, p in got if p]) == 1 and "the release has no such request" in [p for _, _, p in got if p][0]
    # a few such ids among many: one problem each, at its line
    rows = batch_output(batch_inputs(lines, "m"), texts_of(lines), set())
    rows[0]["custom_id"] = "not-a-request-id"
    few = write_rows(tmp_path / "few.jsonl", rows)
    said = [(origin, p) for origin, _, p in convert.records(few, "openai-batch", gsm_ic_prompts.prediction, {}) if p]
    assert said == [(1, "request id 'not-a-request-id' is not one `ctxrobust prompts` wrote (item/condition/sample)")]


def test_records_cover_tables_with_a_bad_cell_named_by_its_column(tmp_path):
    table = tmp_path / "p.csv"
    table.write_text("model,id,response,sample\nm,b1,The answer is 3.,0\nm,b2,The answer is 4.,x\n", encoding="utf-8")
    got = list(convert.records(table, "csv", gsm_ic_prompts.prediction, {}))
    assert got[0] == (2, {"model": "m", "id": "b1", "response": "The answer is 3.", "sample": 0}, None)
    assert got[1][0] == 3 and got[1][1] is None and "column 'sample'" in got[1][2]


# -- a failed request answered by a retry; one file given twice --------------------------------------------


def test_a_vllm_output_with_failed_lines_and_its_retry_are_one_group_counting_the_answers(lines, tmp_path):
    inputs = batch_inputs(lines, "m")
    failed = {lines[2]["id"], lines[6]["id"]}
    first = write_rows(tmp_path / "vllm_output.jsonl", batch_output(inputs, texts_of(lines), failed, vllm=True))
    retried = [i for i in inputs if i["custom_id"] in failed]
    retry = write_rows(tmp_path / "vllm_retry_output.jsonl", batch_output(retried, texts_of(lines), set(), vllm=True))
    [group] = grouping.group([first, retry], "gsm-ic")
    assert group.paths == [first, retry] and group.model == "m"
    records = all_records(group)
    rows = rows_of(records)
    assert sorted(r["id"] for r in rows) == sorted(line["item"] for line in lines)  # each request once
    assert all(r["response"] for r in rows)  # the retry's answers, not the failed lines
    [note] = problems_of(records)
    assert note.startswith("2 request id(s) of this file are also in ") and str(retry) in note
    assert [path for path, _, _, p in records if p] == [first]  # said of the file whose failed rows are left out
    # the other order: the answers come first, the failed lines are left out
    rows = rows_of(all_records(grouping.group([retry, first], "gsm-ic")[0]))
    assert len(rows) == len(lines) and all(r["response"] for r in rows)


def test_a_batch_error_file_answered_by_a_retry_joins_the_job_and_its_retry(lines, tmp_path):
    inputs = batch_inputs(lines, "m")
    failed = {lines[1]["id"], lines[4]["id"], lines[5]["id"]}
    answered = batch_output(inputs, texts_of(lines), failed)
    output = write_rows(tmp_path / "batch_abc_output.jsonl", [o for o in answered if o["custom_id"] not in failed])
    errors = write_rows(tmp_path / "batch_abc_errors.jsonl", [o for o in answered if o["custom_id"] in failed])
    retry = write_rows(
        tmp_path / "batch_def_output.jsonl", batch_output([i for i in inputs if i["custom_id"] in failed], texts_of(lines), set())
    )
    groups = grouping.group([output, errors, retry], "gsm-ic")
    assert [(g.model, g.paths) for g in groups] == [("m", [output, errors, retry])]  # not an unknown-model submission
    records = all_records(groups[0])
    rows = rows_of(records)
    assert len(rows) == len(lines) and all(r["response"] for r in rows)  # the retry answers the error file's ids
    assert not any("counted as an invalid response" in p for p in problems_of(records))


def test_one_file_given_twice_is_read_once(lines, tmp_path, monkeypatch):
    output = write_rows(tmp_path / "out.jsonl", batch_output(batch_inputs(lines, "m"), texts_of(lines), set()))
    monkeypatch.chdir(tmp_path)
    link = tmp_path / "link.jsonl"
    link.symlink_to(output)
    [group] = grouping.group([Path("out.jsonl"), output, link], "gsm-ic")
    assert group.paths == [Path("out.jsonl")]
    [(path, note)] = group.notes
    assert path == Path("out.jsonl") and "given again as" in note and "read once" in note
    records = all_records(group)
    assert len(rows_of(records)) == len(lines)
