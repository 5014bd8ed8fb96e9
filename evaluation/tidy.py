"""Tidy reports: every figure of a report as one row (dataset, section, model, metric, estimate,
ci_low, ci_high, n, unit, higher_is_better), written as CSV that one `pandas.read_csv` call loads, or as
Parquet.

Generic over datasets: a figure is any {"estimate", "ci", "n"} dict in the report; where it sits names
its section and model, and the metric registry its unit and direction (a dataset it holds nothing for
takes its units from the report's `units` table, and has no direction).
"""

from __future__ import annotations

import csv
import io
from typing import Iterator

from ctxrobust.evaluation import metrics
from ctxrobust.evaluation.report import csv_cell, is_figure

COLUMNS = ("dataset", "section", "model", "metric", "estimate", "ci_low", "ci_high", "n", "unit", "higher_is_better")
MEAN = "(mean over models)"
ALL_PAIRS = "(all pairs)"


def _blocks(node: object, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], dict]]:
    """(path, dict) for every dict holding at least one figure, depth first in key order."""
    if not isinstance(node, dict):
        return
    if any(is_figure(v) for v in node.values()):
        yield path, node
    for key in sorted(node):
        if isinstance(node[key], dict) and not is_figure(node[key]):
            yield from _blocks(node[key], (*path, str(key)))


def _where(path: tuple[str, ...]) -> tuple[str, str]:
    """(section, model) of a block: `models.<M>.metrics` is model M; a summary is the mean over models;
    `by_pair.<A>.<B>` is the pair "A / B"; `by_model.<M>` model M."""
    if len(path) >= 2 and path[0] == "models":
        return "model", path[1]
    parts = [p for p in path if p != "metrics"]
    for marker, label in (("by_pair", " / "), ("by_model", " / ")):
        if marker in parts:
            at = parts.index(marker)
            return ".".join(parts[:at]) or "report", label.join(parts[at + 1 :])
    section = ".".join(parts) or "report"
    return section, MEAN if parts[:1] == ["summary"] else ALL_PAIRS if "pairs" in parts[0] else ""


def tidy_rows(report: dict) -> list[dict]:
    """One row per figure, in a fixed order (models, then the other sections, metrics sorted)."""
    units, dataset = report.get("units", {}), report.get("dataset", "")
    registered = dataset in metrics.datasets()
    rows = []
    for path, block in _blocks({k: v for k, v in report.items() if k not in ("parameters", "predictions", "release", "units")}, ()):
        section, model = _where(path)
        for name in sorted(block):
            figure = block[name]
            if not is_figure(figure):
                continue
            ci = figure.get("ci") or [None, None]
            declared = metrics.lookup(dataset, name) if registered else None
            rows.append(
                {
                    "dataset": report.get("dataset", ""),
                    "section": section,
                    "model": model,
                    "metric": name,
                    "estimate": figure["estimate"],
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "n": figure["n"],
                    "unit": declared.unit if declared else units.get(name, ""),
                    "higher_is_better": declared.higher_is_better if declared else None,
                }
            )
    return rows


def csv_text(report: dict) -> str:
    """The tidy rows as CSV (RFC 4180 quoting, '\\n' line ends); empty cells are missing values. Every cell
    goes through `csv_cell`: a model name such as `=HYPERLINK(...)` is text, never a formula."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in tidy_rows(report):
        writer.writerow([csv_cell(row[c]) for c in COLUMNS])
    return buffer.getvalue()


def parquet_bytes(report: dict) -> bytes:
    """The tidy rows as a Parquet table with typed columns (strings, float64, int64, nulls kept)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [(c, pa.string()) for c in COLUMNS[:4]]
        + [("estimate", pa.float64()), ("ci_low", pa.float64()), ("ci_high", pa.float64()), ("n", pa.int64()), ("unit", pa.string())]
        + [("higher_is_better", pa.bool_())]
    )
    rows = tidy_rows(report)
    table = pa.Table.from_pylist(rows, schema=schema)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False, store_schema=False)
    return sink.getvalue()
