"""The report shape every scorer returns, and the pieces its Markdown and HTML renderings share."""

from __future__ import annotations

import base64
import html
import io
import math
import numbers
import os
import re
import unicodedata
from typing import Any, Iterable, Sequence

from ctxrobust.evaluation import metrics
from ctxrobust.evaluation.metrics import CORRELATION, COUNT, DIFFERENCE, FRACTION, INDEX, INDICATOR, RATIO  # noqa: F401 (units, named here too)
from ctxrobust.release import Release

MAX_SHOWN = 200  # characters of one user-supplied value in a message or report; longer ones are cut, with their length
CSV_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_MD_ESCAPES = {"\\": "\\\\", "|": "\\|", "<": "&lt;", "](": "]\\(", "`": "\\`"}
_MD_SPECIAL = re.compile("|".join(re.escape(k) for k in _MD_ESCAPES))


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def path_text(path: Any) -> str:
    """A file name as text that any UTF-8 output can hold: bytes that are not UTF-8 written as \\xNN (a JSON
    report would otherwise fail on the lone surrogates Python reads them as); nothing else changed."""
    try:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    except (TypeError, ValueError):
        return str(path).encode("utf-8", "backslashreplace").decode("utf-8")


def plain(value: Any, limit: int | None = MAX_SHOWN) -> str:
    """A user-supplied string safe for one line of a terminal or a report: control, format and line-break
    characters written as escapes, and cut when longer than `limit` (with its length)."""
    text = str(value)
    cut = limit is not None and len(text) > limit
    shown = text[:limit] if cut else text
    if not shown.isprintable():
        shown = "".join(c if c.isprintable() or c == " " else _escaped(c) for c in shown)
    return shown + (f"... ({len(text)} characters)" if cut else "")


def has_control(text: str) -> bool:
    """Whether text holds control or format characters (escape sequences, line breaks, bidi overrides) or lone
    surrogates (not text at all: no UTF-8 output can hold them)."""
    return any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs") for c in text)


def md_text(value: Any, limit: int | None = MAX_SHOWN) -> str:
    """A user-supplied string as literal Markdown text: no table cell break, HTML, link, code span or line
    break (so no heading or list either)."""
    return _MD_SPECIAL.sub(lambda m: _MD_ESCAPES[m.group(0)], plain(value, limit))


def csv_cell(value: Any) -> str:
    """One CSV cell that a spreadsheet shows as it is and never runs as a formula: the one place every CSV
    the project writes passes its cells through (reports, leaderboards, exports, review sheets).

    None is an empty cell (a missing value); a number is written as itself (a float as the shortest text
    that reads back as the same float), so a negative figure stays a number; any other value is text, with
    control characters written as escapes, and prefixed with a single quote when it starts with a
    character a spreadsheet reads as the start of a formula (= + - @, a tab or carriage return, or their
    full-width forms: OWASP's guidance on CSV injection)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))  # numpy's float64 too, as the plain float it is
    text = plain(value, None)
    return "'" + text if text.startswith(CSV_FORMULA_PREFIXES) else text


def _clean(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def metric(estimate: float | None, ci: Sequence[float | None] | None = None, n: int | None = None) -> dict:
    """One named figure: {"estimate", "ci": [lo, hi] or null, "n": denominator}. NaN becomes null."""
    interval = None
    if ci is not None:
        lo, hi = _clean(ci[0]), _clean(ci[1])
        interval = None if lo is None or hi is None else [lo, hi]
    return {"estimate": _clean(estimate), "ci": interval, "n": None if n is None else int(n)}


def header(release: Release, predictions: dict) -> dict:
    return {
        "dataset": release.dataset,
        "release": {"version": release.version, "manifest_sha256": release.manifest_sha256()},
        "predictions": predictions,
    }


def mean_over_models(models: dict[str, dict]) -> dict[str, dict]:
    """Equal-weight mean of each metric's estimate over the models that have it (no interval)."""
    names = sorted({name for m in models.values() for name in m["metrics"]})
    summary = {}
    for name in names:
        values = [
            m["metrics"][name]["estimate"] for m in models.values() if name in m["metrics"] and m["metrics"][name]["estimate"] is not None
        ]
        summary[name] = metric(sum(values) / len(values) if values else None, None, len(values))
    return summary


def fmt(value: float | None, percent: bool = True, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.{digits}f}" if percent else f"{value:.{digits}f}"


def fmt_metric(m: dict | None, percent: bool = True, digits: int = 1) -> str:
    if not m or m["estimate"] is None:
        return "n/a"
    text = fmt(m["estimate"], percent, digits)
    if m.get("ci"):
        text += f" [{fmt(m['ci'][0], percent, digits)}, {fmt(m['ci'][1], percent, digits)}]"
    return text


def with_interval(m: dict | None, digits: int = 1, ci_digits: int | None = None, mark: str = "", percent: bool = True) -> str:
    """A model's figure as `estimate [lo, hi]` for a headline table cell: "n/a" when undefined, and the
    estimate followed by `mark` (a footnote saying why) when it has no interval."""
    if not m or m.get("estimate") is None:
        return "n/a"
    text = fmt(m["estimate"], percent, digits)
    if not m.get("ci"):
        return f"{text} {mark}" if mark else text
    low, high = (fmt(v, percent, digits if ci_digits is None else ci_digits) for v in m["ci"])
    return f"{text} [{low}, {high}]"


_TABLE_NUMBER = re.compile(r"\bTable (\d+)\b")


def in_paper_order(tables: list[tuple]) -> list[tuple]:
    """Tables (title first) in the order of the paper's table number in their title; tables of equal number
    keep their order, and tables without one follow the numbered ones."""

    def key(table: tuple) -> float:
        found = _TABLE_NUMBER.search(table[0])
        return int(found.group(1)) if found else math.inf

    return sorted(tables, key=key)


def warnings_once(lines: Iterable[str], kinds: Sequence[tuple[re.Pattern, Any]]) -> list[str]:
    """Each warning once. `kinds` are (pattern, merge) pairs for warnings written once per model: the lines a
    pattern matches become one line, `merge(matches)`, where the first of them was, naming every model;
    a kind that matches one line only, and every other line, is kept as it is (repeats dropped)."""
    out: list[Any] = []
    slot: dict[int, int] = {}
    for line in dict.fromkeys(lines):
        kind = next((k for k, (pattern, _) in enumerate(kinds) if pattern.match(line)), None)
        if kind is None:
            out.append(line)
            continue
        if kind not in slot:
            slot[kind] = len(out)
            out.append((kind, []))
        out[slot[kind]][1].append(kinds[kind][0].match(line))
    return [
        entry if isinstance(entry, str) else entry[1][0].string if len(entry[1]) == 1 else kinds[entry[0]][1](entry[1]) for entry in out
    ]


def _md_cell(value: Any) -> str:
    """A table cell, escaped: it may hold a model name (no cell break, HTML, link or line break in it)."""
    return md_text(value, None)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def html_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure_data_uri(figure) -> str:
    """A matplotlib figure as an inline PNG (the HTML report is one self-contained file)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def html_page(title: str, sections: Iterable[tuple[str, str]]) -> str:
    """sections: (heading, inner HTML) pairs."""
    style = (
        "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:1em 0;font-size:14px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "th:first-child,td:first-child{text-align:left}img{max-width:100%}"
    )
    body = "".join(f"<h2>{html.escape(h)}</h2>{inner}" for h, inner in sections)
    return f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{style}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n'


def is_figure(value: Any) -> bool:
    """A figure: {"estimate", "ci", "n"} (and perhaps notes), its estimate a number or null."""
    return isinstance(value, dict) and {"estimate", "ci", "n"} <= set(value) and not isinstance(value.get("estimate"), dict)


def figure_names(node: Any) -> set[str]:
    """Every key, anywhere in the report, whose value is a figure {"estimate", "ci", "n"}."""
    names: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, dict) and {"estimate", "ci", "n"} <= set(value):
                names.add(str(key))
            else:
                names |= figure_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= figure_names(value)
    return names


def with_units(report: dict, unit_of=None) -> dict:
    """Add `units` (metric name -> unit) for every figure of the report, each unit as the metric registry
    declares it; a figure the registry does not declare is an error, never a guess. `unit_of(name)` serves
    only a dataset the registry holds nothing for (one registered from outside this package)."""
    dataset = report.get("dataset")
    if dataset in metrics.datasets() or unit_of is None:
        report["units"] = {name: metrics.unit(dataset, name) for name in sorted(figure_names(report))}
    else:
        report["units"] = {name: unit_of(name) for name in sorted(figure_names(report))}
    return report


class CheckedFigures(dict):
    """A block of a report's figures that refuses to be asked for a name the metric registry does not
    declare: a renderer asking for a renamed figure fails loudly instead of printing "n/a"."""

    dataset: str = ""

    def _check(self, key: Any) -> None:
        if not (dict.__contains__(self, key) and not is_figure(dict.__getitem__(self, key))):
            metrics.lookup(self.dataset, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._check(key)
        return dict.get(self, key, default)

    def __getitem__(self, key: Any) -> Any:
        self._check(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key: Any) -> bool:
        self._check(key)
        return dict.__contains__(self, key)


def checked(report: dict) -> dict:
    """A copy of the report in which every block holding figures is a `CheckedFigures` (for renderers);
    the report itself is unchanged. A dataset the registry holds nothing for is returned as it is."""
    dataset = report.get("dataset")
    if dataset not in metrics.datasets():
        return report

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict) or is_figure(node):
            return node
        copied = {k: walk(v) for k, v in node.items()}
        if not any(is_figure(v) for v in copied.values()):
            return copied
        block = CheckedFigures(copied)
        block.dataset = dataset
        return block

    return walk(report)
