"""Exact single-tree pruning with node leaf-losses and node split-costs."""

from __future__ import annotations

import numpy as np

from ..solvers._tree_dp import best_tree_pruning  # the one single-tree DP (re-exported)

__all__ = ["best_tree_pruning", "pruning_value"]


def pruning_value(layout, mask, leaf_loss, split_cost):
    """``sum_{pruned leaves} L_h + sum_{splits} k_h`` of a given split mask of one tree.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> from prune_opt.solvers._tree_dp import TreeLayout
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump], classes=[0, 1], n_features=1))
    >>> pruning_value(layout, np.array([False] * 3), np.array([0.5, 0.1, 0.1]), np.zeros(3))
    0.5
    """
    mask = np.asarray(mask, dtype=bool)
    parent = layout.parent
    reached = np.ones(layout.n_nodes, dtype=bool)
    has = parent >= 0
    reached[has] = mask[parent[has]]
    leaf = reached & ~mask
    return float(leaf_loss[leaf].sum() + split_cost[mask].sum())
