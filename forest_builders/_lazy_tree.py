"""One tree grown under a per-example lazy feature penalty (the core of LazyCostRF).

Every training example carries the set of acquisition units it has already
paid (boolean matrix ``paid``, examples x units).  A candidate split on
feature ``f`` at a node is scored

    gain(f, t) - tradeoff * sum_{i in node} w_i * unpaid_i(f)

where ``gain`` is the count-weighted impurity decrease and ``unpaid_i(f)``
the cost of the units of ``f`` that example ``i`` has paid neither in an
earlier tree nor higher up its path in this tree.  The penalty is linear in
the units, so per node it needs only the weight of the node's examples that
paid each unit: one ``w @ paid`` product, vectorised over examples.
"""

from __future__ import annotations

import numpy as np

from ._base import _partition, _TreeArrays
from ._splits import candidates_from_sorted

__all__ = ["LazyTreeSpec", "grow_lazy_tree", "mark_paid"]


class LazyTreeSpec:
    """Fixed inputs shared by every tree of one forest.

    Parameters
    ----------
    impurity : callable
        Count-weighted impurity of class counts (``forest_builders._impurity``).
    feature_units : ndarray (F, U) bool
    unit_costs : ndarray (U,)
    tradeoff : float
    max_features, max_depth, min_samples_split
        As in a random forest.
    stop_on_penalty : bool
        A node whose best penalised gain is not positive becomes a leaf
        (CEGB's rule); False always splits on the best penalised candidate.
    """

    def __init__(self, impurity, feature_units, unit_costs, tradeoff, *, max_features,
                 max_depth, min_samples_split, stop_on_penalty=True):
        self.impurity = impurity
        self.feature_units = np.asarray(feature_units, dtype=bool)
        self.unit_costs = np.asarray(unit_costs, dtype=float)
        self.weighted_units = self.feature_units * self.unit_costs  # (F, U)
        self.tradeoff = float(tradeoff)
        self.max_features = int(max_features)
        self.max_depth = max_depth
        self.min_samples_split = float(min_samples_split)
        self.stop_on_penalty = bool(stop_on_penalty)


def _penalty(spec, paid, idx, wn, path_paid, feats):
    """tradeoff * sum_i w_i * unpaid cost of each candidate feature, shape (m,)."""
    if spec.tradeoff == 0.0:
        return np.zeros(feats.size)
    paid_weight = wn @ paid[idx]  # (U,) weight of the node's examples holding each unit
    unpaid = np.where(path_paid, 0.0, wn.sum() - paid_weight)
    return spec.tradeoff * (spec.weighted_units[feats] @ unpaid)


def _best_split(spec, X, y, w, S, total, feats, penalty, rng):
    """(feature, threshold, score) of the best penalised split over ``feats``, or None."""
    Sf = S[:, feats]
    cand = candidates_from_sorted(X[Sf, feats], y[Sf], w[Sf], total.size, None, rng)
    if cand is None:
        return None
    parent = spec.impurity(total, 0.0)
    gain = parent - spec.impurity(cand.left, 0.0) - spec.impurity(cand.right, 0.0)
    gain = np.where(cand.valid, gain, -np.inf)
    row = np.argmax(gain, axis=0)
    best_gain = gain[row, np.arange(feats.size)]
    ok = best_gain > 1e-12 * max(parent, 1e-300)
    if not ok.any():
        return None
    score = np.where(ok, best_gain - penalty, -np.inf)
    j = int(np.argmax(score))
    return int(feats[j]), float(cand.threshold[row[j], j]), float(score[j])


def _choose(spec, X, y, w, S, total, paid, path_paid, rng):
    """Split of one node: sampled features first, the rest when those cannot split."""
    idx = S[:, 0]
    n_features = X.shape[1]
    perm = rng.permutation(n_features)
    for feats in (perm[:spec.max_features], perm[spec.max_features:]):
        if feats.size == 0:
            return None
        pen = _penalty(spec, paid, idx, w[idx], path_paid, feats)
        best = _best_split(spec, X, y, w, S, total, feats, pen, rng)
        if best is not None:
            f, thr, score = best
            # CEGB's rule: a split whose gain does not pay for its penalty is not made
            return (f, thr) if score > 0 or not spec.stop_on_penalty or spec.tradeoff == 0.0 \
                else None
    return None


def grow_lazy_tree(spec, X, y, w, n_classes, paid, rng):
    """Grow one tree; ``paid`` (n, U) bool is read, not modified.

    Parameters
    ----------
    spec : LazyTreeSpec
    X : ndarray (n, F) float32
    y : ndarray (n,) int class indices
    w : ndarray (n,) float bootstrap multiplicities (0 = out of bag)
    n_classes : int
    paid : ndarray (n, U) bool
        Units each training example paid in earlier trees.
    rng : numpy.random.Generator

    Returns
    -------
    dict of tree arrays (``left``, ``right``, ``feature``, ``threshold``,
    ``value``, ``missing_go_to_left``), node ids in creation order.
    """
    rows = np.flatnonzero(w > 0)
    S = rows[np.argsort(X[rows], axis=0, kind="stable")]
    tree = _TreeArrays(n_classes)
    go = np.zeros(X.shape[0], dtype=bool)
    stack = [(S, 0, np.zeros(spec.unit_costs.size, dtype=bool), None, None)]
    while stack:
        S, depth, path_paid, parent, side = stack.pop()
        idx = S[:, 0]
        total = np.bincount(y[idx], weights=w[idx], minlength=n_classes)
        node = tree.new_node()
        tree.value[node] = total
        if parent is not None:
            getattr(tree, side)[parent] = node
        if ((spec.max_depth is not None and depth >= spec.max_depth)
                or total.sum() < spec.min_samples_split or np.count_nonzero(total) <= 1):
            continue
        choice = _choose(spec, X, y, w, S, total, paid, path_paid, rng)
        if choice is None:
            continue
        f, thr = choice
        children = _partition(X, S, go, f, thr)
        if children is None:
            continue
        SL, SR = children
        tree.feature[node], tree.threshold[node] = f, thr
        child_paid = path_paid | spec.feature_units[f]
        stack.append((SR, depth + 1, child_paid, node, "right"))
        stack.append((SL, depth + 1, child_paid, node, "left"))
    return tree.arrays()


def mark_paid(tree, X, feature_units, paid):
    """Add to ``paid`` (in place) the units every row of ``X`` meets on its path in ``tree``.

    Routes like the Forest IR (``float32(x) <= threshold``, NaN right), one
    vectorised step per level.

    Examples
    --------
    >>> import numpy as np
    >>> from forest_builders._lazy_tree import mark_paid
    >>> stump = dict(left=np.array([1, -1, -1]), right=np.array([2, -1, -1]),
    ...              feature=np.array([1, -1, -1]), threshold=np.array([0.5, -2, -2]))
    >>> paid = np.zeros((2, 2), dtype=bool)
    >>> mark_paid(stump, np.zeros((2, 2), np.float32), np.eye(2, dtype=bool), paid)
    >>> paid.tolist()
    [[False, True], [False, True]]
    """
    left, right = tree["left"], tree["right"]
    feature, threshold = tree["feature"], tree["threshold"]
    node = np.zeros(X.shape[0], dtype=np.int64)
    active = np.flatnonzero(left[node] >= 0)
    while active.size:
        h = node[active]
        f = feature[h]
        paid[active] |= feature_units[f]
        go_left = X[active, f] <= threshold[h]
        node[active] = np.where(go_left, left[h], right[h])
        active = active[left[node[active]] >= 0]
