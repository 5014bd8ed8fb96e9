"""The Markdown reports read like the papers: tables in the papers' order, each model's headline figure with
its interval (or a footnote saying why not), each warning once, and no escaping of the report's own text."""

from __future__ import annotations

import re

import pytest
from test_eval_gsm_ic import ALPHA, BASES, BETA, SUBSET, VARIANTS, write_predictions
from test_eval_gsm_ic import score as gsm_score
from test_eval_gsm_ic import write_release as gsm_release
from test_eval_misleadqa import M1, M1_CF, M1_SUPPLEMENT, M2, MAIN, SUPPLEMENT, prediction_lines, write_release
from test_eval_misleadqa_diagnostics import order_lines, scope_lines
from test_eval_pseudowords import FAST, make_release, simulated_file

from ctxrobust.evaluation import report as rp
from ctxrobust.evaluation.gsm_ic import render as gsm_render
from ctxrobust.evaluation.misleadqa import render as misleadqa_render
from ctxrobust.evaluation.misleadqa import scorer as misleadqa
from ctxrobust.evaluation.pseudowords import render as pseudowords_render
from ctxrobust.evaluation.pseudowords import scorer as pseudowords
from ctxrobust.release import Release

HOSTILE = "ev`il|<b>"  # a model name with a code span, a cell break and HTML in it
INTERVAL = r"-?\d+\.\d+ \[-?\d+\.\d+, -?\d+\.\d+\]"


def headings(md: str) -> list[str]:
    return re.findall(r"^## (.*)$", md, flags=re.M)


def table_numbers(md: str) -> list[int]:
    """The paper's table number of each heading that starts with one, in the report's order."""
    return [int(m.group(1)) for h in headings(md) if (m := re.match(r"Table (\d+)\b", h))]


def section(md: str, start: str) -> str:
    return md.split("## " + start, 1)[1].split("\n## ", 1)[0]


def rows_of(table: str, first: str) -> list[list[str]]:
    """The cells of the table rows whose first cell starts with `first`."""
    out = []
    for line in table.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if cells and cells[0].startswith(first):
            out.append(cells)
    return out


def own_lines(md: str, names: list[str]) -> list[str]:
    """The report's lines that mention no user-supplied name."""
    return [line for line in md.splitlines() if not any(rp.md_text(n, None) in line for n in names)]


@pytest.fixture
def misleadqa_files(tmp_path):
    release = Release(write_release(tmp_path / "release", MAIN, SUPPLEMENT))
    lines = (
        prediction_lines("m1", M1)
        + prediction_lines("m1", M1_CF, "cf")
        + prediction_lines("m1", M1_SUPPLEMENT)
        + prediction_lines("m2", M2)
        + prediction_lines(HOSTILE, M1)
        + order_lines()
        + scope_lines()
    )
    path = tmp_path / "predictions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return release, path


@pytest.fixture
def misleadqa_md(misleadqa_files):
    release, path = misleadqa_files
    return misleadqa_render.render_markdown(misleadqa.score(release, path, {"replicates": 40, "min_clusters": 2}))


def test_misleadqa_tables_follow_the_papers_numbers(misleadqa_md):
    numbers = table_numbers(misleadqa_md)
    assert numbers == sorted(numbers)
    assert {2, 4, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26} <= set(numbers)
    assert headings(misleadqa_md).index("Table 4 by model") == headings(misleadqa_md).index("Table 4: option-order robustness") + 1


def test_misleadqa_table2_gives_each_model_its_interval_or_the_reason(misleadqa_md):
    table = section(misleadqa_md, "Table 2")
    (m1,) = rows_of(table, "m1")
    assert all(re.fullmatch(INTERVAL, cell) for cell in m1[3:10]), m1  # Gold_S to ΔRLR, each with [lo, hi]
    (m2,) = rows_of(table, "m2 *")  # A_m on one cluster, below --min-clusters 2: no interval, marked
    assert all(re.fullmatch(r"\d+\.\d\d \*", cell) for cell in m2[3:10]), m2
    assert "* A_m covers fewer than 2 source clusters: no intervals" in table
    assert rows_of(table, "Mean") and rows_of(table, "CI")  # the paper's mean and CI rows stay


def test_misleadqa_without_replicates_footnotes_every_missing_interval(misleadqa_files):
    release, path = misleadqa_files
    md = misleadqa_render.render_markdown(misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1}))
    table = section(md, "Table 2")
    (m1,) = rows_of(table, "m1")
    assert all(cell.endswith(" ‡") for cell in m1[3:10]), m1
    assert "‡ No interval: 0 bootstrap replicates" in table


def test_misleadqa_warnings_once_naming_the_models(misleadqa_files):
    release, path = misleadqa_files
    report = misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1})
    assert sum("enters the means" in w for w in report["summary"]["warnings"]) == 3  # the JSON keeps one per model
    warnings = section(misleadqa_render.render_markdown(report), "Warnings")
    items = [line for line in warnings.splitlines() if line.startswith("- ")]
    assert len(items) == 2, items
    assert items[0] == (
        "- models 'ev\\`il\\|&lt;b>' (3), 'm1' (3), 'm2' (1) enter the means with A_m covering fewer than the 20 source "
        "clusters of App. C.2 (each model's count in brackets): their figures rest on few clusters and can move the model means by a lot"
    )  # the hostile name stays escaped
    assert "cover less than they claim" in items[1] and "'m2' (all rates, 1 cluster(s))" in items[1]


def test_a_warning_for_one_model_is_kept_as_it_is():
    line = "model 'm1' enters the means with A_m covering 3 source cluster(s), fewer than the 20 of App. C.2: its figures rest on 3 cluster(s) and can move the model means by a lot"
    report = {"summary": {"warnings": [line, line, "something else"]}}
    assert misleadqa_render.warning_lines(report) == [line, "something else"]


def test_misleadqa_code_spans_are_not_escaped_but_names_are(misleadqa_files):
    release, path = misleadqa_files
    md = misleadqa_render.render_markdown(misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1}))
    assert "give `--exclude-models MODEL`" in section(md, "Not in this report")
    assert not [line for line in own_lines(md, [HOSTILE, str(path)]) if "\\`" in line]
    assert HOSTILE not in md and "ev\\`il\\|&lt;b>" in md  # every mention of the name escaped


def test_markdown_renders_code_spans_and_keeps_names_literal(misleadqa_files):
    markdown = pytest.importorskip("markdown")
    release, path = misleadqa_files
    md = misleadqa_render.render_markdown(misleadqa.score(release, path, {"replicates": 0, "min_clusters": 1}))
    page = markdown.markdown(md, extensions=["tables"])
    assert "<code>--exclude-models MODEL</code>" in page
    assert "<b>" not in page and "\\`" not in page.split("Not in this report")[1].split("</ul>")[0]


@pytest.fixture
def gsm_md(tmp_path):
    release = gsm_release(tmp_path / "release", BASES, VARIANTS, SUBSET)
    predictions = write_predictions(tmp_path / "predictions.jsonl", ALPHA + BETA)
    return gsm_render.render_markdown(gsm_score(release, predictions, {"replicates": 200}))


def test_gsm_ic_tables_follow_the_paper_and_table3_gives_each_model_its_interval(gsm_md):
    assert table_numbers(gsm_md) == [2, 3, 4]
    names = headings(gsm_md)
    assert names.index("Table 4: accuracy by factor of the inserted sentence, GSM-IC-4K") < names.index(
        "GSM-IC, all variants: micro and macro accuracy (Table 3 layout)"
    )
    table = section(gsm_md, "Table 3")
    header = next(line for line in table.splitlines() if line.startswith("| Model"))
    assert "Micro Overall [95% CI]" in header and "Macro Overall [95% CI]" in header
    for model in ("alpha", "beta"):
        (row,) = rows_of(table, model)
        assert re.fullmatch(INTERVAL, row[3]) and re.fullmatch(INTERVAL, row[7]), row
        assert re.fullmatch(r"\d+\.\d", row[1]), row  # the other columns stay point estimates, as in the paper
    (mean,) = rows_of(table, "Mean over models")
    assert re.fullmatch(r"\d+\.\d", mean[3])  # the equal-weight mean has no interval


def test_gsm_ic_without_replicates_footnotes_the_headline_cells(tmp_path):
    release = gsm_release(tmp_path / "release", BASES, VARIANTS, SUBSET)
    predictions = write_predictions(tmp_path / "predictions.jsonl", ALPHA + BETA)
    md = gsm_render.render_markdown(gsm_score(release, predictions, {"replicates": 0}))
    table = section(md, "Table 3")
    (alpha,) = rows_of(table, "alpha")
    assert alpha[3].endswith(" ‡") and alpha[7].endswith(" ‡")
    assert "‡ No intervals: 0 bootstrap replicates." in table


@pytest.fixture(scope="module")
def pseudowords_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pw")
    release = make_release(tmp / "release")
    return pseudowords.score(release, simulated_file(tmp, models=3, n=30), dict(FAST))


def test_pseudowords_tables_follow_the_paper(pseudowords_report):
    md = pseudowords_render.render_markdown(pseudowords_report)
    assert table_numbers(md) == [1, 3, 5, 6, 7]
    names = headings(md)
    # Figure 3 (Section 3.2) between Tables 1 and 3; Appendix F after Table 7
    assert (
        names.index("Table 1: main results (%)")
        < names.index("Model specificity")
        < names.index("Table 3: correlates of context-induced change (Spearman ρ)")
    )
    assert names.index("Table 7: split-half reliability") < names.index("Reliability ceiling and homogeneous-shift null (Appendix F)")


def test_pseudowords_table1_gives_each_model_its_intervals_and_footnotes_the_adjusted_ones(pseudowords_report):
    table = section(pseudowords_render.render_markdown(pseudowords_report), "Table 1")
    rows = rows_of(table, "model-")
    assert len(rows) == 3
    for row in rows:
        assert re.fullmatch(INTERVAL, row[1]) and re.fullmatch(r"[+-]\d+\.\d \[-?\d+\.\d, -?\d+\.\d\]", row[2]), row
        assert row[3].endswith(" ‡") and row[4].endswith(" ‡"), row
    assert "‡ Point estimates without an interval" in table


def test_pseudowords_small_sample_warning_once(pseudowords_report):
    assert len(pseudowords_report["warnings"]) == 3  # one per model in the JSON report
    md = pseudowords_render.render_markdown(pseudowords_report)
    items = [line for line in section(md, "Warnings").splitlines() if line.startswith("- ")]
    assert len(items) == 1 and md.count("known to cover less than 95%") == 1
    assert items[0].startswith(
        "- models 'model-0' (30 questions, m = 3), 'model-1' (30 questions, m = 3), 'model-2' (30 questions, m = 3):"
    )
    html = pseudowords_render.render_html(pseudowords_report)
    assert html.count("known to cover less than 95%") == 1


def test_in_paper_order_is_stable_and_puts_unnumbered_tables_last():
    tables = [("Table 16: a",), ("Extra",), ("Table 2: b",), ("Table 4 by model",), ("Table 4: c",), ("Table 14: d",)]
    assert [t[0] for t in rp.in_paper_order(tables)] == [
        "Table 2: b",
        "Table 4 by model",
        "Table 4: c",
        "Table 14: d",
        "Table 16: a",
        "Extra",
    ]


def test_with_interval_cells():
    assert rp.with_interval({"estimate": 0.125, "ci": [0.081, 0.17]}) == "12.5 [8.1, 17.0]"
    assert rp.with_interval({"estimate": 0.125, "ci": [0.081, 0.17]}, 2, 1) == "12.50 [8.1, 17.0]"
    assert rp.with_interval({"estimate": 0.125, "ci": None}, mark="*") == "12.5 *"
    assert rp.with_interval({"estimate": None, "ci": None}, mark="*") == "n/a"
