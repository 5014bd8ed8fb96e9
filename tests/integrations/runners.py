"""The real evaluation runners the integration tests drive, and the release, answers and native rows they
share: lm-eval and Inspect AI come with the `runners` extra; without it these tests skip, saying so, except
where CI or CTXROBUST_REQUIRE_SOURCES=1 asks for every test to run, where a missing runner fails."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrobust.canonical import dumps
from ctxrobust.cli import main

BIN = Path(sys.executable).parent  # the venv's scripts: lm_eval, inspect
EXTRA_HINT = "install the runners extra (`make install`, or pip install -e '.[runners]')"
MODEL = "served-model"
GSM_ANSWERS = ["The answer is 12.", "So 1250 in all. The answer is 1,250.", "The answer is 7.5.", "#### 8", "I cannot tell."]
MQA_ANSWERS = ["A", "B", "C", "D", "E", "B.", " C\n", "none of these"]


def required() -> bool:
    """Whether a test may not skip for want of a runner: in CI, or when every source test must run."""
    return os.environ.get("CI", "").strip().lower() == "true" or os.environ.get("CTXROBUST_REQUIRE_SOURCES", "").strip() not in ("", "0")


def runner(module: str, script: str) -> Path:
    """The runner's console script; skips (or, when required, fails) without the runners extra."""
    if required():
        importlib.import_module(module)  # a missing runner is an error here, not a skip
    else:
        pytest.importorskip(module, reason=f"{module} is not installed; {EXTRA_HINT}")
    path = BIN / script
    if not path.is_file():
        message = f"{path}: no {script} script beside this Python; {EXTRA_HINT}"
        pytest.fail(message) if required() else pytest.skip(message)
    return path


def text_of(messages: list[dict]) -> str:
    """The text of a conversation however a runner sends it (content as a string or as text parts)."""
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(f"{message.get('role')}: {content}")
    return "\n".join(parts)


def answer_for(dataset: str):
    """The stand-in's answer to a conversation: one of the dataset's answers, chosen by its text alone."""
    table = GSM_ANSWERS if dataset == "gsm-ic" else MQA_ANSWERS
    return lambda messages, n=0: table[int(hashlib.sha256(text_of(messages).encode("utf-8")).hexdigest(), 16) % len(table)]


def requests_of(release: Path, out: Path, flags=()) -> list[dict]:
    assert main(["prompts", str(release), *flags, "-o", str(out), "-q"]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def native_rows(dataset: str, lines: list[dict], model: str) -> list[dict]:
    """The rows a user would write by hand for the stand-in's answers, in the dataset's documented format."""
    answer = answer_for(dataset)
    rows = []
    for line in lines:
        text = answer(line["messages"])
        if dataset == "gsm-ic":
            rows.append({"model": model, "id": line["item"], "response": text})
        else:
            row = {"model": model, "id": line["item"], "condition": line["condition"], "response": text}
            if line["meta"]["prompt"] != "original":
                row["prompt"] = line["meta"]["prompt"]
            rows.append(row)
    return rows


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def score(release: Path, predictions, out: Path, flags=()) -> dict:
    """`ctxrobust score RELEASE PREDICTIONS...` with no format flag, as a user types it."""
    paths = [str(p) for p in (predictions if isinstance(predictions, (list, tuple)) else [predictions])]
    assert main(["score", str(release), *paths, *flags, "-o", str(out), "-q"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def figures(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "predictions"}


def run(command: list, home: Path, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """A runner's command line, offline, its caches and data under `home`; it must succeed."""
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(home / "hf"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_DATA_HOME": str(home / "data"),
        "LOCAL_API_KEY": "not-a-secret",  # Inspect's openai-api/local provider reads its key here
    }
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    assert done.returncode == 0, f"{command[0]} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    return done
