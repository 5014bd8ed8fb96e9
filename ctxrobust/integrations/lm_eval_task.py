"""An lm-evaluation-harness task folder made from a release's requests (`ctxrobust export lm-eval`).

The folder holds, per part of the requests (gsm-ic: base problems and variants; misleadqa: its splits;
pseudowords: the no-context baseline and each context kind), a task YAML and its data, one request line
of `ctxrobust prompts` per document (request id in `id`, messages as sent); a group YAML over the parts
when there are several; and `ctxrobust_requests.py`, the task class the YAMLs name, which sends each
request's messages as they are. `lm_eval --include_path DIR --tasks NAME --model local-chat-completions
--apply_chat_template --log_samples --output_path OUT` runs it, and `ctxrobust score RELEASE` reads the
samples back by `doc.id`.

Generation follows the dataset's sampling plan (the papers' settings): its temperature (greedy, 0, for
gsm-ic, GSM-IC Section 5, and misleadqa, MisleadQA §4.1; 1.0 for pseudowords, Section 2) and top-p; no
stop sequence; one document per sample, so the repeated samples of a plan are separate requests with
their own ids. `ctxrobust prompts` sends no token limit unless `--max-tokens` is given, but lm-eval
always sends one (256 by default, short for chain of thought), so the tasks ask for `max_tokens` or,
without it, DEFAULT_MAX_GEN_TOKS.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import IO, Callable, Iterable, Optional

from pydantic import BaseModel

from ctxrobust.canonical import dumps
from ctxrobust.errors import CtxRobustError
from ctxrobust.output import release_folder_above

TASK_MODULE = "ctxrobust_requests.py"  # the task class, beside the YAMLs (its source: lm_eval_requests.py)
TASK_MODULE_SOURCE = "lm_eval_requests.py"
DEFAULT_MAX_GEN_TOKS = 1024  # tokens per answer when the plan sets none: room for a worked solution
METRIC = "answered"  # the share of non-empty responses; the figures come from `ctxrobust score`
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,79}")


def _pseudowords_part(request) -> str:
    return "baseline" if request.condition is None else request.condition.split("-", 1)[0]


# what splits a release's requests into tasks: each dataset's kind or split of request
PARTS: dict[str, Callable] = {
    "gsm-ic": lambda request: request.meta.get("kind"),
    "misleadqa": lambda request: request.meta.get("split"),
    "pseudowords": _pseudowords_part,
}


class ExportedTask(BaseModel):
    name: str
    part: str
    requests: int
    yaml: str  # file names inside the folder
    data: str


class TaskFolder(BaseModel):
    """What `write_task_folder` wrote: the tasks, and the group to run them all (None for a single task)."""

    folder: Path
    dataset: str
    group: Optional[str]
    tasks: list[ExportedTask]
    generation_kwargs: dict

    @property
    def entry(self) -> str:
        """The name to give `lm_eval --tasks`."""
        return self.group or self.tasks[0].name


def default_name(dataset: str) -> str:
    return "ctxrobust_" + re.sub(r"[^A-Za-z0-9]+", "_", dataset).strip("_").lower()


def _part_token(part: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", part).strip("_").lower() or "requests"


def generation_kwargs(sampling: dict, max_gen_toks: int = DEFAULT_MAX_GEN_TOKS) -> dict:
    """lm-eval's generation settings for a request's sampling parameters (`Request.sampling`)."""
    temperature = float(sampling.get("temperature", 0.0))
    kwargs = {"until": [], "do_sample": temperature > 0, "temperature": temperature}
    if sampling.get("top_p") is not None:
        kwargs["top_p"] = sampling["top_p"]
    kwargs["max_gen_toks"] = int(sampling.get("max_tokens") or max_gen_toks)
    return kwargs


def _value(value) -> str:
    """A YAML scalar or flow collection: JSON is YAML."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def task_yaml(name: str, data: str, kwargs: dict, dataset: str, part: str) -> str:
    module = Path(TASK_MODULE).stem
    return "\n".join(
        [
            f"# ctxrobust {dataset}: the {part} requests; run with --apply_chat_template --log_samples, then `ctxrobust score`",
            f"task: {name}",
            f"class: !function {module}.RequestsTask",
            f"custom_dataset: !function {module}.load_requests",
            f"dataset_kwargs: {_value({'data_files': data})}",
            "test_split: test",
            "output_type: generate_until",
            f"generation_kwargs: {_value(kwargs)}",
            "repeats: 1",
            f"process_results: !function {module}.process_results",
            f"metric_list: {_value([{'metric': METRIC, 'aggregation': 'mean', 'higher_is_better': True}])}",
            f"metadata: {_value({'version': 1.0, 'ctxrobust_dataset': dataset, 'ctxrobust_part': part})}",
            "",
        ]
    )


def group_yaml(group: str, tasks: list[str], dataset: str) -> str:
    return "\n".join(
        [
            f"# ctxrobust {dataset}: every request of the export; `ctxrobust score` reads the samples of all its tasks",
            f"group: {group}",
            f"task: {_value(tasks)}",
            f"aggregate_metric_list: {_value([{'metric': METRIC, 'aggregation': 'mean', 'weight_by_size': True}])}",
            f"metadata: {_value({'version': 1.0})}",
            "",
        ]
    )


def check_folder(target: Path, inputs: Iterable[Path] = ()) -> Path:
    """The folder to write, checked before any work: new (or an empty folder), its parent there, not a
    link, not inside a release folder, holding none of the command's inputs."""
    target = Path(target)
    if target.is_symlink():
        raise CtxRobustError(f"{target}: is a link; give a new folder to write the tasks into")
    if not target.parent.is_dir():
        raise CtxRobustError(f"{target}: the folder {target.parent} does not exist; create it or write elsewhere")
    if os.path.lexists(target):
        if not target.is_dir():
            raise CtxRobustError(f"{target}: exists and is not a folder; give a new folder to write the tasks into")
        if any(target.iterdir()):
            raise CtxRobustError(f"{target}: is not empty; give a new (or empty) folder, lm-eval reads every YAML in it")
    frozen = release_folder_above(target.parent.resolve()) or release_folder_above(target.absolute())
    if frozen is not None:
        raise CtxRobustError(f"{target}: is inside the release folder {frozen}, which is frozen; write outside it")
    for given in inputs:
        if Path(given).resolve().is_relative_to(target.resolve()):
            raise CtxRobustError(f"{target}: holds an input of this command ({given}); write elsewhere")
    return target


def write_task_folder(
    requests: Iterable,
    dataset: str,
    target: Path,
    name: str | None = None,
    max_gen_toks: int = DEFAULT_MAX_GEN_TOKS,
    inputs: Iterable[Path] = (),
) -> TaskFolder:
    """Write the task folder for `requests` (ctxrobust Requests of one dataset) at `target`, whole or not at all:
    it is built in a new temporary folder beside it and renamed into place."""
    name = name or default_name(dataset)
    if not NAME.fullmatch(name):
        raise CtxRobustError(f"--name {name!r}: a task name is a letter, then letters, digits or _ (at most 80 characters)")
    target = check_folder(target, inputs)
    part_of = PARTS.get(dataset, lambda request: None)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent))
    except OSError as exc:
        raise CtxRobustError(f"{target}: cannot write beside it ({exc.strerror or exc})") from None
    done = False
    handles: dict[str, IO] = {}
    try:
        counts: dict[str, int] = {}
        sampling: dict | None = None
        for request in requests:
            part = _part_token(str(part_of(request) or "requests"))
            if sampling is None:
                sampling = request.sampling
            elif request.sampling != sampling:
                raise CtxRobustError(f"request {request.id}: its sampling differs from the others'; one export has one sampling plan")
            if part not in handles:
                handles[part] = open(staging / f"{name}_{part}.jsonl", "x", encoding="utf-8", newline="\n")
            handles[part].write(dumps(request.model_dump()) + "\n")
            counts[part] = counts.get(part, 0) + 1
        for handle in handles.values():
            handle.close()
        if not counts:
            raise CtxRobustError(f"{dataset}: no requests to export; check the selection options")
        kwargs = generation_kwargs(sampling or {}, max_gen_toks)
        single = len(counts) == 1
        tasks = []
        for part in sorted(counts):
            task = name if single else f"{name}_{part}"
            data = f"{name}_{part}.jsonl"
            if single and data != f"{task}.jsonl":
                os.rename(staging / data, staging / f"{task}.jsonl")
                data = f"{task}.jsonl"
            _write(staging / f"{task}.yaml", task_yaml(task, data, kwargs, dataset, part))
            tasks.append(ExportedTask(name=task, part=part, requests=counts[part], yaml=f"{task}.yaml", data=data))
        group = None if single else name
        if group is not None:
            _write(staging / f"{group}.yaml", group_yaml(group, [t.name for t in tasks], dataset))
        _write(staging / TASK_MODULE, resources.files("ctxrobust.integrations").joinpath(TASK_MODULE_SOURCE).read_text(encoding="utf-8"))
        for path in staging.iterdir():
            os.chmod(path, 0o644)
        os.chmod(staging, 0o755)
        os.rename(staging, target)  # over an empty folder too; one that is no longer empty is not replaced
        done = True
    except OSError as exc:
        raise CtxRobustError(f"{target}: cannot write the task folder ({exc.strerror or exc})") from None
    finally:
        for handle in handles.values():
            handle.close()
        if not done:
            shutil.rmtree(staging, ignore_errors=True)
    return TaskFolder(folder=target, dataset=dataset, group=group, tasks=tasks, generation_kwargs=kwargs)


def _write(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
