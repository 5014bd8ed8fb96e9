"""`ctxrobust.integrations.inspect`: the REAL `inspect eval` of the task against the stand-in endpoint;
its logs, `.eval` (the default) and `.json`, score with `ctxrobust score` exactly as the same answers
written as native rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_server import ChatServer
from runners import MODEL, answer_for, figures, native_rows, requests_of, run, runner, score, write_rows
from test_eval_gsm_ic import BASES, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic
from test_eval_misleadqa import MAIN, SUPPLEMENT
from test_eval_misleadqa import write_release as write_misleadqa

from ctxrobust.errors import CtxRobustError

REPO = Path(__file__).resolve().parents[2]
TASK = Path("ctxrobust") / "integrations" / "inspect.py"  # from the checkout's root, as the docs give it
PROVIDER = f"openai-api/local/{MODEL}"  # the OpenAI-compatible provider that takes a base URL (key: LOCAL_API_KEY)
FLAGS = {"gsm-ic": ["--replicates", "50"], "misleadqa": ["--replicates", "50", "--min-clusters", "1"]}


def release_of(dataset: str, folder: Path) -> Path:
    if dataset == "gsm-ic":
        return write_gsm_ic(folder, BASES, VARIANTS, SUBSET).path
    return write_misleadqa(folder, MAIN, SUPPLEMENT)


def inspect_eval(release: Path, server: ChatServer, logs: Path, home: Path, log_format: str | None, *task_args: str) -> Path:
    """`inspect eval` of the task: from the checkout's root by its relative path (the default .eval log), or from
    elsewhere by its absolute path and task name (`.../inspect.py@ctxrobust`, how an installed copy is named)."""
    task, cwd = (TASK, REPO) if log_format is None else (f"{(REPO / TASK).resolve()}@ctxrobust", home)
    command = [runner("inspect_ai", "inspect"), "eval", task, "--model", PROVIDER, "--model-base-url", server.url]
    command += ["-T", f"release={release}", *(a for arg in task_args for a in ("-T", arg))]
    command += ["--log-dir", logs, "--display", "plain", "--no-log-realtime"]
    if log_format:
        command += ["--log-format", log_format]
    run(command, home, cwd=cwd)
    (log,) = logs.iterdir()
    return log


@pytest.mark.parametrize(("dataset", "log_format"), [("gsm-ic", None), ("misleadqa", "json")])
def test_inspect_eval_logs_score_like_native_rows(dataset, log_format, tmp_path):
    runner("inspect_ai", "inspect")
    release = release_of(dataset, tmp_path / "release")
    lines = requests_of(release, tmp_path / "requests.jsonl")
    with ChatServer(answer_for(dataset), model=MODEL) as server:
        log = inspect_eval(release, server, tmp_path / "logs", tmp_path, log_format)
    assert log.suffix == (".eval" if log_format is None else ".json")  # .eval is Inspect's default
    # every request sent once, its messages as `prompts` writes them, with the paper's greedy decoding and no token limit
    assert sorted(json.dumps(b["messages"], sort_keys=True) for b in server.bodies) == sorted(
        json.dumps(line["messages"], sort_keys=True) for line in lines
    )
    assert all(b["temperature"] == 0.0 and "max_tokens" not in b and "max_completion_tokens" not in b for b in server.bodies)
    via_inspect = score(release, log, tmp_path / "inspect.json", FLAGS[dataset])
    assert via_inspect["predictions"]["input_format"] == "inspect"
    (model,) = via_inspect["models"]
    native = write_rows(tmp_path / "native.jsonl", native_rows(dataset, lines, model))
    assert figures(via_inspect) == figures(score(release, native, tmp_path / "native.json", FLAGS[dataset]))
    assert via_inspect["predictions"]["rows"] == len(lines)


def test_the_task_takes_prompt_options_and_sampling_and_refuses_what_does_not_apply(tmp_path, monkeypatch):
    runner("inspect_ai", "inspect")
    from ctxrobust.integrations.inspect import ctxrobust
    from ctxrobust.integrations.release_requests import TASK_FOLDER

    release = write_misleadqa(tmp_path / "release", MAIN)
    monkeypatch.chdir(TASK_FOLDER)  # Inspect builds a task inside its file's folder: relative paths are the user's ($PWD)
    monkeypatch.setenv("PWD", str(tmp_path))
    task = ctxrobust(release="release", prompt="cf", max_tokens=5, temperature=0.3)
    samples = list(task.dataset)
    assert len(samples) == 48 and samples[1].id == "q1/cf:G/0" and samples[1].metadata["condition"] == "G"
    assert samples[1].input[0].role == "user" and samples[1].input[0].content.startswith(
        "Answer the following multiple-choice question using only"
    )
    assert (task.config.temperature, task.config.max_tokens, task.config.top_p) == (0.3, 5, None)
    with pytest.raises(CtxRobustError, match="--benchmark"):
        ctxrobust(release=str(release), benchmark="b.jsonl")
    with pytest.raises(CtxRobustError, match="a misleadqa release, not gsm-ic"):
        ctxrobust(release=str(release), dataset="gsm-ic")
    with pytest.raises(CtxRobustError, match="use --samples 1"):
        ctxrobust(release=str(release), samples=2)


def test_a_relative_release_is_taken_from_the_working_folder_whatever_pwd_says(tmp_path, monkeypatch):
    runner("inspect_ai", "inspect")
    from ctxrobust.integrations.inspect import ctxrobust

    write_misleadqa(tmp_path / "release", MAIN)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)  # the installed task (`inspect eval ctxrobust/ctxrobust`): no chdir
    monkeypatch.setenv("PWD", str(tmp_path / "elsewhere"))  # stale: a process started with another cwd
    assert len(list(ctxrobust(release="release").dataset)) == 48  # 6 items, 8 conditions each


def test_requests_of_two_sampling_plans_are_refused_in_one_line(tmp_path, monkeypatch):
    runner("inspect_ai", "inspect")
    from ctxrobust.integrations import inspect as inspect_task
    from ctxrobust.integrations.release_requests import release_requests

    release = write_misleadqa(tmp_path / "release", MAIN)

    def mixed(loaded, options, sampling):
        name, requests = release_requests(loaded, options, sampling)
        requests = list(requests)
        return name, [*requests[:-1], requests[-1].model_copy(update={"sampling": {"temperature": 0.7}})]

    monkeypatch.setattr(inspect_task, "release_requests", mixed)
    with pytest.raises(CtxRobustError, match="its sampling differs from the others'; one task has one sampling plan"):
        inspect_task.ctxrobust(release=str(release))


def test_the_installed_entry_point_runs_the_task_from_any_folder(tmp_path):
    release = release_of("gsm-ic", tmp_path / "release")
    lines = requests_of(release, tmp_path / "requests.jsonl")
    command = [runner("inspect_ai", "inspect"), "eval", "ctxrobust/ctxrobust", "--model", PROVIDER]
    with ChatServer(answer_for("gsm-ic"), model=MODEL) as server:
        command += ["--model-base-url", server.url, "-T", "release=release", "--log-dir", "logs", "--display", "plain"]
        run(command, tmp_path, cwd=tmp_path)  # a relative release, from the folder the command started in
    assert server.calls == len(lines)
    (log,) = (tmp_path / "logs").iterdir()
    assert score(release, log, tmp_path / "inspect.json", FLAGS["gsm-ic"])["predictions"]["rows"] == len(lines)
