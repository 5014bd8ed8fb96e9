"""bench/interval_coverage.py measures the intervals the scorer reports: its `--figures` path, which skips the trial
splits (and the null experiments unless an adjusted figure is asked for), gives exactly the figures
(estimates and intervals) of the full path."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest
from paths import REPO


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_coverage", REPO / "bench" / "interval_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("share", [0.1, 0.0])
def test_selected_figures_equal_the_full_path(bench, share):
    pw = bench.pw
    params = pw.Parameters(seed=3, replicates=100, null_experiments=10, splits=10, shift_null_simulations=0)
    full_rng, light_rng = np.random.default_rng(5), np.random.default_rng(5)
    full = bench.figures(*bench.true_changes(full_rng, 200, share), full_rng, params)
    selected = bench.selected_figures(*bench.true_changes(light_rng, 200, share), light_rng, params, bench.SELECTABLE)
    # an adjusted figure brings the observed metric and the floor its withdrawn interval is rebuilt from
    assert set(selected) == set(bench.SELECTABLE) | {"noise_floor.INS", "noise_floor.WTD"}
    for name in selected:
        assert selected[name] == full[name], name
        assert (selected[name]["ci"] is None) == (name in bench.ADJUSTED or name.startswith("noise_floor")), name
    # the same draws are left in the generator: the next dataset is the same in both modes
    assert full_rng.random() == light_rng.random()


def test_a_subset_is_computed_alone(bench):
    rng = np.random.default_rng(1)
    out = bench.selected_figures(
        *bench.true_changes(rng, 120, 0.1), rng, bench.pw.Parameters(replicates=50), ("pair.pearson", "tail_share")
    )
    assert sorted(out) == ["pair.pearson", "tail_share"]
    out = bench.selected_figures(
        *bench.true_changes(rng, 120, 0.1), rng, bench.pw.Parameters(replicates=50, null_experiments=20), ("WTD.adjusted",)
    )
    assert sorted(out) == ["WTD", "WTD.adjusted", "noise_floor.WTD"]
    assert out["WTD.adjusted"]["estimate"] == pytest.approx(out["WTD"]["estimate"] - out["noise_floor.WTD"]["estimate"])


def test_an_unknown_figure_is_refused():
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "interval_coverage.py"), "--only", "pseudowords", "--figures", "WTD.split_sample", "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "--figures: WTD.split_sample cannot be computed alone" in done.stderr
