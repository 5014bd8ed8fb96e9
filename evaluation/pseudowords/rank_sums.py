"""The rank sums of the all-splits Spearman correlates (Appendix B), as compiled loops.

For one target and a few feature levels, every split's Spearman rho per replicate needs three sums
over the questions: sum w (2 rx)(2 ry), sum w (2 ry)^2 and the feature's own sums (cross_model).
Questions come as groups sharing both tie levels (cross_model._split_groups), their weights per
replicate already summed. The loop below walks each split's target levels in ascending order,
adds up each (target level, feature level) cell from its groups, and keeps the running weight of
the levels up to this one, which gives twice the level's midrank: 2 ry = 2 (weight up to it) -
(its weight) + 1. On integer weights every sum is of integers, exact while it stays below 2^53 in
float64 (about 130,000 questions) and in the narrower integer types cross_model._exact_dtypes picks;
the loop is compiled (ctxrobust.evaluation.compiled), one pass over the group weights instead
of numpy's five.
"""

from __future__ import annotations

import numpy as np

from ctxrobust.evaluation.compiled import compiled


@compiled
def target_level_sums(group_weights, order, cell_bounds, row_bounds, levels, half, syy):
    """half[s, a, b] = sum over split s's questions at feature level a of w_b x 2 ry_b; syy[s, b] =
    sum over split s's questions of w_b x (2 ry_b)^2.

    group_weights: (G, B) weights of the groups; order: the groups sorted by (row, feature level),
    a row being one (split, target level) present, rows ascending by split then level; cell_bounds:
    (rows x levels + 1) start of each (row, feature level) cell in `order`; row_bounds: (splits + 1)
    first row of each split. half's type holds the cells' weights and the products (int32 when
    cross_model._exact_dtypes allows, else float64); syy's holds w x (2 ry)^2 (int64 or float64)."""
    replicates = group_weights.shape[1]
    below = np.empty(replicates, half.dtype)  # running weight of the split's target levels
    weight = np.empty(replicates, half.dtype)  # weight of the current target level
    twice = np.empty(replicates, half.dtype)  # twice its midrank
    wide = np.empty(replicates, syy.dtype)
    cell = np.empty((levels, replicates), half.dtype)
    for s in range(row_bounds.size - 1):
        below[:] = 0
        syy[s, :] = 0
        half[s, :, :] = 0
        for r in range(row_bounds[s], row_bounds[s + 1]):
            weight[:] = 0
            for a in range(levels):
                cell[a, :] = 0
                for k in range(cell_bounds[r * levels + a], cell_bounds[r * levels + a + 1]):
                    g = order[k]
                    for b in range(replicates):
                        cell[a, b] += group_weights[g, b]
                for b in range(replicates):
                    weight[b] += cell[a, b]
            for b in range(replicates):
                below[b] += weight[b]  # now the weight up to and including this level
                twice[b] = 2 * below[b] - weight[b] + 1
                wide[b] = weight[b]
                syy[s, b] += wide[b] * twice[b] * twice[b]
            for a in range(levels):
                for b in range(replicates):
                    half[s, a, b] += cell[a, b] * twice[b]
