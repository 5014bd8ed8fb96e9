"""GSM-IC report renderings: Tables 2, 3 and 4 of the paper as Markdown and HTML."""

from __future__ import annotations

import numpy as np

from ctxrobust.evaluation.gsm_ic.scorer import SUBSET_PREFIX
from ctxrobust.evaluation.report import checked, fmt, fmt_metric, html_page, html_table, markdown_table, md_text, with_interval

TABLE3 = [
    ("Micro 2 Steps", "micro.2step"),
    ("Micro >2 Steps", "micro.multistep"),
    ("Micro Overall", "micro"),
    ("Micro Norm", "normalised.micro"),
    ("Macro 2 Steps", "macro.2step"),
    ("Macro >2 Steps", "macro.multistep"),
    ("Macro Overall", "macro"),
    ("Macro Norm", "normalised.macro"),
]
_LEVELS = [
    ("Topic In", "topic=in"),
    ("Topic Off", "topic=off"),
    ("Role Overlap Yes", "role=overlapped"),
    ("Role Overlap No", "role=nonoverlapped"),
    ("Num. Range In", "number=in_range"),
    ("Num. Range Out", "number=out_range"),
]
TABLE4 = [(f"{kind.capitalize()} {label}", f"{kind}.{suffix}") for kind in ("micro", "macro") for label, suffix in _LEVELS]
SCOPE_TITLES = [(SUBSET_PREFIX, "GSM-IC-4K"), ("", "GSM-IC, all variants")]
HEADLINE = {"micro", "macro"}  # Table 3's overall accuracies: each model's with its interval
NO_INTERVAL = "‡"


def _rows(report: dict, columns: list[tuple[str, str]], prefix: str, cell, mean_cell=None) -> list[list[str]]:
    """One row per model having any of the columns, then their mean if there are several. `cell(figure, key)`
    writes a model's cell, `mean_cell` (default `cell`) the mean's."""
    blocks = [
        (name, m["metrics"]) for name, m in sorted(report["models"].items()) if any(prefix + key in m["metrics"] for _, key in columns)
    ]
    rows = [[name] + [cell(metrics.get(prefix + key), key) for _, key in columns] for name, metrics in blocks]
    if len(blocks) > 1:
        mean, summary = mean_cell or cell, report["summary"]["metrics"]
        rows.append(["Mean over models"] + [mean(summary.get(prefix + key), key) for _, key in columns])
    return rows


def _headline(m: dict | None, key: str) -> str:
    """A model's Table 3 cell: the overall accuracies with their interval (or the footnote mark saying why not)."""
    return with_interval(m, mark=NO_INTERVAL) if key in HEADLINE else _plain(m, key)


def _plain(m: dict | None, key: str = "") -> str:
    return fmt(m["estimate"]) if m else "n/a"


def _count(m: dict | None) -> str:
    return str(m["n"]) if m else ""


def _base_table(report: dict) -> tuple[list[str], list[list[str]]] | None:
    """Table 2 layout: one column per model, rows accuracy, interval and base problems scored."""
    runs = [(name, m["metrics"]["accuracy.base"]) for name, m in sorted(report["models"].items()) if "accuracy.base" in m["metrics"]]
    if not runs:
        return None
    interval = [f"[{fmt(m['ci'][0])}, {fmt(m['ci'][1])}]" if m["ci"] else "n/a" for _, m in runs]
    rows = [["Accuracy"] + [fmt(m["estimate"]) for _, m in runs], ["95% CI"] + interval, ["n base problems"] + [_count(m) for _, m in runs]]
    return [""] + [name for name, _ in runs], rows


def _macro_note(report: dict, prefix: str) -> str:
    scope = next((s for s in report["parameters"]["scopes"].values() if s["metric_prefix"] == prefix), None)
    note = (
        "Accuracies ×100. Norm: overall accuracy divided by the model's own base-problem accuracy (Section 3.2). "
        "Macro: a base problem counts only if all its variants are right."
    )
    if scope is None:
        return note
    low, high = scope["variants_per_base"]
    if scope["macro_at_most_micro_guaranteed"]:
        return note + f" Every base problem has {low} variant(s) here, so macro <= micro."
    return note + (
        f" Base problems have {low} to {high} variants here, so macro <= micro is not guaranteed "
        "(it is when counts are equal); macro <= the mean per-base-problem accuracy always holds."
    )


def _interval_note(report: dict, rows: list[list[str]]) -> str:
    """How the intervals were made, and the footnote for any cell of `rows` without one."""
    params = report["parameters"]
    if not params["replicates"]:
        return f"{NO_INTERVAL} No intervals: 0 bootstrap replicates." if rows else "No intervals (0 bootstrap replicates)."
    note = (
        f"{100 * params['interval']['level']:g}% percentile bootstrap over base problems: {params['replicates']} replicates, "
        f"seed {params['seed']}, the same resamples for every model and metric; the mean over models has none."
    )
    if any(cell.endswith(" " + NO_INTERVAL) for row in rows for cell in row):
        note += f" {NO_INTERVAL} No interval: the bootstrap gave none for this model's figure."
    return note


def _tables(report: dict) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, headers, rows, note) of every table, in order."""
    tables = []
    base = _base_table(report)
    if base:
        tables.append(
            (
                "Table 2: base-problem accuracy",
                *base,
                "Accuracy ×100 on the base problems; missing or unparseable answers count as wrong.",
            )
        )
    for prefix, title in SCOPE_TITLES:
        main = _rows(report, TABLE3, prefix, _headline, _plain)
        if not main:
            continue
        paper = prefix == SUBSET_PREFIX  # the paper's tables are on GSM-IC-4K; all variants are laid out the same
        headers = ["Model"] + [f"{h} [95% CI]" if key in HEADLINE else h for h, key in TABLE3]
        tables.append(
            (
                f"Table 3: micro and macro accuracy, {title}" if paper else f"{title}: micro and macro accuracy (Table 3 layout)",
                headers,
                main,
                _macro_note(report, prefix) + " " + _interval_note(report, main),
            )
        )
        tables.append(
            (
                f"Table 4: accuracy by factor of the inserted sentence, {title}"
                if paper
                else f"{title}: accuracy by factor of the inserted sentence (Table 4 layout)",
                ["Model"] + [h for h, _ in TABLE4],
                _rows(report, TABLE4, prefix, _plain),
                "Accuracies ×100. A base problem enters a level's macro accuracy when it has a variant at that level, "
                "so these macro figures differ from Table 3's (usually higher, as in the paper).",
            )
        )
        extra = [("Invalid [95% CI]", "invalid")]
        if any(prefix + "sc.recall" in m["metrics"] for m in report["models"].values()):
            extra.append(("SC recall [95% CI]", "sc.recall"))
        rows = _rows(report, extra, prefix, lambda m, key: fmt_metric(m))
        for row in rows:
            row.append(_count(report["models"].get(row[0], {}).get("metrics", {}).get(prefix + "micro")))
        tables.append(
            (
                f"{title}: invalid answers and self-consistency recall",
                ["Model"] + [h for h, _ in extra] + ["n variants"],
                rows,
                "Invalid: the share of answers without a number (missing or unparseable), counted as wrong. " + _interval_note(report, []),
            )
        )
    return tables


def _problem_lines(report: dict, limit: int = 50) -> list[str]:
    block = report["predictions"]
    lines = [(f"line {p['line']}: " if p["line"] is not None else "file: ") + p["message"] for p in block["problems"][:limit]]
    if len(block["problems"]) > limit:
        lines.append(f"... and {len(block['problems']) - limit} more (see the JSON report)")
    return lines


def _intro(report: dict, esc=str) -> str:
    """The report's first paragraph; `esc` escapes its user-supplied strings (file and model names)."""
    block = report["predictions"]
    return (
        f"Release {esc(report['release']['version'])} (manifest sha256 {report['release']['manifest_sha256'][:12]}); "
        f"predictions {esc(block['path'])} (sha256 {block['sha256'][:12]}): {block['rows']} rows, {block['excluded']} excluded, "
        f"{len(block['problems'])} problem(s). Seed {report['parameters']['seed']}.{_invalid_summary(report, esc)}"
    )


def _invalid_summary(report: dict, esc=str) -> str:
    """Each model's share of answers without a number (missing or unparseable), for the first lines."""
    shares = []
    for name, block in sorted(report["models"].items()):
        metrics = block["metrics"]
        figure = metrics.get("invalid") or metrics.get(SUBSET_PREFIX + "invalid")
        if figure and figure["estimate"] is not None:
            shares.append(f"{esc(name)} {fmt(figure['estimate'])}%")
    return f" Invalid answers (no number): {', '.join(shares)}." if shares else ""


def render_markdown(report: dict) -> str:
    report = checked(report)  # a figure asked for by a name nobody declared is an error, not "n/a"
    parts = ["# GSM-IC evaluation\n", _intro(report, lambda value: md_text(value, None)) + "\n"]
    for title, headers, rows, note in _tables(report):
        parts.append(f"## {title}\n")
        parts.append(markdown_table(headers, rows))
        parts.append(note + "\n")
    if report["predictions"]["problems"]:
        parts.append("## Problems\n")
        parts.append("\n".join(f"- {md_text(line, None)}" for line in _problem_lines(report)) + "\n")
    return "\n".join(parts)


def _factor_figure(report: dict, prefix: str, title: str):
    """Grouped bars: accuracy per factor level, one bar per model; micro and macro panels."""
    from matplotlib.figure import Figure

    names = sorted(n for n, m in report["models"].items() if prefix + "micro" in m["metrics"])
    figure = Figure(figsize=(11, 3.8))
    axes = figure.subplots(1, 2, sharey=True)
    x = np.arange(len(_LEVELS))
    width = 0.8 / max(len(names), 1)
    for ax, kind in zip(axes, ("micro", "macro")):
        for k, name in enumerate(names):
            metrics = report["models"][name]["metrics"]
            values = [metrics.get(f"{prefix}{kind}.{suffix}", {}).get("estimate") for _, suffix in _LEVELS]
            ax.bar(x + (k - (len(names) - 1) / 2) * width, [100 * v if v is not None else 0 for v in values], width, label=name)
        ax.set_xticks(x, [label for label, _ in _LEVELS], rotation=30)
        ax.set_title(f"{title}: {kind} accuracy by factor")
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("accuracy (%)")
    if names:
        axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    return figure


def render_html(report: dict) -> str:
    report = checked(report)  # a figure asked for by a name nobody declared is an error, not "n/a"
    import html

    from ctxrobust.evaluation.report import figure_data_uri

    sections = [("Report", f"<p>{html.escape(_intro(report))}</p>")]
    for title, headers, rows, note in _tables(report):
        sections.append((title, html_table(headers, rows) + f"<p>{html.escape(note)}</p>"))
    from ctxrobust.evaluation.leaderboard import headline_of
    from ctxrobust.evaluation.plots import interval_section

    plotted = interval_section(report, headline_of(report["dataset"]), title="Accuracy with 95% intervals")
    if plotted:
        sections.append(("Accuracy and intervals by model", plotted))
    for prefix, title in SCOPE_TITLES:
        if any(prefix + "micro" in m["metrics"] for m in report["models"].values()):
            uri = figure_data_uri(_factor_figure(report, prefix, title))
            sections.append((f"{title}: accuracy by factor (plot)", f'<img alt="{html.escape(title)} accuracy by factor" src="{uri}">'))
    if report["predictions"]["problems"]:
        sections.append(("Problems", "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in _problem_lines(report)) + "</ul>"))
    return html_page("GSM-IC evaluation", sections)
