"""Inspect AI eval logs (inspect.aisi.org.uk/eval-logs.html): a `.json` log is one EvalLog object
(`version`, `status`, `eval` with `task` and `model`, `plan`, `results`, `stats`, `samples`); an
`.eval` log is a zip holding `header.json` (the EvalLog without samples) and one
`samples/<id>_epoch_<epoch>.json` per sample. A sample has `id`, `epoch`, `input`, `target`,
`messages`, `output` (`model`, `choices[].message`, `completion`), `scores`, `metadata`, `error`.

A task over these requests uses each request id as the sample id; the response is the output's
completion (else the first choice's text).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

MAX_MEMBER = 512 * 1024 * 1024  # bytes of one zip member read into memory


def is_json_log(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "samples" in data


def _content_text(content) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: [{"type": "text", "text": ...}, {"type": "reasoning", ...}]
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def sample_text(sample: dict) -> tuple[str | None, str | None]:
    """(text, failure) of one sample."""
    if sample.get("error"):
        error = sample["error"]
        return None, f"the sample failed: {error.get('message') if isinstance(error, dict) else error}"
    output = sample.get("output")
    if not isinstance(output, dict):
        return None, "the sample has no output"
    if isinstance(output.get("completion"), str) and output["completion"]:
        return output["completion"], None
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        text = _content_text((choices[0].get("message") or {}).get("content"))
        if text is not None:
            return text, None
    if isinstance(output.get("completion"), str):
        return output["completion"], None
    return None, "the sample output holds no completion"


def _json(raw: bytes, where: str):
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError(f"{where} is not UTF-8 JSON") from None


def read_log(path: Path) -> tuple[str | None, list[dict]]:
    """(model, samples) of a .json or .eval log; ValueError for a file that is not one."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            header = {}
            for name in ("header.json", "_journal/start.json"):
                if name in names:
                    header = _json(archive.read(name), name)
                    break
            samples = []
            for name in sorted(n for n in names if n.startswith("samples/") and n.endswith(".json")):
                if archive.getinfo(name).file_size > MAX_MEMBER:
                    raise ValueError(f"{name} is larger than {MAX_MEMBER} bytes")
                samples.append(_json(archive.read(name), name))
        if not header and not samples:
            raise ValueError("a zip file without header.json or samples/: not an Inspect .eval log")
        return (header.get("eval") or {}).get("model"), samples
    data = _json(path.read_bytes(), "the file")
    if not is_json_log(data):
        raise ValueError("not an Inspect eval log (expected an object with 'eval' and 'samples')")
    return data["eval"].get("model"), list(data.get("samples") or [])
