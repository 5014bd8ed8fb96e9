"""Empirical coverage of the reported 95% intervals on simulated data with known truth.

Pseudowords (The Illusion of Robustness, Section 3 design; Appendix B intervals): each dataset draws
N questions from one population (baseline log-odds N(1, 2); under context a share of the questions
moves by +-2 log-odds, the rest not at all), and two models answer them with binary trials (20
baseline, 10 contexts x 2); model b shares half of model a's context effects. Every figure of
the per-model and cross-model blocks is scored exactly as `ctxrobust score` does (score_unit and the
pair block), with a new bootstrap seed per dataset.

Truth: what each interval claims to cover.
- INS.adjusted and WTD.adjusted estimate the noise-free INS and WTD (Section 2, "Noise Correction"):
  the mean |Delta_i| and the mean of the most degraded K% of the true changes, over the population.
- Every other figure is a question-level statistic at the design's trial counts, and its interval
  (question bootstrap) covers the figure's population value at those counts: the figure computed
  on one very large dataset (--population questions).

Prints, per figure and scenario (an effect, and no effect at all), the share of datasets whose
interval contains the truth, with its Monte Carlo standard error; figures reported without an
interval are listed with the coverage the withdrawn interval (the observed metric's, shifted by
the floor) had. A 95% interval should cover 93-97% at the paper's size (N = 500).

MisleadQA (paper Section 4.3, Appendix C.2): 6 models answer the 959 main items in 489 source
clusters (44 FRED clusters of about 9 items, 445 others of 1-2), with cluster random effects on
the lure log-odds; truth is each rate's population value (ratio of expected counts, from 40,000
simulated clusters), and intervals are the scorer's cluster bootstrap (10,000 replicates; 97.5%
for the two primary contrasts). A second scenario has rare residual lure rates (1-5%) on 25
clusters, where the report warns that coverage is low.

    .venv/bin/python bench/interval_coverage.py [--datasets 200] [--questions 500] [--population 200000] [--only pseudowords|misleadqa]

`--figures NAME,...` (pseudowords) computes only the named figures (per-model bootstrap figures, the
raw uncertainty correlates, the pair's Pearson r and Jaccard indices, the paired differences, and the
floor-adjusted INS and WTD with their null experiments), each by the scorer's own functions on the
same bootstrap and null streams and the same datasets as a full run, without splits: about 0.05 s a
dataset at 500 questions (OMP_NUM_THREADS=1; 0.1 s with the null experiments), so that one figure can
be measured on 1,000 datasets (Monte Carlo s.e. 0.7 points).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxrobust.evaluation.misleadqa import lure_rates as lr  # noqa: E402
from ctxrobust.evaluation.misleadqa import scorer as mq  # noqa: E402
from ctxrobust.evaluation.pseudowords import differences, instability, wtd_interval  # noqa: E402
from ctxrobust.evaluation.pseudowords import scorer as pw  # noqa: E402

CONTEXTS = [f"CHA-010000-{j:03d}" for j in range(10)]
BASE_TRIALS, PER_CONTEXT = 20, 2
WITHHELD: dict[str, str] = {}  # filled from the scorer's WITHDRAWN_INTERVALS
WITHDRAWN = {"INS.adjusted": ("INS", "noise_floor.INS"), "WTD.adjusted": ("WTD", "noise_floor.WTD")}  # observed metric, floor


def true_changes(rng: np.random.Generator, n: int, share: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per question: baseline probability, and the context probability of models a and b."""
    logit = rng.normal(1.0, 2.0, size=n)
    shift_a = np.where(rng.random(n) < share, rng.choice([-2.0, 2.0], size=n, p=[0.6, 0.4]), 0.0)
    own = np.where(rng.random(n) < share, rng.choice([-2.0, 2.0], size=n, p=[0.6, 0.4]), 0.0)
    shift_b = np.where(rng.random(n) < 0.5, shift_a, own)
    p0 = 1 / (1 + np.exp(-logit))
    return p0, 1 / (1 + np.exp(-(logit + shift_a))), 1 / (1 + np.exp(-(logit + shift_b)))


def unit(name: str, p0: np.ndarray, pc: np.ndarray, rng: np.random.Generator) -> pw.Unit:
    n = p0.size
    base = rng.binomial(BASE_TRIALS, p0).astype(np.float64)
    context = rng.binomial(PER_CONTEXT, pc[:, None], size=(n, len(CONTEXTS))).astype(np.float64)
    return pw.Unit(
        name,
        name,
        "CHA 10000",
        True,
        [f"q{i:06d}" for i in range(n)],
        CONTEXTS,
        np.full(n, BASE_TRIALS, dtype=np.int64),
        base,
        np.full((n, len(CONTEXTS)), PER_CONTEXT, dtype=np.int64),
        context,
    )


def figures(p0, pa, pb, rng, params: pw.Parameters, differences_only: bool = False) -> dict[str, dict]:
    """Every figure with an interval kind the report carries: per model a, the pair (a, b) and the paired
    differences a - b of a leaderboard (differences.py); with `differences_only`, the differences alone."""
    units = [unit("a", p0, pa, rng), unit("b", p0, pb, rng)]
    out = {}
    if differences_only == "light":  # the bootstrap figures of score_unit without null experiments and splits
        out.update(light_figures(units[0], params))
    elif not differences_only:
        results = {u.name: pw.score_unit(u, params) for u in units}
        out.update(results["a"].metrics)
        block = pw._pair_block(units, results, params, ("cross-model", "coverage"), attenuation=False)
        for name, value in block["by_pair"]["a"]["b"].items():
            out[f"pair.{name}"] = value
    zero = {u.name: {"INS": 0.0, "WTD": 0.0} for u in units}  # the floors only move the adjusted differences, which have no interval
    out.update({k: v for k, v in differences.pair_figures(units[0], units[1], params, zero).items() if not k.endswith(".adjusted")})
    return out


def bootstrap_inputs(u: pw.Unit, params: pw.Parameters) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(s_i0, s_ic, Delta_i, both) of one unit as score_unit computes them: `both` is a row of ones above
    the replicates of the unit's own bootstrap stream."""
    n = len(u.ids)
    s_i0 = instability.condition_means(u.base_total, u.base_n)
    s_ic = instability.context_mean(instability.condition_means(u.context_total, u.context_n))
    weights = pw.question_bootstrap.multiplicities(pw.question_bootstrap.stream(params.seed, "bootstrap", u.name), n, params.replicates)
    return s_i0, s_ic, s_ic - s_i0, np.vstack([np.ones((1, n)), weights])


def light_figures(u: pw.Unit, params: pw.Parameters, inputs: tuple | None = None) -> dict[str, dict]:
    """accuracy, delta, INS, WTD (BCa) and tail share of one unit, computed by the scorer's own functions
    as score_unit does (same bootstrap stream), without the costly null experiments and trial splits.
    `inputs`: bootstrap_inputs(u, params), when the caller has them."""
    n = len(u.ids)
    s_i0, s_ic, delta, both = inputs or bootstrap_inputs(u, params)
    return {
        "accuracy.baseline": pw._figure(both @ s_i0 / n, n),
        "accuracy.context": pw._figure(both @ s_ic / n, n),
        "delta": pw._figure(both @ delta / n, n),
        "INS": pw._figure(instability.weighted_ins(both, delta), n),
        "WTD": wtd_interval.wtd_figure(instability.weighted_wtd(both, delta, params.k), delta, params.k, n),
        "tail_share": pw._figure(instability.weighted_tail_share(both, delta, params.k), n),
    }


LIGHT = ("accuracy.baseline", "accuracy.context", "delta", "INS", "WTD", "tail_share")
RAW = tuple(f"uncertainty_rho.{t}.raw.{s}" for t in ("signed", "squared") for s in ("probability", "log_odds"))
PAIR = ("pair.pearson", "pair.jaccard.improved", "pair.jaccard.degraded")
DIFFERENCES = tuple(f"difference.{name}" for name in differences.FIGURES)
ADJUSTED = tuple(WITHDRAWN)  # with the noise floor's null experiments, no splits
SELECTABLE = LIGHT + RAW + PAIR + DIFFERENCES + ADJUSTED  # --figures: what can be computed without splits


def selected_figures(p0, pa, pb, rng, params: pw.Parameters, names: tuple[str, ...]) -> dict[str, dict]:
    """Only the named figures (SELECTABLE), each computed by the scorer's own functions on the same
    bootstrap streams as a full run (score_unit's per-model stream, the pair block's, the differences'),
    so the interval measured is the one reported; the datasets drawn are the same as in every mode."""
    units = [unit("a", p0, pa, rng), unit("b", p0, pb, rng)]
    out: dict[str, dict] = {}
    inputs = bootstrap_inputs(units[0], params) if any(n in LIGHT + ADJUSTED + RAW for n in names) else None  # drawn once
    if any(n in LIGHT + ADJUSTED for n in names):
        out.update(light_figures(units[0], params, inputs))
    adjusted = [n for n in names if n in ADJUSTED]
    if adjusted:  # the floors from score_unit's null stream; the observed metric's interval and the floor beside each
        _, _, delta, both = inputs
        ins, wtd = instability.weighted_ins(both, delta), instability.weighted_wtd(both, delta, params.k)
        out.update(pw._noise_corrected(units[0], ins, wtd, params)[0])
        names = names + tuple(part for n in adjusted for part in WITHDRAWN[n] if part not in names)
    if any(n in RAW for n in names):
        _, _, delta, both = inputs
        u = units[0]
        base_k, context_k = np.rint(u.base_total).astype(np.int64), np.rint(u.pooled_total).astype(np.int64)
        for name, values in pw.cross_model.raw_correlates(both, base_k, u.base_n, context_k, u.pooled_n, delta).items():
            out[f"uncertainty_rho.{name}"] = pw._figure(values, len(u.ids))
    if any(n in PAIR for n in names):  # the pair block reads only each unit's Delta_i (no attenuation here)
        results = {}
        for u in units:
            s_i0, s_ic, delta, _ = bootstrap_inputs(u, pw.Parameters(replicates=0))
            results[u.name] = pw.UnitResult({}, delta, s_i0, s_ic, {})
        block = pw._pair_block(units, results, params, ("cross-model", "coverage"), attenuation=False)
        for name, value in block["by_pair"]["a"]["b"].items():
            out[f"pair.{name}"] = value
    if any(n in DIFFERENCES for n in names):
        zero = {u.name: {"INS": 0.0, "WTD": 0.0} for u in units}
        out.update(differences.pair_figures(units[0], units[1], params, zero))
    return {name: out[name] for name in names if name in out}


def noise_free(p0: np.ndarray, pc: np.ndarray, k: int) -> dict[str, float]:
    delta = pc - p0
    return {"INS.adjusted": float(np.mean(np.abs(delta))), "WTD.adjusted": float(instability.wtd(delta, k))}


def run(scenario: str, share: float, args) -> list[tuple]:
    rng = np.random.default_rng([args.seed, int(share * 1000)])
    p0, pa, pb = true_changes(rng, args.population, share)
    population = pw.Parameters(replicates=0, null_experiments=20, splits=20, shift_null_simulations=0)
    compute = figures if not args.figures else lambda *a: selected_figures(*a[:5], args.figures)
    # the truth of an adjusted figure is the noise-free value (noise_free below), not a population run
    # of its null experiments; its observed metric's truth is still needed
    observed = tuple(dict.fromkeys(n for name in args.figures for n in (WITHDRAWN[name][:1] if name in ADJUSTED else (name,))))
    truth_of = figures if not args.figures else lambda *a: selected_figures(*a[:5], observed)
    baseline = pw.cross_model.jaccard_random_baseline  # an exact hypergeometric sum, minutes at --population questions,
    pw.cross_model.jaccard_random_baseline = lambda n, k: float("nan")  # and no interval figure: not computed for the truth
    try:
        truth = {k: v["estimate"] for k, v in truth_of(p0, pa, pb, rng, population, args.differences_only).items()}
    finally:
        pw.cross_model.jaccard_random_baseline = baseline
    truth.update(noise_free(p0, pa, pw.K))
    hits: dict[str, list[bool]] = {}
    withdrawn: dict[str, list[bool]] = {}
    started = time.perf_counter()
    for d in range(args.datasets):
        q0, qa, qb = true_changes(rng, args.questions, share)
        params = pw.Parameters(
            seed=d,
            replicates=args.replicates,
            null_experiments=args.null_experiments,
            split_intervals=args.split_intervals,
            shift_null_simulations=0,  # the Appendix F null has no interval: not simulated here
        )
        found = compute(q0, qa, qb, rng, params, args.differences_only)
        for name, value in found.items():
            if name not in truth or truth[name] is None:
                continue
            if value.get("ci"):
                lo, hi = value["ci"]
                hits.setdefault(name, []).append(lo <= truth[name] <= hi)
            elif name in WITHDRAWN and found.get(WITHDRAWN[name][0], {}).get("ci"):  # the interval as it was reported before
                raw, floor = WITHDRAWN[name]
                lo, hi = (c - found[floor]["estimate"] for c in found[raw]["ci"])
                withdrawn.setdefault(name, []).append(lo <= truth[name] <= hi)
        if args.checkpoint and (d + 1) % args.checkpoint == 0 and d + 1 < args.datasets:  # interim coverage, to stderr
            print(f"# {scenario}: after {d + 1} datasets ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
            for name in sorted(hits):
                print(f"#   {name}: {100 * np.mean(hits[name]):.1f}% of {len(hits[name])}", file=sys.stderr)
    rows = []
    for name in sorted(hits):
        rows.append((scenario, name, truth[name], np.mean(hits[name]), len(hits[name]), "reported"))
    withheld = WITHHELD
    for name in sorted(withdrawn):
        rows.append((scenario, name, truth[name], np.mean(withdrawn[name]), len(withdrawn[name]), "no interval reported"))
    rows = [(a, b, c, d, e, "no interval reported" if b in withheld else f) for a, b, c, d, e, f in rows]
    print(f"# {scenario}: {args.datasets} datasets in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return rows


# --- misleadqa --------------------------------------------------------------------------------------

MQ_MODELS = 6
# the scorer's interval figures that one set of responses per item gives (the paired ones need both orders' pairs)
MQ_NAMES = tuple(name for name in mq.CI_METRICS if not name.startswith("paired."))


def mq_clusters(rng: np.random.Generator, scenario: str) -> np.ndarray:
    """Cluster of each item."""
    if scenario == "paper":
        sizes = np.concatenate([rng.poisson(8.1, 44) + 1, rng.poisson(0.26, 445) + 1])
    else:
        sizes = rng.poisson(3.0, 25) + 1
    return np.repeat(np.arange(sizes.size), sizes)


def mq_codes(rng: np.random.Generator, cluster: np.ndarray, scenario: str, model: int) -> np.ndarray:
    """(items, conditions) outcome codes of one model (lure log-odds shifted per cluster)."""
    n = cluster.size
    effect = rng.normal(0.0, 0.8, cluster.max() + 1)[cluster]
    rare = scenario == "rare"
    base = {"S": -1.0, "F": -0.3, "RS": -2.2, "RF": -1.6} if not rare else {"S": -2.5, "F": -2.0, "RS": -3.6, "RF": -3.0}
    shift = 0.15 * (model - MQ_MODELS / 2)

    def lure(level):
        return rng.random(n) < 1 / (1 + np.exp(-(base[level] + shift + effect)))

    codes = np.full((n, len(lr.C)), lr.GOLD, dtype=np.int8)
    codes[:, lr.C["none"]] = np.where(rng.random(n) < 0.85, lr.GOLD, lr.OTHER)
    codes[:, lr.C["G"]] = np.where(rng.random(n) < 0.92, lr.GOLD, lr.OTHER)
    for condition, level in (("S", "S"), ("F", "F"), ("G+S", "RS"), ("S+G", "RS"), ("G+F", "RF"), ("F+G", "RF")):
        codes[:, lr.C[condition]] = np.where(lure(level), lr.LURE, lr.GOLD)
    return codes


def mq_estimates(codes_by_model: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Per model (M,) and mean of every metric: the scorer's formulas on plain sums."""
    totals = np.stack([lr.count_columns(c, *lr.evaluation_subsets(c)).sum(axis=0) for c in codes_by_model])
    return lr.primary_metrics(totals.astype(np.float64))


def run_misleadqa(scenario: str, args) -> list[tuple]:
    rng = np.random.default_rng([args.seed, 7, len(scenario)])
    population = 40_000 if scenario == "paper" else 400_000
    big = mq_clusters(rng, scenario)
    big = np.concatenate([big + k * (big.max() + 1) for k in range(-(-population // (big.max() + 1)))])
    truth = mq_estimates([mq_codes(rng, big, scenario, m) for m in range(MQ_MODELS)])
    hits: dict[str, list[bool]] = {}
    started = time.perf_counter()
    for d in range(args.datasets):
        cluster = mq_clusters(rng, scenario)
        codes = [mq_codes(rng, cluster, scenario, m) for m in range(MQ_MODELS)]
        per_model, mean = mq.bootstrap_intervals(codes, cluster, int(cluster.max()) + 1, MQ_NAMES, args.mq_replicates, d)
        for name in MQ_NAMES:
            for m in range(MQ_MODELS):
                lo, hi, _ = per_model[m][name]
                if np.isfinite(lo) and np.isfinite(truth[name][m]):
                    hits.setdefault(f"{name} (per model)", []).append(lo <= truth[name][m] <= hi)
            lo, hi, _ = mean[name]
            if np.isfinite(lo):
                hits.setdefault(f"{name} (model mean)", []).append(lo <= float(np.mean(truth[name])) <= hi)
    print(f"# misleadqa {scenario}: {args.datasets} datasets in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    label = {"paper": "959 items, 489 clusters", "rare": "rare rates (1-5%), 25 clusters"}[scenario]
    out = []
    for name in sorted(hits):
        key = name.split(" ")[0]
        value = float(np.mean(truth[key])) if "mean" in name else float("nan")
        level = "97.5%" if key in mq.PRIMARY_CONTRASTS else "95%"
        out.append((f"{label}", f"{name} [{level}]", value, np.mean(hits[name]), len(hits[name]), "reported"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--population", type=int, default=200_000)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--mq-replicates", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["pseudowords", "misleadqa"])
    parser.add_argument("--scenario", choices=["effect", "none"], help="one pseudowords scenario (default: both)")
    parser.add_argument("--split-intervals", choices=["all-splits", "per-split"], default="all-splits")
    parser.add_argument("--null-experiments", type=int, default=1000, help="of the noise floor (no reported interval depends on it)")
    parser.add_argument(
        "--light",
        dest="differences_only",
        action="store_const",
        const="light",
        help="the bootstrap figures of one model (accuracy, delta, INS, WTD, tail share) and the paired differences only: no null experiments, splits or correlations",
    )
    parser.add_argument(
        "--differences-only",
        dest="differences_only",
        action="store_const",
        const=True,
        help="the paired differences between the two models only",
    )
    parser.add_argument(
        "--figures",
        type=lambda text: tuple(name.strip() for name in text.split(",") if name.strip()),
        default=(),
        help=f"only these figures, comma-separated (pseudowords; no splits): any of {', '.join(SELECTABLE)}",
    )
    parser.add_argument("--checkpoint", type=int, default=0, help="print the coverage so far to stderr every this many datasets")
    parser.add_argument(
        "--quick", action="store_true", help="2 small datasets per scenario (also BENCH_QUICK=1): the bench runs, the figures mean nothing"
    )
    args = parser.parse_args()
    if args.quick or os.environ.get("BENCH_QUICK") == "1":
        args.datasets, args.questions, args.replicates, args.mq_replicates, args.population = 2, 60, 20, 50, 2000
    unknown = [name for name in args.figures if name not in SELECTABLE]
    if unknown:
        parser.error(f"--figures: {', '.join(unknown)} cannot be computed alone; choose from {', '.join(SELECTABLE)}")
    # intervals the scorer withholds are computed here all the same, to show their coverage
    WITHHELD.update(pw.WITHDRAWN_INTERVALS)
    pw.WITHDRAWN_INTERVALS.clear()
    if args.only != "misleadqa":
        rows = []
        if args.scenario in (None, "effect"):
            rows += run("effect (10% of questions move by 2 log-odds)", 0.1, args)
        if args.scenario in (None, "none"):
            rows += run("no effect", 0.0, args)
        print(
            f"pseudowords: {args.datasets} datasets of {args.questions} questions, {BASE_TRIALS} baseline and "
            f"{len(CONTEXTS)} x {PER_CONTEXT} context trials, {args.replicates} bootstrap replicates, {args.null_experiments} null "
            f"experiments, split-sample correlate intervals {args.split_intervals}"
            f"{ {True: ', paired differences only', 'light': ', bootstrap figures and paired differences only (--light)'}.get(args.differences_only, '') }"
            f"{', figures ' + ', '.join(args.figures) + ' only (--figures)' if args.figures else ''}"
            "; target 93-97% at N = 500"
        )
        table(rows)
    if args.only != "pseudowords":
        rows = run_misleadqa("paper", args) + run_misleadqa("rare", args)
        print(f"misleadqa: {args.datasets} datasets, {MQ_MODELS} models, {args.mq_replicates} cluster-bootstrap replicates")
        table(rows)
    return 0


def table(rows: list[tuple]) -> None:
    print("| scenario | figure | truth | coverage | +- (MC s.e.) | interval |")
    print("|---|---|---:|---:|---:|---|")
    for scenario, name, truth, coverage, count, status in rows:
        se = math.sqrt(max(coverage * (1 - coverage), 1e-12) / count)
        shown = "" if not math.isfinite(truth) else f"{truth:.4f}"
        print(f"| {scenario} | {name} | {shown} | {100 * coverage:.1f}% | {100 * se:.1f} | {status} |")
    print()


if __name__ == "__main__":
    raise SystemExit(main())
