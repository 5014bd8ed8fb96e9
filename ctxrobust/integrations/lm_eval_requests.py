"""The lm-evaluation-harness task class of an exported task folder, copied there as `ctxrobust_requests.py`
(each task YAML names it: `class: !function ctxrobust_requests.RequestsTask`). It imports lm_eval and
nothing of ctxrobust, so the folder runs wherever lm-eval does.

A document is one request line of `ctxrobust prompts` (`id`, `messages`, `sampling`, `meta`, ...), read
as it is from the JSONL beside this file. Under `--apply_chat_template` the request's messages are the
chat, exactly (system, exemplar turns and question); without it, the request's plain text prompt. The
task's one metric, `answered`, is the share of non-empty responses: the papers' figures come from
`ctxrobust score` over the samples that `--log_samples` writes.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from lm_eval.api.task import ConfigurableTask

HERE = Path(__file__).resolve().parent
MAX_LINE = 64 * 1024 * 1024  # bytes of one request line (a 10k-token context is about 60 KB)
logger = logging.getLogger(__name__)


class Documents(list):
    """The requests as lm-eval's evaluation split: a list, with the `features` lm-eval reads of a dataset."""

    def __init__(self, rows: list[dict]):
        super().__init__(rows)
        self.features = {key: None for key in (rows[0] if rows else {"id": None})}


def load_requests(data_files: str | None = None, **_) -> dict:
    """`custom_dataset`: {"test": the request lines of `data_files`}, a file beside this one."""
    if not data_files or Path(data_files).name != data_files:
        raise ValueError(f"data_files {data_files!r}: name a requests file in {HERE}")
    rows = []
    with open(HERE / data_files, "rb") as handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE + 1), b""), start=1):
            if len(raw) > MAX_LINE:
                raise ValueError(f"{data_files}:{number}: a line longer than {MAX_LINE} bytes")
            if raw.strip():
                row = json.loads(raw)
                if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("messages"), list):
                    raise ValueError(f"{data_files}:{number}: not a request line (expected id and messages)")
                rows.append(row)
    return {"test": Documents(rows)}


def prompt_text(doc: dict) -> str:
    """The request as one text prompt, for models without a chat template: its `meta.text` where the
    dataset writes one, else the messages' contents separated by blank lines."""
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
    if isinstance(meta.get("text"), str):
        return meta["text"]
    return "\n\n".join(str(m.get("content", "")) for m in doc["messages"])


def process_results(doc: dict, results: list) -> dict:
    response = results[0] if results else ""
    return {"answered": float(isinstance(response, str) and bool(response.strip()))}


class RequestsTask(ConfigurableTask):
    """A generate-until task whose prompt is each request's own messages."""

    def __init__(self, config: dict | None = None, **kwargs):
        super().__init__(config={k: v for k, v in (config or {}).items() if k != "class"}, **kwargs)

    def doc_to_text(self, doc, doc_to_text=None):
        return prompt_text(doc)

    def doc_to_target(self, doc, doc_to_target=None):
        return ""

    def fewshot_context(
        self,
        doc,
        num_fewshot,
        system_instruction=None,
        apply_chat_template=False,
        fewshot_as_multiturn=False,
        chat_template=None,
        gen_prefix=None,
    ):
        if num_fewshot or system_instruction:
            logger.warning(
                "%s: the requests carry their own prompts; --num_fewshot and --system_instruction are not used", self.config.task
            )
        if apply_chat_template and chat_template is not None:
            return chat_template([dict(m) for m in doc["messages"]], add_generation_prompt=True)
        return prompt_text(doc)
