"""Hostile runners' files and batch outputs (issue 27): the OpenAI Batch input written by `prompts --format
openai-batch` never through a planted link, never over an input, never left half written; lm-eval
samples, their results file and Inspect logs read as regular files within bounds; a nesting bomb is one
problem of its line (or member, or file) and the rest is still judged."""

from __future__ import annotations

import errno
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from hostile import REPO, error_lines, fingerprint
from test_eval_gsm_ic import BASES, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic
from test_eval_pseudowords import make_release as make_pseudowords
from test_run import batch_output, inspect_sample, write_benchmark, write_rows

from ctxrobust.cli import main
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.formats import inspect_log, lm_eval, openai_batch

BOMB = "[" * 100_000
ANSWER = "The answer is 12."


@pytest.fixture
def gsm(tmp_path) -> Path:
    return write_gsm_ic(tmp_path / "gsm-ic" / "0.0.1", BASES, VARIANTS, SUBSET).path


def request_lines(release: Path, tmp_path: Path) -> list[dict]:
    out = tmp_path / "requests.jsonl"
    assert main(["prompts", str(release), "-o", str(out)]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def gsm_requests(release: Path):
    from ctxrobust.evaluation.gsm_ic.prompts import PLAN, requests
    from ctxrobust.release import Release

    return requests(Release(release), {}, PLAN)


def score_report(release: Path, predictions: Path, out: Path, *extra: str) -> dict:
    assert main(["score", str(release), str(predictions), "--replicates", "0", *extra, "-o", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def messages(problems: list[dict]) -> list[str]:
    """Each problem as one line: an origin that is no line number ("samples/...json", "sample <id>") before its
    message, whether the report keeps it as the problem's line or in its message."""
    return [f"{p['line']}: {p['message']}" if isinstance(p.get("line"), str) else p["message"] for p in problems]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or ".part" in p.name)


def bounded(*args: str, memory_mb: int = 2048, timeout: float = 60) -> tuple[subprocess.CompletedProcess, int]:
    """`ctxrobust ARGS` in a child bounded in time and address space (a command that would fill memory fails
    there, not on the machine), and the child's peak resident memory in KB (measured by a wrapper process)."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "limit = int(sys.argv[1]) << 20\n"
        "r = subprocess.run([sys.executable, '-m', 'ctxrobust.cli', *sys.argv[3:]], capture_output=True, text=True,\n"
        "    stdin=subprocess.DEVNULL, timeout=float(sys.argv[2]), preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))\n"
        "sys.stdout.write(r.stdout); sys.stderr.write(r.stderr)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(r.returncode)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests")}
    env.pop("CTXROBUST_DEBUG", None)
    result = subprocess.run(
        [sys.executable, "-c", wrapper, str(memory_mb), str(timeout), *args], capture_output=True, text=True, timeout=timeout + 30, env=env
    )
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].isdigit(), result.stderr  # the wrapper's own line: the command ended within its time
    return result, int(lines[-1])


# -- planted links at the temporary names (High) --------------------------------------------------------


def test_a_link_planted_at_the_old_part_name_is_never_written_through(gsm, tmp_path):
    victim = gsm / "base.jsonl"
    before = fingerprint(gsm)
    out = tmp_path / "out"
    out.mkdir()
    for name in (".batch.jsonl.part1", ".batch.jsonl.part", ".batch.jsonl.part2"):
        (out / name).symlink_to(victim)
    assert main(["prompts", str(gsm), "--format", "openai-batch", "--model", "m", "-o", str(out / "batch.jsonl")]) == 0
    assert fingerprint(gsm) == before  # the frozen release is as it was
    batch = out / "batch.jsonl"
    assert not batch.is_symlink() and batch.is_file() and len(batch.read_text().splitlines()) == 12
    assert all(os.readlink(out / name) == str(victim) for name in (".batch.jsonl.part1", ".batch.jsonl.part", ".batch.jsonl.part2"))
    assert sorted(p.name for p in out.iterdir()) == [".batch.jsonl.part", ".batch.jsonl.part1", ".batch.jsonl.part2", "batch.jsonl"]


def test_links_at_the_part_names_are_replaced_not_followed(gsm, tmp_path):
    before = fingerprint(gsm)
    out = tmp_path / "out"
    out.mkdir()
    (out / ".split.jsonl.part1").symlink_to(gsm / "base.jsonl")
    (out / ".split.jsonl.part2").symlink_to(gsm / "variants.jsonl")
    (out / "split-001.jsonl").symlink_to(gsm / "manifest.json")
    parts = openai_batch.write_input(gsm_requests(gsm), "m", out / "split.jsonl", max_lines=5)
    assert [(p.name, n) for p, n in parts] == [("split-001.jsonl", 5), ("split-002.jsonl", 5), ("split-003.jsonl", 2)]
    assert fingerprint(gsm) == before
    assert all(p.is_file() and not p.is_symlink() and oct(p.stat().st_mode & 0o777) == "0o644" for p, _ in parts)
    assert leftovers(out) == [".split.jsonl.part1", ".split.jsonl.part2"]  # the planted links, untouched


# -- an output whose batch parts would overwrite an input (Medium) -----------------------------------------


def test_batch_parts_that_would_be_an_input_are_refused_before_anything_is_written(gsm, tmp_path):
    bench = tmp_path / "mmlu-001.jsonl"
    bench.write_text("the benchmark\n")
    with pytest.raises(CtxRobustError, match="mmlu-001.jsonl, which is .* the input"):
        openai_batch.write_input(gsm_requests(gsm), "m", tmp_path / "mmlu.jsonl", max_lines=5, inputs=[bench])
    assert bench.read_text() == "the benchmark\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gsm-ic", "mmlu-001.jsonl"]
    # the same input reached through a link in another folder, or a link at a part name leading to it
    elsewhere = tmp_path / "data"
    elsewhere.mkdir()
    (elsewhere / "bench.jsonl").symlink_to(bench)
    with pytest.raises(CtxRobustError, match="the input"):
        openai_batch.write_input(gsm_requests(gsm), "m", tmp_path / "mmlu.jsonl", max_lines=5, inputs=[elsewhere / "bench.jsonl"])
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mmlu-002.jsonl").symlink_to(bench)
    with pytest.raises(CtxRobustError, match="mmlu-002.jsonl, which is .* the input"):
        openai_batch.write_input(gsm_requests(gsm), "m", tmp_path / "out" / "mmlu.jsonl", max_lines=5, inputs=[bench])
    assert bench.read_text() == "the benchmark\n" and sorted(p.name for p in (tmp_path / "out").iterdir()) == ["mmlu-002.jsonl"]
    # names that are no part of this output are fine
    parts = openai_batch.write_input(gsm_requests(gsm), "m", tmp_path / "mmlu-00.jsonl", max_lines=5, inputs=[bench])
    assert [p.name for p, _ in parts] == ["mmlu-00-001.jsonl", "mmlu-00-002.jsonl", "mmlu-00-003.jsonl"]


def test_prompts_openai_batch_never_overwrites_its_benchmark_with_a_part(tmp_path, monkeypatch, capsys):
    release = make_pseudowords(tmp_path / "release").path
    bench = write_benchmark(tmp_path / "mmlu-001.jsonl")
    before = bench.read_bytes()
    monkeypatch.setattr(openai_batch, "MAX_LINES", 5)  # split as a full-size benchmark would be at 50,000 lines
    code = main(
        ["prompts", str(release), "--benchmark", str(bench), "--format", "openai-batch", "--model", "m", "-o", str(tmp_path / "mmlu.jsonl")]
    )
    assert bench.read_bytes() == before
    assert code == 2 and "mmlu-001.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "mmlu.jsonl").exists() and not list(tmp_path.glob("mmlu-00[2-9].jsonl"))


# -- a full disk (Low) ------------------------------------------------------------------------------------


def _full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["fsync", "write"])
def test_a_full_disk_leaves_no_part_behind_and_names_the_output(gsm, tmp_path, monkeypatch, capsys, where):
    out = tmp_path / "batch.jsonl"
    out.write_text("an earlier batch\n")
    if where == "fsync":
        monkeypatch.setattr(os, "fsync", _full)
    else:
        real = os.fdopen

        class Full:
            def __init__(self, handle):
                self.handle = handle

            def write(self, data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            def __getattr__(self, name):
                return getattr(self.handle, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.handle.close()

        def fdopen(fd, mode="r", *args, **kwargs):  # a file opened for writing fills the disk
            handle = real(fd, mode, *args, **kwargs)
            return Full(handle) if "w" in mode else handle

        monkeypatch.setattr(os, "fdopen", fdopen)
    code = main(["prompts", str(gsm), "--format", "openai-batch", "--model", "m", "-o", str(out)])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 2 and f"error: {out}: cannot write the batch input (No space left on device)" in err, err
    assert "internal error" not in err and len(error_lines(err)) == 1
    assert out.read_text() == "an earlier batch\n" and sorted(p.name for p in tmp_path.iterdir()) == ["batch.jsonl", "gsm-ic"]


def test_an_interrupt_midway_leaves_no_part_behind(gsm, tmp_path):
    def requests():
        for k, request in enumerate(gsm_requests(gsm)):
            if k == 7:
                raise KeyboardInterrupt
            yield request

    with pytest.raises(KeyboardInterrupt):
        openai_batch.write_input(requests(), "m", tmp_path / "b.jsonl", max_lines=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gsm-ic"]


def test_a_folder_at_a_part_name_is_refused_before_any_part_is_renamed(gsm, tmp_path):
    (tmp_path / "b-002.jsonl").mkdir()
    with pytest.raises(CtxRobustError, match="b-002.jsonl: is a folder or special file"):
        openai_batch.write_input(gsm_requests(gsm), "m", tmp_path / "b.jsonl", max_lines=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b-002.jsonl", "gsm-ic"]


# -- special and oversized files beside or inside runners' files (Medium) -------------------------------


def lm_eval_samples(lines: list[dict], folder: Path, first: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"doc_id": k, "doc": line, "target": "", "resps": [[ANSWER]], "filtered_resps": [ANSWER]} for k, line in enumerate(lines)]
    path = write_rows(folder / "samples_ctxrobust_2026-01-01T00-00-00.jsonl", rows)
    if first is not None:
        path.write_text(first + "\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def test_a_fifo_results_file_beside_lm_eval_samples_is_passed_over_at_once(gsm, tmp_path):
    samples = lm_eval_samples(request_lines(gsm, tmp_path), tmp_path / "run")
    os.mkfifo(tmp_path / "run" / "results_2026-01-01T00-00-00.json")
    result, _ = bounded("score", str(gsm), str(samples), "--replicates", "0", timeout=30)
    assert result.returncode == 0, result.stderr
    assert not error_lines(result.stderr)
    assert "results_2026-01-01T00-00-00.json beside it: a FIFO, device or other special file" in result.stderr


def test_a_device_or_oversized_results_file_is_passed_over(gsm, tmp_path, monkeypatch, capsys):
    samples = lm_eval_samples(request_lines(gsm, tmp_path), tmp_path / "run")
    results = tmp_path / "run" / "results_2026-01-01T00-00-00.json"
    results.symlink_to("/dev/zero")
    result, peak = bounded("score", str(gsm), str(samples), "--replicates", "0")
    assert result.returncode == 0, result.stderr
    assert "results_2026-01-01T00-00-00.json beside it: a link (not followed)" in result.stderr
    results.unlink()
    results.write_text(json.dumps({"model_name": "m", "pad": "x" * 5000}))
    monkeypatch.setattr(lm_eval, "MAX_RESULTS", 1000)
    assert main(["score", str(gsm), str(samples), "--replicates", "0"]) == 0
    assert "beside it: more than the 1000 bytes read into memory; passed over" in capsys.readouterr().err
    monkeypatch.undo()
    report = score_report(gsm, samples, tmp_path / "r.json")
    assert list(report["models"]) == ["m"]


def raw_zip(path: Path, members: list[tuple[str, bytes, int, int]]) -> Path:
    """A zip of already deflated members (name, deflated bytes, crc32, size unzipped): a bomb built in moments."""
    body, directory = b"", b""
    for name, deflated, crc, size in members:
        encoded = name.encode()
        directory += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 33, crc, len(deflated), size, len(encoded), 0, 0, 0, 0, 0, len(body)
        )
        directory += encoded
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 33, crc, len(deflated), size, len(encoded), 0) + encoded + deflated
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0)
    path.write_bytes(body + directory + end)
    return path


def deflated(data: bytes) -> tuple[bytes, int, int]:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush(), zlib.crc32(data), len(data)


def test_an_inspect_zip_bomb_is_refused_from_its_directory(gsm, tmp_path):
    """40 members of 100 MB each in a 4 MB .eval: refused before anything is unzipped, in little memory."""
    member = b'{"id": "b1/-/0", "epoch": 1, "output": {"model": "m", "completion": "' + b"a" * (100 * 1024 * 1024) + b'"}}'
    packed = deflated(member)
    del member
    log = raw_zip(tmp_path / "bomb.eval", [(f"samples/s{k}_epoch_1.json", *packed) for k in range(40)])
    assert log.stat().st_size < 5 * 1024 * 1024
    result, peak = bounded("score", str(gsm), str(log), "--replicates", "0")
    assert result.returncode == 2, result.stderr
    [line] = error_lines(result.stderr)
    assert "more than the 2 GiB read from one log" in line and "internal error" not in line
    assert peak < 600 * 1024, f"peak memory {peak} KB"


def test_an_inspect_log_that_unzips_over_a_hundred_times_its_size_is_refused(gsm, tmp_path, capsys):
    member = b'{"id": "b1/-/0", "output": {"completion": "' + b"a" * (100 * 1024 * 1024) + b'"}}'
    packed = deflated(member)
    del member
    log = raw_zip(tmp_path / "bomb.eval", [(f"samples/s{k}_epoch_1.json", *packed) for k in range(5)])
    assert main(["score", str(gsm), str(log), "--replicates", "0"]) == 2
    [line] = error_lines(capsys.readouterr().err)
    assert "unzip to 500 MiB, more than 100 times the" in line and "a zip bomb, not read" in line


def inspect_eval(path: Path, lines: list[dict], header=None, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", header if header is not None else json.dumps({"version": 2, "eval": {"model": "openai/m"}}))
        for line in lines:
            archive.writestr(f"samples/{line['id'].replace('/', '_')}_epoch_1.json", json.dumps(inspect_sample(line, ANSWER, "openai/m")))
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return path


def test_inspect_members_are_capped_in_total_and_each(gsm, tmp_path, monkeypatch, capsys):
    lines = request_lines(gsm, tmp_path)
    log = inspect_eval(tmp_path / "log.eval", lines)
    sizes = [i.file_size for i in zipfile.ZipFile(log).infolist()]
    monkeypatch.setattr(inspect_log, "MAX_TOTAL", sum(sizes) - 1)
    assert main(["score", str(gsm), str(log), "--replicates", "0"]) == 2
    [line] = error_lines(capsys.readouterr().err)
    assert "unzipped, more than the" in line and "read from one log" in line
    monkeypatch.setattr(inspect_log, "MAX_TOTAL", sum(sizes))
    monkeypatch.setattr(inspect_log, "MAX_MEMBER", max(sizes) - 1)  # the largest sample alone is over: one problem
    report = score_report(gsm, log, tmp_path / "r.json")
    problems = messages(report["predictions"]["problems"])
    assert sum("more than the" in p and "read of one member; not read" in p for p in problems) >= 1
    assert report["predictions"]["input_format"] == "inspect" and list(report["models"]) == ["openai/m"]


def test_a_large_json_log_is_refused_in_one_line(gsm, tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"eval": {"model": "m"}, "samples": [], "pad": "x" * 5000}))
    monkeypatch.setattr(inspect_log, "MAX_JSON_LOG", 4096)
    assert main(["score", str(gsm), str(log), "--replicates", "0"]) == 2
    [line] = error_lines(capsys.readouterr().err)
    assert "log.json:" in line and "more than the 4 KiB read into memory" in line and "inspect log convert" in line


# -- nesting bombs as the first line, member or file (Low) ----------------------------------------------


def test_a_nesting_bomb_first_line_of_a_batch_output_is_one_problem(gsm, tmp_path):
    lines = request_lines(gsm, tmp_path)
    inputs = [{"custom_id": line["id"], "body": {"model": "m"}} for line in lines]
    output = write_rows(tmp_path / "batch_output.jsonl", batch_output(inputs, {line["id"]: ANSWER for line in lines}, set()))
    output.write_text(BOMB + "\n" + output.read_text(encoding="utf-8"), encoding="utf-8")
    for extra in ([], ["--input-format", "openai-batch"]):  # detected past the bomb, or named
        report = score_report(gsm, output, tmp_path / "r.json", *extra)
        block = report["predictions"]
        assert block["input_format"] == "openai-batch" and block["rows"] == len(lines) + 1 and block["excluded"] == 1
        assert {"line": 1, "message": "JSON nested more than 200 levels deep; not read"} in block["problems"]


def test_a_nesting_bomb_first_line_of_lm_eval_samples_is_one_problem(gsm, tmp_path):
    lines = request_lines(gsm, tmp_path)
    samples = lm_eval_samples(lines, tmp_path / "run", first=BOMB)
    (tmp_path / "run" / "results_2026-01-02.json").write_text(BOMB)  # passed over, with a note
    (tmp_path / "run" / "results_2026-01-01.json").write_text(json.dumps({"model_name": "m"}))
    report = score_report(gsm, samples, tmp_path / "r.json")
    block = report["predictions"]
    assert block["input_format"] == "lm-eval" and block["excluded"] == 1 and list(report["models"]) == ["m"]
    assert {"line": 1, "message": "JSON nested more than 200 levels deep; not read"} in block["problems"]
    assert any("results_2026-01-02.json beside it: JSON nested" in p["message"] for p in block["problems"])


def test_a_bad_lm_eval_line_is_one_problem_not_the_whole_file(gsm, tmp_path):
    lines = request_lines(gsm, tmp_path)
    samples = lm_eval_samples(lines, tmp_path / "run", first='{"doc_id": 0, "doc": ')
    with open(samples, "ab") as handle:
        handle.write(b'{"doc_id": 9, "doc": {"id": "\xff"}}\n')
    block = score_report(gsm, samples, tmp_path / "r.json", "--input-format", "lm-eval")["predictions"]
    assert {"line": 1, "message": "not valid JSON"} in block["problems"]
    assert {"line": len(lines) + 2, "message": "not UTF-8 text (convert the file to UTF-8)"} in block["problems"]


def test_nesting_bombs_in_an_inspect_log_are_one_problem_each(gsm, tmp_path, capsys):
    lines = request_lines(gsm, tmp_path)
    log = inspect_eval(tmp_path / "log.eval", lines, header=BOMB, extra={"samples/zz_epoch_1.json": BOMB.encode()})
    report = score_report(gsm, log, tmp_path / "r.json")
    problems = messages(report["predictions"]["problems"])
    assert "header.json: JSON nested more than 200 levels deep; not read; the model is named from the samples" in problems
    assert "samples/zz_epoch_1.json: JSON nested more than 200 levels deep; not read" in problems
    assert list(report["models"]) == ["openai/m"]  # named from the samples when the header cannot be read
    assert report["predictions"]["excluded"] == 1  # the bomb sample; the header is no record
    flat = tmp_path / "log.json"
    flat.write_text(BOMB)
    assert main(["score", str(gsm), str(flat), "--replicates", "0"]) == 2
    [line] = error_lines(capsys.readouterr().err)
    assert line == f"error: {flat}: not an Inspect eval log: JSON nested more than 200 levels deep; not read"


def test_odd_shapes_in_an_inspect_log_are_problems_not_crashes(gsm, tmp_path):
    lines = request_lines(gsm, tmp_path)
    odd = {
        "samples/a_epoch_1.json": json.dumps({"id": lines[0]["id"], "output": {"choices": [{"message": []}]}}).encode(),
        "samples/b_epoch_1.json": b"[]",
        "samples/c_epoch_1.json": json.dumps({"id": lines[1]["id"], "error": "\x1b[2J" + "boom" * 1000}).encode(),
    }
    log = inspect_eval(tmp_path / "log.eval", lines[2:], header="[1, 2]", extra=odd)
    report = score_report(gsm, log, tmp_path / "r.json")
    problems = messages(report["predictions"]["problems"])
    assert any("the sample output holds no completion" in p for p in problems)
    assert any("sample id is not a request id string" in p for p in problems)
    assert all("\x1b" not in p and len(p) <= 500 for p in problems)
    flat = tmp_path / "log.json"
    flat.write_text(json.dumps({"eval": {"model": 5}, "samples": 7}))
    assert main(["score", str(gsm), str(flat), "--replicates", "0"]) == 2  # 'samples' not a list: one line
