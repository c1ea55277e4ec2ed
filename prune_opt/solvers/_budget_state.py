"""Incremental evaluation of a pruning, tree by tree, and exact one-tree moves.

The objective ``J = E + lam * (C + depth_cost * D)`` is a sum of per-tree
terms except for the acquisition cost ``C``, which an example pays once per
unit whatever the number of trees asking for it.  :class:`PruningState`
keeps, for every (row, unit) pair, how many first-use records of split nodes
pay it, so replacing one tree's mask costs time linear in that tree's
records, and the *marginal* price of every node of a tree given the other
trees (the pairs nobody else pays) is one masked sum.

Inside one tree each pair has at most one first-use record (a row follows a
single path), so with the other trees fixed the tree's problem is
node-separable and :func:`prune_opt.solvers._tree_dp.best_tree_within` solves
it exactly at each price of the budget.
"""

from __future__ import annotations

import numpy as np

from ._tree_dp import TreeLayout

__all__ = ["PruningState"]


class PruningState:
    """A pruning of ``problem`` with per-pair payment counts.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> rf = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0).fit(X, y)
    >>> p = po.compile_problem(rf, X, y, costs=[1, 1, 5, 5], lam=0.01)
    >>> s = PruningState(p, p.forest.full_split_mask())
    >>> bool(abs(s.objective() - p.evaluate(s.mask).objective) < 1e-12)
    True
    """

    def __init__(self, problem, mask):
        self.problem = p = problem
        f = p.forest
        self.pair_cost = p.pair_cost()
        tree_of_use = f.tree_of_node[p.use_node]
        order = np.argsort(tree_of_use, kind="stable")
        self.rec_node = p.use_node[order]
        self.rec_pair = p.use_pair[order]
        self.rec_start = np.searchsorted(tree_of_use[order], np.arange(f.n_trees + 1))
        self.leaf_error = p.leaf_error_coef()
        self.split_local = p.lam * p.depth_cost * p.node_cost_weight / p.total_weight
        self.layouts = [TreeLayout(f, range(t, t + 1)) for t in range(f.n_trees)]
        self.set_mask(mask)

    def set_mask(self, mask):
        """Replace the whole pruning (a closed split mask)."""
        self.mask = np.asarray(mask, dtype=bool).copy()
        active = self.mask[self.problem.use_node]
        self.count = np.bincount(self.problem.use_pair[active],
                                 minlength=self.problem.n_pairs).astype(np.int32)

    def cost(self):
        """Average acquisition cost C of the current pruning."""
        return float(self.pair_cost[self.count > 0].sum())

    def local_value(self, t, mask=None):
        """Tree t's separable part of J: its error share plus its depth term."""
        f = self.problem.forest
        sl = f.tree_slice(t)
        m = (self.mask if mask is None else mask)[sl]
        par = f.parent[sl]
        parent_split = np.ones(m.size, dtype=bool)
        has = par >= 0
        parent_split[has] = m[par[has] - sl.start]
        leaves = parent_split & ~m
        return float(self.leaf_error[sl][leaves].sum() + self.split_local[sl][m].sum())

    def objective(self):
        """J of the current pruning (equals ``problem.evaluate(mask).objective``)."""
        local = sum(self.local_value(t) for t in range(self.problem.n_trees))
        return local + self.problem.lam * self.cost()

    def _records(self, t):
        return slice(self.rec_start[t], self.rec_start[t + 1])

    def set_tree(self, t, tree_mask):
        """Replace tree t's split mask (values on tree t's node slice)."""
        sl, rs = self.problem.forest.tree_slice(t), self._records(t)
        nodes, pairs = self.rec_node[rs], self.rec_pair[rs]
        self.count[pairs] -= self.mask[nodes]
        self.mask[sl] = tree_mask
        self.count[pairs] += self.mask[nodes]

    def marginal_node_cost(self, t):
        """Cost (natural units) each node of tree t adds as a split, the others fixed."""
        sl, rs = self.problem.forest.tree_slice(t), self._records(t)
        nodes, pairs = self.rec_node[rs], self.rec_pair[rs]
        others = self.count[pairs] - self.mask[nodes]
        w = np.where(others == 0, self.pair_cost[pairs], 0.0)
        return np.bincount(nodes - sl.start, weights=w, minlength=sl.stop - sl.start)
