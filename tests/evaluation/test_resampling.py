"""Draw counts made a block of rows at a time equal the one-call draws; work sizes are bounded with the fix."""

from __future__ import annotations

import numpy as np
import pytest

from ctxrobust.errors import CtxRobustError
from ctxrobust.evaluation import resampling
from ctxrobust.options import parse_options


def _one_call(rng: np.random.Generator, n_units: int, replicates: int) -> np.ndarray:
    draws = rng.integers(0, n_units, size=(replicates, n_units))
    flat = draws + n_units * np.arange(replicates)[:, None]
    return np.bincount(flat.ravel(), minlength=replicates * n_units).reshape(replicates, n_units)


@pytest.mark.parametrize("n_units, replicates", [(7, 13), (500, 33), (1, 5), (3000, 3)])
def test_block_draws_equal_the_one_call_draws(monkeypatch, n_units, replicates):
    monkeypatch.setattr(resampling, "DRAWS_PER_BLOCK", 1000)  # several blocks, some rows left over
    expected = _one_call(np.random.default_rng(4), n_units, replicates)
    assert np.array_equal(resampling.draw_counts(np.random.default_rng(4), n_units, replicates), expected)
    as_float = resampling.draw_counts(np.random.default_rng(4), n_units, replicates, np.float64)
    assert as_float.dtype == np.float64 and np.array_equal(as_float, expected)


def test_a_count_matrix_too_large_is_refused_with_the_largest_allowed():
    with pytest.raises(
        CtxRobustError,
        match=r"^--replicates 1000: resampling 1000000 units needs a 1000 x 1000000 array \(8\.0 GB\); give at most 250 for this file$",
    ):
        resampling.draw_counts(np.random.default_rng(0), 1_000_000, 1000)


@pytest.mark.parametrize("dataset", ["gsm_ic", "misleadqa", "pseudowords"])
def test_replicates_are_bounded_by_every_scorer_options_model(dataset):
    import importlib

    options = importlib.import_module(f"ctxrobust.evaluation.{dataset}.options")
    with pytest.raises(CtxRobustError, match=r"--replicates 100001: input should be less than or equal to 100000"):
        parse_options(options.ScoreOptions, {"replicates": 100_001}, f"{dataset} score")
    with pytest.raises(CtxRobustError, match=r"--replicates -1: input should be greater than or equal to 0"):
        parse_options(options.ScoreOptions, {"replicates": -1}, f"{dataset} score")


@pytest.mark.parametrize("flag", ["null_experiments", "splits"])
def test_pseudowords_null_experiments_and_splits_are_bounded(flag):
    from ctxrobust.evaluation.pseudowords.options import ScoreOptions

    name = "--" + flag.replace("_", "-")
    with pytest.raises(CtxRobustError, match=rf"{name} 100001: input should be less than or equal to 100000"):
        parse_options(ScoreOptions, {flag: 100_001}, "pseudowords score")
    with pytest.raises(CtxRobustError, match=rf"{name} 0: input should be greater than or equal to 1"):
        parse_options(ScoreOptions, {flag: 0}, "pseudowords score")
