"""The evaluation data routed once through every tree, and a running pruning.

Per tree ``t`` the state keeps the decision paths of the evaluation rows and
the *first-use records* ``(i, h, u)``: the first node on ``i``'s path in ``t``
whose feature needs acquisition unit ``u``.  For a split mask it maintains

* ``leaf[t]`` -- global id of the pruned leaf each row reaches in tree t;
* ``paid`` -- (n_rows, n_units) count of trees whose pruned path makes the
  row pay unit u (the row pays u once iff the count is positive);
* ``total`` -- (n_rows, n_classes) sum over trees of the leaf distributions.

A tree's first-use node for (i, u) is a split iff the pruned path of ``i``
uses u, because splits are closed under parents.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._routed import RoutedData
from ..solvers._tree_dp import TreeLayout

__all__ = ["EnsembleState"]


class EnsembleState:
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
        self.unit_costs = costs.unit_costs
        fu = sp.csr_matrix(costs.feature_units.multiply((costs.unit_costs > 0)[None, :])
                           .astype(bool))
        fu.eliminate_zeros()
        fu.sort_indices()
        self.routed = RoutedData(forest, X) if routed is None else routed
        self.trees = []
        for t in range(forest.n_trees):
            r, h, u = self.routed.records(t, fu)
            self.trees.append(dict(self.routed.paths[t], rec_rows=r, rec_nodes=h, rec_units=u))
        internal = np.flatnonzero(~forest.is_leaf)
        need = fu[forest.feature[internal]].tocoo()  # (internal node, unit) incidence
        self.unit_nodes = sp.csc_matrix((np.ones(need.nnz), (internal[need.row], need.col)),
                                        shape=(forest.n_nodes, fu.shape[1]))
        self.unit_nodes.sort_indices()
        self.layouts = [TreeLayout(forest, range(t, t + 1)) for t in range(forest.n_trees)]
        self.node_weight = np.zeros(forest.n_nodes)
        for r in self.trees:
            self.node_weight += np.bincount(r["nodes"], weights=self.weight[r["rows"]],
                                            minlength=forest.n_nodes)
        n_units = self.unit_costs.size
        for r in self.trees:  # c_u * w_i of each record, the natural-unit cost it pays
            r["rec_cost"] = self.unit_costs[r["rec_units"]] * self.weight[r["rec_rows"]]
            r["rec_key"] = r["rec_rows"] * n_units + r["rec_units"]  # flat (row, unit)
        self.mask = None

    @property
    def n_rows(self):
        return self.y.size

    def with_lam(self, lam):
        """The same routed data at another ``lam`` (shallow copy, pruning kept)."""
        import copy

        out = copy.copy(self)
        out.lam = float(lam)
        return out

    # ------------------------------------------------------------ a pruning
    def leaves_of(self, t, mask):
        """Global id of the pruned leaf of every row in tree t under ``mask``."""
        return self.routed.leaves(mask, t)

    def set_mask(self, mask):
        """Make ``mask`` the running pruning (recomputes every per-row sum)."""
        self.mask = np.asarray(mask, dtype=bool).copy()
        self.leaf = [self.leaves_of(t, self.mask) for t in range(self.forest.n_trees)]
        keys = np.concatenate([r["rec_key"][self.mask[r["rec_nodes"]]] for r in self.trees])
        shape = (self.n_rows, self.unit_costs.size)
        self.paid = np.bincount(keys, minlength=shape[0] * shape[1]).astype(np.int32)
        self.paid = self.paid.reshape(shape)
        self.refresh_total()

    def refresh_total(self):
        """Recompute the sum of leaf distributions in tree order (no drift)."""
        total = np.zeros((self.n_rows, self.forest.value.shape[1]))
        for leaf in self.leaf:
            total += self.forest.value[leaf]
        self.total = total

    def replace_tree(self, t, tree_mask):
        """Install a new pruning of tree t (local mask) and update the sums."""
        sl = self.forest.tree_slice(t)
        r = self.trees[t]
        flat = self.paid.reshape(-1)  # a view; (row, unit) keys are unique within a tree
        flat[r["rec_key"][self.mask[r["rec_nodes"]]]] -= 1
        self.mask[sl] = tree_mask
        flat[r["rec_key"][self.mask[r["rec_nodes"]]]] += 1
        value = self.forest.value
        new_leaf = self.leaves_of(t, self.mask)
        self.total += value[new_leaf] - value[self.leaf[t]]
        self.leaf[t] = new_leaf

    # ------------------------------------------------------------ evaluation
    def breakdown(self):
        """Objective of the running pruning: loss, average cost, average depth."""
        value = self.forest.value
        loss = self.objective.total([value[leaf] for leaf in self.leaf], self.y, self.weight)
        cost = float(self.weight @ ((self.paid > 0).astype(float) @ self.unit_costs))
        depth = float(self.node_weight[self.mask].sum())
        obj = loss + self.lam * (cost + self.depth_cost * depth)
        return {"objective": obj, "loss": loss, "average_cost": cost, "average_depth": depth}

    def breakdown_if(self, new_mask):
        """:meth:`breakdown` of ``new_mask`` without installing it; only the trees
        whose mask differs are re-routed."""
        f, value = self.forest, self.forest.value
        changed = np.flatnonzero(new_mask != self.mask)
        flat, total, leaves = self.paid.reshape(-1).copy(), self.total.copy(), list(self.leaf)
        for t in np.unique(f.tree_of_node[changed]):
            r = self.trees[t]
            old, new = self.mask[r["rec_nodes"]], new_mask[r["rec_nodes"]]
            flat[r["rec_key"][old & ~new]] -= 1
            flat[r["rec_key"][new & ~old]] += 1
            leaves[t] = self.leaves_of(t, new_mask)
            total += value[leaves[t]] - value[self.leaf[t]]
        if self.objective.separable:
            loss = self.objective.total([value[leaf] for leaf in leaves], self.y, self.weight)
        else:
            loss = float(self.weight @ self.objective.loss(total / f.n_trees, self.y))
        paid = flat.reshape(self.paid.shape) > 0
        cost = float(self.weight @ (paid.astype(float) @ self.unit_costs))
        depth = float(self.node_weight[new_mask].sum())
        obj = loss + self.lam * (cost + self.depth_cost * depth)
        return {"objective": obj, "loss": loss, "average_cost": cost, "average_depth": depth}

    # ------------------------------------------------------------ block data
    def block_terms(self, t):
        """Exact node leaf-losses ``L`` and split-costs ``k`` of tree t, others fixed.

        ``L_h`` sums the weighted loss of the rows reaching h with h as their
        leaf in tree t; ``k_h`` is lam times the cost of the units whose first
        use in tree t is h for rows no other tree makes pay them (plus the
        depth term).
        """
        f, r = self.forest, self.trees[t]
        sl = f.tree_slice(t)
        size = sl.stop - sl.start
        rows, nodes = r["rows"], r["nodes"]
        rest = None
        if not self.objective.separable:
            rest = (self.total - f.value[self.leaf[t]])[rows]
        pair = self.objective.pair_loss(rest, f.value[nodes], self.y[rows], f.n_trees)
        L = np.bincount(nodes - sl.start, weights=pair * self.weight[rows], minlength=size)
        own = self.mask[r["rec_nodes"]]
        alone = (self.paid.reshape(-1)[r["rec_key"]] - own) == 0
        k = np.bincount(r["rec_nodes"] - sl.start, weights=r["rec_cost"] * alone,
                        minlength=size)
        k = self.lam * (k + self.depth_cost * self.node_weight[sl])
        return L, k
