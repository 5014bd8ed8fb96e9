"""`ctxrobust export lm-eval`: the task folder it writes, and the REAL lm_eval run on it against the stand-in
endpoint, whose samples score with `ctxrobust score` exactly as the same answers written as native rows."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from chat_server import ChatServer
from runners import MODEL, answer_for, figures, native_rows, requests_of, run, runner, score, text_of, write_rows
from test_eval_gsm_ic import BASES, SUBSET, VARIANTS
from test_eval_gsm_ic import write_release as write_gsm_ic
from test_eval_misleadqa import MAIN
from test_eval_misleadqa import write_release as write_misleadqa

from ctxrobust.commands import export
from ctxrobust.errors import CtxRobustError
from ctxrobust.integrations.lm_eval_task import DEFAULT_MAX_GEN_TOKS, TASK_MODULE

GSM_FLAGS = ["--replicates", "50"]
MQA_FLAGS = ["--replicates", "50", "--min-clusters", "1"]


def export_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ctxrobust export")
    export.add_arguments(parser)
    return parser.parse_args(list(argv))


def exported(release: Path, folder: Path, *flags: str) -> Path:
    assert export.run(export_args("lm-eval", str(release), str(folder), "-q", *flags)) == 0
    return folder


def yaml_of(path: Path) -> dict:
    """A task YAML as lm-eval reads it (its `!function` tags kept as text)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))
    return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)


# ------------------------------------------------------------------------------------ the folder


def test_a_task_per_part_a_group_and_the_requests_as_prompts_writes_them(tmp_path):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    folder = exported(release, tmp_path / "tasks")
    assert sorted(p.name for p in folder.iterdir()) == [
        "ctxrobust_gsm_ic.yaml",
        "ctxrobust_gsm_ic_base.jsonl",
        "ctxrobust_gsm_ic_base.yaml",
        "ctxrobust_gsm_ic_variant.jsonl",
        "ctxrobust_gsm_ic_variant.yaml",
        TASK_MODULE,
    ]
    group = yaml_of(folder / "ctxrobust_gsm_ic.yaml")
    assert group["group"] == "ctxrobust_gsm_ic" and group["task"] == ["ctxrobust_gsm_ic_base", "ctxrobust_gsm_ic_variant"]
    base = yaml_of(folder / "ctxrobust_gsm_ic_base.yaml")
    assert base["task"] == "ctxrobust_gsm_ic_base" and base["output_type"] == "generate_until"
    assert base["class"] == "!function ctxrobust_requests.RequestsTask"
    assert base["dataset_kwargs"] == {"data_files": "ctxrobust_gsm_ic_base.jsonl"}
    # GSM-IC Section 5: greedy; no stop sequence; lm-eval always sends a token limit, so a generous one
    assert base["generation_kwargs"] == {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": DEFAULT_MAX_GEN_TOKS}
    lines = requests_of(release, tmp_path / "requests.jsonl")
    docs = [
        json.loads(line) for name in ("base", "variant") for line in (folder / f"ctxrobust_gsm_ic_{name}.jsonl").read_text().splitlines()
    ]
    assert docs == lines  # each document is the request line `prompts` writes: its id, its messages


def test_the_sampling_flags_and_a_single_part_make_one_task(tmp_path):
    release = write_misleadqa(tmp_path / "release", MAIN)
    folder = exported(release, tmp_path / "tasks", "--name", "mqa", "--prompt", "cf", "--max-tokens", "8", "--top-p", "0.5")
    assert sorted(p.name for p in folder.iterdir()) == [TASK_MODULE, "mqa.jsonl", "mqa.yaml"]
    task = yaml_of(folder / "mqa.yaml")
    assert task["task"] == "mqa" and "group" not in task
    assert task["generation_kwargs"] == {"until": [], "do_sample": False, "temperature": 0.0, "top_p": 0.5, "max_gen_toks": 8}
    docs = [json.loads(line) for line in (folder / "mqa.jsonl").read_text().splitlines()]
    assert len(docs) == 6 * 7 + 6 and {d["id"].split("/")[1][:3] for d in docs if d["condition"] != "none"} == {"cf:"}


def test_pseudowords_sampling_is_the_papers_and_each_sample_is_its_own_document(tmp_path):
    from test_eval_pseudowords import make_release

    release = make_release(tmp_path / "release").path
    bench = tmp_path / "bench.jsonl"
    bench.write_text('{"id": "q1", "question": "Why?", "answer": "because"}\n', encoding="utf-8")
    folder = exported(release, tmp_path / "tasks", "--benchmark", str(bench))
    baseline = yaml_of(folder / "ctxrobust_pseudowords_baseline.yaml")
    assert baseline["generation_kwargs"]["temperature"] == 1.0 and baseline["generation_kwargs"]["do_sample"] is True  # Section 2
    ids = [json.loads(line)["id"] for line in (folder / "ctxrobust_pseudowords_baseline.jsonl").read_text().splitlines()]
    assert ids == [f"q1/-/{k}" for k in range(20)]  # p = 20 no-context samples, one document each
    assert yaml_of(folder / "ctxrobust_pseudowords.yaml")["task"] == ["ctxrobust_pseudowords_baseline", "ctxrobust_pseudowords_cha"]


def test_refusals_leave_nothing_behind(tmp_path):
    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "other.yaml").write_text("task: other\n")
    for folder, flags, words in (
        (busy, [], "is not empty"),
        (release / "tasks", [], "inside the release folder"),
        (tmp_path / "no" / "such" / "tasks", [], "does not exist"),
        (tmp_path / "named", ["--name", "1-bad name"], "a task name is a letter"),
        (tmp_path / "options", ["--benchmark", "x.jsonl"], "--benchmark"),
    ):
        with pytest.raises(CtxRobustError, match=words):
            export.run(export_args("lm-eval", str(release), str(folder), "-q", *flags))
    mqa = write_misleadqa(tmp_path / "mqa", MAIN)
    with pytest.raises(CtxRobustError, match="use --samples 1"):  # found while the requests are written
        export.run(export_args("lm-eval", str(mqa), str(tmp_path / "midway"), "-q", "--samples", "2"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["busy", "mqa", "release"]  # no temporary folder, no partial export
    assert sorted(p.name for p in busy.iterdir()) == ["other.yaml"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert exported(release, empty).is_dir() and (empty / TASK_MODULE).is_file()


# ------------------------------------------------------------------------------------ the real lm_eval


def lm_eval(folder: Path, tasks: str, server: ChatServer, out: Path, home: Path):
    return run(
        [
            runner("lm_eval", "lm_eval"),
            "--include_path",
            folder,
            "--tasks",
            tasks,
            "--model",
            "local-chat-completions",
            "--model_args",
            f"base_url={server.url}/chat/completions,model={MODEL}",
            "--apply_chat_template",
            "--log_samples",
            "--output_path",
            out,
        ],
        home,
    )


def test_lm_eval_runs_the_exported_task_and_its_samples_score_like_native_rows(tmp_path):
    runner("lm_eval", "lm_eval")
    release = write_misleadqa(tmp_path / "release", MAIN)
    folder = exported(release, tmp_path / "tasks")
    lines = requests_of(release, tmp_path / "requests.jsonl")
    with ChatServer(answer_for("misleadqa"), model=MODEL) as server:
        lm_eval(folder, "ctxrobust_misleadqa", server, tmp_path / "out", tmp_path)
    # every request sent once, its messages exactly as `prompts` writes them, greedy (MisleadQA §4.1)
    assert sorted(json.dumps(b["messages"]) for b in server.bodies) == sorted(json.dumps(line["messages"]) for line in lines)
    assert {(b["temperature"], b["max_tokens"], json.dumps(b["stop"])) for b in server.bodies} == {(0.0, DEFAULT_MAX_GEN_TOKS, "[]")}
    (samples,) = (tmp_path / "out").glob("*/samples_ctxrobust_misleadqa_*.jsonl")
    via_lm_eval = score(release, samples, tmp_path / "lm-eval.json", MQA_FLAGS)
    assert via_lm_eval["predictions"]["input_format"] == "lm-eval"
    (model,) = via_lm_eval["models"]
    native = write_rows(tmp_path / "native.jsonl", native_rows("misleadqa", lines, model))
    assert figures(via_lm_eval) == figures(score(release, native, tmp_path / "native.json", MQA_FLAGS))
    assert len(lines) == 48 and via_lm_eval["predictions"]["rows"] == 48


@pytest.fixture(scope="module")
def gsm_run(tmp_path_factory):
    """A real lm_eval run of the gsm-ic group (base problems and variants) against the stand-in."""
    runner("lm_eval", "lm_eval")
    root = tmp_path_factory.mktemp("gsm-run")
    release = write_gsm_ic(root / "release", BASES, VARIANTS, SUBSET).path
    folder = exported(release, root / "tasks")
    lines = requests_of(release, root / "requests.jsonl")
    with ChatServer(answer_for("gsm-ic"), model=MODEL) as server:
        lm_eval(folder, "ctxrobust_gsm_ic", server, root / "out", root)
    assert sorted(text_of(b["messages"]) for b in server.bodies) == sorted(text_of(line["messages"]) for line in lines)
    (run_folder,) = (root / "out").iterdir()
    return root, release, lines, run_folder


def test_each_part_of_an_lm_eval_group_run_scores_like_its_native_rows(gsm_run):
    root, release, lines, run_folder = gsm_run
    for kind in ("base", "variant"):
        (samples,) = run_folder.glob(f"samples_ctxrobust_gsm_ic_{kind}_*.jsonl")
        via_lm_eval = score(release, samples, root / f"{kind}.json", GSM_FLAGS)
        assert via_lm_eval["predictions"]["input_format"] == "lm-eval"
        (model,) = via_lm_eval["models"]
        part = [line for line in lines if line["meta"]["kind"] == kind]
        native = write_rows(root / f"{kind}.jsonl", native_rows("gsm-ic", part, model))
        assert figures(via_lm_eval) == figures(score(release, native, root / f"{kind}-native.json", GSM_FLAGS))
        assert via_lm_eval["predictions"]["rows"] == len(part)


def test_the_run_folder_of_an_lm_eval_group_scores_as_one_model(gsm_run):
    root, release, lines, run_folder = gsm_run
    via_lm_eval = score(release, run_folder, root / "folder.json", GSM_FLAGS)
    (model,) = via_lm_eval["models"]
    native = score(release, write_rows(root / "all.jsonl", native_rows("gsm-ic", lines, model)), root / "all-native.json", GSM_FLAGS)
    # the per-model figures; a folder is scored as files given together, whose report also has the
    # several-submissions blocks (differences, leaderboard), empty for one model
    assert via_lm_eval["models"] == native["models"] and via_lm_eval["summary"] == native["summary"]
    assert via_lm_eval["predictions"]["rows"] == len(lines)


def test_the_command_line_runs_export(tmp_path, capsys):
    from ctxrobust import cli

    release = write_gsm_ic(tmp_path / "release", BASES, VARIANTS, SUBSET).path
    assert cli.main(["export", "lm-eval", str(release), str(tmp_path / "tasks"), "--subset", "4k"]) == 0
    assert "--tasks ctxrobust_gsm_ic " in capsys.readouterr().err
    assert len((tmp_path / "tasks" / "ctxrobust_gsm_ic_variant.jsonl").read_text().splitlines()) == len(SUBSET)
    assert cli.main(["export", "lm-eval", str(release), str(tmp_path / "tasks")]) == 2  # not empty now
    assert "is not empty" in capsys.readouterr().err
