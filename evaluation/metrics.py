"""Every figure a report can hold, declared once: its name as the scorer writes it, dataset, paper section,
unit, which way is better, what it means and how its interval is made.

A name may hold placeholders, `<part>`, for a family of figures (per split, per group, per order): each
placeholder stands for the alternatives `PARTS` lists for its dataset. The blocks that repeat other figures
(paired differences, dependency-group intervals, counts of undefined replicates) list exactly the figures
they carry, so a name nobody writes (`difference.difference.micro`) is refused. Renderers, the tidy tables, the terminal summary and the leaderboard read units and
directions from here; `lookup` refuses a name nobody declared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ctxrobust.errors import CtxRobustError

# units (the values a report's `units` table holds)
FRACTION = "fraction"  # a share or rate in [0, 1]
DIFFERENCE = "difference of fractions"  # in [-1, 1]
RATIO = "ratio"
COUNT = "count"
INDICATOR = "indicator"  # 0 or 1
CORRELATION = "correlation"
INDEX = "Jaccard index"
UNITS = (FRACTION, DIFFERENCE, RATIO, COUNT, INDICATOR, CORRELATION, INDEX)
PERCENT_UNITS = (FRACTION, DIFFERENCE)  # shown ×100

# interval methods
BASE_BOOTSTRAP = "cluster bootstrap over base problems (percentile)"
CLUSTER_BOOTSTRAP = "cluster bootstrap over source clusters (percentile, App. C.2)"
GROUP_BOOTSTRAP = "cluster bootstrap over dependency groups (percentile, App. D.6)"
QUESTION_BOOTSTRAP = "bootstrap over questions (percentile)"
QUESTION_BCA = "bootstrap over questions (BCa)"
SPLIT_BOOTSTRAP = "bootstrap over questions of the split-sample estimate"
PAIRED_BOOTSTRAP = "paired bootstrap, the same resamples for both models"
NONE = "none"

HIGHER, LOWER, NEITHER = True, False, None


class UndeclaredMetric(CtxRobustError):
    """A figure name the metric registry does not declare for its dataset."""


@dataclass(frozen=True)
class Metric:
    """One declared figure (or family of figures, when `name` holds placeholders)."""

    dataset: str
    name: str
    section: str
    unit: str
    higher_is_better: bool | None
    interval: str
    description: str
    produced_when: str = ""  # "" when every scoring writes it; else the input or option it needs

    @property
    def better(self) -> str | None:
        """Direction as the leaderboard spec writes it: "higher", "lower" or None."""
        return None if self.higher_is_better is None else "higher" if self.higher_is_better else "lower"

    @property
    def percent(self) -> bool:
        return self.unit in PERCENT_UNITS


_GSM_FACTORS = r"topic=in|topic=off|role=overlapped|role=nonoverlapped|number=in_range|number=out_range"
_MQA_CONDITIONS = r"S|F|G\+S|S\+G|G\+F|F\+G|S_with_G|F_with_G"
_MQA_ROWS = r"original|stable\.mean|stable\.original"
# dependency-group intervals: scorer.GROUP_CI_METRICS (Table 26) and option_orders.GROUP_FIGURES (§6.3)
_MQA_CONTRASTS = rf"delta\.LR|delta\.RLR|reduction\.[SF]|order_effect\.[SF]|option_order\.(?:{_MQA_ROWS})\.delta\.LR"
# source-cluster intervals: scorer.CI_METRICS, option_orders.FIGURES, scope_judgments.JUDGED_FIGURES and LINKED_CI
_MQA_INTERVALS = (
    r"gold\.S|LR\.[SF]|RLR\.[SF]|delta\.LR|delta\.RLR|reduction\.[SF]|order_effect\.[SF]|paired\.lure\.(?:G_first|misleading_first)"
    rf"|option_order\.(?:{_MQA_ROWS})\.(?:LR\.[SF]|delta\.LR)|option_order\.kept|scope\.[GSF]\.correct|scope\.H\.lure\.(?:all|A|N)"
)
PARTS: dict[str, dict[str, str]] = {
    "gsm-ic": {
        "scope": r"(?:4k\.)?",
        "steps": r"2step|multistep",
        "factor": _GSM_FACTORS,
        "gsm_difference": r"(?:4k\.)?(?:micro|macro)",  # gsm_ic/differences.py METRICS
    },
    "misleadqa": {
        "part": r"(?:supplement\.)?",
        "t": r"S|F",
        "o": r"gold|lure|abstain|other|invalid",
        "order": r"G_first|misleading_first",
        "where": rf"all\.G|all\.none|B\.S|B\.F|A\.(?:{_MQA_CONDITIONS})",
        "g": r"[^.]+\.[^.]+",
        "ctx": r"G|S|F|H",
        "label": r"A|C|N|invalid",
        "linked": r"A|C|N|all",
        "row": _MQA_ROWS,
        "sample": r"option_order\.sample|scope\.sample|scope\.linked",
        "mqa_difference": r"LR\.S|LR\.F|RLR\.S|RLR\.F",  # misleadqa/differences.py METRICS
        "contrast": _MQA_CONTRASTS,
        "interval": rf"{_MQA_INTERVALS}|dependency_groups\.(?:{_MQA_CONTRASTS})",
    },
    "pseudowords": {
        "target": r"signed|squared",
        "kind": r"raw|split",
        "scale": r"probability|log_odds",
        "pw_difference": r"accuracy\.baseline|accuracy\.context|delta|INS|WTD|INS\.adjusted|WTD\.adjusted",
    },
}
PLACEHOLDER_NOTES = {
    "scope": '"" (every variant of the release) or "4k." (GSM-IC-4K, the paper\'s evaluation set)',
    "steps": "2step or multistep (more than two steps in the solution)",
    "factor": "a factor level of the inserted sentence: topic=in|off, role=overlapped|nonoverlapped, number=in_range|out_range",
    "gsm_difference": "a headline accuracy: micro, macro, 4k.micro or 4k.macro",
    "part": '"" (the main split) or "supplement." (the condition supplement, descriptive: App. D.3)',
    "t": "S (true but out-of-scope context) or F (false but in-scope context)",
    "o": "an outcome: gold, lure, abstain, other or invalid (§4.1)",
    "order": "G_first or misleading_first",
    "where": "all.G, all.none (every item), B.S, B.F (on B_m), or A. and a condition (on A_m: S, F, G+S, S+G, G+F, F+G, S_with_G, F_with_G)",
    "g": "a source-scope group: the source, a dot, the scope dimension (e.g. fred.time)",
    "ctx": "the context judged: G, S, F, or H (S with the model's own judgment linked to its answer)",
    "label": "a scope label: A (applies), C, N (does not apply) or invalid",
    "linked": "a scope label A, C, N, or all",
    "row": "a Table 4 row: original, stable.mean or stable.original",
    "sample": "option_order.sample, scope.sample or scope.linked",
    "target": "signed or squared change",
    "kind": "raw (same trials) or split (disjoint trials for feature and target)",
    "scale": "probability or log_odds",
    "mqa_difference": "a lure rate: LR.S, LR.F, RLR.S or RLR.F",
    "contrast": "a contrast resampled over dependency groups: delta.LR, delta.RLR, reduction.S|F, order_effect.S|F "
    "(Table 26) or option_order.<row>.delta.LR (§6.3)",
    "interval": "a figure with a bootstrap interval: gold.S, LR.S|F, RLR.S|F, delta.LR, delta.RLR, reduction.S|F, "
    "order_effect.S|F, paired.lure.<order>, option_order.<row>.LR.S|F, option_order.<row>.delta.LR, option_order.kept, "
    "scope.G|S|F.correct, scope.H.lure.all|A|N, or dependency_groups. and a contrast",
    "pw_difference": "accuracy.baseline, accuracy.context, delta, INS, WTD, INS.adjusted or WTD.adjusted",
}

_PAIRED = "several models scored together (paired differences)"
_GSM_SC = "several samples per (model, id)"
_MQA_CF = "responses to the context-faithful prompt (--prompt cf)"
_MQA_ORDERS = "option-order responses (--option-orders)"
_MQA_SCOPE = "scope-judgment responses (--prompt scope)"
_MQA_SUPPLEMENT = "responses on the condition supplement"
_PW_ANNOTATIONS = "per-question ambiguity annotations (--annotations)"
_PW_PAIRS = "several models, or one model under several context groups"

# dataset, name, section, unit, higher_is_better, interval, description[, produced_when]
# fmt: off
_TABLE: tuple[tuple, ...] = (
    # GSM-IC (Shi et al. 2023)
    ("gsm-ic", "<scope>micro", "§3.2", FRACTION, HIGHER, BASE_BOOTSTRAP, "micro accuracy: share of variants answered correctly"),
    ("gsm-ic", "<scope>macro", "§3.2", FRACTION, HIGHER, BASE_BOOTSTRAP, "macro accuracy: share of base problems with every variant right"),
    ("gsm-ic", "<scope>micro.<steps>", "§3.2, Table 3", FRACTION, HIGHER, BASE_BOOTSTRAP, "micro accuracy on the variants of 2-step or multistep problems"),
    ("gsm-ic", "<scope>macro.<steps>", "§3.2, Table 3", FRACTION, HIGHER, BASE_BOOTSTRAP, "macro accuracy on the 2-step or multistep base problems"),
    ("gsm-ic", "<scope>micro.<factor>", "§3.2, Table 4", FRACTION, HIGHER, BASE_BOOTSTRAP, "micro accuracy on the variants of one factor level"),
    ("gsm-ic", "<scope>macro.<factor>", "§3.2, Table 4", FRACTION, HIGHER, BASE_BOOTSTRAP, "macro accuracy on the base problems, variants of one factor level"),
    ("gsm-ic", "<scope>normalised.micro", "§3.2, Table 3", RATIO, HIGHER, BASE_BOOTSTRAP, "micro accuracy over the model's base-problem accuracy"),
    ("gsm-ic", "<scope>normalised.macro", "§3.2, Table 3", RATIO, HIGHER, BASE_BOOTSTRAP, "macro accuracy over the model's base-problem accuracy"),
    ("gsm-ic", "<scope>invalid", "§3.2", FRACTION, LOWER, BASE_BOOTSTRAP, "share of variants without a numeric answer (counted wrong)"),
    ("gsm-ic", "<scope>sc.recall", "§5.1", FRACTION, HIGHER, BASE_BOOTSTRAP, "share of variants with a correct answer among the samples", _GSM_SC),
    ("gsm-ic", "accuracy.base", "§3.2, Table 2", FRACTION, HIGHER, BASE_BOOTSTRAP, "accuracy on the base problems, no irrelevant sentence"),
    ("gsm-ic", "difference.<gsm_difference>", "§3.2", DIFFERENCE, NEITHER, PAIRED_BOOTSTRAP, "model A minus model B on the same base problems", _PAIRED),
    # MisleadQA
    ("misleadqa", "<part>LR.<t>", "§4.2, Table 2", FRACTION, LOWER, CLUSTER_BOOTSTRAP, "lure rate: share of B_m on which the context alone leads to the lure"),
    ("misleadqa", "<part>RLR.<t>", "§4.2, Table 2", FRACTION, LOWER, CLUSTER_BOOTSTRAP, "residual lure rate: lure share on A_m with G also given, both orders"),
    ("misleadqa", "<part>gold.S", "§4.2, Table 2", FRACTION, HIGHER, CLUSTER_BOOTSTRAP, "gold rate with S alone on B_m"),
    ("misleadqa", "<part>delta.LR", "§4.3, Table 2", DIFFERENCE, NEITHER, CLUSTER_BOOTSTRAP, "LR of F minus LR of S"),
    ("misleadqa", "<part>delta.RLR", "§4.3, Table 2", DIFFERENCE, NEITHER, CLUSTER_BOOTSTRAP, "RLR of F minus RLR of S"),
    ("misleadqa", "<part>delta.RLR.<order>", "§5.2", DIFFERENCE, NEITHER, CLUSTER_BOOTSTRAP, "F minus S lure share on A_m in one presentation order"),
    ("misleadqa", "<part>order_effect.<t>", "§4.2", DIFFERENCE, NEITHER, CLUSTER_BOOTSTRAP, "misleading-first minus G-first lure share on A_m"),
    ("misleadqa", "<part>reduction.<t>", "§5.2, Table 26", DIFFERENCE, NEITHER, CLUSTER_BOOTSTRAP, "lure share alone on A_m minus RLR: what G removes"),
    ("misleadqa", "<part>paired.lure.<order>", "App. D.2, Table 16", FRACTION, LOWER, CLUSTER_BOOTSTRAP, "lure share with F on the items right with S and G in that order"),
    ("misleadqa", "<part>paired.<order>.kept", "App. D.2, Table 16", FRACTION, NEITHER, NONE, "share of A_m right with S and G in that order"),
    ("misleadqa", "<part>paired.<order>.outcome.<o>", "App. D.2, Table 16", FRACTION, NEITHER, NONE, "outcome share with F on the items kept by the pairing"),
    ("misleadqa", "<part>outcome.<where>.<o>", "App. D.1, Table 14", FRACTION, NEITHER, NONE, "share of one outcome under one condition and subset"),
    ("misleadqa", "<part>size.items", "§4.2", COUNT, NEITHER, NONE, "items scored"),
    ("misleadqa", "<part>size.B", "§4.2", COUNT, NEITHER, NONE, "|B_m|: items answered correctly without context"),
    ("misleadqa", "<part>size.A", "§4.2", COUNT, NEITHER, NONE, "|A_m|: items of B_m also right with G alone"),
    ("misleadqa", "group.<g>.LR.<t>", "App. D.6, Table 24", FRACTION, LOWER, NONE, "lure rate within one source-scope group"),
    ("misleadqa", "group.<g>.RLR.<t>", "App. D.6, Table 24", FRACTION, LOWER, NONE, "residual lure rate within one source-scope group"),
    ("misleadqa", "group.<g>.size.B", "App. D.6, Table 25", COUNT, NEITHER, NONE, "|B_m| within one source-scope group"),
    ("misleadqa", "group.<g>.size.A", "App. D.6, Table 25", COUNT, NEITHER, NONE, "|A_m| within one source-scope group"),
    ("misleadqa", "dependency_groups.<contrast>", "App. D.6", DIFFERENCE, NEITHER, GROUP_BOOTSTRAP, "a contrast with its interval from dependency-group resampling"),
    ("misleadqa", "bootstrap.undefined.<interval>", "App. C.2", COUNT, NEITHER, NONE, "bootstrap replicates in which the figure is undefined"),
    ("misleadqa", "bootstrap.units.clusters", "App. C.2", COUNT, NEITHER, NONE, "source clusters resampled"),
    ("misleadqa", "bootstrap.units.dependency_groups", "App. D.6", COUNT, NEITHER, NONE, "dependency groups resampled"),
    ("misleadqa", "bootstrap.units.<sample>.clusters", "App. C.2", COUNT, NEITHER, NONE, "source clusters resampled in a diagnostic sample"),
    ("misleadqa", "bootstrap.units.<sample>.dependency_groups", "App. D.6", COUNT, NEITHER, NONE, "dependency groups resampled in a diagnostic sample"),
    ("misleadqa", "inference.A.clusters", "App. C.2", COUNT, NEITHER, NONE, "source clusters A_m covers"),
    ("misleadqa", "inference.eligible", "App. C.2", INDICATOR, NEITHER, NONE, "1 when A_m covers enough clusters for the model to enter inference"),
    ("misleadqa", "inference.models", "App. C.2", COUNT, NEITHER, NONE, "models entering inference and the means"),
    ("misleadqa", "responses.rows", "App. C.1", COUNT, NEITHER, NONE, "response rows read"),
    ("misleadqa", "responses.invalid.count", "App. C.1", COUNT, NEITHER, NONE, "responses without a single letter A-E"),
    ("misleadqa", "responses.invalid.rate", "App. C.1", FRACTION, LOWER, NONE, "share of responses without a single letter A-E"),
    ("misleadqa", "responses.missing_original", "App. C.1", COUNT, NEITHER, NONE, "(item, condition) pairs without a response, scored invalid"),
    ("misleadqa", "responses.lenient_forms", "App. C.1", COUNT, NEITHER, NONE, "responses read only under --lenient-letters"),
    ("misleadqa", "<part>cf.outcome.<where>.<o>", "App. D.5, Table 21", FRACTION, NEITHER, NONE, "outcome share under the context-faithful prompt", _MQA_CF),
    ("misleadqa", "<part>cf.original.outcome.<where>.<o>", "App. D.5, Table 21", FRACTION, NEITHER, NONE, "the same share under the original prompt, same models", _MQA_CF),
    ("misleadqa", "<part>cf.size.A_common", "App. D.5, Table 23", COUNT, NEITHER, NONE, "|A_m^common|: A_m items also right with G alone under CF", _MQA_CF),
    ("misleadqa", "<part>cf.kept.A_common", "App. D.5, Table 23", FRACTION, NEITHER, NONE, "share of A_m kept in A_m^common", _MQA_CF),
    ("misleadqa", "<part>cf.common.S_with_G.gold.original", "App. D.5, Table 23", FRACTION, HIGHER, NONE, "gold share with S and G on A_m^common, original prompt", _MQA_CF),
    ("misleadqa", "<part>cf.common.S_with_G.gold.cf", "App. D.5, Table 23", FRACTION, HIGHER, NONE, "gold share with S and G on A_m^common, CF prompt", _MQA_CF),
    ("misleadqa", "<part>cf.none_agreement", "App. D.5", FRACTION, NEITHER, NONE, "agreement of the two runs' no-context letters", _MQA_CF),
    ("misleadqa", "<part>cf.none_agreement.invalid_pairs", "App. D.5", COUNT, NEITHER, NONE, "no-context pairs with an invalid letter in a run", _MQA_CF),
    ("misleadqa", "option_order.<row>.LR.<t>", "§6.3, Table 4", FRACTION, LOWER, CLUSTER_BOOTSTRAP, "lure rate under the option-order check", _MQA_ORDERS),
    ("misleadqa", "option_order.<row>.delta.LR", "§6.3, Table 4", DIFFERENCE, NEITHER, CLUSTER_BOOTSTRAP, "F minus S lure rate under the option-order check", _MQA_ORDERS),
    ("misleadqa", "option_order.kept", "§6.3, Table 4", FRACTION, NEITHER, CLUSTER_BOOTSTRAP, "share of B0 right under every option order", _MQA_ORDERS),
    ("misleadqa", "option_order.main_agreement", "§6.3", FRACTION, NEITHER, NONE, "agreement of the original-order rerun with the main run", _MQA_ORDERS),
    ("misleadqa", "option_order.models", "§6.3", COUNT, NEITHER, NONE, "models in the option-order means", _MQA_ORDERS),
    ("misleadqa", "option_order.orders", "§6.3", COUNT, NEITHER, NONE, "option orders answered", _MQA_ORDERS),
    ("misleadqa", "option_order.size.items", "§6.3", COUNT, NEITHER, NONE, "items of the option-order sample", _MQA_ORDERS),
    ("misleadqa", "option_order.size.B0", "§6.3", COUNT, NEITHER, NONE, "items right without context in the original order", _MQA_ORDERS),
    ("misleadqa", "option_order.size.stable", "§6.3", COUNT, NEITHER, NONE, "items right without context under every order", _MQA_ORDERS),
    ("misleadqa", "option_order.sample.size.items", "§6.3", COUNT, NEITHER, NONE, "items of the option-order sample, every model", _MQA_ORDERS),
    ("misleadqa", "scope.<ctx>.correct", "§6.1, Table 19", FRACTION, HIGHER, CLUSTER_BOOTSTRAP, "share of contexts whose scope the model judges correctly", _MQA_SCOPE),
    ("misleadqa", "scope.<ctx>.count.<label>", "§6.1, Table 19", COUNT, NEITHER, NONE, "contexts given one scope label", _MQA_SCOPE),
    ("misleadqa", "scope.H.lure.<linked>", "§6.1, Table 20", FRACTION, LOWER, CLUSTER_BOOTSTRAP, "lure share with S alone among items given that label", _MQA_SCOPE),
    ("misleadqa", "scope.H.lure_count.<label>", "§6.1, Table 20", COUNT, NEITHER, NONE, "lures with S alone among items given that label", _MQA_SCOPE),
    ("misleadqa", "scope.H.lure_count.all", "§6.1, Table 20", COUNT, NEITHER, NONE, "lures with S alone among the linked items", _MQA_SCOPE),
    ("misleadqa", "scope.size.items", "§6.1", COUNT, NEITHER, NONE, "items of the scope sample", _MQA_SCOPE),
    ("misleadqa", "scope.size.H", "§6.1", COUNT, NEITHER, NONE, "items linking a scope judgment of S to an answer with S alone", _MQA_SCOPE),
    ("misleadqa", "scope.models", "§6.1", COUNT, NEITHER, NONE, "models in the scope means", _MQA_SCOPE),
    ("misleadqa", "scope.linked.models", "§6.1", COUNT, NEITHER, NONE, "models in the linked-judgment means", _MQA_SCOPE),
    ("misleadqa", "scope.sample.size.items", "§6.1", COUNT, NEITHER, NONE, "items of the scope sample, every model", _MQA_SCOPE),
    ("misleadqa", "scope.linked.size.items", "§6.1", COUNT, NEITHER, NONE, "linked items, every model", _MQA_SCOPE),
    ("misleadqa", "difference.<mqa_difference>", "§4.3", DIFFERENCE, NEITHER, PAIRED_BOOTSTRAP, "model A minus model B on the same clusters", _PAIRED),
    # pseudowords (Illusion of robustness)
    ("pseudowords", "accuracy.baseline", "§2, Table 1", FRACTION, HIGHER, QUESTION_BOOTSTRAP, "AVG: accuracy without context"),
    ("pseudowords", "accuracy.context", "§2", FRACTION, HIGHER, QUESTION_BOOTSTRAP, "accuracy with the pseudo-word contexts"),
    ("pseudowords", "delta", "§2, Table 1", DIFFERENCE, NEITHER, QUESTION_BOOTSTRAP, "Δ: mean per-question change with context"),
    ("pseudowords", "INS", "§2, Table 6", FRACTION, LOWER, QUESTION_BOOTSTRAP, "instability: mean absolute per-question change, observed"),
    ("pseudowords", "INS.adjusted", "§2, Table 1", DIFFERENCE, LOWER, NONE, "instability minus its noise floor"),
    ("pseudowords", "WTD", "§2, Table 6", DIFFERENCE, LOWER, QUESTION_BCA, "worst-tail degradation: mean drop in the worst K% of questions, observed"),
    ("pseudowords", "WTD.adjusted", "§2, Table 1", DIFFERENCE, LOWER, NONE, "worst-tail degradation minus its noise floor"),
    ("pseudowords", "WTD.split_sample", "App. A, Table 5", DIFFERENCE, LOWER, SPLIT_BOOTSTRAP, "WTD with the tail ranked and measured on disjoint trials"),
    ("pseudowords", "noise_floor.INS", "§2, Table 6", FRACTION, NEITHER, NONE, "η INS: instability of synthetic null experiments"),
    ("pseudowords", "noise_floor.WTD", "§2, Table 6", DIFFERENCE, NEITHER, NONE, "η WTD: worst-tail degradation of synthetic null experiments"),
    ("pseudowords", "tail_share", "§3.1, Figure 2", FRACTION, NEITHER, QUESTION_BOOTSTRAP, "part of the total absolute change in the two K% tails"),
    ("pseudowords", "split_half.r", "App. D, Table 7", CORRELATION, NEITHER, QUESTION_BOOTSTRAP, "Pearson r between two halves' per-question changes"),
    ("pseudowords", "split_half.spearman_brown", "App. D, Table 7", CORRELATION, NEITHER, QUESTION_BOOTSTRAP, "split-half r with the Spearman-Brown correction"),
    ("pseudowords", "uncertainty_rho.<target>.<kind>.<scale>", "§3.2, Table 3", CORRELATION, NEITHER, SPLIT_BOOTSTRAP, "Spearman ρ of baseline uncertainty against the change"),
    ("pseudowords", "uncertainty_rho.<target>.split.<scale>.ceiling", "App. F", CORRELATION, NEITHER, NONE, "reliability ceiling √(rel_F·rel_T) of the split-sample ρ"),
    ("pseudowords", "uncertainty_rho.squared.split.<scale>.shift_null", "App. F", CORRELATION, NEITHER, NONE, "split-sample ρ under a homogeneous shift (mean of simulations)"),
    ("pseudowords", "ambiguity_rho.<target>.<kind>.<scale>", "§3.2, Table 3", CORRELATION, NEITHER, SPLIT_BOOTSTRAP, "Spearman ρ of question ambiguity against the change", _PW_ANNOTATIONS),
    ("pseudowords", "pearson", "§3.2, Figure 3", CORRELATION, NEITHER, NONE, "Pearson r of two units' per-question changes", _PW_PAIRS),
    ("pseudowords", "pearson.mean", "§3.2", CORRELATION, NEITHER, QUESTION_BOOTSTRAP, "mean Pearson r over pairs", _PW_PAIRS),
    ("pseudowords", "attenuation", "App. D", CORRELATION, NEITHER, NONE, "√(ρ_i ρ_j): the reliability bound on a pair's correlation", _PW_PAIRS),
    ("pseudowords", "jaccard.improved", "§3.2", INDEX, NEITHER, NONE, "overlap of two units' top K% most improved questions", _PW_PAIRS),
    ("pseudowords", "jaccard.degraded", "§3.2", INDEX, NEITHER, NONE, "overlap of two units' top K% most degraded questions", _PW_PAIRS),
    ("pseudowords", "jaccard.improved.mean", "§3.2", INDEX, NEITHER, NONE, "mean overlap of the most improved questions over pairs", _PW_PAIRS),
    ("pseudowords", "jaccard.degraded.mean", "§3.2", INDEX, NEITHER, NONE, "mean overlap of the most degraded questions over pairs", _PW_PAIRS),
    ("pseudowords", "jaccard.random_baseline", "§3.2", INDEX, NEITHER, NONE, "expected overlap of two random K% sets", _PW_PAIRS),
    ("pseudowords", "difference.<pw_difference>", "§2", DIFFERENCE, NEITHER, PAIRED_BOOTSTRAP, "model A minus model B on the same questions", _PAIRED),
)
# fmt: on

METRICS: tuple[Metric, ...] = tuple(Metric(*row) for row in _TABLE)
_PLACEHOLDER = re.compile(r"<([a-z_]+)>")


def _pattern(metric: Metric) -> re.Pattern | None:
    """The regular expression of a family's name (None for a plain name)."""
    if "<" not in metric.name:
        return None
    parts = PARTS.get(metric.dataset, {})
    out, at = "", 0
    for found in _PLACEHOLDER.finditer(metric.name):
        out += re.escape(metric.name[at : found.start()])
        key = found.group(1)
        out += f"(?:{parts[key]})"
        at = found.end()
    return re.compile(out + re.escape(metric.name[at:]))


_BY_NAME = {(m.dataset, m.name): m for m in METRICS if "<" not in m.name}
_FAMILIES = [(m, _pattern(m)) for m in METRICS if "<" in m.name]


def datasets() -> list[str]:
    return sorted({m.dataset for m in METRICS})


def declared(dataset: str) -> list[Metric]:
    """Every declaration of a dataset, in table order."""
    return [m for m in METRICS if m.dataset == dataset]


@lru_cache(maxsize=8192)
def find(dataset: str, name: str) -> Metric | None:
    """The declaration covering `name` in `dataset`, or None."""
    plain = _BY_NAME.get((dataset, name))
    if plain is not None:
        return plain
    for metric, pattern in _FAMILIES:
        if metric.dataset != dataset:
            continue
        if pattern.fullmatch(name):
            return metric
    return None


def lookup(dataset: str, name: str) -> Metric:
    """The declaration of `name`; UndeclaredMetric (one clear line) when nobody declared it."""
    metric = find(str(dataset), str(name))
    if metric is None:
        if dataset not in datasets():
            raise UndeclaredMetric(f"no metric is declared for dataset {dataset!r}; declared: {', '.join(datasets())}")
        raise UndeclaredMetric(f"{dataset}: no figure named {str(name)[:200]!r} is declared in ctxrobust.evaluation.metrics")
    return metric


def unit(dataset: str, name: str) -> str:
    return lookup(dataset, name).unit


def percent(dataset: str, name: str, units: dict | None = None) -> bool:
    """Whether the figure is shown ×100 (fractions and their differences): as declared here, else by the
    unit a report gives it (`units`, a report's "units"; a fraction when it gives none)."""
    declared = find(dataset, name)
    if declared is not None:
        return declared.percent
    return (units or {}).get(name, FRACTION) in PERCENT_UNITS


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_page() -> str:
    """docs/metrics.md: every declared figure, by dataset, generated from the table above."""
    better = {True: "higher", False: "lower", None: "—"}
    lines = [
        "# Metrics",
        "",
        "Every figure a report can hold is declared once in the metric registry (`ctxrobust.evaluation.metrics`): its",
        "name as the scorer writes it, the paper section it comes from, its unit, which way is better, how its interval",
        "is made, and the input or option it needs when not every scoring writes it. The JSON report's `units`, the",
        "tidy CSV and Parquet columns `unit` and `higher_is_better`, the terminal summary, the Markdown and HTML",
        "tables and the leaderboard all read them from there; a figure nobody declared is an error, never a guess.",
        "",
        "Units: fractions and differences of fractions are shown ×100 in tables; a mean over models (`summary`) has no",
        "interval. This page is generated: `python -m ctxrobust.evaluation.metrics > docs/metrics.md` (a test checks it).",
        "",
        "## Name patterns",
        "",
        "A name with `<part>` declares a family: each placeholder stands for the alternatives below.",
        "",
        "| Placeholder | Stands for |",
        "|---|---|",
    ]
    used = {key for m in METRICS for key in _PLACEHOLDER.findall(m.name)}
    lines += [f"| `<{key}>` | {_cell(PLACEHOLDER_NOTES[key])} |" for key in sorted(used)]
    for dataset in datasets():
        lines += [
            "",
            f"## {dataset}",
            "",
            "| Figure | Section | Unit | Better | Interval | Meaning | Only with |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| `{m.name}` | {_cell(m.section)} | {m.unit} | {better[m.higher_is_better]} | {_cell(m.interval)} | "
            f"{_cell(m.description)} | {_cell(m.produced_when) or '—'} |"
            for m in declared(dataset)
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(markdown_page())
