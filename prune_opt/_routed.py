"""Rows routed once through every tree: the data every scorer of prunings reads.

:class:`RoutedData` pushes (checked) rows through each tree once and keeps,
per tree, the decision paths (global node ids, in root-to-leaf order per
row) and, on demand, the *first-use records* ``(row, node, unit)`` for a
unit incidence.  The exact scorer of fit_budget's candidates
(:class:`prune_opt.budget._vote.VoteScorer`) and the ensemble objectives'
incremental state (:class:`prune_opt.objectives.EnsembleState`) share one
instance, so a call routes its rows once.  :class:`NestedScorer` scores a
sequence of masks on one routed data from the previous member (the baseline
curves of :func:`prune_opt.budget.baseline_curve`).
"""

from __future__ import annotations

import numpy as np

from ._routing import FirstUseTable, record_tables, tree_records

__all__ = ["RoutedData", "NestedScorer"]


class RoutedData:
    """Decision paths of every row of ``X`` in every tree of ``forest``.

    Parameters
    ----------
    forest : Forest
    X : ndarray
        Rows already checked by ``forest.check_X``.

    Attributes
    ----------
    nodes, rows : ndarray of int64
        Every path in one array (tree by tree, row by row, root to leaf): the global
        node ids and the row of each.
    starts : ndarray of int64 (n_trees * n_rows,)
        Where the path of each (tree, row) starts in ``nodes``.
    paths : list of dict
        Per tree: ``indptr`` (row starts), ``nodes`` and ``rows`` (views of the
        tree's part of the arrays above), ``ind`` (the CSR node indicator).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> f = po.Forest.from_sklearn(RandomForestClassifier(2, random_state=0).fit(X, y))
    >>> r = RoutedData(f, f.check_X(X))
    >>> leaves = r.leaves(f.full_split_mask(), 0)
    >>> bool((leaves == f.node_offset[0] + f.apply_tree(f.check_X(X), 0)).all())
    True
    """

    def __init__(self, forest, X, _indicators=None):
        self.forest, self.X = forest, X
        self.n_rows = n = X.shape[0]
        inds = [forest.decision_paths(X, t) for t in range(forest.n_trees)] \
            if _indicators is None else _indicators
        ends = np.cumsum([ind.nnz for ind in inds])
        self.nodes, self.rows = np.empty(ends[-1], np.int64), np.empty(ends[-1], np.int64)
        self.starts = np.empty(forest.n_trees * n, np.int64)
        self.paths = []
        for t, ind in enumerate(inds):
            a, b = ends[t] - ind.nnz, ends[t]
            self.nodes[a:b] = ind.indices + forest.node_offset[t]
            self.rows[a:b] = np.repeat(np.arange(n), np.diff(ind.indptr))
            self.starts[t * n:(t + 1) * n] = ind.indptr[:-1] + a
            self.paths.append({"indptr": ind.indptr.astype(np.int64), "nodes": self.nodes[a:b],
                               "rows": self.rows[a:b], "ind": ind})

    def subset(self, rows):
        """The routed data of ``X[rows]`` (no routing: the paths of those rows).

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> import prune_opt as po
        >>> X, y = load_iris(return_X_y=True)
        >>> f = po.Forest.from_sklearn(RandomForestClassifier(2, random_state=0).fit(X, y))
        >>> r = RoutedData(f, f.check_X(X)).subset([3, 140])
        >>> m = f.full_split_mask()
        >>> bool((r.leaves(m, 1) == RoutedData(f, f.check_X(X[[3, 140]])).leaves(m, 1)).all())
        True
        """
        rows = np.asarray(rows, dtype=np.int64)
        return RoutedData(self.forest, self.X[rows], [p["ind"][rows] for p in self.paths])

    def all_leaves(self, mask):
        """(n_trees, n_rows) global ids of the pruned leaves of every row in every tree
        (:meth:`leaves` of all trees in one pass)."""
        if self.nodes.size == 0:
            return np.zeros((self.forest.n_trees, self.n_rows), dtype=np.int64)
        n_split = np.add.reduceat(mask[self.nodes].astype(np.int64), self.starts)
        return self.nodes[self.starts + n_split].reshape(self.forest.n_trees, self.n_rows)

    def leaves(self, mask, t):
        """Global id of the pruned leaf each row reaches in tree ``t`` under ``mask``."""
        p = self.paths[t]
        starts = p["indptr"][:-1]
        n_split = np.add.reduceat(mask[p["nodes"]].astype(np.int64), starts)
        return p["nodes"][starts + n_split]

    def used(self, mask, trees=None):
        """Boolean (n, n_features): which features each row's pruned paths test."""
        f = self.forest
        used = np.zeros((self.n_rows, f.n_features), dtype=bool)
        if trees is None:  # all trees in one pass
            split = mask[self.nodes]
            used[self.rows[split], f.feature[self.nodes[split]]] = True
            return used
        for t in trees:
            p = self.paths[t]
            split = mask[p["nodes"]]
            used[p["rows"][split], f.feature[p["nodes"][split]]] = True
        return used

    def records(self, t, feature_units):
        """First-use records ``(rows, nodes, units)`` of tree ``t`` for the unit
        incidence ``feature_units`` (sorted CSR, e.g.
        :func:`~prune_opt._routing.paid_feature_units`), sorted by row, then unit;
        ``nodes`` are global ids."""
        f, ind = self.forest, self.paths[t]["ind"]
        tables = record_tables(f, feature_units)
        if isinstance(tables, FirstUseTable):  # the table's rows of the leaves (path ends)
            G = tables.first[f.node_offset[t] + ind.indices[ind.indptr[1:] - 1]]
            rows, units = np.nonzero(G >= 0)
            return rows, G[rows, units].astype(np.int64), units
        rows, nodes, units = tree_records(ind, tables[t], f.node_offset[t])
        order = np.argsort(rows * feature_units.shape[1] + units, kind="stable")
        return rows[order], nodes[order], units[order]


class NestedScorer:
    """Usage and combined leaf values of a sequence of masks on one :class:`RoutedData`,
    each computed from the previous one: only the records of the nodes whose split
    flag changed, and only the trees whose mask changed, are visited again.

    The results equal :meth:`RoutedData.used` and the average of the pruned leaf values
    in :meth:`PrunedForest.predict_proba`'s order (summed in tree order, then one
    division) exactly, so a nested family of prunings is scored at the cost of its
    changes, not of the whole forest once per member.

    Parameters
    ----------
    routed : RoutedData

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> import prune_opt as po
    >>> X, y = load_iris(return_X_y=True)
    >>> f = po.Forest.from_sklearn(RandomForestClassifier(3, random_state=0).fit(X, y))
    >>> r = RoutedData(f, f.check_X(X))
    >>> s = NestedScorer(r)
    >>> m = f.full_split_mask()
    >>> used, avg = s.score(m, trees=range(2))
    >>> bool((used == r.used(m, trees=range(2))).all())
    True
    >>> bool((avg == (f.value[r.leaves(m, 0)] + f.value[r.leaves(m, 1)]) / 2).all())
    True
    """

    def __init__(self, routed):
        self.routed = r = routed
        f = r.forest
        self._n_features = f.n_features
        ptr, rows = [np.zeros(1, dtype=np.int64)], []
        for p in r.paths:  # node -> rows, by transposing each tree's paths
            csc = p["ind"].tocsc()
            csc.sort_indices()
            ptr.append(csc.indptr[1:].astype(np.int64) + ptr[-1][-1])
            rows.append(csc.indices.astype(np.int64))
        self._ptr = np.concatenate(ptr)
        node = np.repeat(np.arange(f.n_nodes, dtype=np.int32), np.diff(self._ptr))
        self._flat = (np.concatenate(rows) * f.n_features + f.feature[node]
                      if rows else np.zeros(0, dtype=np.int64))
        self._node = node
        self._counts = np.zeros(r.n_rows * f.n_features, dtype=np.int32)  # splits per (row, feature)
        self._eff = np.zeros(f.n_nodes, dtype=bool)  # the mask the counts are of
        self._mask = None  # the mask the leaf values are of
        self._vals = self._cum = None
        self._cum_from = 0  # _cum is valid below this tree

    def score(self, mask, trees=None):
        """``(used, output)`` of ``mask`` over ``trees`` (default all): the same
        arrays as ``routed.used(mask, trees)`` and the pruned leaf values of ``trees``
        summed in tree order, then combined by the forest's ensemble (divided by
        their number, or a booster's initial score and link)."""
        f = self.routed.forest
        trees = range(f.n_trees) if trees is None else trees
        eff = np.asarray(mask, dtype=bool)
        if len(trees) < f.n_trees:
            eff = eff & np.isin(f.tree_of_node, np.asarray(list(trees), dtype=np.int64))
        self._update_counts(eff)
        used = (self._counts > 0).reshape(self.routed.n_rows, self._n_features)
        return used, self._average(np.asarray(mask, dtype=bool), trees)

    def _update_counts(self, eff):
        """Bring the per-(row, feature) split-record counts from ``_eff`` to ``eff``."""
        changed = np.flatnonzero(eff != self._eff)
        lo, hi = self._ptr[changed], self._ptr[changed + 1]
        n = int((hi - lo).sum())
        if n > self._flat.size // 2:  # most records move: count from scratch
            self._counts = np.bincount(self._flat[eff[self._node]],
                                       minlength=self._counts.size).astype(np.int32)
        elif n:
            lens = hi - lo
            idx = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(n)
            sign = np.where(eff[changed], 1, -1)
            np.add.at(self._counts, self._flat[idx], np.repeat(sign, lens))
        self._eff = eff.copy()

    def _average(self, mask, trees):
        """Combined leaf value over ``trees`` (sum in tree order, then the output)."""
        r, f = self.routed, self.routed.forest
        if self._vals is None:
            self._vals = f.value[r.all_leaves(mask)]  # (n_trees, n_rows, width)
            self._cum_from = 0
        else:
            diff = np.flatnonzero(mask != self._mask)
            for t in np.unique(f.tree_of_node[diff]):
                self._vals[t] = f.value[r.leaves(mask, t)]
            if diff.size:
                self._cum_from = min(self._cum_from, int(f.tree_of_node[diff].min()))
        self._mask = mask.copy()
        m = len(trees)
        if isinstance(trees, range) and trees.start == 0 and trees.step == 1 and m:
            total = self._prefix_sum(m).copy()
        else:
            total = np.zeros((r.n_rows, f.value.shape[1]))
            for t in trees:
                total += self._vals[t]
        return f.ensemble.output(total, m, out=total)

    def _prefix_sum(self, m):
        """Sum of the first ``m`` trees' values, accumulated in tree order (cached)."""
        if self._cum is None:
            self._cum = np.empty_like(self._vals)
            self._cum_from = 0
        j = self._cum_from
        if j < m:
            block = self._vals[j:m].copy()
            if j:
                block[0] += self._cum[j - 1]
            self._cum[j:m] = np.cumsum(block, axis=0)
            self._cum_from = m
        return self._cum[m - 1]
