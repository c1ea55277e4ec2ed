"""The evaluation data routed once through every tree, a running pruning, and the
from-scratch referee :func:`evaluate_objective`.

Per tree ``t`` the state keeps the decision paths of the evaluation rows and
the *first-use records* ``(i, h, u)``: the first node on ``i``'s path in ``t``
whose feature needs acquisition unit ``u``; it is a
:class:`~prune_opt.objectives._descent.CostLedger` keyed by ``(i, u)`` (the
ledger of the paper's search too).  For a split mask it maintains

* ``leaf[t]`` -- global id of the pruned leaf each row reaches in tree t;
* ``count`` -- per key ``i * n_units + u``, the number of trees whose pruned
  path makes row i pay unit u (the row pays u once iff the count is positive);
* ``total`` -- (n_rows, n_classes) sum over trees of the leaf distributions.

A tree's first-use node for (i, u) is a split iff the pruned path of ``i``
uses u, because splits are closed under parents.
"""

from __future__ import annotations

import copy

import numpy as np

from .._validation import check_labels, check_nonneg_scalar, check_weights
from ..model._pruned import PrunedForest
from ..routing._records import paid_feature_units
from ..routing._routed import RoutedData
from ._base import Objective, check_objective_task, get_objective
from ._descent import CostLedger, unit_nodes

__all__ = ["EnsembleState", "evaluate_objective"]

#: memory kept for the per-tree leaf values of the path entries (block terms)
PATH_CACHE_BYTES = 256 * 2**20


class EnsembleState(CostLedger):
    """Routed evaluation data plus the per-row sums of one pruning.

    Parameters
    ----------
    forest : Forest
    X : ndarray, already checked
    y : ndarray of int
        Labels as class indices.
    weight : ndarray (n,)
        Example weights (any positive scale; normalised to sum 1).
    costs : FeatureCosts
    objective : Objective
    lam, depth_cost : float
    routed : RoutedData, optional
        ``X`` already routed (shared with other scorers of the same rows).
    """

    def __init__(self, forest, X, y, weight, costs, objective, *, lam, depth_cost=0.0,
                 routed=None):
        self.forest, self.y, self.objective = forest, y, objective
        self.weight = weight / weight.sum()
        self.lam, self.depth_cost = float(lam), float(depth_cost)
        self.costs = costs
        unit_costs = costs.unit_costs
        fu = paid_feature_units(costs)
        self.routed = RoutedData(forest, X) if routed is None else routed
        self.n_units = n_units = unit_costs.size
        rows, nodes, units = [], [], []
        for t in range(forest.n_trees):
            r, h, u = self.routed.records(t, fu)
            rows.append(r)
            nodes.append(h)
            units.append(u)
        keys = np.concatenate(rows).astype(np.int64) * n_units + np.concatenate(units)
        key_cost = (self.weight[:, None] * unit_costs[None, :]).reshape(-1)
        start = np.concatenate([[0], np.cumsum([r.size for r in rows])]).astype(np.int64)
        # the records come tree by tree: no sort needed to group them
        super().__init__(forest, None, None, key_cost, np.zeros(forest.n_nodes, dtype=bool),
                         by_tree=(np.concatenate(nodes).astype(np.int64), keys, start))
        self.unit_nodes = unit_nodes(forest, fu)
        self.node_weight = self.routed.node_weight(self.weight)
        self.leaf = None
        self._path_cache, self._path_cache_bytes = {}, [0]  # shared by copies
        self._buffer = [None]

    def with_lam(self, lam, depth_cost=None):
        """The same routed data at another ``lam`` (a copy; the running pruning is
        shared until either side sets a new one)."""
        out = copy.copy(self)
        out.lam = float(lam)
        if depth_cost is not None:
            out.depth_cost = float(depth_cost)
        return out

    def paid_units(self):
        """Units some row pays under the running pruning."""
        paid = self.count.reshape(self.y.size, self.n_units) > 0
        return np.flatnonzero(paid.any(axis=0))

    # ------------------------------------------------------------ a pruning
    def set_mask(self, mask):
        """Make ``mask`` the running pruning (recomputes every per-row sum)."""
        super().set_mask(mask)
        self.leaf_matrix = self.routed.all_leaves(self.mask)  # (n_trees, n_rows)
        self.leaf = list(self.leaf_matrix)  # its rows (views)
        self.refresh()

    def refresh(self):
        """Recompute the sum of leaf values in tree order and the cost (no drift)."""
        super().refresh()
        total = np.zeros((self.y.size, self.forest.value.shape[1]))
        for leaf in self.leaf:
            total += self.forest.value[leaf]
        self.total = total

    def set_tree(self, t, tree_mask):
        """Install a new pruning of tree t (local mask) and update the sums."""
        super().set_tree(t, tree_mask)
        value = self.forest.value
        new_leaf = self.routed.leaves(self.mask, t)
        self.total += value[new_leaf] - value[self.leaf[t]]
        self.leaf[t] = new_leaf

    # ------------------------------------------------------------ evaluation
    def cost_if(self, new_mask, trees):
        """Average cost of ``new_mask`` whose trees ``trees`` differ from the running
        pruning: from the counts of those trees' records when they are few, else from
        the units each row's pruned paths meet (:meth:`RoutedData.row_costs`)."""
        if 2 * len(trees) <= self.forest.n_trees:
            return self.cost(self.count_if(new_mask, trees))
        return float(self.weight @ self.routed.row_costs(new_mask, self.costs))

    def _breakdown(self, leaves, total, mask, count, cost=None):
        f, value = self.forest, self.forest.value
        if self.objective.separable or total is None:
            loss = self.objective.total([value[leaf] for leaf in leaves], self.y, self.weight,
                                        f)
        else:
            loss = float(self.weight @ self.objective.loss(f.output(total), self.y))
        cost = self.cost(count) if cost is None else cost
        depth = float(self.node_weight[mask].sum())
        obj = loss + self.lam * (cost + self.depth_cost * depth)
        return {"objective": obj, "loss": loss, "average_cost": cost, "average_depth": depth}

    def breakdown(self):
        """Objective of the running pruning: loss, average cost, average depth."""
        return self._breakdown(self.leaf, None, self.mask, None)

    def value(self):
        return self.breakdown()["objective"]

    def breakdown_if(self, new_mask):
        """:meth:`breakdown` of ``new_mask`` without installing it; only the trees
        whose mask differs are re-routed."""
        value, total, leaves = self.forest.value, self.total.copy(), list(self.leaf)
        trees = self.changed_trees(new_mask)
        routed = None
        if 2 * trees.size > self.forest.n_trees:  # e.g. a unit move: route all at once
            routed = self.routed.all_leaves(new_mask)
        for t in trees:
            leaves[t] = self.routed.leaves(new_mask, t) if routed is None else routed[t]
            total += value[leaves[t]] - value[self.leaf[t]]
        return self._breakdown(leaves, total, new_mask, None, self.cost_if(new_mask, trees))

    # ------------------------------------------------------------ block data
    def local_terms(self, t):
        """Exact node leaf-losses ``L`` and depth split-terms of tree t, others fixed.

        ``L_h`` sums the weighted loss of the rows reaching h with h as their
        leaf in tree t.  The cost term (``lam`` times the units whose first use
        in tree t is h for rows no other tree makes pay them) is :meth:`alone`.
        """
        f = self.forest
        sl = f.tree_slice(t)
        rows, local, value, y, w = self._path_terms(t)
        obj = self.objective
        if obj.separable:
            pair = obj.pair_loss(None, value, y, f)
        elif type(obj).pair_loss is Objective.pair_loss:
            # Objective.pair_loss's loss(output(rest + leaf)), computed in a scratch
            # array kept between calls (the same values, no large temporaries)
            total = self._scratch(value.shape)
            np.take(self.total - f.value[self.leaf[t]], rows, axis=0, out=total,
                    mode="clip")  # the rows are valid: "clip" only skips buffering
            total += value
            pair = obj.loss(f.output(total, out=total), y)
        else:
            rest = np.take(self.total - f.value[self.leaf[t]], rows, axis=0)
            pair = obj.pair_loss(rest, value, y, f)
        L = np.bincount(local, weights=pair * w, minlength=sl.stop - sl.start)
        return L, self.lam * self.depth_cost * self.node_weight[sl]

    def _scratch(self, shape):
        """A float array of ``shape`` whose memory is reused by the next call."""
        size = shape[0] * shape[1]
        if self._buffer[0] is None or self._buffer[0].size < size:
            self._buffer[0] = np.empty(max(size, 1))
        return self._buffer[0][:size].reshape(shape)

    def _path_terms(self, t):
        """Tree t's path entries: rows, local node ids, leaf values, labels, weights
        (constant; the leaf values are kept while their total size stays moderate)."""
        hit = self._path_cache.get(t)
        if hit is not None:
            return hit
        f, r = self.forest, self.routed.paths[t]
        rows, nodes = r["rows"], r["nodes"]
        out = (rows, nodes - f.tree_slice(t).start, f.value[nodes], self.y[rows],
               self.weight[rows])
        size = out[2].nbytes
        if self._path_cache_bytes[0] + size <= PATH_CACHE_BYTES:
            self._path_cache[t] = out
            self._path_cache_bytes[0] += size
        return out


def evaluate_objective(pruned, X, y, *, objective, lam, depth_cost=0.0, sample_weight=None):
    """Objective of a pruned forest computed from its predictions, nothing cached.

    ``loss + lam * (average acquisition cost + depth_cost * average depth)``,
    where the loss is the (weighted) mean of the objective's per-example loss
    of ``pruned.predict_proba(X)`` and the cost is what
    :meth:`PrunedForest.acquisition_cost` charges (every unit once per row).

    Parameters
    ----------
    pruned : PrunedForest
    X, y : array-like
    objective : str or Objective
    lam, depth_cost : float
    sample_weight : array-like, optional

    Returns
    -------
    dict with ``objective``, ``loss``, ``average_cost``, ``average_depth``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    >>> f = po.Forest.from_sklearn(rf)
    >>> root_only = po.PrunedForest(f, f.full_split_mask() & False)
    >>> evaluate_objective(root_only, X, y, objective="brier", lam=1.0)["average_cost"]
    0.0
    """
    if not isinstance(pruned, PrunedForest):
        raise TypeError(f"pruned must be a PrunedForest, got {type(pruned).__name__}")
    obj = get_objective(objective)
    lam = check_nonneg_scalar(lam, "lam")
    depth_cost = check_nonneg_scalar(depth_cost, "depth_cost")
    f = pruned.forest
    check_objective_task(obj, f)
    Xc = f.check_X(X)
    yc = check_labels(f, y, Xc.shape[0])
    w = check_weights(sample_weight, Xc.shape[0])
    if w.sum() <= 0:
        raise ValueError("sample_weight sums to zero; pass positive weights")
    w = w / w.sum()
    obj = obj.for_data(yc, w)
    stops = pruned._stops(Xc)  # (n_trees, n) pruned leaves; a path's splits = its depth
    leaf_values, depth = [], np.zeros(Xc.shape[0])
    for t in range(f.n_trees):
        leaf_values.append(f.value[stops[t]])
        depth += f.depth[stops[t]]
    if obj.separable:
        loss = obj.total(leaf_values, yc, w, f)
    else:
        pred = (pruned.predict(Xc)[:, None] if f.task == "regression"
                else pruned.predict_proba(Xc))
        loss = float(w @ obj.loss(pred, yc))
    cost = float(w @ pruned.acquisition_cost(Xc))
    avg_depth = float(w @ depth)
    return {"objective": loss + lam * (cost + depth_cost * avg_depth), "loss": loss,
            "average_cost": cost, "average_depth": avg_depth}
