"""Exact single-tree pruning with node leaf-losses and node split-costs."""

from __future__ import annotations

import numpy as np

__all__ = ["best_tree_pruning", "pruning_value"]


def best_tree_pruning(layout, leaf_loss, split_cost):
    """Minimise ``sum_{pruned leaves h} L_h + sum_{kept splits h} k_h`` over one tree.

    Bottom-up dynamic program ``best(h) = min(L_h, k_h + best(left) + best(right))``,
    vectorised over the nodes of a depth level.  Every pruning's value is a sum
    of these node terms, and the subtrees of the two children are independent,
    so ``best(root)`` is the exact minimum.

    Parameters
    ----------
    layout : prune_opt.solvers._tree_dp.TreeLayout
        Layout of a single tree (local node ids, root 0).
    leaf_loss : ndarray (n_nodes,)
        ``L_h``, the value of node h being a leaf of the pruned tree.
    split_cost : ndarray (n_nodes,)
        ``k_h``, the value of node h staying a split (ignored on leaves).

    Returns
    -------
    value : float
        The minimum.
    mask : ndarray of bool (n_nodes,)
        A minimising split mask; a node splits only when that is strictly better.

    Examples
    --------
    >>> import numpy as np
    >>> from prune_opt import Forest
    >>> from prune_opt.solvers._tree_dp import TreeLayout
    >>> stump = dict(left=[1, -1, -1], right=[2, -1, -1], feature=[0, -1, -1],
    ...              threshold=[0.5, 0, 0], value=[[2, 2], [2, 0], [0, 2]])
    >>> layout = TreeLayout(Forest([stump], classes=[0, 1], n_features=1))
    >>> value, mask = best_tree_pruning(layout, np.array([0.5, 0.1, 0.1]), np.zeros(3))
    >>> round(value, 6), mask.tolist()
    (0.2, [True, False, False])
    """
    if layout.n_trees != 1:
        raise ValueError("best_tree_pruning optimises one tree; pass a single-tree layout")
    best = np.array(leaf_loss, dtype=float)
    keep = np.zeros(layout.n_nodes, dtype=bool)
    left, right = layout.left, layout.right
    for nodes in layout.levels:  # deepest level first: children are final
        val = split_cost[nodes] + best[left[nodes]] + best[right[nodes]]
        keep[nodes] = val < best[nodes]
        best[nodes] = np.minimum(best[nodes], val)
    return float(best[0]), layout.close(keep)


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
