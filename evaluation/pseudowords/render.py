"""Pseudowords report renderings: Table 1 as Markdown, and HTML with the Figure 2 tail plot and Figure 3 heat maps."""

from __future__ import annotations

import html
import re

import numpy as np

from ctxrobust.evaluation.pseudowords.scorer import INPUTS, _group_order
from ctxrobust.evaluation.report import (
    checked,
    figure_data_uri,
    fmt_metric,
    html_page,
    html_table,
    markdown_table,
    md_text,
    warnings_once,
    with_interval,
)


def _signed(m: dict | None) -> str:
    if not m or m.get("estimate") is None:
        return "n/a"
    return f"{100 * m['estimate']:+.1f}"


def _get(report: dict, name: str, key: str) -> dict | None:
    return report["models"][name]["metrics"].get(key)


def _unit_order(report: dict) -> list[str]:
    """Models in scoring order (by model name, then context kind and length)."""

    def key(name: str) -> tuple:
        group = report["models"][name].get("context_group")
        return (report["models"][name].get("model", name), _group_order(group) if group else ("", -1), name)

    return sorted(report["models"], key=key)


SPLIT_NOTE = {
    "all-splits": "Split-sample intervals: every replicate recomputes the mean over all splits (Appendix B).",
    "per-split:": "Split-sample intervals: replicate b uses split b mod splits only (--split-intervals per-split; wider than Appendix B's).",
}
INPUT_LABEL = {"correct": "binary trials", "score": "probability scores"}


def _cross_blocks(report: dict) -> list[dict]:
    """The cross-model blocks, by context kind and length, binary trials before probability scores."""
    blocks = report["pairs"].get("by_group", {}).values()
    return sorted(blocks, key=lambda b: (_group_order(b["context_group"]), INPUTS.index(b["input"])))


def _context_blocks(report: dict) -> list[tuple[str, dict]]:
    return sorted(report.get("context_pairs", {}).get("by_model", {}).items())


def _cross_title(block: dict) -> str:
    return f"{block['context_group']}, {INPUT_LABEL[block['input']]}"


def _cross_labels(report: dict, block: dict) -> list[str]:
    """A cross-model block's units by model name (each model appears once in a group)."""
    return [report["models"][u]["model"] for u in block["units"]]


def _pair(block: dict, a: str, b: str) -> dict:
    """The figures of a pair, stored once under the unit listed first in block["units"]."""
    return block["by_pair"][a][b] if b in block["by_pair"].get(a, {}) else block["by_pair"][b][a]


def _pearson_grid(block: dict) -> np.ndarray:
    units = block["units"]
    grid = np.eye(len(units))
    for a in range(len(units)):
        for b in range(a + 1, len(units)):
            value = _pair(block, units[a], units[b])["pearson"]["estimate"]
            grid[a, b] = grid[b, a] = np.nan if value is None else value
    return grid


def _plain(m: dict | None, percent: bool = True, digits: int = 1) -> str:
    """The estimate alone."""
    return fmt_metric(None if m is None else {**m, "ci": None}, percent, digits)


def _specificity_headers(first: str, units: str, k: int) -> list[str]:
    """Columns of a specificity table: what a row is, its input kind and units, then the pairwise figures."""
    return [
        first,
        "Input",
        units,
        "Questions",
        "mean Pearson r [95% CI]",
        f"mean Jaccard, top {k}% improved",
        f"mean Jaccard, top {k}% degraded",
        "Jaccard random baseline",
    ]


def _specificity_row(block: dict, first: list[str]) -> list[str]:
    pm = block["metrics"]
    return [
        *first,
        str(block["questions"]),
        fmt_metric(pm.get("pearson.mean"), percent=False, digits=2),
        fmt_metric(pm.get("jaccard.improved.mean"), percent=False, digits=2),
        fmt_metric(pm.get("jaccard.degraded.mean"), percent=False, digits=2),
        fmt_metric(pm.get("jaccard.random_baseline"), percent=False, digits=3),
    ]


def _grid_table(title: str, corner: str, block: dict, labels: list[str], note: str) -> tuple[str, list[str], list[list[str]], str]:
    grid = _pearson_grid(block)
    rows = [
        [label, *(("1.00" if a == b else "n/a" if not np.isfinite(grid[a, b]) else f"{grid[a, b]:.2f}") for b in range(len(labels)))]
        for a, label in enumerate(labels)
    ]
    return title, [corner, *labels], rows, note


BY_DESIGN = "‡"  # noise-floor adjusted figures: no interval by design
NO_INTERVAL = "§"  # a figure without an interval for another reason


def _table1(report: dict, names: list[str]) -> tuple[str, list[str], list[list[str]], str]:
    """Table 1: AVG and Δ with their intervals, the adjusted INS and WTD as point estimates (footnoted)."""
    mark = {n: ("" if report["models"][n]["noise_correction"] else " †") for n in names}
    rows = [
        [
            n + mark[n],
            with_interval(_get(report, n, "accuracy.baseline"), mark=NO_INTERVAL),
            _signed_interval(_get(report, n, "delta")),
            with_interval(_get(report, n, "INS.adjusted"), mark=BY_DESIGN),
            with_interval(_get(report, n, "WTD.adjusted"), mark=BY_DESIGN),
        ]
        for n in names
    ]
    missing = sorted(
        {
            (m or {}).get("note") or _no_interval_reason(report)
            for n in names
            for m in (_get(report, n, "accuracy.baseline"), _get(report, n, "delta"))
            if m and m.get("estimate") is not None and not m.get("ci")
        }
    )
    note = (
        f"Laid out like Table 1: AVG is the no-context accuracy and Δ the mean change with context, each with its 95% interval; "
        f"INS and WTD (K = {report['parameters']['K']}) are noise-floor adjusted. {BY_DESIGN} Point estimates without an "
        "interval: the floor-subtracted metric is biased for the noise-free one and no bootstrap interval covers it "
        "(bench/interval_coverage.py); the observed metrics' intervals are in Table 6. † probability scores: no noise correction "
        "(Appendix G)." + (f" {NO_INTERVAL} No interval: {'; '.join(missing)}." if missing else "")
    )
    return "Table 1: main results (%)", ["Model", "AVG", "Δ", "INS ↓", "WTD ↓"], rows, note


def _signed_interval(m: dict | None) -> str:
    """Δ with its sign, and its interval (or the mark saying why there is none)."""
    if not m or m.get("estimate") is None:
        return "n/a"
    if not m.get("ci"):
        return f"{_signed(m)} {NO_INTERVAL}"
    return f"{_signed(m)} [{100 * m['ci'][0]:.1f}, {100 * m['ci'][1]:.1f}]"


def _no_interval_reason(report: dict) -> str:
    if not report["parameters"].get("replicates"):
        return "0 question-bootstrap replicates"
    return "the question bootstrap gave none"


def _tables(report: dict, esc=str) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, headers, rows, note) of every table in the paper's order (Table 1, Figure 3, Table 3, Figure 4, then
    the appendices' Tables 5-7 and Appendix F), shared by the Markdown and HTML renderings. Cells are plain text;
    `esc` escapes the user-supplied strings (model and context group names) of titles and notes."""
    names = _unit_order(report)
    params = report["parameters"]
    tables = [_table1(report, names)]
    tables += _specificity_tables(report, esc)
    tables.append(_correlates_table(report, names))
    tables += _context_group_tables(report, esc)
    tables += [
        (
            "Table 5: split-sample WTD and tail share (%)",
            ["Model", "WTD split-sample % [95% CI]", "tail share % [95% CI]"],
            [[n, fmt_metric(_get(report, n, "WTD.split_sample")), fmt_metric(_get(report, n, "tail_share"))] for n in names],
            f"Averages over {params['splits']} random symmetric trial splits (Appendix A). Tail share: part of the total "
            f"absolute change in the two {params['K']}% tails (Section 3.1).",
        ),
        (
            "Table 6: observed metrics, 95% CIs and noise floors (%)",
            ["Model", "INS [95% CI]", "η INS", "WTD [95% CI]", "η WTD", "Δ [95% CI]"],
            [
                [
                    n,
                    fmt_metric(_get(report, n, "INS")),
                    fmt_metric(_get(report, n, "noise_floor.INS")),
                    fmt_metric(_get(report, n, "WTD")),
                    fmt_metric(_get(report, n, "noise_floor.WTD")),
                    fmt_metric(_get(report, n, "delta")),
                ]
                for n in names
            ],
            f"{params['replicates']} question-bootstrap replicates (percentile intervals; WTD's bias-corrected and accelerated, BCa, since its percentile interval covered only 91-93% in bench/interval_coverage.py); floors from {params['null_experiments']} synthetic null experiments.",
        ),
        (
            "Table 7: split-half reliability",
            ["Model", "split-half r [95% CI]", "Spearman-Brown ρ [95% CI]"],
            [
                [
                    n,
                    fmt_metric(_get(report, n, "split_half.r"), percent=False, digits=2),
                    fmt_metric(_get(report, n, "split_half.spearman_brown"), percent=False, digits=2),
                ]
                for n in names
            ],
            f"Pearson r between the two halves' per-question changes, averaged over {params['splits']} random symmetric trial "
            "splits, and its Spearman-Brown correction (Appendix D).",
        ),
    ]
    appendix_f = _appendix_f_rows(report, names)
    if appendix_f:
        tables.append(
            (
                "Reliability ceiling and homogeneous-shift null (Appendix F)",
                [
                    "Model · target, scale",
                    "split-sample ρ [95% CI]",
                    "ceiling √(rel_F·rel_T)",
                    "rel_F",
                    "rel_T",
                    "shift null: mean [range]",
                    "η (MH)",
                ],
                appendix_f,
                "Ceiling: reliabilities are Pearson r between replicate estimates from disjoint trials (feature: u from the baseline "
                "folds F, B1, B2; target: the two halves' changes, or their squares), averaged over the splits; no interval (the paper "
                "gives none). Null: every question shifted by the Mantel-Haenszel common log odds ratio η, the same split-sample "
                "estimator on each simulated dataset; mean and range over the simulations.",
            )
        )
    return tables


def _correlates_table(report: dict, names: list[str]) -> tuple[str, list[str], list[list[str]], str]:
    """Table 3: Spearman ρ of baseline uncertainty (and ambiguity, with annotations) against the change."""
    rows = []
    for n in names:
        for target in ("signed", "squared"):
            for feature in ("uncertainty", "ambiguity"):
                if feature == "ambiguity" and f"ambiguity_rho.{target}.raw.probability" not in report["models"][n]["metrics"]:
                    continue
                cells = [
                    fmt_metric(_get(report, n, f"{feature}_rho.{target}.{kind}.{scale}"), percent=False, digits=2)
                    for kind in ("raw", "split")
                    for scale in ("probability", "log_odds")
                ]
                rows.append([f"{n} · {feature} vs {target} change", *cells])
    annotated = any("ambiguity_rho.signed.raw.probability" in report["models"][n]["metrics"] for n in names)
    note = (
        "Baseline uncertainty s_i0(1 - s_i0) against the signed change Δ_i and its square; split-sample estimates use disjoint "
        "trials for feature and target (Appendix F). "
        + SPLIT_NOTE.get(report["parameters"].get("split_correlate_intervals", "")[:10], "")
        + (
            ""
            if annotated
            else " Not in this report: Table 3's ambiguity rows (they need per-question ambiguity annotations: give --annotations FILE)."
        )
        + " Appendix F's reliability ceiling and homogeneous-shift null: the last table."
    )
    headers = ["Model · feature vs target", "raw, probability", "raw, log-odds", "split, probability", "split, log-odds"]
    return "Table 3: correlates of context-induced change (Spearman ρ)", headers, rows, note


def _specificity_tables(report: dict, esc) -> list[tuple[str, list[str], list[list[str]], str]]:
    """Section 3.2 and Figure 3: the cross-model specificity figures and a Pearson r grid per block."""
    cross = _cross_blocks(report)
    if not cross:
        return []
    k = report["parameters"]["K"]
    tables = [
        (
            "Model specificity",
            _specificity_headers("Context group", "Models", k),
            [
                _specificity_row(block, [block["context_group"], INPUT_LABEL[block["input"]], ", ".join(_cross_labels(report, block))])
                for block in cross
            ],
            "Section 3.2: pairs of different models only, within one context group and one input kind (binary trials or "
            "probability scores, Appendix G); each over the questions every model of its group answered.",
        )
    ]
    for block in cross:
        if block["by_pair"]:
            title = f"Pearson r of per-example change, {esc(_cross_title(block))}"
            tables.append(_grid_table(title, "Model", block, _cross_labels(report, block), "Figure 3 as a table."))
    return tables


def _context_group_tables(report: dict, esc) -> list[tuple[str, list[str], list[list[str]], str]]:
    """Section 3.3 and Figure 4: one model's context groups compared, and a Pearson r grid per model."""
    own = _context_blocks(report)
    if not own:
        return []
    k = report["parameters"]["K"]
    tables = [
        (
            "Context groups of one model",
            _specificity_headers("Model", "Context groups", k),
            [_specificity_row(block, [model, INPUT_LABEL[block["input"]], ", ".join(block["context_groups"])]) for model, block in own],
            "Section 3.3 (Figure 4): one model's per-example changes under different context groups; not part of the cross-model "
            "figures. The groups share the model's no-context baseline, whose sampling noise raises r.",
        )
    ]
    for model, block in own:
        if block["by_pair"]:
            title = f"Pearson r between context groups, {esc(model)}"
            tables.append(_grid_table(title, "Context group", block, block["context_groups"], "Figure 4 as a table."))
    return tables


def _number(value, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _appendix_f_rows(report: dict, names: list[str]) -> list[list[str]]:
    """One row per model, target and scale with a ceiling (binary-trial models); the reason where null."""
    rows = []
    for n in names:
        for target in ("signed", "squared"):
            for scale in ("probability", "log_odds"):
                base = f"uncertainty_rho.{target}.split.{scale}"
                ceiling = _get(report, n, f"{base}.ceiling")
                if ceiling is None:
                    continue
                null = _get(report, n, f"{base}.shift_null") if target == "squared" else None
                if null is None:
                    null_cell, eta = "—", "—"
                elif null.get("estimate") is None:
                    null_cell, eta = f"n/a ({null.get('note', '')})", _number(null.get("eta"))
                else:
                    low, high = null["range"]
                    null_cell = f"{null['estimate']:.2f} [{low:.2f}, {high:.2f}] ({null['simulations']} simulations)"
                    eta = _number(null.get("eta"))
                ceiling_cell = _number(ceiling.get("estimate"))
                if ceiling.get("estimate") is None and ceiling.get("note"):
                    ceiling_cell = f"n/a ({ceiling['note']})"
                rows.append(
                    [
                        f"{n} · {target}, {scale.replace('_', '-')}",
                        fmt_metric(_get(report, n, base), percent=False, digits=2),
                        ceiling_cell,
                        _number(ceiling.get("reliability_feature")),
                        _number(ceiling.get("reliability_target")),
                        null_cell,
                        eta,
                    ]
                )
    return rows


_SMALL_SAMPLE = re.compile(
    r"model (?P<model>.+): (?P<questions>\d+) questions \(fewer than (?P<limit>\d+)\); the 95% intervals of (?P<figures>.+) "
    r"rest on the m = (?P<m>\d+) questions of a (?P<k>\d+)% tail and are known to cover less than 95% at such sizes "
    r"\((?P<measured>.*)\)$"
)


def _merge_small_samples(matches: list[re.Match]) -> str:
    listed = ", ".join(f"{m['model']} ({m['questions']} questions, m = {m['m']})" for m in matches)
    first = matches[0]
    return (
        f"models {listed}: fewer than {first['limit']} questions each; the 95% intervals of {first['figures']} rest on the "
        f"m questions of a {first['k']}% tail and are known to cover less than 95% at such sizes ({first['measured']})"
    )


def warning_lines(report: dict) -> list[str]:
    """The report's warnings, each once: the small-sample warning names every model it applies to in one line."""
    return warnings_once(report.get("warnings") or [], ((_SMALL_SAMPLE, _merge_small_samples),))


def _md(value) -> str:
    return md_text(value, None)


def render_markdown(report: dict) -> str:
    report = checked(report)  # a figure asked for by a name nobody declared is an error, not "n/a"
    lines = [
        f"# pseudowords: context-induced instability (release {_md(report['release']['version'])})",
        "",
        f"Predictions: {md_text(report['predictions']['path'], None)} ({report['predictions']['rows']} rows, "
        f"{report['predictions']['excluded']} excluded, sha256 {report['predictions']['sha256'][:12]}…).",
        "",
    ]
    if report.get("warnings"):
        lines += ["## Warnings", ""] + [f"- {_md(w)}" for w in warning_lines(report)] + [""]
    for title, headers, rows, note in _tables(report, _md):
        lines += [f"## {title}", "", markdown_table(headers, rows), note, ""]
    problems = report["predictions"]["problems"]
    if problems:
        lines += ["## Problems", ""] + [
            f"- line {p['line']}: {md_text(p['message'], None)}" if p["line"] is not None else f"- {md_text(p['message'], None)}"
            for p in problems[:50]
        ]
        if len(problems) > 50:
            lines.append(f"- … and {len(problems) - 50} more (see the JSON report)")
        lines.append("")
    return "\n".join(lines)


def _tail_figure(report: dict):
    """Figure 2: mean Delta_i in 2% bins of the improved (top) and degraded (bottom) tails, noise floor hatched."""
    import matplotlib
    from matplotlib.figure import Figure

    names = _unit_order(report)
    k = report["parameters"]["K"]
    fig = Figure(figsize=(10, 6))
    axes = fig.subplots(2, 1, sharex=True)
    width = 0.8 / max(1, len(names))
    cmap = matplotlib.colormaps["tab10"]
    for panel, (side, title) in enumerate((("improved", f"most improved {k}%"), ("degraded", f"most degraded {k}%"))):
        ax = axes[panel]
        for j, name in enumerate(names):
            tails = report["models"][name]["tails"]
            observed = [np.nan if v is None else 100 * v for v in tails[side]]
            xs = np.arange(len(observed)) + (j - (len(names) - 1) / 2) * width
            ax.bar(xs, observed, width, color=cmap(j % 10), label=name)
            floor = tails.get(f"noise_{side}")
            if floor:
                ax.bar(
                    xs, [np.nan if v is None else 100 * v for v in floor], width, fill=False, hatch="///", edgecolor="black", linewidth=0.5
                )
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_ylabel("mean Δ_i (%)")
        ax.set_title(title)
    bins = len(report["models"][names[0]]["tails"]["improved"]) if names else 5
    step = k / bins
    axes[1].set_xticks(range(bins), [f"{b * step:g}–{(b + 1) * step:g}%" for b in range(bins)])
    axes[0].legend(fontsize=7, ncol=4)
    return fig


def _heatmap(block: dict, labels: list[str]):
    """Figure 3 (or Figure 4): Pearson r of per-example change between every pair of a block's units."""
    from matplotlib.figure import Figure

    grid = _pearson_grid(block)
    size = len(labels)
    fig = Figure(figsize=(1.2 + 0.7 * size, 1 + 0.6 * size))
    ax = fig.subplots()
    image = ax.imshow(grid, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(size), labels, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(size), labels, fontsize=8)
    for a in range(size):
        for b in range(size):
            if np.isfinite(grid[a, b]):
                ax.text(
                    b, a, f"{grid[a, b]:.2f}", ha="center", va="center", fontsize=7, color="white" if abs(grid[a, b]) > 0.6 else "black"
                )
    fig.colorbar(image, ax=ax, label="Pearson r")
    return fig


def render_html(report: dict) -> str:
    report = checked(report)  # a figure asked for by a name nobody declared is an error, not "n/a"
    sections = [
        (
            "Release",
            f"<p>pseudowords {html.escape(report['release']['version'])}; predictions "
            f"<code>{html.escape(report['predictions']['path'])}</code>: {report['predictions']['rows']} rows, "
            f"{report['predictions']['excluded']} excluded.</p>",
        )
    ]
    if report.get("warnings"):
        sections.append(("Warnings", "<ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in warning_lines(report)) + "</ul>"))
    for title, headers, rows, note in _tables(report):
        sections.append((title, html_table(headers, rows) + f"<p>{html.escape(note)}</p>"))
    from ctxrobust.evaluation.leaderboard import headline_of
    from ctxrobust.evaluation.plots import interval_section

    plotted = interval_section(report, headline_of(report["dataset"]), title="Instability and tail degradation with 95% intervals")
    if plotted:
        sections.append(("Figures and intervals by model", plotted))
    if report["models"]:
        sections.append(
            (
                "Per-example change in the tails (Figure 2)",
                f'<img alt="tail plot" src="{figure_data_uri(_tail_figure(report))}">'
                "<p>Solid bars: observed mean change per 2% bin; hatched: the noise floor from synthetic null experiments.</p>",
            )
        )
    for block in _cross_blocks(report):
        if block["by_pair"]:
            sections.append(
                (
                    f"Correlation of per-example change (Figure 3), {_cross_title(block)}",
                    f'<img alt="correlation heat map" src="{figure_data_uri(_heatmap(block, _cross_labels(report, block)))}">',
                )
            )
    for model, block in _context_blocks(report):
        if block["by_pair"]:
            sections.append(
                (
                    f"Correlation between context groups (Figure 4), {model}",
                    f'<img alt="context group heat map" src="{figure_data_uri(_heatmap(block, block["context_groups"]))}">'
                    "<p>The same model under different context groups; they share its no-context baseline.</p>",
                )
            )
    problems = report["predictions"]["problems"]
    if problems:
        items = "".join(
            f"<li>{html.escape(('line ' + str(p['line']) + ': ') if p['line'] is not None else '')}{html.escape(p['message'])}</li>"
            for p in problems[:50]
        )
        sections.append(("Problems", f"<ul>{items}</ul>"))
    return html_page(f"pseudowords report, release {report['release']['version']}", sections)
