"""Route examples through a forest once and keep what the program needs.

* Cost data (X): weighted count of examples reaching each node, and the
  *first-use* records: for tree t, example i and acquisition unit u, the first
  node on i's path in t whose split feature needs u.  Examples whose leaves
  agree in every tree have identical records, so they are merged into one
  row carrying the sum of their weights.
* Error data: per tree, weighted class counts at every node and the node error
  e_h (examples reaching h whose label differs from h's majority class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["CostRouting", "ErrorRouting", "route_costs", "route_errors", "first_use_records"]

DEFAULT_CHUNK = 65536


@dataclass
class CostRouting:
    """Cost-data routing of a forest.

    Attributes
    ----------
    example_weight : ndarray (n_rows,)
        Weight of each merged row (number of original examples it stands for,
        times their sample weights).
    row_of_example : ndarray (n_examples,)
        Merged row of each original example.
    node_weight : ndarray (n_nodes,)
        Weighted number of cost examples reaching each node.
    use_node, use_row, use_unit : ndarray (n_uses,)
        First-use records (global node id, merged row, unit).
    total_weight : float
        N, the (weighted) number of cost examples.
    """

    example_weight: np.ndarray
    row_of_example: np.ndarray
    node_weight: np.ndarray
    use_node: np.ndarray
    use_row: np.ndarray
    use_unit: np.ndarray
    total_weight: float


@dataclass
class ErrorRouting:
    """Error-data routing: node error e_h and N_t per tree."""

    node_error: np.ndarray
    node_weight: np.ndarray
    tree_weight: np.ndarray


def _leaf_signatures(forest, X, chunk_size):
    leaves = np.empty((X.shape[0], forest.n_trees), dtype=np.int32)
    for start in range(0, X.shape[0], chunk_size):
        stop = min(start + chunk_size, X.shape[0])
        for t in range(forest.n_trees):
            leaves[start:stop, t] = forest.apply_tree(X[start:stop], t)
    return leaves


def first_use_records(forest, ind, t, feature_units, unit_mask=None):
    """First-use records of one tree from its node indicator matrix.

    Parameters
    ----------
    forest : Forest
    ind : scipy.sparse.csr_matrix (n_rows, n_nodes_t)
        Decision paths with sorted indices (root-to-leaf order).
    t : int
        Tree index.
    feature_units : csr_matrix (n_features, n_units)
    unit_mask : ndarray of bool (n_units,), optional
        Units to keep (e.g. those with positive cost).

    Returns
    -------
    rows, nodes, units : ndarray
        ``nodes`` are global ids.
    """
    off = forest.node_offset[t]
    rows = np.repeat(np.arange(ind.shape[0], dtype=np.int64), np.diff(ind.indptr))
    nodes = ind.indices.astype(np.int64) + off
    feat = forest.feature[nodes]
    keep = feat >= 0
    rows, nodes, feat = rows[keep], nodes[keep], feat[keep]
    fu = feature_units
    if unit_mask is not None:
        fu = sp.csr_matrix(fu.multiply(unit_mask[None, :].astype(bool)))
        fu.eliminate_zeros()
        fu.sort_indices()
    counts = np.diff(fu.indptr)[feat]
    if counts.sum() == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    rows = np.repeat(rows, counts)
    nodes_rep = np.repeat(nodes, counts)
    starts = np.repeat(fu.indptr[feat], counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    units = fu.indices[starts + within].astype(np.int64)
    key = rows * fu.shape[1] + units
    # entries are ordered by row, then root-to-leaf: the first occurrence is the first use
    _, first = np.unique(key, return_index=True)
    return rows[first], nodes_rep[first], units[first]


def route_costs(forest, X, costs, *, sample_weight=None, merge=True, chunk_size=DEFAULT_CHUNK):
    """Route cost data once: node weights and first-use records.

    Parameters
    ----------
    forest : Forest
    X : ndarray (n_examples, n_features), already validated
    costs : FeatureCosts
    sample_weight : ndarray, optional
    merge : bool
        Merge examples that reach the same leaf in every tree.
    chunk_size : int
        Examples routed at a time (bounds memory).

    Returns
    -------
    CostRouting
    """
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if merge and n > 1:
        leaves = _leaf_signatures(forest, X, chunk_size)
        _, rep, inverse = np.unique(leaves, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        del leaves
        order = np.argsort(rep, kind="stable")  # keep rows in first-appearance order
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        rep = rep[order]
        inverse = rank[inverse]
        weight = np.bincount(inverse, weights=w, minlength=rep.size)
        Xr = X[rep]
    else:
        inverse = np.arange(n)
        weight = w.copy()
        Xr = X
    # only units that cost something create records
    feature_units = sp.csr_matrix(costs.feature_units.multiply(
        (costs.unit_costs > 0)[None, :]).astype(bool))
    feature_units.eliminate_zeros()
    feature_units.sort_indices()
    node_weight = np.zeros(forest.n_nodes)
    recs = ([], [], [])
    for start in range(0, Xr.shape[0], chunk_size):
        stop = min(start + chunk_size, Xr.shape[0])
        wc = weight[start:stop]
        for t in range(forest.n_trees):
            ind = forest.decision_paths(Xr[start:stop], t)
            sl = forest.tree_slice(t)
            node_weight[sl] += ind.T.astype(float) @ wc
            r, h, u = first_use_records(forest, ind, t, feature_units)
            # int32 halves the memory of the records (ids stay far below 2**31)
            recs[0].append((r + start).astype(np.int32))
            recs[1].append(h.astype(np.int32))
            recs[2].append(u.astype(np.int32))
    use_row, use_node, use_unit = (np.concatenate(a) if a else np.empty(0, np.int32)
                                   for a in recs)
    del recs
    order = np.lexsort((use_node, use_unit, use_row))
    use_row, use_node, use_unit = use_row[order], use_node[order], use_unit[order]
    del order
    return CostRouting(example_weight=weight, row_of_example=inverse, node_weight=node_weight,
                       use_node=use_node.astype(np.int64), use_row=use_row,
                       use_unit=use_unit, total_weight=float(weight.sum()))


def route_errors(forest, X, y_index, *, tree_weights=None, chunk_size=DEFAULT_CHUNK):
    """Node errors e_h from error data.

    Parameters
    ----------
    forest : Forest
    X : ndarray, validated
    y_index : ndarray of int
        Labels encoded as class indices of the forest.
    tree_weights : list of ndarray, optional
        Per tree, the weight of each example (in-bag multiplicity); default 1.

    Returns
    -------
    ErrorRouting
    """
    C = forest.n_classes
    n = X.shape[0]
    class_weight = np.zeros((forest.n_nodes, C))
    tree_weight = np.zeros(forest.n_trees)
    for t in range(forest.n_trees):
        wt = np.ones(n) if tree_weights is None else np.asarray(tree_weights[t], dtype=float)
        tree_weight[t] = wt.sum()
        sl = forest.tree_slice(t)
        sel = np.flatnonzero(wt > 0)
        for start in range(0, sel.size, chunk_size):
            idx = sel[start:start + chunk_size]
            ind = forest.decision_paths(X[idx], t)
            onehot = sp.csr_matrix((wt[idx], (np.arange(idx.size), y_index[idx])),
                                   shape=(idx.size, C))
            class_weight[sl] += (ind.T.astype(float) @ onehot).toarray()
    node_weight = class_weight.sum(axis=1)
    majority = np.argmax(forest.value, axis=1)
    node_error = node_weight - class_weight[np.arange(forest.n_nodes), majority]
    node_error = np.maximum(node_error, 0.0)
    return ErrorRouting(node_error=node_error, node_weight=node_weight, tree_weight=tree_weight)


def in_bag_weights(forest, n_train):
    """Per-tree in-bag multiplicities of the training examples, or None.

    For sklearn forests this is ``estimators_samples_`` counted with
    multiplicity (all ones when ``bootstrap=False``); for array-built forests
    the ``in_bag`` they carry.
    """
    est = forest.estimator
    if est is not None and hasattr(est, "estimators_"):
        n_fit = getattr(est, "_n_samples", None)
        if n_fit is not None and n_fit != n_train:
            raise ValueError(
                f"train has {n_train} rows but the forest was fitted on {n_fit}; pass the exact "
                "training data (X_train, y_train) used in fit"
            )
        if getattr(est, "bootstrap", False):
            return [np.bincount(s, minlength=n_train).astype(float)
                    for s in est.estimators_samples_]
        return [np.ones(n_train) for _ in range(forest.n_trees)]
    if forest.in_bag is not None:
        bags = [np.asarray(b, dtype=float) for b in forest.in_bag]
        if any(b.shape != (n_train,) for b in bags):
            raise ValueError(
                f"train has {n_train} rows but the forest's in-bag record covers "
                f"{bags[0].shape[0]}; pass the exact training data used in fit"
            )
        return bags
    return None
