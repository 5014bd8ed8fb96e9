"""MisleadQA report renderings: the paper's tables as Markdown, and HTML with Figure 2."""

from __future__ import annotations

import re

import numpy as np

from ctxrobust.evaluation import report as rp
from ctxrobust.evaluation.misleadqa.lure_rates import (
    OUTCOMES,
)
from ctxrobust.evaluation.misleadqa.scorer import CF_ROWS, FEW_CLUSTERS, GROUP_METRICS, GROUP_PREFIX, ORDERS


def _pct(metrics: dict, name: str, digits: int = 2) -> str:
    m = metrics.get(name)
    return rp.fmt(m["estimate"] if m else None, True, digits)


def _count(metrics: dict, name: str) -> str:
    m = metrics.get(name)
    return "n/a" if not m or m["estimate"] is None else str(int(m["estimate"]))


def _ci(metrics: dict, name: str, digits: int = 1) -> str:
    m = metrics.get(name)
    if not m or not m.get("ci"):
        return "n/a"
    return f"[{rp.fmt(m['ci'][0], True, digits)}, {rp.fmt(m['ci'][1], True, digits)}]"


TABLE2 = ("gold.S", "LR.S", "LR.F", "delta.LR", "RLR.S", "RLR.F", "delta.RLR")
TABLE14 = (
    ("All", "No context", "outcome.all.none"),
    ("All", "G alone", "outcome.all.G"),
    ("B_m", "S alone", "outcome.B.S"),
    ("B_m", "F alone", "outcome.B.F"),
    ("A_m", "S alone", "outcome.A.S"),
    ("A_m", "F alone", "outcome.A.F"),
    ("A_m", "G→S", "outcome.A.G+S"),
    ("A_m", "S→G", "outcome.A.S+G"),
    ("A_m", "G→F", "outcome.A.G+F"),
    ("A_m", "F→G", "outcome.A.F+G"),
    ("A_m", "S with G", "outcome.A.S_with_G"),
    ("A_m", "F with G", "outcome.A.F_with_G"),
)
TABLE26 = (
    ("ΔLR †", "delta.LR"),
    ("ΔRLR †", "delta.RLR"),
    ("F reduction", "reduction.F"),
    ("S reduction", "reduction.S"),
    ("F order effect", "order_effect.F"),
    ("S order effect", "order_effect.S"),
)
OUTCOME_HEADERS = ["Gold", "Lure", "Abstain", "Other", "Invalid"]
TABLE22 = (  # App. D.5, Table 22: the CF rates discussed in §6.2, per model
    ("S alone: Abstain", "outcome.B.S.abstain"),
    ("S alone: Lure", "outcome.B.S.lure"),
    ("F alone: Lure", "outcome.B.F.lure"),
    ("G alone: Gold", "outcome.all.G.gold"),
    ("S with G: Gold", "outcome.A.S_with_G.gold"),
    ("F with G: Abstain", "outcome.A.F_with_G.abstain"),
)
GROUP_LABELS = {
    "fred.time": "FRED time",
    "fred.location": "FRED location",
    "situatedqa.time": "SituatedQA time",
    "situatedqa.location": "SituatedQA location",
    "ambigdocs.entity": "AmbigDocs entity",
}  # Table 24 order


INVALID_RATE = "responses.invalid.rate"


def _invalid_summary(report: dict, esc=str) -> str:
    """Each model's invalid-response rate, for the report's first lines (`esc` escapes the model names)."""
    shares = []
    for name, block in sorted(report["models"].items()):
        figure = block["metrics"].get(INVALID_RATE)
        if figure and figure["estimate"] is not None:
            shares.append(f"{esc(name)} {100 * figure['estimate']:.1f}%")
    return f"Invalid responses: {', '.join(shares)}. " if shares else ""


NO_INTERVAL = "‡"  # a model's figure without an interval for a reason other than too few clusters (*)


def _no_interval_reason(report: dict) -> str:
    if not report["parameters"]["replicates"]:
        return "0 bootstrap replicates (--replicates 0)"
    return "the cluster bootstrap gave none for this model's figure"


def _table2(report: dict, names: list[str], outside: list[str], label) -> tuple[str, list[str], list[list[str]], str]:
    """Table 2, each model's figure with its interval (Bonferroni-adjusted for the † columns)."""
    models, summary = report["models"], report["summary"]["metrics"]
    rows = []
    for name in names:
        m = models[name]["metrics"]
        mark = "*" if name in outside else NO_INTERVAL
        cells = [rp.with_interval(m.get(k), 2, 1, mark) for k in TABLE2]
        rows.append([label(name), _count(m, "size.B"), _count(m, "size.A")] + cells + [_pct(m, INVALID_RATE, 1)])
    rows.append(["Mean", "", ""] + [_pct(summary, k) for k in TABLE2] + [""])
    rows.append(["CI", "", ""] + [_ci(summary, k) for k in TABLE2] + [""])
    without = report["summary"].get("without")
    if without and without.get("metrics"):
        w = without["metrics"]
        rows.append([f"w/o {', '.join(without['excluded'])}", "", ""] + [_pct(w, k) for k in TABLE2] + [""])
        rows.append(["CI", "", ""] + [_ci(w, k) for k in TABLE2] + [""])
    unexplained = any(cell.endswith(" " + NO_INTERVAL) for row in rows for cell in row)
    note = (
        "Invalid: the share of the model's responses that are not a valid letter (they stay in every denominator). "
        "Gold_S is the gold rate with S alone; LR is the lure rate with S or F alone on B_m; RLR the residual lure rate "
        "with G on A_m, both orders averaged. Δ is F minus S in percentage points, other values percentages; means weight "
        "models equally. Intervals, in brackets for each model and in the CI row for the mean: 95% cluster-bootstrap "
        "intervals, except † (Bonferroni-adjusted 97.5%)."
        + (
            f" * A_m covers fewer than {report['parameters']['min_clusters']} source clusters: no intervals, left out of "
            "every mean (App. C.2)."
            if outside
            else ""
        )
        + (f" {NO_INTERVAL} No interval: {_no_interval_reason(report)}." if unexplained else "")
    )
    headers = ["Model", "|B_m|", "|A_m|", "Gold_S", "LR_S", "LR_F", "ΔLR †", "RLR_S", "RLR_F", "ΔRLR †", "Invalid"]
    return "Table 2: main results", headers, rows, note


def _tables(report: dict, esc=str) -> list[tuple[str, list[str], list[list[str]], str]]:
    """(title, headers, rows, note) for every table, in the paper's order; Markdown and HTML render the same
    list. Cells are plain text; `esc` escapes the user-supplied strings (model names) of titles and notes."""
    models = report["models"]
    summary = report["summary"]["metrics"]
    names = sorted(name for name in models if "size.B" in models[name]["metrics"])  # models with main-split rows
    outside = [name for name in names if not models[name]["metrics"]["inference.eligible"]["estimate"]]
    label = lambda name: f"{name} *" if name in outside else name
    tables = [_table2(report, names, outside, label)]

    rows = []
    for order, title in (("G_first", "G first"), ("misleading_first", "F first")):
        key = f"paired.{order}"
        for name in names:
            m = models[name]["metrics"]
            kept = m.get(f"{key}.outcome.gold")
            rows.append(
                [
                    title,
                    label(name),
                    "n/a" if kept is None else str(kept["n"]),
                    _pct(m, f"{key}.kept"),
                    *[_pct(m, f"{key}.outcome.{o}") for o in OUTCOMES],
                    _ci(m, f"paired.lure.{order}"),
                ]
            )
        rows.append(
            [
                title,
                "Mean",
                "",
                _pct(summary, f"{key}.kept"),
                *[_pct(summary, f"{key}.outcome.{o}") for o in OUTCOMES],
                _ci(summary, f"paired.lure.{order}"),
            ]
        )
    tables.append(
        (
            "Table 16: paired conditional outcomes",
            ["Order", "Model", "n", "kept % of A_m"] + OUTCOME_HEADERS + ["lure 95% CI"],
            rows,
            "Per order, the items of A_m answered correctly with S and G in that order; outcomes when F replaces S in the "
            "same position (App. D.2). Abstention and other distractors stay in the denominator; the kept items can differ "
            "between orders, so the two rates' difference is not an order effect on a fixed subset.",
        )
    )

    rows = [[subset, cond] + [_pct(summary, f"{key}.{o}") for o in OUTCOMES] for subset, cond, key in TABLE14]
    tables.append(
        (
            "Table 14: outcome distributions, mean over models",
            ["Subset", "Condition"] + OUTCOME_HEADERS,
            rows,
            "All denotes every item of the split; each row sums to 100 up to rounding.",
        )
    )

    rows = []
    for name in names + ["Mean"]:
        m = summary if name == "Mean" else models[name]["metrics"]
        rows.append(
            [label(name) if m is not summary else name]
            + [_pct(m, f"outcome.A.{o}.lure") for o in ORDERS]
            + [_pct(m, "order_effect.S"), _pct(m, "order_effect.F")]
        )
    tables.append(
        (
            "Table 15: lure rates by order on A_m",
            ["Model", "S: G first", "S: S first", "F: G first", "F: F first", "S order effect", "F order effect"],
            rows,
            "The order effect is the misleading-first rate minus the G-first rate (percentage points).",
        )
    )

    rows = [[label, _pct(summary, key), _ci(summary, key, 2), _ci(summary, GROUP_PREFIX + key, 2)] for label, key in TABLE26]
    tables.append(
        (
            "Table 26: source-cluster and dependency-group intervals",
            ["Metric", "Est.", "Clusters", "Groups"],
            rows,
            "Percentage points. † primary contrasts use 97.5% intervals, other rows 95%. Reduction is the context-alone rate minus RLR on A_m.",
        )
    )

    found = {".".join(k.split(".")[1:3]) for k in summary if k.startswith("group.")}
    groups = [g for g in GROUP_LABELS if g in found] + sorted(found - set(GROUP_LABELS))
    if groups:
        rows = [[GROUP_LABELS.get(g, g)] + [_pct(summary, f"group.{g}.{k}") for k in GROUP_METRICS] for g in groups]
        tables.append(
            (
                "Table 24: lure rates within source-scope groups",
                ["Group", "LR_S", "LR_F", "RLR_S", "RLR_F"],
                rows,
                "LR uses each group's part of B_m, RLR its part of A_m (both orders averaged); means over models.",
            )
        )
        rows = [
            [label(name)]
            + [
                f"{_count(models[name]['metrics'], f'group.{g}.size.B')} / {_count(models[name]['metrics'], f'group.{g}.size.A')}"
                for g in groups
            ]
            for name in names
        ]
        tables.append(
            ("Table 25: |B_m| / |A_m| within source-scope groups", ["Model"] + [GROUP_LABELS.get(g, g) for g in groups], rows, "")
        )

    if "cf.kept.A_common" in summary:
        with_cf = [name for name in names if "cf.kept.A_common" in models[name]["metrics"] and name not in outside]
        rows = []
        for cond, key in CF_ROWS:
            rows.append([cond, "Original"] + [_pct(summary, f"cf.original.{key}.{o}") for o in OUTCOMES])
            rows.append(["", "CF"] + [_pct(summary, f"cf.{key}.{o}") for o in OUTCOMES])
        tables.append(
            (
                "Table 21: original and context-faithful prompts",
                ["Condition", "Prompt"] + OUTCOME_HEADERS,
                rows,
                f"Means over the {len(with_cf)} model(s) with CF rows ({', '.join(map(esc, with_cf))}), both prompts. G alone uses all items, "
                "context-alone conditions B_m, conditions with G A_m with both orders averaged (the original-prompt subsets). "
                + (
                    f"No-context answers of the CF run equal the original run's on {_pct(summary, 'cf.none_agreement')}% of items."
                    if "cf.none_agreement" in summary
                    else ""
                ),
            )
        )
        rows = [[name] + [_pct(models[name]["metrics"], f"cf.{key}") for _, key in TABLE22] for name in with_cf]
        rows.append(["Mean"] + [_pct(summary, f"cf.{key}") for _, key in TABLE22])
        tables.append(
            (
                "Table 22: per-model rates under CF",
                ["Model"] + [label for label, _ in TABLE22],
                rows,
                "The outcome CF prescribes or the one §6.2 discusses, per model, under the CF prompt; subsets as in Table 21.",
            )
        )
        rows = [
            [
                name,
                _count(models[name]["metrics"], "size.A"),
                _count(models[name]["metrics"], "cf.size.A_common"),
                _pct(models[name]["metrics"], "cf.kept.A_common"),
            ]
            for name in with_cf
        ]
        rows.append(["Mean", "", "", _pct(summary, "cf.kept.A_common")])
        tables.append(
            (
                "Table 23: common subsets for the CF check",
                ["Model", "|A_m|", "|A_m^common|", "Kept"],
                rows,
                "A_m^common: the items of A_m also answered correctly with G alone under CF. Gold rate with S and G on it: "
                f"original {_pct(summary, 'cf.common.S_with_G.gold.original')}, CF {_pct(summary, 'cf.common.S_with_G.gold.cf')}.",
            )
        )

    tables += _diagnostic_tables(report, label, esc)

    supplement = [name for name in sorted(models) if "supplement.size.B" in models[name]["metrics"]]
    if supplement:
        rates = ("LR.S", "LR.F", "RLR.S", "RLR.F")
        rows = [
            [name, _count(models[name]["metrics"], "supplement.size.B"), _count(models[name]["metrics"], "supplement.size.A")]
            + [_pct(models[name]["metrics"], f"supplement.{k}") for k in rates]
            for name in supplement
        ]
        rows.append(["Mean", "", ""] + [_pct(summary, f"supplement.{k}") for k in rates])
        tables.append(
            (
                "Table 17: condition supplement lure rates",
                ["Model", "|B_m|", "|A_m|", "LR_S", "LR_F", "RLR_S", "RLR_F"],
                rows,
                "Descriptive (no intervals); RLR averages both orders.",
            )
        )
        rows = [[subset, cond] + [_pct(summary, f"supplement.{key}.{o}") for o in OUTCOMES] for subset, cond, key in TABLE14]
        tables.append(("Table 18: condition supplement outcome distributions", ["Subset", "Condition"] + OUTCOME_HEADERS, rows, ""))
    return rp.in_paper_order(tables)


TABLE4 = (
    ("Original", "Original", "option_order.original"),
    ("All orders", "Original", "option_order.stable.original"),
    ("All orders", "Mean of orders", "option_order.stable.mean"),
)
LABEL_HEADERS = {"A": "A", "N": "N", "C": "C", "invalid": "Invalid"}


def _ratio_cell(metrics: dict, lure: str, count: str) -> str:
    """Table 20's "lures/items" cell; a dash for an empty subset."""
    n = metrics.get(count)
    if not n or n["estimate"] is None or n["estimate"] == 0:
        return "—"
    return f"{_count(metrics, lure)}/{_count(metrics, count)}"


SMALL_SUBSET = 10  # Table 20 cells on fewer items than this are flagged (App. D.4: "includes small subsets")


def _small_subsets(models: dict, names: list[str], esc=str) -> str:
    """A sentence naming Table 20's non-empty cells on fewer than SMALL_SUBSET items, whose rates are fragile."""
    small = []
    for name in names:
        m = models[name]["metrics"]
        for lab in ("A", "N", "C"):
            n = m.get(f"scope.H.count.{lab}", {}).get("estimate")
            if n and n < SMALL_SUBSET:
                small.append(f"{esc(name)} {lab} ({int(n)})")
    if not small:
        return ""
    return f" Subsets of fewer than {SMALL_SUBSET} items, whose rates (and their share of the mean) rest on few items: {', '.join(small)}."


def _diagnostic_tables(report: dict, label, esc=str) -> list[tuple[str, list[str], list[list[str]], str]]:
    """Table 4 (§6.3, App. D.6) and Tables 19-20 (§6.1, App. D.4), when the predictions have their rows."""
    models, summary = report["models"], report["summary"]["metrics"]
    tables = []
    ordered = [n for n in sorted(models) if "option_order.original.LR.S" in models[n]["metrics"]]
    if ordered:
        rows = []
        for selection, measurement, key in TABLE4:
            rows.append(
                [selection, measurement]
                + [_pct(summary, f"{key}.{k}") for k in ("LR.S", "LR.F", "delta.LR")]
                + [_ci(summary, f"{key}.delta.LR", 2), _ci(summary, f"{GROUP_PREFIX}{key}.delta.LR", 2)]
            )
        without = report["summary"].get("without") or {}
        w = without.get("metrics", {})
        if any(f"{key}.LR.S" in w for _, _, key in TABLE4):
            for selection, measurement, key in TABLE4:
                rows.append(
                    [f"{selection} (w/o {', '.join(without['excluded'])})", measurement]
                    + [_pct(w, f"{key}.{k}") for k in ("LR.S", "LR.F", "delta.LR")]
                    + ["", ""]
                )
        orders = sorted({", ".join(map(esc, models[n].get("option_orders", []))) for n in ordered})
        tables.append(
            (
                "Table 4: option-order robustness",
                ["Selection", "Measurement", "LR_S", "LR_F", "F−S", "F−S 95% CI", "F−S groups CI"],
                rows,
                "Items are selected if answered correctly without context under the release order (B_m^(0)) or under every "
                "order (B_m^stable), and lure rates are measured under the release order or averaged over the orders (App. D.6). "
                f"S and F use the same items within each model; F−S in percentage points. Orders (release letters shown at A-D, "
                f"E fixed): {'; '.join(orders)}. B_m^stable keeps {_pct(summary, 'option_order.kept')}% of B_m^(0) on average. "
                f"Intervals: 95% cluster bootstrap over the sample's {_count(summary, 'bootstrap.units.option_order.sample.clusters')} "
                f"source clusters and {_count(summary, 'bootstrap.units.option_order.sample.dependency_groups')} dependency groups."
                + (
                    f" Answers under the release order equal the main run's on {_pct(summary, 'option_order.main_agreement')}% of "
                    "(item, condition) pairs with a valid letter in both (§6.3)."
                    if "option_order.main_agreement" in summary
                    else ""
                ),
            )
        )
        rows = []
        for name in ordered:
            m = models[name]["metrics"]
            rows.append(
                [
                    label(name),
                    _count(m, "option_order.size.items"),
                    _count(m, "option_order.size.B0"),
                    _count(m, "option_order.size.stable"),
                ]
                + [_pct(m, f"{key}.{k}") for _, _, key in TABLE4 for k in ("LR.S", "LR.F")]
            )
        tables.append(
            (
                "Table 4 by model",
                [
                    "Model",
                    "items",
                    "|B^(0)|",
                    "|B^stable|",
                    "LR_S orig.",
                    "LR_F orig.",
                    "LR_S stable",
                    "LR_F stable",
                    "LR_S mean",
                    "LR_F mean",
                ],
                rows,
                "orig.: release order on B_m^(0); stable: release order on B_m^stable; mean: mean over the orders on B_m^stable.",
            )
        )
    judged = [n for n in sorted(models) if "scope.size.items" in models[n]["metrics"]]
    if judged:
        rows = []
        for name in judged + ["Total"]:
            m = summary if name == "Total" else models[name]["metrics"]
            rows.append(
                [name if name == "Total" else label(name), _count(m, "scope.size.items") if name != "Total" else ""]
                + [_count(m, f"scope.{c}.count.{lab}") for c in ("G", "F", "S") for lab in LABEL_HEADERS]
            )
        rows.append(
            ["Correct (%)", ""]
            + [
                _pct(summary, f"scope.{c}.correct") if lab == ("N" if c == "S" else "A") else ""
                for c in ("G", "F", "S")
                for lab in LABEL_HEADERS
            ]
        )
        rows.append(
            ["CI", ""]
            + [
                _ci(summary, f"scope.{c}.correct", 2) if lab == ("N" if c == "S" else "A") else ""
                for c in ("G", "F", "S")
                for lab in LABEL_HEADERS
            ]
        )
        tables.append(
            (
                "Table 19: scope labels",
                ["Model", "items"] + [f"{c} {h}" for c in ("G", "F", "S") for h in LABEL_HEADERS.values()],
                rows,
                "A, N and C: Applicable, Not applicable and Cannot determine (Figure 5a); Invalid: no single label. The correct "
                "label is A for G and F and N for S; C and invalid count as incorrect and stay in the denominator (App. D.4). "
                "Correct: mean over models of the share correctly labelled (§6.1), with its 95% cluster-bootstrap interval over "
                f"the sample's {_count(summary, 'bootstrap.units.scope.sample.clusters')} source clusters.",
            )
        )
    linked = [n for n in judged if "scope.size.H" in models[n]["metrics"]]
    if linked:
        rows = []
        for name in linked:
            m = models[name]["metrics"]
            rows.append(
                [label(name), _ratio_cell(m, "scope.H.lure_count.all", "scope.size.H")]
                + [_ratio_cell(m, f"scope.H.lure_count.{lab}", f"scope.H.count.{lab}") for lab in ("A", "N", "C")]
            )
        rows.append(
            ["Mean (%)"]
            + [
                _pct(summary, f"scope.H.lure.{k}") if summary.get(f"scope.H.lure.{k}", {}).get("estimate") is not None else "—"
                for k in ("all", "A", "N", "C")
            ]
        )
        rows.append(["CI"] + [_ci(summary, f"scope.H.lure.{k}", 2) for k in ("all", "A", "N")] + [""])
        tables.append(
            (
                "Table 20: lure counts with S alone by the model's S label",
                ["Model", "All", "S judged A", "S judged N", "S judged C"],
                rows,
                "Lures with S alone over items of H_m, the judged items in B_m (the original run's answers), overall and by the "
                "label the model gave S; a dash marks an empty subset. The mean averages model-level rates and is undefined when "
                "a model's subset is empty (App. D.4); 95% cluster-bootstrap intervals." + _small_subsets(models, linked, esc),
            )
        )
    return tables


def _footer(report: dict, esc=str) -> str:
    """The report's first paragraph; `esc` escapes its user-supplied strings (file and model names)."""
    p, q = report["predictions"], report["parameters"]
    s = report["summary"]["metrics"]
    value = lambda k: "n/a" if k not in s or s[k]["estimate"] is None else f"{s[k]['estimate']:g}"
    parsing = "a single letter A-E, or 'B.' / '(B)' (--lenient-letters)" if q["lenient_letters"] else "a single letter A-E only (App. C.1)"
    return (
        f"Release {esc(report['release']['version'])} (manifest sha256 {report['release']['manifest_sha256'][:12]}). "
        f"Predictions {esc(p['path'])}: {p['rows']} row(s), {p['excluded']} excluded, {len(p['problems'])} problem(s). "
        f"{_invalid_summary(report, esc)}Valid responses: {parsing}; anything else is invalid and stays in every denominator. "
        f"Cluster bootstrap: {q['replicates']} replicates, seed {q['seed']}, {value('bootstrap.units.clusters')} source clusters "
        f"({value('bootstrap.units.dependency_groups')} dependency groups for the sensitivity intervals); "
        f"{value('inference.models')} model(s) in the means (A_m covering at least {q['min_clusters']} source clusters)."
    )


def _problems(report: dict, limit: int = 200) -> list[str]:
    """The predictions problems as "line N: message" lines, at most `limit` (the JSON report has them all)."""
    problems = report["predictions"]["problems"]
    lines = [f"line {p['line']}: {p['message']}" if p["line"] is not None else p["message"] for p in problems[:limit]]
    return lines + ([f"... and {len(problems) - limit} more in the JSON report"] if len(problems) > limit else [])


def missing_inputs(report: dict) -> list[str]:
    """The paper's tables this report cannot fill, each with the input it needs."""
    models = report["models"].values()
    out = []
    if not any("option_order.original.LR.S" in m["metrics"] for m in models):
        out.append(
            'Table 4 (option-order robustness, §6.3, App. D.6): needs rows with "option_order" under the release order ABCD '
            "and the others (`ctxrobust prompts --option-orders 3 --diagnostic-sample`)"
        )
    if not any("scope.size.items" in m["metrics"] for m in models):
        out.append(
            'Tables 19-20 and Figure 3 (scope judgments, §6.1, App. D.4): need rows with "prompt": "scope" '
            "(`ctxrobust prompts --prompt scope --diagnostic-sample`)"
        )
    elif not any("scope.size.H" in m["metrics"] for m in models):
        out.append("Table 20 and Figure 3 (App. D.4): need the judging models' original-prompt answers (no context and S alone)")
    if not any("cf.size.A_common" in m["metrics"] for m in models):
        out.append('Tables 21-23 (context-faithful prompt, App. D.5): need rows with "prompt": "cf" (`ctxrobust prompts --prompt cf`)')
    if not report["summary"].get("without"):
        out.append('Table 2\'s "w/o" rows: give `--exclude-models MODEL`')
    return out


_ENTERS = re.compile(
    r"model (?P<model>.+) enters the means with A_m covering (?P<clusters>\d+) source cluster\(s\), fewer than the "
    r"(?P<minimum>\d+) of App\. C\.2: its figures rest on \d+ cluster\(s\) and can move the model means by a lot$"
)
_FRAGILE = re.compile(
    r"model (?P<model>.+): (?P<what>rare rates \(.*\)|its rates) over (?P<clusters>\d+) source clusters: its "
    r"cluster-bootstrap intervals are known to cover less than they claim \((?P<measured>.*)\)$"
)


def _merge_enters(matches: list[re.Match]) -> str:
    listed = ", ".join(f"{m['model']} ({m['clusters']})" for m in matches)
    return (
        f"models {listed} enter the means with A_m covering fewer than the {matches[0]['minimum']} source clusters of "
        "App. C.2 (each model's count in brackets): their figures rest on few clusters and can move the model means by a lot"
    )


def _merge_fragile(matches: list[re.Match]) -> str:
    listed = ", ".join(
        f"{m['model']} ({'all rates' if m['what'] == 'its rates' else m['what']}, {m['clusters']} cluster(s))" for m in matches
    )
    return (
        f"models {listed}: rates over fewer than {FEW_CLUSTERS} source clusters, whose cluster-bootstrap intervals are "
        f"known to cover less than they claim ({matches[0]['measured']})"
    )


WARNING_KINDS = ((_ENTERS, _merge_enters), (_FRAGILE, _merge_fragile))


def warning_lines(report: dict) -> list[str]:
    """The report's warnings, each once: a warning given for several models names them in one line."""
    return rp.warnings_once(report["summary"].get("warnings") or [], WARNING_KINDS)


def _md(value) -> str:
    return rp.md_text(value, None)


def render_markdown(report: dict) -> str:
    report = rp.checked(report)  # a figure asked for by a name nobody declared is an error, not "n/a"
    parts = [f"# MisleadQA report\n\n{_footer(report, _md)}\n"]
    for title, headers, rows, note in _tables(report, _md):
        table = rp.markdown_table(headers, rows)  # escapes every cell: a literal bar (|B_m|) does not split one
        parts.append(f"## {title}\n\n{table}" + (f"\n{note}\n" if note else ""))
    parts.append("## Not in this report\n\n" + "".join(f"- {line}\n" for line in missing_inputs(report)))  # the report's own text
    if report["summary"].get("warnings"):
        parts.append("## Warnings\n\n" + "".join(f"- {_md(line)}\n" for line in warning_lines(report)))
    if report["predictions"]["problems"]:
        parts.append("## Problems in the predictions file\n\n" + "".join(f"- {rp.md_text(line, None)}\n" for line in _problems(report)))
    return "\n".join(parts)


def figure2(report: dict) -> str:
    """Figure 2: lure rates on A_m with S and F alone, G first and misleading first, per model and mean."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = (
        ("S alone", "outcome.A.S.lure"),
        ("G→S", "outcome.A.G+S.lure"),
        ("S→G", "outcome.A.S+G.lure"),
        ("F alone", "outcome.A.F.lure"),
        ("G→F", "outcome.A.G+F.lure"),
        ("F→G", "outcome.A.F+G.lure"),
    )
    names = sorted(name for name in report["models"] if "size.A" in report["models"][name]["metrics"])
    labels = names + ["Mean"]
    sources = [report["models"][name]["metrics"] for name in names] + [report["summary"]["metrics"]]
    width = 0.8 / len(series)
    colours = ("#9ecae1", "#4292c6", "#08519c", "#fcae91", "#fb6a4a", "#a50f15")
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(labels)), 3.6))
    x = np.arange(len(labels))
    for k, ((name, key), colour) in enumerate(zip(series, colours)):
        heights = [np.nan if m.get(key, {}).get("estimate") is None else 100 * m[key]["estimate"] for m in sources]  # undefined: no bar
        ax.bar(x + (k - (len(series) - 1) / 2) * width, heights, width, label=name, color=colour)
    ax.set_xticks(x, labels, rotation=20, ha="right")
    ax.set_ylabel("Lure rate on A_m (%)")
    ax.set_ylim(0, 100)
    ax.legend(ncol=6, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 1.15), frameon=False)
    fig.tight_layout()
    uri = rp.figure_data_uri(fig)
    plt.close(fig)
    return uri


def figure3(report: dict) -> str:
    """Figure 3: lure rate with S alone on the items of H_m whose S the model judges Not applicable, per model,
    with 95% cluster-bootstrap intervals and lures/items; the diamond is the mean over models, the dashed line
    the mean over models on all items of H_m (§6.1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = report["models"]
    names = sorted(n for n in models if "scope.size.H" in models[n]["metrics"])
    summary = report["summary"]["metrics"]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * (len(names) + 1)), 3.4))
    x = np.arange(len(names))
    for k, name in enumerate(names):
        m = models[name]["metrics"]
        figure = m.get("scope.H.lure.N", {})
        if figure.get("estimate") is None:
            continue
        height = 100 * figure["estimate"]
        ax.bar(k, height, 0.6, color="#4292c6")
        if figure.get("ci"):
            lo, hi = (100 * v for v in figure["ci"])
            ax.errorbar(k, height, yerr=[[height - lo], [hi - height]], color="#08306b", capsize=3, linewidth=1)
    mean = summary.get("scope.H.lure.N", {})
    if mean.get("estimate") is not None:
        ax.plot([len(names)], [100 * mean["estimate"]], marker="D", color="#a50f15", markersize=7)
        if mean.get("ci"):
            lo, hi = (100 * v for v in mean["ci"])
            ax.errorbar(
                len(names),
                100 * mean["estimate"],
                yerr=[[100 * mean["estimate"] - lo], [hi - 100 * mean["estimate"]]],
                color="#a50f15",
                capsize=3,
            )
    overall = summary.get("scope.H.lure.all", {})
    if overall.get("estimate") is not None:
        ax.axhline(100 * overall["estimate"], color="#636363", linestyle="--", linewidth=1)
    ticks = [f"{name}\n{_ratio_cell(models[name]['metrics'], 'scope.H.lure_count.N', 'scope.H.count.N')}" for name in names]
    ax.set_xticks(list(x) + [len(names)], ticks + ["Mean"], fontsize=8)  # lures / items under each model's name
    ax.set_ylabel("Lure rate, S judged N (%)")
    ax.set_ylim(0, 105)
    fig.tight_layout()
    uri = rp.figure_data_uri(fig)
    plt.close(fig)
    return uri


def render_html(report: dict) -> str:
    report = rp.checked(report)  # a figure asked for by a name nobody declared is an error, not "n/a"
    import html

    sections = [("Summary", f"<p>{html.escape(_footer(report))}</p>")]
    if any("size.A" in m["metrics"] for m in report["models"].values()):
        sections.append(
            (
                "Figure 2: lure rates by condition and order",
                f'<img alt="Figure 2: lure rates on A_m by condition and order" src="{figure2(report)}">',
            )
        )
    if any("scope.size.H" in m["metrics"] for m in report["models"].values()):
        sections.append(
            (
                "Figure 3: lure rate with S alone where the model judges S not applicable",
                f'<img alt="Figure 3: lure rate with S alone on items whose S the model judges Not applicable" src="{figure3(report)}">'
                "<p>Bars: 95% cluster-bootstrap intervals; under each name: lures over items judged Not applicable (— for none). The diamond is the mean over models, "
                "the dashed line the mean lure rate on all items of H_m.</p>",
            )
        )
    from ctxrobust.evaluation.leaderboard import headline_of
    from ctxrobust.evaluation.plots import interval_section

    plotted = interval_section(report, headline_of(report["dataset"]) + ["delta.LR", "delta.RLR"], title="Lure rates with intervals")
    if plotted:
        sections.append(("Lure rates and intervals by model", plotted))
    for title, headers, rows, note in _tables(report):
        sections.append((title, rp.html_table(headers, rows) + (f"<p>{html.escape(note)}</p>" if note else "")))
    sections.append(("Not in this report", "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in missing_inputs(report)) + "</ul>"))
    if report["summary"].get("warnings"):
        sections.append(("Warnings", "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in warning_lines(report)) + "</ul>"))
    if report["predictions"]["problems"]:
        listed = "".join(f"<li>{html.escape(line)}</li>" for line in _problems(report))
        sections.append(("Problems in the predictions file", f"<ul>{listed}</ul>"))
    return rp.html_page("MisleadQA report", sections)
